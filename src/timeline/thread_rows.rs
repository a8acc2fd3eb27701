//! The rows of a process's threads, and of the GPU-side range lanes of a PyTorch trace.
//!
//! Per thread: a header, its CPU row, its range rows (NVTX in an nsys export; a PyTorch trace's
//! annotations, operators and Python frames, each kind nesting apart, Python frames folded under
//! their outermost level), its CUDA API row and its OS runtime row. A Python process runs 20–40
//! threads of which two or three launch work or mark ranges: the others fold into one
//! "+N quiet threads" group, closed at first.

use std::collections::HashMap;

use super::rows::{EVENT_ROW_HEIGHT, GroupId, Row, RowKind};
use crate::trace::{RangeKind, ThreadTrack, Trace};

/// Does the thread do anything a GPU profile is about (CUDA calls or ranges)?
fn is_busy(t: &ThreadTrack) -> bool {
    !t.api_calls.is_empty() || t.nvtx_levels.iter().any(|l| !l.is_empty())
}

/// The range rows of `trace.threads[thread]`; `hidden_by` hides them all. A kind with several
/// levels whose rows may fold (Python frames) gets its outermost level as the group's header.
fn push_range_rows(
    trace: &Trace,
    thread: usize,
    indent: u8,
    hidden_by: &[GroupId],
    rows: &mut Vec<Row>,
    initially_collapsed: &mut Vec<GroupId>,
) {
    let t = &trace.threads[thread];
    let mut first_level_of: HashMap<RangeKind, usize> = HashMap::new();
    for (level, slice) in t.nvtx_levels.iter().enumerate() {
        if slice.is_empty() {
            continue;
        }
        let kind = t.level_kind(level);
        let first = *first_level_of.entry(kind).or_insert(level);
        let depth = level - first;
        let title = if kind == RangeKind::Nvtx {
            let domain = trace.str(trace.nvtx.domain[slice.range.start]);
            if domain.is_empty() {
                format!("NVTX · depth {depth}")
            } else {
                format!("NVTX {domain} · depth {depth}")
            }
        } else {
            // A lane of derived lines (an XPlane's XLA Modules, XLA Ops) is titled by them.
            let domain = trace.str(trace.nvtx.domain[slice.range.start]);
            if domain.is_empty() {
                format!("{} · depth {depth}", kind.label())
            } else {
                domain.to_string()
            }
        };
        let folds = kind == RangeKind::Python;
        let group = GroupId::Levels {
            thread,
            first_level: first,
        };
        let mut hidden = hidden_by.to_vec();
        let mut toggles = None;
        if folds && depth == 0 && t.level_kinds.iter().filter(|&&k| k == kind).count() > 1 {
            toggles = Some(group);
            initially_collapsed.push(group);
        } else if folds && depth > 0 {
            hidden.push(group);
        }
        rows.push(Row {
            kind: RowKind::Nvtx {
                thread,
                depth: level,
            },
            title,
            indent,
            toggles,
            hidden_by: hidden,
            height_px: EVENT_ROW_HEIGHT,
        });
    }
}

/// The GPU annotation rows of `device` (a PyTorch trace's `gpu_user_annotation`), under its GPU.
pub fn push_gpu_lane_rows(
    trace: &Trace,
    device: u32,
    rows: &mut Vec<Row>,
    initially_collapsed: &mut Vec<GroupId>,
) {
    for (ti, t) in trace.threads.iter().enumerate() {
        if t.gpu_lane == Some(device) {
            push_range_rows(
                trace,
                ti,
                1,
                &[GroupId::Gpu(device)],
                rows,
                initially_collapsed,
            );
        }
    }
}

