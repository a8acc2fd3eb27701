//! The PyTorch profiler (Kineto) loader on every real trace in `../shared/traces/pytorch/`,
//! against the same JSON read here independently (flate2 + serde_json, times from the decimal text
//! of `ts` / `dur`): event counts by category, every event's exact times, the kernel and memory
//! summaries the command line prints, GPU busy and idle time, launch links by correlation id,
//! GPU names, the rank, NCCL kernels, Python frames on their own threads and nested.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;
#[path = "kineto_load/json.rs"]
mod json;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use json::{Expected, Op, RANGE_KINDS, read_json};
use sightline::analysis::{self, Filter, GapOptions, Report};
use sightline::trace::{GlobalTid, NO_INDEX, RangeKind, Spans, StrId, Trace, TraceFormat};

/// The real PyTorch traces beside the checkout, sorted; empty (loudly) when the folder is absent.
fn pytorch_traces() -> Vec<PathBuf> {
    let Some(dir) = common::shared_traces().map(|d| d.join("pytorch")) else {
        println!("SKIPPED: ../shared/traces/pytorch is not present; no PyTorch trace checked");
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("list ../shared/traces/pytorch")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        println!("SKIPPED: no .json.gz in {}", dir.display());
    }
    paths
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

// ---- Checks ----

/// Collects what differs, so that one run lists every difference of every file.
struct Checks {
    file: String,
    failures: Vec<String>,
}

impl Checks {
    fn that(&mut self, ok: bool, message: impl FnOnce() -> String) {
        if !ok {
            self.failures.push(format!("{}: {}", self.file, message()));
        }
    }
}

/// Event `i` of a table as an `Op` named by `names`.
fn op_at(trace: &Trace, spans: &Spans, names: &[StrId], i: usize) -> Op {
    let name = trace.str(names[i]).to_string();
    Op {
        start_ns: spans.start_ns[i],
        end_ns: spans.end_ns[i],
        name,
    }
}

/// Every event of a table, sorted.
fn all_ops(trace: &Trace, spans: &Spans, names: &[StrId]) -> Vec<Op> {
    let mut ops: Vec<Op> = (0..spans.len())
        .map(|i| op_at(trace, spans, names, i))
        .collect();
    ops.sort();
    ops
}

/// Length of the union of `intervals`.
fn union_ns(mut intervals: Vec<(i64, i64)>) -> i64 {
    intervals.sort();
    let mut total = 0;
    let mut current: Option<(i64, i64)> = None;
    for (s, e) in intervals {
        match current {
            Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                current = Some((s, e));
            }
            None => current = Some((s, e)),
        }
    }
    total + current.map_or(0, |(s, e)| e - s)
}

