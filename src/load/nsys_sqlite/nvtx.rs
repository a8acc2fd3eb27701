//! Reader for `NVTX_EVENTS`: ranges (push/pop and start/end), marks, domain names and the thread
//! names set through NVTX. Text comes from the `text` column or from `StringIds` via `textId`,
//! whichever the version wrote.

use std::collections::HashMap;

use super::connection::{Row, int, text};
use super::reader::{
    AT_MISSING_STRINGS, END_BEFORE_START, FileStrings, Reader, names_of, unknown_name,
};
use crate::load::LoadError;
use crate::trace::{LoadWarnings, NvtxRanges, NvtxStyle, StrId, StringTable, emit_nvtx, pid_of};

pub const T_NVTX: &str = "NVTX_EVENTS";
pub const NVTX_COLUMNS: &[&str] = &[
    "start",
    "end",
    "eventType",
    "text",
    "textId",
    "globalTid",
    "domainId",
    "color",
    "rowid",
    "endGlobalTid",
];

// NVTX eventType values (ENUM_NSYS_EVENT_TYPE).
const MARK: i64 = 34;
const THREAD_NAME: i64 = 39;
const PUSH_POP: i64 = 59;
const START_END: i64 = 60;
const PUSH_POP_PAYLOAD: i64 = 70;
const START_END_PAYLOAD: i64 = 71;
const DOMAIN_CREATE: i64 = 75;

/// NVTX in file order. Strings are in `strings`, a table local to this reader.
pub struct NvtxRead {
    pub ranges: NvtxRanges,
    pub strings: StringTable,
    /// Thread names set with `nvtxNameOsThread`, by `globalTid`.
    pub thread_names: Vec<(i64, StrId)>,
    pub warnings: LoadWarnings,
}

/// Tables with more rows than this are read in two halves, side by side.
const SPLIT_ROWS: u64 = 50_000;

pub fn read_nvtx(r: &Reader, file_strings: &FileStrings) -> Result<NvtxRead, LoadError> {
    if !r.schema.has_table(T_NVTX) {
        return Ok(NvtxRead {
            ranges: NvtxRanges::default(),
            strings: StringTable::new(),
            thread_names: Vec::new(),
            warnings: LoadWarnings::default(),
        });
    }
    // A large table is read in two halves, each on its own core, then joined in file order:
    // reading it is the longest single job of a load.
    let parts = r.read_parts(
        T_NVTX,
        NVTX_COLUMNS,
        |rows| if rows > SPLIT_ROWS { 2 } else { 1 },
        |rows| {
            let mut part = Part::default();
            part.reserve(rows);
            part
        },
        |part, row| part.add(file_strings, row),
    )?;
    Ok(finish(parts))
}

/// What one part of the table holds, before domains and unclosed ranges are settled.
struct Part {
    ranges: NvtxRanges,
    strings: StringTable,
    thread_names: Vec<(i64, StrId)>,
    /// Domain-create events in file order: ((pid, domainId), name).
    domains: Vec<((u32, i64), StrId)>,
    range_domain_ids: Vec<i64>,
    last_ts: i64,
    counts: Counts,
}

#[derive(Default)]
struct Counts {
    lossy: u64,
    unknown_type: u64,
    no_start: u64,
    end_before_start: u64,
    unknown_text: u64,
}

impl Default for Part {
    fn default() -> Self {
        Part {
            ranges: NvtxRanges::default(),
            strings: StringTable::new(),
            thread_names: Vec::new(),
            domains: Vec::new(),
            range_domain_ids: Vec::new(),
            last_ts: i64::MIN,
            counts: Counts::default(),
        }
    }
}

impl Part {
    /// Room for `rows` ranges without growing.
    fn reserve(&mut self, rows: usize) {
        let n = &mut self.ranges;
        n.spans.start_ns.reserve(rows);
        n.spans.end_ns.reserve(rows);
        n.spans.name.reserve(rows);
        n.style.reserve(rows);
        n.unclosed.reserve(rows);
        n.global_tid.reserve(rows);
        n.color_argb.reserve(rows);
        n.domain.reserve(rows);
        n.depth.reserve(rows);
        n.row_id.reserve(rows);
        n.ended_on_other_thread.reserve(rows);
        self.range_domain_ids.reserve(rows);
    }

