//! What a load could not read as it was: rows the loader skipped or repaired, counted by table
//! and reason, and how many rows each table had against how many it kept. The command line prints
//! one line per reason and the window lists them, so that numbers are never silently partial.

/// One reason, with how many rows (or names, frames, …) it hit.
///
/// `subject` and `what` are phrases in which `[singular|plural]` picks the form for the count:
/// `"kernel [row|rows]"` and `"[has|have] no end time (kept as instants)"` read
/// "1 kernel row has no end time (kept as instants)" or "118 kernel rows have no end time …".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// The table of the export it was found in (`CUPTI_ACTIVITY_KIND_KERNEL`).
    pub table: String,
    /// What was counted: "kernel [row|rows]", "kernel [name|names]".
    pub subject: String,
    /// What was wrong and what the loader did about it.
    pub what: String,
    pub count: u64,
    /// The rows were left out of the trace (otherwise they were repaired or kept as they are).
    pub skipped: bool,
}

impl LoadWarning {
    /// The line a user reads: "118 kernel rows have no end time (kept as instants)".
    pub fn message(&self) -> String {
        format!(
            "{} {} {}",
            self.count,
            pick_number(&self.subject, self.count),
            pick_number(&self.what, self.count)
        )
    }

    /// The reason alone, without the subject or what was done about it: "52 end before they
    /// start", to follow "has 52 kernel rows, none readable".
    pub fn reason(&self) -> String {
        let what = pick_number(&self.what, self.count);
        let bare = what.split(" (").next().unwrap_or(&what).trim_end();
        format!("{} {bare}", self.count)
    }
}

/// Rows a table had and how many of them the loader left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableRows {
    pub table: String,
    /// Rows the loader's queries returned.
    pub read: u64,
    /// Rows left out because they could not be read (their reasons are warnings).
    pub skipped: u64,
}

impl TableRows {
    /// Rows that made it into the trace.
    pub fn kept(&self) -> u64 {
        self.read.saturating_sub(self.skipped)
    }
}

/// Things in the file that were odd but did not stop the load, counted by table and reason.
#[derive(Debug, Clone, Default)]
pub struct LoadWarnings {
    pub entries: Vec<LoadWarning>,
    /// Rows read and skipped per table, for every table the loader read.
    pub tables: Vec<TableRows>,
}

impl LoadWarnings {
    /// Counts `rows` rows of `table` that were repaired or kept as they are; `what` says what was
    /// wrong, `[singular|plural]` alternatives allowed ("[has|have] no end time (kept as instants)").
    pub fn add(&mut self, table: &str, what: &str, rows: u64) {
        let subject = format!("{} [row|rows]", table_noun(table));
        self.count(table, &subject, what, rows, false);
    }

    /// Counts `rows` rows of `table` that were left out of the trace.
    pub fn skip(&mut self, table: &str, what: &str, rows: u64) {
        let subject = format!("{} [row|rows]", table_noun(table));
        self.count(table, &subject, what, rows, true);
    }

    /// Counts `n` things that are not whole rows ("kernel [name|names]") found in `table`.
    pub fn add_about(&mut self, table: &str, subject: &str, what: &str, n: u64) {
        self.count(table, subject, what, n, false);
    }

    fn count(&mut self, table: &str, subject: &str, what: &str, n: u64, skipped: bool) {
        if n == 0 {
            return;
        }
        if skipped {
            self.table_mut(table).skipped += n;
        }
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.table == table && e.subject == subject && e.what == what)
        {
            e.count += n;
        } else {
            self.entries.push(LoadWarning {
                table: table.to_string(),
                subject: subject.to_string(),
                what: what.to_string(),
                count: n,
                skipped,
            });
        }
    }

    /// Records that the loader's queries returned `rows` more rows of `table`.
    pub fn add_rows_read(&mut self, table: &str, rows: u64) {
        self.table_mut(table).read += rows;
    }

    fn table_mut(&mut self, table: &str) -> &mut TableRows {
        let at = match self.tables.iter().position(|t| t.table == table) {
            Some(i) => i,
            None => {
                self.tables.push(TableRows {
                    table: table.to_string(),
                    ..TableRows::default()
                });
                self.tables.len() - 1
            }
        };
        &mut self.tables[at]
    }

    /// Rows read and skipped of `table`; `None` when the loader read nothing from it.
    pub fn table(&self, table: &str) -> Option<&TableRows> {
        self.tables.iter().find(|t| t.table == table)
    }

    /// The reasons rows of `table` were left out.
    pub fn skipped_in<'a>(&'a self, table: &'a str) -> impl Iterator<Item = &'a LoadWarning> {
        self.entries
            .iter()
            .filter(move |e| e.skipped && e.table == table)
    }

    /// Rows (and names, frames, …) counted by all reasons together.
    pub fn total(&self) -> u64 {
        self.entries.iter().map(|e| e.count).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// One line per reason, as the command line prints them after `warning: FILE: `.
    pub fn messages(&self) -> Vec<String> {
        self.entries.iter().map(LoadWarning::message).collect()
    }

    pub fn extend(&mut self, other: LoadWarnings) {
        for t in other.tables {
            let mine = self.table_mut(&t.table);
            mine.read += t.read;
            mine.skipped += t.skipped;
        }
        for e in other.entries {
            // The skipped rows were counted in the table rows above already.
            if let Some(mine) = self
                .entries
                .iter_mut()
                .find(|m| m.table == e.table && m.subject == e.subject && m.what == e.what)
            {
                mine.count += e.count;
            } else {
                self.entries.push(e);
            }
        }
    }
}

