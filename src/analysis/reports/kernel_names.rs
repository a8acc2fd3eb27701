//! The name a CUDA report gives a kernel under the `base`, `mangled` and `nvtx-name` options, as
//! nsys 2023.4.4's `kernel_helper.create_kernel_view` builds its `CUPTI_ACTIVITY_KIND_KERNEL_NAMED`
//! view for `cuda_gpu_kern_sum`, `cuda_gpu_kern_gb_sum`, `cuda_gpu_sum`, `cuda_api_gpu_sum`,
//! `cuda_gpu_trace`, `cuda_kern_exec_sum` and `cuda_kern_exec_trace`:
//! - the kernel part is `shortName` with `base`, `mangledName` with `mangled` (the demangled
//!   name where the export has none), else `demangledName`; `base` wins over `mangled`;
//! - `nvtx-name` prefixes `<range>/` with the text of the innermost NVTX range (push/pop or
//!   start/end, any domain, the domain not printed) open on the launching thread around the whole
//!   launching CUDA API call: the enclosing range that starts last. An unclosed range ends at the
//!   largest timestamp of any NVTX range. Without an enclosing range, or a launching call, the
//!   name stays as it is.
//!
//! [`KernelNaming`] is built once per report (one sort-and-sweep per thread for `nvtx-name`);
//! [`KernelNaming::key`] is a `Copy` key to group on without building strings per kernel.

use crate::trace::Needs;
use std::borrow::Cow;
use std::sync::Arc;

use super::ReportOptions;
use crate::analysis::table::CellText;
use crate::trace::{NvtxStyle, StrId, StringTable, Trace};

/// Which kernel name column a report prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameSource {
    Demangled,
    /// `shortName`: the function name without template arguments or parameters.
    Base,
    Mangled,
}

/// What a kernel's printed name is made of: `<nvtx>/<kernel>`, or `<kernel>` when `nvtx` is
/// `None`. Equal keys print equal names (the converse nearly always holds; see
/// [`KernelNaming::name_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelNameKey {
    pub nvtx: Option<StrId>,
    pub kernel: StrId,
}

/// Kernel names under one set of report options.
pub struct KernelNaming<'t> {
    trace: &'t Trace,
    source: NameSource,
    /// Per API call, the text of the innermost NVTX range around it ([`NO_RANGE`] when none);
    /// empty unless `nvtx-name` was given.
    range_of_call: Vec<StrId>,
    nvtx_name: bool,
}

/// No enclosing NVTX range (or one without text, which nsys's `COALESCE` also leaves out).
const NO_RANGE: StrId = StrId::MAX;

impl<'t> KernelNaming<'t> {
    /// The naming the options `base`, `mangled` and `nvtx-name` ask for.
    pub fn from_options(trace: &'t Trace, options: &ReportOptions) -> Self {
        let source = if options.has("base") {
            NameSource::Base
        } else if options.has("mangled") {
            NameSource::Mangled
        } else {
            NameSource::Demangled
        };
        Self::new(trace, source, options.has("nvtx-name"))
    }

    /// Do `options` name kernels other than by their demangled name?
    /// What a kernel report named under `options` reads besides the kernels: `nvtx-name` finds
    /// each kernel's launching call inside the NVTX ranges of its thread.
    pub fn needs(options: &ReportOptions) -> Needs {
        if options.has("nvtx-name") {
            Needs::KERNELS | Needs::NVTX | Needs::GPU_LINKS
        } else {
            Needs::KERNELS
        }
    }

    pub fn options_rename(options: &ReportOptions) -> bool {
        ["base", "mangled", "nvtx-name"]
            .iter()
            .any(|o| options.has(o))
    }

    pub fn new(trace: &'t Trace, source: NameSource, nvtx_name: bool) -> Self {
        let range_of_call = if nvtx_name {
            innermost_ranges_of_calls(trace)
        } else {
            Vec::new()
        };
        Self {
            trace,
            source,
            range_of_call,
            nvtx_name,
        }
    }

    /// True when names are the plain demangled ones (no option changes them).
    pub fn is_default(&self) -> bool {
        self.source == NameSource::Demangled && !self.nvtx_name
    }