    /// Adds one row of the table.
    fn add(&mut self, file_strings: &FileStrings, row: &Row) {
        let Counts {
            lossy,
            unknown_type,
            no_start,
            end_before_start,
            unknown_text,
        } = &mut self.counts;
        let strings = &mut self.strings;
        let n = &mut self.ranges;
        let domains = &mut self.domains;
        let range_domain_ids = &mut self.range_domain_ids;
        let last_ts = &mut self.last_ts;
        let start = int(row, 0);
        let end = int(row, 1);
        *last_ts = (*last_ts)
            .max(start.unwrap_or(i64::MIN))
            .max(end.unwrap_or(i64::MIN));
        let event_type = int(row, 2).unwrap_or(-1);
        let mut label = || -> StrId {
            // Shared with the file's table: a long registered string is not copied per reader.
            if let Some(s) = file_strings.shared_text(int(row, 4)) {
                return strings.intern_shared(&s);
            }
            match text(row, 3) {
                Some(bytes) => match std::str::from_utf8(bytes) {
                    Ok(s) => strings.intern(s),
                    Err(_) => {
                        *lossy += 1;
                        strings.intern(&String::from_utf8_lossy(bytes))
                    }
                },
                // A textId that points at no string, and no text of its own.
                None => match int(row, 4) {
                    Some(id) => {
                        *unknown_text += 1;
                        strings.intern(&unknown_name(id))
                    }
                    None => StringTable::EMPTY,
                },
            }
        };
        let global_tid = int(row, 5).unwrap_or(0);
        let style = match event_type {
            PUSH_POP | PUSH_POP_PAYLOAD => NvtxStyle::PushPop,
            START_END | START_END_PAYLOAD => NvtxStyle::StartEnd,
            MARK => NvtxStyle::Mark,
            DOMAIN_CREATE => {
                let name = label();
                if let Some(domain) = int(row, 6) {
                    domains.push(((pid_of(global_tid), domain), name));
                }
                return;
            }
            THREAD_NAME => {
                let name = label();
                self.thread_names.push((global_tid, name));
                return;
            }
            33 => return, // category names: not drawn
            _ => {
                *unknown_type += 1;
                return;
            }
        };
        let Some(s) = start else {
            *no_start += 1;
            return;
        };
        let (e, unclosed) = match (style, end) {
            (NvtxStyle::Mark, _) => (s, false),
            (_, Some(e)) if e >= s => (e, false),
            (_, Some(_)) => {
                *end_before_start += 1;
                return;
            }
            (_, None) => (i64::MIN, true), // closed at the last NVTX timestamp below
        };
        let name = label();
        n.spans.push(s, e, name);
        n.style.push(style);
        n.unclosed.push(unclosed);
        n.global_tid.push(global_tid);
        n.color_argb.push(int(row, 7).unwrap_or(0) as u32);
        n.domain.push(StringTable::EMPTY);
        n.depth.push(0);
        n.row_id.push(int(row, 8).unwrap_or(0));
        n.ended_on_other_thread.push(int(row, 9).is_some());
        range_domain_ids.push(int(row, 6).unwrap_or(0));
    }
}

/// PyTorch's `emit_nvtx(record_shapes=True)` writes each operator's input sizes in its range's
/// text (`aten::mm, seq = 5, op_id = 9, sizes = [[2048, 768], [768, 768]], …`): they become the
/// range's `input_shapes`, as a Kineto trace's `Input Dims`. Left empty when no range has them.
fn emit_nvtx_shapes(n: &mut NvtxRanges, strings: &mut StringTable) {
    let mut sizes_of: HashMap<StrId, StrId> = HashMap::new();
    let mut shapes: Vec<StrId> = Vec::new();
    for (i, &name) in n.spans.name.iter().enumerate() {
        let sizes = *sizes_of.entry(name).or_insert_with(|| {
            let sizes = emit_nvtx::parse(strings.get(name)).and_then(|p| p.sizes);
            match sizes.map(str::to_string) {
                Some(s) => strings.intern(&s),
                None => StringTable::EMPTY,
            }
        });
        if sizes != StringTable::EMPTY && shapes.is_empty() {
            shapes = vec![StringTable::EMPTY; n.spans.name.len()];
        }
        if let Some(slot) = shapes.get_mut(i) {
            *slot = sizes;
        }
    }
    n.input_shapes = shapes;
}

