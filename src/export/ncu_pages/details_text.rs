//! ncu's details page as it prints it for a terminal (`ncu --import R --page details`, no
//! `--csv`): the process (`[PID] NAME@HOST`) where it changes, then per kernel its line (name,
//! grid x block, context, stream, device, compute capability), the NVTX ranges open at its
//! launch, and each section that has header metrics or rule results: a table of the header's
//! metrics (the same rows, units and values as the CSV page) and the rules' messages, wrapped
//! as ncu wraps them.
//!
//! Layout, read from ncu 2025.3's pages of the four shared reports: a table's columns are as
//! wide as their widest cell (names left, units and values right, one space apart) between
//! dashed lines; a rule message is its type (`OPT`, `INF`, `WRN`, `ERR`) and, when the rule
//! estimates one, a line `Est. Speedup: 51.52%` (`Est. Local Speedup` for a local one), then its
//! text wrapped to 110 columns and padded to them, messages of one section apart by a dashed
//! line; a blank line ends each section. Text wraps at spaces: a line takes words while it stays
//! under 110 characters, counting the space before a word on every line but the first; a word
//! longer than a line is cut at 110 characters (keeping that space).

use std::io::{self, Write};

use super::UnitMode;
use super::details::{Entry, Rows, by_name, plain_text, rule_type, significant};
use super::names::KernelNames;
use super::raw::fixed_cells;
use crate::trace::ncu::{NcuNvtx, NcuReport, NcuWorkload, RuleMessage};

/// The width rule text wraps and pads to.
const TEXT_WIDTH: usize = 110;

/// Writes the page for the workloads `ids` picks (all when `None`), in report order.
pub fn write(
    report: &NcuReport,
    mode: UnitMode,
    ids: Option<&[u32]>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let names = KernelNames::of(report);
    let rows = Rows { report, mode };
    let mut process: Option<(u64, String)> = None;
    for w in &report.workloads {
        if ids.is_some_and(|ids| !ids.contains(&w.id)) {
            continue;
        }
        let cells = fixed_cells(report, &names, w, false);
        // ID, Process ID, Process Name, Host Name, Kernel Name, Context, Stream, Block Size,
        // Grid Size, Device, CC.
        let [
            _,
            pid,
            name,
            host,
            kernel,
            context,
            stream,
            block,
            grid,
            device,
            cc,
        ] = &cells[..]
        else {
            continue;
        };
        let this = (u64::from(w.pid), format!("{name}@{host}"));
        if process.as_ref() != Some(&this) {
            writeln!(out, "[{pid}] {name}@{host}")?;
            process = Some(this);
        }
        writeln!(
            out,
            "  {kernel} {grid}x{block}, Context {context}, Stream {stream}, Device {device}, CC {cc}"
        )?;
        write_nvtx(&w.nvtx, out)?;
        write_sections(report, &rows, w, out)?;
    }
    Ok(())
}

/// The push/pop ranges open on the launching thread, per domain, outermost first (the
/// start/end ranges in the same form: the shared reports have none to check against).
fn write_nvtx(nvtx: &NcuNvtx, out: &mut dyn Write) -> io::Result<()> {
    let stacks = [
        (&nvtx.push_pop, "Push/Pop Stack for Thread"),
        (&nvtx.start_end, "Start/End Ranges for Thread"),
    ];
    for (stacks, title) in stacks {
        if stacks.iter().all(|s| s.ranges.is_empty()) {
            continue;
        }
        let tid = nvtx.thread.map(|t| t.to_string()).unwrap_or_default();
        writeln!(out, "\n    NVTX {title} {tid}:")?;
        for stack in stacks.iter().filter(|s| !s.ranges.is_empty()) {
            let domain = stack.domain.as_deref().unwrap_or("<default domain>");
            writeln!(out, "      {domain}")?;
            for (i, range) in stack.ranges.iter().enumerate() {
                writeln!(out, "        <{i},{range}>")?;
            }
        }
    }
    Ok(())
}