/// Every GPU op, CUDA call and range, with its exact times, name and thread.
fn check_events(trace: &Trace, json: &Expected, c: &mut Checks) {
    let (k, m, s) = (&trace.kernels, &trace.memcpys, &trace.memsets);
    let a = &trace.api_calls;
    // Copies and memsets keep their Kineto names beside the names nsys gives them.
    for (what, ours, expected) in [
        (
            "kernels",
            all_ops(trace, &k.spans, &k.spans.name),
            &json.kernels,
        ),
        (
            "memcpys",
            all_ops(trace, &m.spans, &m.kineto_name),
            &json.memcpys,
        ),
        (
            "memsets",
            all_ops(trace, &s.spans, &s.kineto_name),
            &json.memsets,
        ),
        (
            "CUDA calls",
            all_ops(trace, &a.spans, &a.spans.name),
            &json.api_calls,
        ),
    ] {
        let mut expected = expected.clone();
        expected.sort();
        c.that(ours == expected, || {
            let only_ours: Vec<&Op> = ours.iter().filter(|o| !expected.contains(o)).take(3).collect();
            let only_json: Vec<&Op> = expected.iter().filter(|o| !ours.contains(o)).take(3).collect();
            format!(
                "{what}: {} loaded, {} in the JSON; only loaded {only_ours:?}; only in the JSON {only_json:?}",
                ours.len(),
                expected.len()
            )
        });
    }
    // Ranges by kind, on the thread (or the device's GPU lane) they were written on.
    let n = &trace.nvtx;
    for (key, kind) in RANGE_KINDS {
        let place = |g: i64| {
            let lane = trace
                .threads
                .iter()
                .find(|t| t.global_tid == g)
                .and_then(|t| t.gpu_lane);
            match (kind, lane) {
                (RangeKind::GpuAnnotation, Some(device)) => (-1, i64::from(device)),
                (RangeKind::GpuAnnotation, None) => (-2, -2), // not on a GPU lane: a failure
                _ => (i64::from(GlobalTid(g).pid()), i64::from(GlobalTid(g).tid())),
            }
        };
        let mut ours: Vec<(i64, i64, Op)> = (0..n.spans.len())
            .filter(|&i| n.kind_of(i) == kind)
            .map(|i| {
                let (pid, tid) = place(n.global_tid[i]);
                (pid, tid, op_at(trace, &n.spans, &n.spans.name, i))
            })
            .collect();
        ours.sort();
        let mut expected = json.ranges.get(key).cloned().unwrap_or_default();
        expected.sort();
        c.that(ours == expected, || {
            let first = ours.iter().zip(&expected).find(|(a, b)| a != b);
            format!(
                "{key}: {} loaded, {} in the JSON (on their threads); first difference {first:?}",
                ours.len(),
                expected.len()
            )
        });
    }
}

/// (count, total) per name of a summary report, as `sightline summary` prints it.
fn summary(trace: &Trace, report: Report) -> BTreeMap<String, (u64, i64)> {
    analysis::compute(trace, report, &Filter::all())
        .rows
        .iter()
        .map(|r| (r.name.clone(), (r.stats.count, r.stats.total)))
        .collect()
}

/// `cuda_gpu_kern_sum` (count and ns per kernel name) and `cuda_gpu_mem_size_sum` (count and
/// bytes per copy direction, and of memsets).
fn check_summaries(trace: &Trace, json: &Expected, c: &mut Checks) {
    let kernels = summary(trace, Report::Kernels);
    c.that(kernels == json.kernel_sum, || {
        let diff = json
            .kernel_sum
            .iter()
            .find(|(k, v)| kernels.get(*k) != Some(v))
            .map(|(k, v)| format!("`{k}`: JSON {v:?}, loaded {:?}", kernels.get(k)));
        format!("cuda_gpu_kern_sum (count, total ns) differs: {diff:?}")
    });
    let memory = summary(trace, Report::MemorySize);
    c.that(memory == json.memory_sum, || {
        format!(
            "cuda_gpu_mem_size_sum (count, bytes): loaded {memory:?}, JSON {:?}",
            json.memory_sum
        )
    });
}

/// Busy time (union of the GPU's ops), its window, and idle time (window less busy) as GPU
/// utilisation and `sightline gaps` (gaps of any length) report them.
fn check_gpu_time(trace: &Trace, json: &Expected, c: &mut Checks) {
    let activity = analysis::gpu_activity(trace, &Filter::all());
    let every_gap = GapOptions {
        min_ns: 0,
        per_stream: false,
        ..GapOptions::default()
    };
    let gaps = analysis::gpu_idle_gaps(trace, &Filter::all(), &every_gap);
    let devices: Vec<u32> = json.gpu_intervals.keys().copied().collect();
    let ours: Vec<u32> = activity.iter().map(|a| a.device).collect();
    c.that(ours == devices, || {
        format!("GPUs with work: loaded {ours:?}, JSON {devices:?}")
    });
    for (&device, intervals) in &json.gpu_intervals {
        let first = intervals.iter().map(|i| i.0).min().unwrap();
        let last = intervals.iter().map(|i| i.1).max().unwrap();
        let busy = union_ns(intervals.clone());
        let idle = (last - first) - busy;
        let Some(a) = activity.iter().find(|a| a.device == device) else {
            continue;
        };
        c.that(
            a.window == Some((first, last)) && a.busy_ns == busy && a.idle_ns == idle,
            || {
                format!(
                    "GPU {device}: loaded window {:?} busy {} idle {}; JSON window ({first}, {last}) \
                     busy {busy} idle {idle}",
                    a.window, a.busy_ns, a.idle_ns
                )
            },
        );
        let gap_ns: i64 = gaps
            .iter()
            .filter(|g| g.device == device)
            .map(|g| g.duration_ns())
            .sum();
        c.that(gap_ns == idle, || {
            format!("GPU {device}: idle gaps sum to {gap_ns} ns, JSON idle {idle} ns")
        });
    }
}