/// Joins the parts in file order (the strings of later parts renumbered into the first's),
/// then ends unclosed ranges and names domains over the whole table.
fn finish(parts: Vec<Part>) -> NvtxRead {
    let mut parts = parts.into_iter();
    let Some(mut all) = parts.next() else {
        return NvtxRead {
            ranges: NvtxRanges::default(),
            strings: StringTable::new(),
            thread_names: Vec::new(),
            warnings: LoadWarnings::default(),
        };
    };
    for p in parts {
        let remap = all.strings.merge(&p.strings);
        let id = |s: StrId| remap.get(s as usize).copied().unwrap_or(StringTable::EMPTY);
        let (n, m) = (&mut all.ranges, p.ranges);
        n.spans.start_ns.extend(m.spans.start_ns);
        n.spans.end_ns.extend(m.spans.end_ns);
        n.spans.name.extend(m.spans.name.into_iter().map(id));
        n.style.extend(m.style);
        n.unclosed.extend(m.unclosed);
        n.global_tid.extend(m.global_tid);
        n.color_argb.extend(m.color_argb);
        n.domain.extend(m.domain.into_iter().map(id));
        n.depth.extend(m.depth);
        n.row_id.extend(m.row_id);
        n.ended_on_other_thread.extend(m.ended_on_other_thread);
        all.thread_names
            .extend(p.thread_names.into_iter().map(|(t, s)| (t, id(s))));
        all.domains
            .extend(p.domains.into_iter().map(|(k, s)| (k, id(s))));
        all.range_domain_ids.extend(p.range_domain_ids);
        all.last_ts = all.last_ts.max(p.last_ts);
        let c = &mut all.counts;
        c.lossy += p.counts.lossy;
        c.unknown_type += p.counts.unknown_type;
        c.no_start += p.counts.no_start;
        c.end_before_start += p.counts.end_before_start;
        c.unknown_text += p.counts.unknown_text;
    }
    // Domain names are per process: nsys joins a range to the domain-create event with the same
    // domainId in the same process (nvtx_sum.py, Nsight Systems 2023.4); the first one counts.
    let mut domains: HashMap<(u32, i64), StrId> = HashMap::new();
    for (key, name) in &all.domains {
        domains.entry(*key).or_insert(*name);
    }
    let n = &mut all.ranges;
    let last_ts = all.last_ts;
    let range_domain_ids = &all.range_domain_ids;
    let Counts {
        lossy,
        unknown_type,
        no_start,
        end_before_start,
        unknown_text,
    } = all.counts;
    // nvtx_sum.py ends an unclosed range at the largest NVTX timestamp of the file.
    let mut unclosed = 0u64;
    for (i, &domain_id) in range_domain_ids.iter().enumerate() {
        if n.unclosed[i] {
            n.spans.end_ns[i] = last_ts.max(n.spans.start_ns[i]);
            unclosed += 1;
        }
        if domain_id != 0 {
            let key = (pid_of(n.global_tid[i]), domain_id);
            if let Some(&d) = domains.get(&key) {
                n.domain[i] = d;
            }
        }
    }
    emit_nvtx_shapes(n, &mut all.strings);
    let mut warnings = LoadWarnings::default();
    let w = &mut warnings;
    w.add_about(
        T_NVTX,
        "NVTX [range was|ranges were]",
        "never closed (end set to the last NVTX timestamp)",
        unclosed,
    );
    w.add(
        T_NVTX,
        "[has|have] text that is not UTF-8 (shown with replacement characters)",
        lossy,
    );
    w.add_about(T_NVTX, &names_of("NVTX"), AT_MISSING_STRINGS, unknown_text);
    w.skip(
        T_NVTX,
        "[has|have] an unknown eventType (skipped)",
        unknown_type,
    );
    w.skip(T_NVTX, "[has|have] no start time (skipped)", no_start);
    w.skip(T_NVTX, END_BEFORE_START, end_before_start);
    NvtxRead {
        ranges: all.ranges,
        strings: all.strings,
        thread_names: all.thread_names,
        warnings,
    }
}
