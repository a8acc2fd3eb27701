//! JAX / XLA profiles (XPlane, `../shared/traces/jax`): the `.xplane.pb`, its run folder and the
//! `jax.profiler.trace` folder open the same profile, and its two JSON files the same GPU work;
//! the kernels' counts and launch details equal XProf's own `kernel_stats` (oracle), GPU work is
//! joined to the CUDA call that launched it, the steps' annotations are ranges named `train#N`;
//! damaged and truncated XPlanes fail with a message naming the file, never a panic.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use sightline::load::load_file;
use sightline::trace::{NO_INDEX, Trace, TraceFormat};

const CAPTURES: [&str; 2] = ["jax_train", "jax_train_nocb"];

/// A kernel's name, registers, shared memory bytes, block and grid.
type LaunchKey = (String, u64, u64, String, String);

/// The capture's `DIR` and its (only) run folder, or `None` (said loudly) without the shared data.
fn capture(name: &str) -> Option<(PathBuf, PathBuf)> {
    let Some(root) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is absent");
        return None;
    };
    let dir = root.join("jax").join(name);
    let runs = dir.join("plugins").join("profile");
    let Ok(entries) = std::fs::read_dir(&runs) else {
        eprintln!("SKIPPED: {} is absent", runs.display());
        return None;
    };
    let run = entries.filter_map(Result::ok).map(|e| e.path()).next()?;
    Some((dir, run))
}