/// Every GPU op whose correlation id has a CUDA call in the JSON is linked to one of those
/// calls. Returns how many are.
fn check_links(trace: &Trace, json: &Expected, c: &mut Checks) -> usize {
    let (k, m, s) = (&trace.kernels, &trace.memcpys, &trace.memsets);
    let ops = [
        ("kernel", &k.correlation_id, &k.api_call, &k.spans),
        ("memcpy", &m.correlation_id, &m.api_call, &m.spans),
        ("memset", &s.correlation_id, &s.api_call, &s.spans),
    ];
    let a = &trace.api_calls;
    let mut linked = 0;
    for (what, correlation, api_call, spans) in ops {
        for i in 0..spans.len() {
            let id = correlation[i];
            let Some(calls) = json.calls_by_correlation.get(&u64::from(id)) else {
                continue;
            };
            let call = api_call[i] as usize;
            let ok = api_call[i] != NO_INDEX
                && a.correlation_id[call] == id
                && calls.contains(&op_at(trace, &a.spans, &a.spans.name, call));
            linked += usize::from(ok);
            c.that(ok, || {
                let at = spans.start_ns[i];
                format!(
                    "{what} {i} (correlation {id}, at {at}) is not linked to its call {calls:?}"
                )
            });
        }
    }
    linked
}

/// GPU names, the rank and the allocator's events.
fn check_metadata(trace: &Trace, json: &Expected, c: &mut Checks) {
    for (device, name) in &json.gpu_names {
        let ours = trace.gpu(*device).map(|g| g.name.as_str());
        c.that(ours == Some(name.as_str()), || {
            format!("GPU {device} named {ours:?}, JSON `{name}`")
        });
    }
    let torch = trace
        .torch
        .as_ref()
        .expect("a PyTorch trace has torch info");
    c.that(torch.rank == json.rank, || {
        format!("rank {:?}, JSON {:?}", torch.rank, json.rank)
    });
    c.that(torch.memory.len() == json.memory_events, || {
        format!(
            "{} [memory] events loaded, {} in the JSON",
            torch.memory.len(),
            json.memory_events
        )
    });
    let samples: usize = trace.memory_usage.iter().map(|m| m.samples.len()).sum();
    c.that(samples == json.memory_in_use_samples, || {
        format!(
            "{samples} memory-in-use samples, {} CUDA [memory] events with Total Allocated",
            json.memory_in_use_samples
        )
    });
}

/// Python frames nest: some are below depth 0, and each of those starts inside a frame one
/// level up on its thread. Returns (frames, levels).
fn check_python_nesting(trace: &Trace, c: &mut Checks) -> (usize, u16) {
    let n = &trace.nvtx;
    let python: Vec<usize> = (0..n.spans.len())
        .filter(|&i| n.kind_of(i) == RangeKind::Python)
        .collect();
    let Some(max_depth) = python.iter().map(|&i| n.depth[i]).max() else {
        return (0, 0);
    };
    c.that(max_depth > 0, || "Python frames do not nest".to_string());
    // Frames of one level of a thread follow one another: the enclosing frame of a frame is the
    // last one a level up that starts no later than it does.
    let mut levels: HashMap<(i64, u16), Vec<(i64, i64)>> = HashMap::new();
    for &i in &python {
        let level = levels.entry((n.global_tid[i], n.depth[i])).or_default();
        level.push((n.spans.start_ns[i], n.spans.end_ns[i]));
    }
    levels.values_mut().for_each(|v| v.sort());
    let orphans = python
        .iter()
        .filter(|&&i| n.depth[i] > 0)
        .filter(|&&i| {
            let s = n.spans.start_ns[i];
            let up = levels
                .get(&(n.global_tid[i], n.depth[i] - 1))
                .map_or(&[][..], Vec::as_slice);
            let before = up.partition_point(|&(ps, _)| ps <= s);
            !(before > 0 && s < up[before - 1].1)
        })
        .count();
    c.that(orphans == 0, || {
        format!("{orphans} nested Python frames have no enclosing frame")
    });
    (python.len(), max_depth + 1)
}