/// What one row of an export table is, in a user's words ("kernel", "CUDA runtime API").
pub fn table_noun(table: &str) -> &str {
    match table {
        "CUPTI_ACTIVITY_KIND_KERNEL" => "kernel",
        "CUPTI_ACTIVITY_KIND_MEMCPY" => "memory copy",
        "CUPTI_ACTIVITY_KIND_MEMSET" => "memory set",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" => "synchronization",
        "CUPTI_ACTIVITY_KIND_RUNTIME" => "CUDA runtime API",
        "CUPTI_ACTIVITY_KIND_DRIVER" => "CUDA driver API",
        "CUPTI_ACTIVITY_KIND_OPENACC_DATA"
        | "CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH"
        | "CUPTI_ACTIVITY_KIND_OPENACC_OTHER" => "OpenACC",
        "CUPTI_ACTIVITY_KIND_OPENMP" => "OpenMP",
        "NVTX_EVENTS" => "NVTX",
        "OSRT_API" => "OS runtime",
        "StringIds" => "string",
        "SCHED_EVENTS" => "thread scheduling",
        "COMPOSITE_EVENTS" => "CPU sample",
        "SAMPLING_CALLCHAINS" => "CPU sample stack frame",
        "CUDA_CALLCHAINS" => "CUDA backtrace frame",
        "OSRT_CALLCHAINS" => "OS runtime backtrace frame",
        "GPU_METRICS" | "GENERIC_EVENTS" => "GPU metric",
        "CUDA_UM_CPU_PAGE_FAULT_EVENTS" => "CPU page fault",
        "CUDA_UM_GPU_PAGE_FAULT_EVENTS" => "GPU page fault",
        "PROFILER_OVERHEAD" => "profiler overhead",
        "CUDA_GPU_MEMORY_USAGE_EVENTS" => "GPU memory usage",
        other => other,
    }
}

/// Resolves every `[singular|plural]` in `phrase` for `n`.
pub fn pick_number(phrase: &str, n: u64) -> String {
    let mut out = String::with_capacity(phrase.len());
    let mut rest = phrase;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let inside = &rest[open + 1..close];
        let Some((one, many)) = inside.split_once('|') else {
            out.push_str(&rest[..=close]);
            rest = &rest[close + 1..];
            continue;
        };
        out.push_str(&rest[..open]);
        out.push_str(if n == 1 { one } else { many });
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_agree_with_the_count() {
        let mut w = LoadWarnings::default();
        w.add(
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "[has|have] no end time (kept as instants)",
            118,
        );
        w.skip(
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "[ends|end] before [it starts|they start] (skipped)",
            1,
        );
        w.add_about(
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "kernel [name points|names point]",
            "at missing strings (shown as <unknown name #ID>)",
            3,
        );
        assert_eq!(
            w.messages(),
            [
                "118 kernel rows have no end time (kept as instants)",
                "1 memory copy row ends before it starts (skipped)",
                "3 kernel names point at missing strings (shown as <unknown name #ID>)",
            ]
        );
        assert_eq!(w.entries[1].reason(), "1 ends before it starts");
        assert_eq!(pick_number("a [b] c", 2), "a [b] c");
    }

    #[test]
    fn skipped_rows_are_taken_off_what_was_kept() {
        let mut a = LoadWarnings::default();
        a.add_rows_read("T", 10);
        a.skip("T", "[is|are] bad (skipped)", 4);
        let mut b = LoadWarnings::default();
        b.add_rows_read("T", 5);
        b.skip("T", "[is|are] bad (skipped)", 1);
        b.add("T", "[is|are] odd (kept)", 2);
        a.extend(b);
        let t = a.table("T").cloned().unwrap_or_default();
        assert_eq!((t.read, t.skipped, t.kept()), (15, 5, 10));
        assert_eq!(a.skipped_in("T").map(|e| e.count).sum::<u64>(), 5);
        assert_eq!(a.total(), 7);
    }
}