/// The rows of every thread of process `pid` (the process header is the caller's); records each
/// thread's index by `globalTid` in `thread_of_tid`.
pub fn push_thread_rows(
    trace: &Trace,
    pid: u32,
    rows: &mut Vec<Row>,
    initially_collapsed: &mut Vec<GroupId>,
    thread_of_tid: &mut HashMap<i64, usize>,
) {
    let threads: Vec<usize> = (0..trace.threads.len())
        .filter(|&i| trace.threads[i].pid == pid && trace.threads[i].gpu_lane.is_none())
        .collect();
    let quiet: Vec<usize> = threads
        .iter()
        .copied()
        .filter(|&i| !is_busy(&trace.threads[i]))
        .collect();
    // A process whose threads are all quiet (an OS-runtime-only trace) has nothing else to
    // show: its threads stay in view, open (issue 36).
    let all_quiet = quiet.len() == threads.len();
    let fold_quiet = quiet.len() >= 2 && !all_quiet;
    let mut order: Vec<usize> = threads
        .iter()
        .copied()
        .filter(|i| !fold_quiet || !quiet.contains(i))
        .collect();
    if fold_quiet {
        order.extend(&quiet);
    }
    let quiet_group = GroupId::QuietThreads(pid);
    for ti in order {
        let t = &trace.threads[ti];
        thread_of_tid.insert(t.global_tid, ti);
        let folded = fold_quiet && quiet.contains(&ti);
        if folded && quiet.first() == Some(&ti) {
            rows.push(Row {
                kind: RowKind::QuietThreads { pid },
                title: format!("+{} quiet threads", quiet.len()),
                indent: 1,
                toggles: Some(quiet_group),
                hidden_by: vec![GroupId::Process(pid)],
                height_px: EVENT_ROW_HEIGHT,
            });
            initially_collapsed.push(quiet_group);
        }
        let first_row = rows.len();
        push_one_thread(trace, ti, !all_quiet, rows, initially_collapsed);
        if folded {
            for row in &mut rows[first_row..] {
                row.hidden_by.push(quiet_group);
                row.indent += 1;
            }
        }
    }
}

/// The rows of thread `ti`; a thread with only OS runtime calls starts collapsed when
/// `collapse_quiet`.
fn push_one_thread(
    trace: &Trace,
    ti: usize,
    collapse_quiet: bool,
    rows: &mut Vec<Row>,
    initially_collapsed: &mut Vec<GroupId>,
) {
    let t = &trace.threads[ti];
    let pid = t.pid;
    let thread_name = trace.str(t.name);
    let has_api = !t.api_calls.is_empty();
    // A thread with only OS runtime calls is noise in most traces: start it collapsed.
    if collapse_quiet && !has_api && t.nvtx_levels.iter().all(|l| l.is_empty()) {
        initially_collapsed.push(GroupId::Thread(ti));
    }
    rows.push(Row {
        kind: RowKind::ThreadHeader { thread: ti },
        title: if thread_name.is_empty() {
            format!("Thread {}", t.tid)
        } else {
            format!("{thread_name} [{}]", t.tid)
        },
        indent: 1,
        toggles: Some(GroupId::Thread(ti)),
        hidden_by: vec![GroupId::Process(pid)],
        height_px: EVENT_ROW_HEIGHT,
    });
    let hidden_by = vec![GroupId::Process(pid), GroupId::Thread(ti)];
    if super::cpu_row::has_cpu_row(t) {
        rows.push(super::cpu_row::cpu_row(t, ti));
    }
    push_range_rows(trace, ti, 2, &hidden_by, rows, initially_collapsed);
    if has_api {
        rows.push(Row {
            kind: RowKind::ApiCalls { thread: ti },
            title: "CUDA API".to_string(),
            indent: 2,
            toggles: None,
            hidden_by: hidden_by.clone(),
            height_px: EVENT_ROW_HEIGHT,
        });
    }
    if !t.osrt.is_empty() {
        rows.push(Row {
            kind: RowKind::Osrt { thread: ti },
            title: "OS runtime".to_string(),
            indent: 2,
            toggles: None,
            hidden_by,
            height_px: EVENT_ROW_HEIGHT,
        });
    }
}