#[test]
fn every_pytorch_trace_loads_as_its_json_says() {
    let paths = pytorch_traces();
    let mut failures = Vec::new();
    for path in &paths {
        let file = file_name(path);
        let trace = sightline::load::load_file(path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let json = read_json(path);
        for w in &trace.warnings.entries {
            println!("  {file}: warning: {}", w.message());
        }
        let mut c = Checks {
            file: file.clone(),
            failures: Vec::new(),
        };
        c.that(trace.format == TraceFormat::Kineto, || {
            format!("format {:?}", trace.format)
        });
        check_events(&trace, &json, &mut c);
        check_summaries(&trace, &json, &mut c);
        check_gpu_time(&trace, &json, &mut c);
        let linked = check_links(&trace, &json, &mut c);
        check_metadata(&trace, &json, &mut c);
        let (frames, levels) = check_python_nesting(&trace, &mut c);
        println!(
            "  {file}: {} kernels, {} memcpys, {} memsets, {} CUDA calls, {} ranges, \
             {linked} GPU ops linked, {frames} Python frames in {levels} levels",
            trace.kernels.spans.len(),
            trace.memcpys.spans.len(),
            trace.memsets.spans.len(),
            trace.api_calls.spans.len(),
            trace.nvtx.spans.len()
        );
        failures.extend(c.failures);
    }
    println!("checked {} PyTorch traces", paths.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ranks_gpu_names_and_nccl_kernels_of_the_named_traces() {
    let paths = pytorch_traces();
    let mut checked = 0;
    for (name, rank, gpu) in [
        ("kt_ranks_rank0", Some(0), "NVIDIA H100 80GB HBM3"),
        ("kt_ranks_rank1", Some(1), "NVIDIA H100 80GB HBM3"),
        (
            "HolisticTraceAnalysis__nccl_data",
            Some(0),
            "NVIDIA A100-PG509-200",
        ),
        ("kt_train", None, "NVIDIA H100 80GB HBM3"),
        ("kineto__resnet50", None, "Tesla V100-DGXS-32GB"),
    ] {
        let Some(path) = paths.iter().find(|p| file_name(p).starts_with(name)) else {
            println!("{name} not present: not checked");
            continue;
        };
        let trace = sightline::load::load_file(path).expect("load");
        let torch = trace.torch.as_ref().expect("torch info");
        assert_eq!(torch.rank, rank, "{name}");
        assert_eq!(trace.gpu_title(0), format!("GPU 0 · {gpu}"), "{name}");
        checked += 1;
        if name.starts_with("Holistic") {
            assert_eq!(torch.world_size, Some(2));
            assert_eq!(torch.backend.as_deref(), Some("nccl"));
            let is_nccl = |n: &str| n.starts_with("ncclKernel") || n.starts_with("ncclDevKernel");
            let names = &trace.kernels.spans.name;
            let ours = names.iter().filter(|&&n| is_nccl(trace.str(n))).count();
            let json = read_json(path)
                .kernels
                .iter()
                .filter(|k| is_nccl(&k.name))
                .count();
            assert!(json > 0, "the NCCL trace has NCCL kernels");
            assert_eq!(ours, json, "NCCL kernels loaded");
            println!("  {name}: {ours} NCCL kernels");
        }
    }
    println!("checked {checked} named PyTorch traces");
}
