//! The options every rule shares — `rows=`, `start=`, `end=`, `nvtx=`, and `process=` /
//! `thread=` where a rule takes them — read and applied as Nsight Systems 2023.4.4's
//! `nsysstats.ExpertSystemsReport` does (`setup`, `filter_time_range`, `_query_nvtx_filter_range`).
//!
//! nsys narrows the data by replacing every table that has `start` and `end` columns with a view
//! of the rows that overlap the window; with `nvtx=` also to the range's thread or process. Tables
//! a rule names with `main.` (the CUDA API calls a memcpy rule joins to) are left whole, so each
//! rule says which of its events go through [`RuleScope`].

use crate::analysis::reports::ReportOptions;
use crate::trace::{GlobalTid, NvtxStyle, Trace};

/// `rows=` when absent (`ExpertSystemsReport.DEFAULT_ROW_LIMIT`).
pub const DEFAULT_ROW_LIMIT: i64 = 50;

/// The end of the window when only `start=` (or `process=` / `thread=`) is given.
const OPEN_END_NS: i64 = i64::MAX;

/// Which events a rule looks at, and how many findings it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleScope {
    /// At most this many findings; `None` for no limit (`rows=` negative, as SQL `LIMIT -1`).
    pub row_limit: Option<usize>,
    /// `None` when no option narrows the data: then nsys filters nothing at all.
    window: Option<Window>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    start_ns: i64,
    end_ns: i64,
    /// The `globalTid` of the NVTX range given with `nvtx=`.
    nvtx_global_tid: Option<i64>,
    process: Option<u32>,
    thread: Option<u32>,
}

impl RuleScope {
    /// Reads the common options (and `process=` / `thread=` when given) from `options`.
    pub fn parse(trace: &Trace, options: &ReportOptions) -> Result<Self, String> {
        let rows = int_option(options, "rows")?.unwrap_or(DEFAULT_ROW_LIMIT);
        let row_limit = usize::try_from(rows).ok();
        let start = int_option(options, "start")?;
        let end = int_option(options, "end")?;
        let nvtx = options.value("nvtx");
        // A negative id means "no filter" (nsys's default of -1).
        let process = int_option(options, "process")?.and_then(|p| u32::try_from(p).ok());
        let thread = int_option(options, "thread")?.and_then(|t| u32::try_from(t).ok());
        if start.is_none()
            && end.is_none()
            && nvtx.is_none()
            && process.is_none()
            && thread.is_none()
        {
            return Ok(Self {
                row_limit,
                window: None,
            });
        }
        let (start_ns, end_ns, nvtx_global_tid) = match nvtx {
            None => (start.unwrap_or(0), end.unwrap_or(OPEN_END_NS), None),
            Some(spec) => {
                let range = find_nvtx_range(trace, spec)?;
                let end_ns = match (end, range.end_ns) {
                    (Some(e), _) => e,
                    (None, Some(e)) => e,
                    (None, None) => {
                        return Err(format!(
                            "NVTX range '{spec}' never ends in this trace; give end= as well"
                        ));
                    }
                };
                (
                    start.unwrap_or(range.start_ns),
                    end_ns,
                    Some(range.global_tid),
                )
            }
        };
        if start_ns > end_ns {
            return Err("The start time cannot be greater than the end time.".into());
        }
        if nvtx.is_some() && (process.is_some() || thread.is_some()) {
            return Err("The 'nvtx' option cannot be used with 'process' or 'thread'.".into());
        }
        Ok(Self {
            row_limit,
            window: Some(Window {
                start_ns,
                end_ns,
                nvtx_global_tid,
                process,
                thread,
            }),
        })
    }

    /// Does an event of a table keyed by `globalTid` (CUDA API calls, profiler overhead) count?
    pub fn keeps_thread_event(&self, global_tid: i64, start_ns: i64, end_ns: i64) -> bool {
        let Some(w) = &self.window else {
            return true;
        };
        let g = GlobalTid(global_tid);
        w.overlaps(start_ns, end_ns)
            && w.process.is_none_or(|p| g.pid() == p)
            && w.thread.is_none_or(|t| g.tid() == t)
            && w.nvtx_global_tid.is_none_or(|n| {
                let range = GlobalTid(n);
                // nsysstats takes a range whose tid differs from its pid for a push/pop range
                // (one thread) and any other for a start/end range (the whole process).
                if range.pid() != range.tid() {
                    global_tid == n
                } else {
                    global_tid >> 24 == n >> 24
                }
            })
    }

    /// Does an event of a table keyed by `globalPid` (GPU operations) of process `pid` count?
    pub fn keeps_process_event(&self, pid: u32, start_ns: i64, end_ns: i64) -> bool {
        let Some(w) = &self.window else {
            return true;
        };
        w.overlaps(start_ns, end_ns)
            && w.process.is_none_or(|p| pid == p)
            && w.nvtx_global_tid.is_none_or(|n| GlobalTid(n).pid() == pid)
    }

    /// The first `n` findings, or all of them.
    pub fn limit(&self, n: usize) -> usize {
        self.row_limit.map_or(n, |limit| limit.min(n))
    }
}

impl Window {
    /// `_CREATE_FILTERED_VIEW_QUERY`: the event starts in `[start, end)`, ends in it, or spans it.
    fn overlaps(&self, start_ns: i64, end_ns: i64) -> bool {
        let (s, e) = (self.start_ns, self.end_ns);
        (start_ns >= s && start_ns < e)
            || (end_ns >= s && end_ns < e)
            || (start_ns < s && end_ns >= e)
    }
}