    /// The name parts of kernel `i` (an index into `trace.kernels`).
    pub fn key(&self, i: usize) -> KernelNameKey {
        let k = &self.trace.kernels;
        let demangled = k.spans.name.get(i).copied().unwrap_or(StringTable::EMPTY);
        let kernel = match self.source {
            NameSource::Demangled => demangled,
            NameSource::Base => k.short_name.get(i).copied().unwrap_or(demangled),
            NameSource::Mangled => k.mangled_name.get(i).copied().unwrap_or(demangled),
        };
        // A kernel with no launching call in the trace (`NO_INDEX`) finds no entry.
        let nvtx = if self.nvtx_name {
            k.api_call
                .get(i)
                .and_then(|&call| self.range_of_call.get(call as usize))
                .copied()
                .filter(|&r| r != NO_RANGE)
        } else {
            None
        };
        KernelNameKey { nvtx, kernel }
    }

    /// The printed name of a key. Two keys can print the same name (`a/b` + `c` and `a` +
    /// `b/c`); reports that group by name merge such groups by this string.
    pub fn name_of(&self, key: KernelNameKey) -> Cow<'t, str> {
        let kernel = self.trace.str(key.kernel);
        match key.nvtx {
            None => Cow::Borrowed(kernel),
            Some(r) => Cow::Owned(format!("{}/{kernel}", self.trace.str(r))),
        }
    }

    /// The printed name of kernel `i`; allocates only when an NVTX prefix applies.
    pub fn kernel_name(&self, i: usize) -> Cow<'t, str> {
        self.name_of(self.key(i))
    }

    /// [`KernelNaming::kernel_name`] as a cell's text: the range's and the kernel's strings
    /// referred to, not copied, so a row dump holds no copy of a name per row.
    pub fn kernel_text(&self, i: usize) -> CellText {
        let key = self.key(i);
        let kernel = self.trace.shared_str(key.kernel);
        match key.nvtx {
            None => kernel.into(),
            Some(r) => CellText::joined([self.trace.shared_str(r), Arc::from("/"), kernel]),
        }
    }
}

/// For every API call, the text of the innermost NVTX range of its thread that encloses it
/// (`start <= call.start && end >= call.end`, the latest start winning), or [`NO_RANGE`].
fn innermost_ranges_of_calls(trace: &Trace) -> Vec<StrId> {
    let api = &trace.api_calls.spans;
    let nvtx = &trace.nvtx;
    let mut out = vec![NO_RANGE; api.len()];
    if nvtx.spans.is_empty() || api.is_empty() {
        return out;
    }
    // kernel_helper.py ends an unclosed range at the largest start or end of any NVTX range
    // (marks and other event types not counted), which can differ from the loader's choice.
    let open_end = (0..nvtx.spans.len())
        .filter(|&i| nvtx.style[i] != NvtxStyle::Mark)
        .map(|i| {
            if nvtx.unclosed[i] {
                nvtx.spans.start_ns[i]
            } else {
                nvtx.spans.end_ns[i]
            }
        })
        .max()
        .unwrap_or(i64::MIN);
    let mut ranges: Vec<Range> = Vec::new();
    let mut stack: Vec<(i64, StrId)> = Vec::new();
    for thread in &trace.threads {
        let calls = thread.api_calls.range.clone();
        if calls.is_empty() || thread.nvtx_levels.is_empty() {
            continue;
        }
        ranges.clear();
        for level in &thread.nvtx_levels {
            for i in level.range.clone() {
                if nvtx.style[i] == NvtxStyle::Mark {
                    continue;
                }
                let end_ns = if nvtx.unclosed[i] {
                    open_end.max(nvtx.spans.start_ns[i])
                } else {
                    nvtx.spans.end_ns[i]
                };
                ranges.push(Range {
                    start_ns: nvtx.spans.start_ns[i],
                    end_ns,
                    depth: nvtx.depth[i],
                    row_id: nvtx.row_id.get(i).copied().unwrap_or(0),
                    text: nvtx.spans.name[i],
                });
            }
        }
        let (starts, ends) = (&api.start_ns[calls.clone()], &api.end_ns[calls.clone()]);
        innermost_enclosing(
            &mut ranges,
            &mut stack,
            starts.iter().copied().zip(ends.iter().copied()),
            |call, text| {
                // A range without text gives NULL in nsys's `COALESCE(nvtxName || '/' || ..)`.
                if text != StringTable::EMPTY {
                    out[calls.start + call] = text;
                }
            },
        );
    }
    out
}