fn write_sections(
    report: &NcuReport,
    rows: &Rows<'_>,
    w: &NcuWorkload,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut rules_done = vec![false; w.rules.len()];
    for section in report.sections_in_order(w) {
        let mut table: Vec<Entry> = Vec::new();
        // The header's metrics only (the CSV page adds the section's collected ones).
        let header = section.header.iter().filter(|m| m.is_for_scope(w.scope));
        for m in by_name(report, w, header) {
            rows.metric(w, None, m, &mut |e| {
                table.push(e);
                Ok(())
            })?;
        }
        let mut messages: Vec<&RuleMessage> = Vec::new();
        for (i, rule) in w.rules.iter().enumerate() {
            if rule.section == section.identifier && !rules_done[i] {
                rules_done[i] = true;
                messages.extend(&rule.messages);
            }
        }
        if table.is_empty() && messages.is_empty() {
            continue;
        }
        writeln!(out, "    Section: {}", section.display_name)?;
        if !table.is_empty() {
            write_table(&table, out)?;
            if !messages.is_empty() {
                writeln!(out)?;
            }
        }
        write_messages(&messages, out)?;
        writeln!(out)?;
    }
    // Rules of no section the workload shows, as the CSV page prints them: last.
    let rest: Vec<&RuleMessage> = w
        .rules
        .iter()
        .zip(&rules_done)
        .filter(|(_, done)| !**done)
        .flat_map(|(r, _)| &r.messages)
        .collect();
    if !rest.is_empty() {
        write_messages(&rest, out)?;
        writeln!(out)?;
    }
    Ok(())
}

/// A table of (name, unit, value) rows between dashed lines.
fn write_table(table: &[Entry], out: &mut dyn Write) -> io::Result<()> {
    let header: Entry = (
        "Metric Name".into(),
        "Metric Unit".into(),
        "Metric Value".into(),
    );
    let width = |f: fn(&Entry) -> &String| {
        std::iter::once(&header)
            .chain(table)
            .map(|e| f(e).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (a, b, c) = (width(|e| &e.0), width(|e| &e.1), width(|e| &e.2));
    let dashes = format!("    {} {} {}", "-".repeat(a), "-".repeat(b), "-".repeat(c));
    let row = |e: &Entry| format!("    {:<a$} {:>b$} {:>c$}", e.0, e.1, e.2);
    writeln!(out, "{dashes}\n{}\n{dashes}", row(&header))?;
    for e in table {
        writeln!(out, "{}", row(e))?;
    }
    writeln!(out, "{dashes}")
}

/// Rule messages, one after another, a dashed line between two.
fn write_messages(messages: &[&RuleMessage], out: &mut dyn Write) -> io::Result<()> {
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            writeln!(out, "    ----- {}", "-".repeat(TEXT_WIDTH))?;
        }
        let kind = rule_type(m.kind);
        let mut lines = wrap(&plain_text(&m.text)).into_iter();
        match m.speedup {
            Some(s) => {
                let local = if s.kind == 1 { "Local " } else { "" };
                let head = format!("Est. {local}Speedup: {}%", significant(s.percent, 4));
                writeln!(out, "    {kind:<5} {head:<TEXT_WIDTH$}")?;
            }
            None => {
                let first = lines.next().unwrap_or_default();
                writeln!(out, "    {kind:<5} {first:<TEXT_WIDTH$}")?;
            }
        }
        for line in lines {
            writeln!(out, "          {line:<TEXT_WIDTH$}")?;
        }
    }
    Ok(())
}

/// Rule text wrapped as ncu wraps it (see the module's documentation).
pub fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut width = 0;
    // Words with the one space before them, and any further space alone ("a  b" → "a", " ",
    // " b").
    let mut words: Vec<&str> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if bytes[i] == b' ' {
            i += 1;
            if i >= bytes.len() || bytes[i] == b' ' {
                words.push(&text[start..i]);
                continue;
            }
        }
        while i < bytes.len() && bytes[i] != b' ' {
            i += 1;
        }
        words.push(&text[start..i]);
    }
    for word in words {
        let n = word.chars().count();
        if !line.is_empty() && width + n >= TEXT_WIDTH {
            lines.push(std::mem::take(&mut line));
            width = 0;
        }
        line.push_str(word);
        width += n;
        while width > TEXT_WIDTH {
            let cut = line
                .char_indices()
                .nth(TEXT_WIDTH)
                .map_or(line.len(), |(i, _)| i);
            let rest = line.split_off(cut);
            lines.push(std::mem::replace(&mut line, rest));
            width -= TEXT_WIDTH;
        }
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|l| match l.strip_prefix(' ') {
            Some(rest) if l.chars().count() < TEXT_WIDTH => rest.to_string(),
            _ => l,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_wraps_as_ncu_wraps_it() {
        // A first line may reach 109 characters; a later one counts the space before its
        // first word.
        let text = "a ".repeat(54) + "bb cc";
        let lines = wrap(&text);
        assert_eq!(lines[0].len(), 107, "{lines:?}");
        assert_eq!(lines[1], "bb cc");
        // A word longer than a line is cut at 110 characters, keeping its space.
        let long = format!("see {}", "x".repeat(120));
        let lines = wrap(&long);
        assert_eq!(lines[0], "see");
        assert_eq!(lines[1].len(), 110);
        assert!(lines[1].starts_with(" x"));
        assert_eq!(lines[2].len(), 11);
    }
}