/// An integer option as Python's `int()` reads it; `None` when absent.
pub fn int_option(options: &ReportOptions, name: &str) -> Result<Option<i64>, String> {
    let Some(text) = options.value(name) else {
        return Ok(None);
    };
    let digits: String = text.trim().chars().filter(|&c| c != '_').collect();
    digits
        .parse::<i64>()
        .map(Some)
        .map_err(|_| format!("{name}={text}: not an integer"))
}

/// The NVTX range an `nvtx=` option names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NvtxWindow {
    pub start_ns: i64,
    /// `None` for a range the trace never closes.
    pub end_ns: Option<i64>,
    pub global_tid: i64,
}

/// Finds `NAME[@DOMAIN][/N]`: the N-th (from 0) push/pop or start/end range, by start time, whose
/// text (with `@domain` for a named domain) is `NAME[@DOMAIN]`. A trailing `/N` that is not a
/// non-negative number is part of the name.
pub fn find_nvtx_range(trace: &Trace, spec: &str) -> Result<NvtxWindow, String> {
    let (name, index) = match spec.rsplit_once('/') {
        Some((name, n)) => match n.trim().parse::<usize>() {
            Ok(i) => (name, i),
            Err(_) => (spec, 0),
        },
        None => (spec, 0),
    };
    let nv = &trace.nvtx;
    let mut matches: Vec<usize> = (0..nv.spans.len())
        .filter(|&i| matches!(nv.style[i], NvtxStyle::PushPop | NvtxStyle::StartEnd))
        .filter(|&i| {
            let text = trace.str(nv.spans.name[i]);
            let domain = nv.domain.get(i).map_or("", |&d| trace.str(d));
            if domain.is_empty() {
                text == name
            } else {
                name.len() == text.len() + 1 + domain.len()
                    && name.starts_with(text)
                    && name[text.len()..].starts_with('@')
                    && name.ends_with(domain)
            }
        })
        .collect();
    matches.sort_by_key(|&i| (nv.spans.start_ns[i], nv.row_id.get(i).copied().unwrap_or(0)));
    let Some(&i) = matches.get(index) else {
        return Err(format!(
            "NVTX range '{spec}' could not be found in this trace."
        ));
    };
    Ok(NvtxWindow {
        start_ns: nv.spans.start_ns[i],
        end_ns: (!nv.unclosed.get(i).copied().unwrap_or(false)).then_some(nv.spans.end_ns[i]),
        global_tid: nv.global_tid[i],
    })
}

/// SQL `LIKE` with a pattern of literal text and `%` wildcards, case-insensitive for ASCII as
/// SQLite's default `LIKE` is (the rules pick API names with it).
pub fn sql_like(text: &str, pattern: &str) -> bool {
    let text = text.as_bytes();
    let parts: Vec<&[u8]> = pattern.as_bytes().split(|&b| b == b'%').collect();
    let eq = |a: &[u8], b: &[u8]| a.eq_ignore_ascii_case(b);
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
        return text.is_empty();
    };
    if parts.len() == 1 {
        return eq(text, first);
    }
    if text.len() < first.len() || !eq(&text[..first.len()], first) {
        return false;
    }
    let mut rest = &text[first.len()..];
    for part in parts[1..parts.len() - 1].iter().filter(|p| !p.is_empty()) {
        let Some(at) = rest.windows(part.len()).position(|w| eq(w, part)) else {
            return false;
        };
        rest = &rest[at + part.len()..];
    }
    rest.len() >= last.len() && eq(&rest[rest.len() - last.len()..], last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_as_sqlite_does() {
        assert!(sql_like("cudaMemcpyAsync_v3020", "cudaMemcpy%Async%"));
        assert!(sql_like("CUDAMEMCPY2DASYNC", "cudaMemcpy%Async%"));
        assert!(!sql_like("cudaMemcpy_v3020", "cudaMemcpy%Async%"));
        assert!(sql_like("cudaMemcpy_v3020", "cudaMemcpy%"));
        assert!(sql_like("cudaMemcpy", "cudaMemcpy%"));
        assert!(!sql_like("cudaMemcp", "cudaMemcpy%"));
        assert!(sql_like("xAsyncY", "%async%"));
        assert!(!sql_like("cudaMemset", "%async%"));
        assert!(sql_like("abc", "abc"));
        assert!(!sql_like("abcd", "abc"));
        // The last literal must not overlap the first.
        assert!(!sql_like("ab", "ab%b"));
        assert!(sql_like("abb", "ab%b"));
    }

    #[test]
    fn windows_keep_what_overlaps() {
        let w = Window {
            start_ns: 10,
            end_ns: 20,
            nvtx_global_tid: None,
            process: None,
            thread: None,
        };
        assert!(w.overlaps(10, 10));
        assert!(w.overlaps(5, 10));
        assert!(w.overlaps(19, 30));
        assert!(w.overlaps(0, 30));
        assert!(!w.overlaps(20, 30));
        assert!(!w.overlaps(0, 9));
        let point = Window {
            start_ns: 10,
            end_ns: 10,
            ..w
        };
        assert!(point.overlaps(5, 10));
        assert!(!point.overlaps(10, 12));
    }
}