/// Calls `found(k, text)` for the `k`-th of `calls` (`(start, end)` sorted by start) with the
/// text of the innermost range of `ranges` enclosing it, if any: the one starting last; of
/// equal starts the shorter, then the deeper. O((ranges + calls) log).
fn innermost_enclosing(
    ranges: &mut [Range],
    stack: &mut Vec<(i64, StrId)>,
    calls: impl Iterator<Item = (i64, i64)>,
    mut found: impl FnMut(usize, StrId),
) {
    // Of equal starts the inner range comes later, so the sweep below prefers it.
    ranges.sort_unstable_by(|a, b| {
        a.start_ns
            .cmp(&b.start_ns)
            .then(b.end_ns.cmp(&a.end_ns))
            .then(a.depth.cmp(&b.depth))
            .then(a.row_id.cmp(&b.row_id))
    });
    // The stack holds the ranges started so far that no later-starting, longer-lasting range
    // dominates: bottom to top, starts rise and ends fall strictly, so the innermost range
    // enclosing a call is the topmost one that ends at or after the call's end.
    stack.clear();
    let mut next = 0;
    for (k, (call_start, call_end)) in calls.enumerate() {
        while let Some(r) = ranges.get(next).filter(|r| r.start_ns <= call_start) {
            while stack.last().is_some_and(|&(end, _)| end <= r.end_ns) {
                stack.pop();
            }
            stack.push((r.end_ns, r.text));
            next += 1;
        }
        let enclosing = stack.partition_point(|&(end, _)| end >= call_end);
        if let Some(&(_, text)) = enclosing.checked_sub(1).and_then(|top| stack.get(top)) {
            found(k, text);
        }
    }
}

/// An NVTX range as the sweep needs it.
#[derive(Debug, Clone)]
struct Range {
    start_ns: i64,
    end_ns: i64,
    depth: u16,
    row_id: i64,
    text: StrId,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The innermost enclosing range by definition: the latest start among those enclosing,
    /// ties to the shorter, then the deeper, then the later row.
    fn brute_force(ranges: &[Range], call: (i64, i64)) -> Option<StrId> {
        ranges
            .iter()
            .filter(|r| r.start_ns <= call.0 && r.end_ns >= call.1)
            .max_by(|a, b| {
                a.start_ns
                    .cmp(&b.start_ns)
                    .then(b.end_ns.cmp(&a.end_ns))
                    .then(a.depth.cmp(&b.depth))
                    .then(a.row_id.cmp(&b.row_id))
            })
            .map(|r| r.text)
    }

    #[test]
    fn sweep_finds_the_innermost_enclosing_range() {
        // A small LCG: overlapping, nested and equal-start ranges on a coarse grid.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: i64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % m as u64) as i64
        };
        for _ in 0..200 {
            let mut ranges: Vec<Range> = (0..next(12))
                .map(|j| {
                    let start_ns = next(40);
                    Range {
                        start_ns,
                        end_ns: start_ns + next(30),
                        depth: next(3) as u16,
                        row_id: j,
                        text: j as StrId + 1,
                    }
                })
                .collect();
            let mut calls: Vec<(i64, i64)> = (0..next(10))
                .map(|_| {
                    let s = next(50);
                    (s, s + next(8))
                })
                .collect();
            calls.sort_unstable();
            let want: Vec<Option<StrId>> = calls.iter().map(|&c| brute_force(&ranges, c)).collect();
            let mut got = vec![None; calls.len()];
            innermost_enclosing(
                &mut ranges,
                &mut Vec::new(),
                calls.iter().copied(),
                |k, text| got[k] = Some(text),
            );
            assert_eq!(got, want, "calls {calls:?}");
        }
    }
}