fn oracle(capture: &str, tool: &str) -> serde_json::Value {
    let path = common::shared_traces()
        .unwrap()
        .join("jax/oracle")
        .join(capture)
        .join(format!("{tool}.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// (name → (count, total ns)) of a trace's kernels, and its memset and copy counts.
fn gpu_work(t: &Trace) -> (BTreeMap<String, (usize, i64)>, usize, usize) {
    let mut kernels: BTreeMap<String, (usize, i64)> = BTreeMap::new();
    for i in 0..t.kernels.spans.len() {
        let e = kernels
            .entry(t.str(t.kernels.spans.name[i]).to_string())
            .or_default();
        e.0 += 1;
        e.1 += t.kernels.spans.duration_ns(i);
    }
    (kernels, t.memsets.spans.len(), t.memcpys.spans.len())
}

#[test]
fn the_file_its_run_folder_its_log_folder_and_its_json_files_open_the_same_gpu_work() {
    for name in CAPTURES {
        let Some((dir, run)) = capture(name) else {
            return;
        };
        let xplane = run.join("vm.xplane.pb");
        let reference = load_file(&xplane).unwrap();
        assert_eq!(reference.format, TraceFormat::XPlane);
        let expected = gpu_work(&reference);
        let mut opened = 0;
        for path in [
            dir.clone(),
            run.clone(),
            run.join("vm.trace.json.gz"),
            run.join("perfetto_trace.json.gz"),
        ] {
            let t = load_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(gpu_work(&t), expected, "{}", path.display());
            opened += 1;
        }
        let kernels: usize = expected.0.values().map(|v| v.0).sum();
        println!(
            "{name}: {opened} other paths give the XPlane's {kernels} kernels ({} names), {} memsets, {} copies",
            expected.0.len(),
            expected.1,
            expected.2
        );
        if name == "jax_train" {
            // The README's counts, checked by hand.
            assert_eq!((kernels, expected.1, expected.2), (440, 30, 10));
            assert!(reference.memcpys.copy_kind.iter().all(|k| k.0 == 1));
        }
        // A folder of the run lists the XPlane alone (the JSON files hold the same events).
        let listed = sightline::load::folder::traces_in_folder(&run).unwrap();
        assert_eq!(listed, std::slice::from_ref(&xplane));
        assert_eq!(
            sightline::load::folder::traces_in_folder(&dir).unwrap(),
            [xplane]
        );
    }
}

#[test]
fn kernels_and_their_launch_details_equal_xprof_kernel_stats() {
    for name in CAPTURES {
        let Some((_, run)) = capture(name) else {
            return;
        };
        let t = load_file(&run.join("vm.xplane.pb")).unwrap();
        let k = &t.kernels;
        // (name, registers, shared bytes, block, grid) → (occurrences, total ns) as loaded.
        let mut loaded: BTreeMap<LaunchKey, (u64, i64)> = BTreeMap::new();
        for i in 0..k.spans.len() {
            let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
            let key = (
                t.str(k.spans.name[i]).to_string(),
                u64::from(k.registers_per_thread[i]),
                u64::from(k.static_shared_bytes[i]) + u64::from(k.dynamic_shared_bytes[i]),
                dims(k.block[i].map(u32::from)),
                dims(k.grid[i]),
            );
            let e = loaded.entry(key).or_default();
            e.0 += 1;
            e.1 += k.spans.duration_ns(i);
        }
        let table = oracle(name, "kernel_stats");
        let rows = table["rows"].as_array().unwrap();
        let mut from_oracle: BTreeMap<LaunchKey, (u64, i64)> = BTreeMap::new();
        for r in rows {
            let c = |i: usize| &r["c"][i]["v"];
            let key = (
                c(1).as_str().unwrap().to_string(),
                c(2).as_f64().unwrap() as u64,
                c(3).as_f64().unwrap() as u64,
                c(4).as_str().unwrap().to_string(),
                c(5).as_str().unwrap().to_string(),
            );
            // XProf writes µs with three decimals: whole nanoseconds.
            let total_ns = (c(11).as_f64().unwrap() * 1000.0).round() as i64;
            let e = from_oracle.entry(key).or_default();
            e.0 += c(10).as_f64().unwrap() as u64;
            e.1 += total_ns;
        }
        assert_eq!(loaded, from_oracle, "{name}");
        println!(
            "{name}: {} kernel_stats rows equal the loaded kernels' names, registers, shared memory, block, grid, occurrences and total time ({} kernels)",
            rows.len(),
            k.spans.len()
        );
    }
}

#[test]
fn gpu_work_is_joined_to_the_call_that_launched_it_and_steps_are_ranges() {
    let Some((_, run)) = capture("jax_train") else {
        return;
    };
    let t = load_file(&run.join("vm.xplane.pb")).unwrap();
    let linked = |api: &[u32], corr: &[u32]| {
        api.iter()
            .zip(corr)
            .filter(|&(&a, &c)| a != NO_INDEX && t.api_calls.correlation_id[a as usize] == c)
            .count()
    };
    let kernels = linked(&t.kernels.api_call, &t.kernels.correlation_id);
    let memsets = linked(&t.memsets.api_call, &t.memsets.correlation_id);
    let copies = linked(&t.memcpys.api_call, &t.memcpys.correlation_id);
    assert_eq!(
        (kernels, memsets, copies),
        (440, 30, 10),
        "every GPU op joined to a call with its correlation id"
    );
    // The step's kernels run in a CUDA graph: joined to its cuGraphLaunch.
    let graph_launched = (0..t.kernels.spans.len())
        .filter(|&i| {
            t.str(t.api_calls.spans.name[t.kernels.api_call[i] as usize])
                .starts_with("cuGraphLaunch")
        })
        .count();
    // All but the 10 of `jit(add)` (launched alone).
    assert_eq!(graph_launched, 430);
    let steps: Vec<&str> = (0..t.nvtx.spans.len())
        .map(|i| t.str(t.nvtx.spans.name[i]))
        .filter(|n| n.starts_with("train#"))
        .collect();
    assert_eq!(steps.len(), 10);
    assert!(steps.contains(&"train#0") && steps.contains(&"train#9"));
    let gpu = t.gpu(0).unwrap();
    assert_eq!(gpu.name, "NVIDIA H200");
    assert_eq!(gpu.sm_count, Some(132));
    assert_eq!(gpu.compute_capability, Some((9, 0)));
    println!(
        "jax_train: {kernels} kernels, {memsets} memsets, {copies} copies joined to their calls ({graph_launched} kernels to cuGraphLaunch); 10 steps train#0..train#9"
    );
}

#[test]
fn damaged_and_truncated_xplanes_fail_with_a_message_naming_the_file() {
    let Some((_, run)) = capture("jax_train") else {
        return;
    };
    let bytes = std::fs::read(run.join("vm.xplane.pb")).unwrap();
    let dir = std::env::temp_dir().join(format!("sightline_xplane_bad_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut flipped = bytes.clone();
    for b in flipped.iter_mut().skip(1000).step_by(997) {
        *b = 0xff;
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("half.xplane.pb", bytes[..bytes.len() / 2].to_vec()),
        ("cut.xplane.pb", bytes[..bytes.len() - 3].to_vec()),
        ("head.xplane.pb", bytes[..7].to_vec()),
        ("empty.xplane.pb", Vec::new()),
        (
            "text.xplane.pb",
            b"not a protobuf at all, just words\n".to_vec(),
        ),
        ("flipped.xplane.pb", flipped),
    ];
    let mut checked = 0;
    for (name, content) in &cases {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let result = std::thread::spawn({
            let path = path.clone();
            move || load_file(&path).map(|t| t.kernels.spans.len())
        })
        .join()
        .unwrap_or_else(|_| panic!("{name}: the load panicked"));
        match result {
            Err(e) => {
                let message = e.to_string();
                assert!(message.contains(&*path.to_string_lossy()), "{message}");
                checked += 1;
            }
            // Flipped bytes may still decode (a protobuf has no checksum): then it loads.
            Ok(_) if *name == "flipped.xplane.pb" => checked += 1,
            Ok(n) => panic!("{name}: loaded {n} kernels from a damaged file"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!("{checked} damaged XPlanes: an error naming the file, no panic");
}

/// `summary --report xla_kernel_stats` against XProf's own table: columns, rows in order and
/// every cell.
#[test]
fn xla_kernel_stats_equals_xprof_kernel_stats_cell_by_cell() {
    for name in CAPTURES {
        let Some((_, run)) = capture(name) else {
            return;
        };
        let t = load_file(&run.join("vm.xplane.pb")).unwrap();
        let compared = common::xprof::kernel_stats(&t, &oracle(name, "kernel_stats"));
        println!(
            "{name}: {} kernel_stats cells ({} rows) compared, {} differ",
            compared.cells,
            compared.rows,
            compared.differ.len()
        );
        for d in &compared.differ {
            println!("  {d}");
        }
        assert!(
            compared.cells > 0 && compared.differ.is_empty(),
            "{name}: {:#?}",
            compared.differ
        );
    }
}

/// `iterations` on a JAX profile: each `train#N` with XProf's step time (`overview_page`'s
/// `stepTimeMs`, the steps it lists: all but the first and last).
#[test]
fn iterations_give_xprof_step_times() {
    for name in CAPTURES {
        let Some((dir, _)) = capture(name) else {
            return;
        };
        let t = load_file(&dir).unwrap();
        let compared = common::xprof::overview_steps(&t, &oracle(name, "overview_page"));
        assert!(
            compared.rows == 8 && compared.differ.is_empty(),
            "{name}: {compared:#?}"
        );
        // The report shows them.
        let out =
            common::sightline_stdout(&["summary", dir.to_str().unwrap(), "--report", "iterations"]);
        assert!(out.contains("XProf Step Time (ns)"), "{out}");
        println!(
            "{name}: {} steps equal XProf's step times (train#1..train#8), first and last marked incomplete",
            compared.rows
        );
    }
}

/// `xla_op_stats` against XProf's `framework_op_stats` (its first table, the first nine
/// columns): every row, Device and Host with their IDLE rows, every cell.
#[test]
fn xla_op_stats_equals_xprof_framework_op_stats() {
    for name in CAPTURES {
        let Some((_, run)) = capture(name) else {
            return;
        };
        let t = load_file(&run.join("vm.xplane.pb")).unwrap();
        let compared = common::xprof::framework_op_stats(&t, &oracle(name, "framework_op_stats"));
        assert!(
            compared.cells > 0 && compared.differ.is_empty(),
            "{name}: {compared:#?}"
        );
        println!(
            "{name}: {} rows (Device and Host), {} framework_op_stats cells equal",
            compared.rows, compared.cells
        );
    }
}

/// A plane the loader does not read (a device kind it does not know) is said in the load's
/// warnings with its events, never dropped silently: jax_train with its GPU plane renamed
/// `/device:IPU:0` still opens (its host ranges), with no kernels and a warning counting the
/// plane's events.
#[test]
fn planes_not_read_are_said_with_their_events() {
    use prost::Message;
    let Some((_, run)) = capture("jax_train") else {
        return;
    };
    let bytes = std::fs::read(run.join("vm.xplane.pb")).unwrap();
    let mut space = sightline::load::xplane::decode(&bytes).unwrap();
    let gpu = space
        .planes
        .iter_mut()
        .find(|p| p.name == "/device:GPU:0")
        .unwrap();
    gpu.name = "/device:IPU:0".into();
    let events: usize = gpu.lines.iter().map(|l| l.events.len()).sum();
    let dir = common::scratch_dir("xplane_unknown_device");
    let path = dir.join("renamed.xplane.pb");
    std::fs::write(&path, space.encode_to_vec()).unwrap();
    let t = load_file(&path).unwrap();
    assert_eq!(t.kernels.spans.len(), 0);
    let said: Vec<String> = t
        .warnings
        .entries
        .iter()
        .filter(|w| w.what.contains("/device:IPU:0"))
        .map(|w| {
            assert_eq!(w.count, events as u64);
            w.message()
        })
        .collect();
    assert_eq!(said.len(), 1, "{:?}", t.warnings.entries);
    println!("{}", said[0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The GPU memory row: XLA's allocator events (`MemoryAllocation` / `MemoryDeallocation` of
/// `GPU_0_bfc`) give the bytes in use over time; XProf's `memory_profile` of the same profile
/// has the same peak, and each of its sampled snapshots is one of our samples (heap bytes, and
/// time: XProf times these events within their host line, see below).
#[test]
fn gpu_memory_in_use_follows_the_allocator_as_xprof_reads_it() {
    for name in ["jax_train", "jax_train_nocb"] {
        let Some((dir, _)) = capture(name) else {
            return;
        };
        let t = load_file(&dir).unwrap();
        let xprof = &oracle(name, "memory_profile")["memoryProfilePerAllocator"]["GPU_0_bfc"];
        let track = t
            .memory_usage
            .iter()
            .find(|m| m.device == 0)
            .expect("a memory track for GPU 0");
        let peak = track.samples.iter().map(|s| s.bytes_in_use).max().unwrap();
        let summary = &xprof["profileSummary"];
        let want_peak: i64 = summary["peakBytesUsageLifetime"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(peak, want_peak, "{name}: peak bytes in use");
        let snapshots = xprof["sampledTimelineSnapshots"].as_array().unwrap();
        let number = |v: &serde_json::Value| v.as_str().unwrap().parse::<i64>().unwrap();
        let theirs: Vec<(i64, i64)> = snapshots
            .iter()
            .map(|s| {
                (
                    number(&s["timeOffsetPs"]),
                    number(&s["aggregationStats"]["heapAllocatedBytes"]),
                )
            })
            .collect();
        // XProf's memory profile times an event by its offset in its host line (a thread), not
        // from the session start, so its times and ours differ by one offset per line (two on
        // jax_train, one on jax_train_nocb): each snapshot must be a sample of ours with its
        // bytes within 100 µs, and the offsets few (one per line that allocates).
        let offsets: std::collections::BTreeSet<i64> = theirs
            .iter()
            .map(|&(at, heap)| {
                track
                    .samples
                    .iter()
                    .filter(|m| m.bytes_in_use == heap)
                    .map(|m| m.time_ns * 1000 - at)
                    .filter(|d| d.abs() <= 100_000_000)
                    .min_by_key(|d| d.abs())
                    .unwrap_or_else(|| panic!("{name}: XProf's {heap} bytes at {at} ps"))
            })
            .collect();
        assert!(offsets.len() <= 3, "{name}: offsets {offsets:?}");
        let peak_at = number(&summary["peakStatsTimePs"]);
        assert!(
            offsets.iter().any(|off| track
                .samples
                .iter()
                .any(|m| m.time_ns * 1000 == peak_at + off && m.bytes_in_use == peak)),
            "{name}: the peak's time"
        );
        let matched = theirs.len();
        assert_eq!(
            track.samples.len(),
            matched,
            "{name}: one sample per snapshot"
        );
        eprintln!(
            "{name}: {} samples of GPU 0's allocator; peak {peak} bytes and {matched} XProf snapshots equal (XProf's times apart by {offsets:?} ps, one per line)",
            track.samples.len()
        );
    }
}
