//! Damaged Nsight Compute reports never panic, abort or hang the loader: every shared report
//! (the 180 MB one by its first ~30 MB) cut at many points (inside the magic, the file header, a
//! block's length, header and payload, a message; at block boundaries) and with bytes flipped at
//! many offsets (every byte of the length fields among them) gives either a clear error naming
//! the file or the kernels read so far with a warning. Each load runs in its own thread under
//! `catch_unwind` with a deadline, and the largest single allocation it makes is measured: a
//! damaged length field must not size one. The file is left as it was. Small hand-made reports
//! (encoded with the loader's own prost messages) cover an unknown value kind, unknown fields, a
//! report of no workloads, a zstd report with flipped bytes; other files named `.ncu-rep` are
//! refused by name. `sightline summary` on a damaged report exits non-zero with the message.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;
#[path = "ncu_bad_input/layout.rs"]
mod layout;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use sightline::load::{self, LoadError};
use sightline::trace::Trace;
use sightline::trace::ncu::{MetricValue, NcuWorkload, ScalarValue};

use layout::ReportLayout;

/// Counts the largest single allocation a thread asks for (the load runs in a thread of its own).
struct LargestAllocation;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|c| {
        if size > c.get() {
            c.set(size);
        }
    });
}

// SAFETY: every call is passed on to the system allocator unchanged; only sizes are noted.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: LargestAllocation = LargestAllocation;

/// A load that panicked or did not finish in time.
const DEADLINE: Duration = Duration::from_secs(120);

/// What one guarded load gave.
struct Loaded {
    result: Result<Trace, LoadError>,
    largest_allocation: usize,
}

/// Loads `path` in a thread of its own under `catch_unwind`; fails the test on a panic or when
/// the load does not end by the deadline.
fn guarded_load(path: &Path, what: &str) -> Loaded {
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        LARGEST.with(|c| c.set(0));
        let result = std::panic::catch_unwind(|| load::load_file(&owned));
        let largest_allocation = LARGEST.with(|c| c.get());
        let _ = tx.send(result.map(|result| Loaded {
            result,
            largest_allocation,
        }));
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(Ok(loaded)) => loaded,
        Ok(Err(_)) => panic!("{what}: the loader panicked"),
        Err(_) => panic!("{what}: the load did not end in {DEADLINE:?} (a hang?)"),
    }
}

/// The file's length and modification time, to tell it was not written.
fn stamp(path: &Path) -> (u64, std::time::SystemTime) {
    let meta = std::fs::metadata(path).expect("stat");
    (meta.len(), meta.modified().expect("mtime"))
}

/// Loads a damaged file and checks the common promises: no panic, no hang, no allocation
/// beyond what the file's bytes can fill (a buffer grown to twice the file, plus the first
/// megabyte a read reserves), an error that names the file, and the file untouched.
fn load_damaged(path: &Path, what: &str) -> Result<Trace, LoadError> {
    let file_len = std::fs::metadata(path).expect("stat").len() as usize;
    load_damaged_holding(path, what, file_len)
}

/// [`load_damaged`] of a compressed file that holds `unpacked_len` bytes of report.
fn load_damaged_holding(path: &Path, what: &str, unpacked_len: usize) -> Result<Trace, LoadError> {
    let before = stamp(path);
    let loaded = guarded_load(path, what);
    assert_eq!(stamp(path), before, "{what}: the file was written");
    let bound = 2 * unpacked_len + (4 << 20);
    assert!(
        loaded.largest_allocation <= bound,
        "{what}: one allocation of {} bytes for {unpacked_len} bytes of report",
        loaded.largest_allocation
    );
    if let Err(e) = &loaded.result {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(e.to_string().contains(&name), "{what}: {e}");
        assert!(!matches!(e, LoadError::Cancelled), "{what}: {e}");
    }
    loaded.result
}

/// The same metric ids and values, bit for bit (NaN, which ncu writes, equals itself here).
fn same_metrics(a: &NcuWorkload, b: &NcuWorkload) -> bool {
    fn scalar(a: &ScalarValue, b: &ScalarValue) -> bool {
        match (a, b) {
            (ScalarValue::F32(x), ScalarValue::F32(y)) => x.to_bits() == y.to_bits(),
            (ScalarValue::F64(x), ScalarValue::F64(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }
    let value = |a: &MetricValue, b: &MetricValue| match (a, b) {
        (MetricValue::F32(x), MetricValue::F32(y)) => x.to_bits() == y.to_bits(),
        (MetricValue::F64(x), MetricValue::F64(y)) => x.to_bits() == y.to_bits(),
        (MetricValue::List(x), MetricValue::List(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| {
                    scalar(&p.value, &q.value)
                        && match (&p.correlation, &q.correlation) {
                            (Some(c), Some(d)) => scalar(c, d),
                            (c, d) => c.is_none() && d.is_none(),
                        }
                })
        }
        _ => a == b,
    };
    a.metrics.len() == b.metrics.len()
        && a.metrics
            .iter()
            .zip(&b.metrics)
            .all(|((i, x), (j, y))| i == j && value(x, y))
}

const REPORTS: [&str; 4] = [
    "ncu_graphs_roofline",
    "ncu_moe_dram",
    "ncu_moe_full",
    "ncu_train_gemm",
];

/// A shared report's bytes, decompressed; at most `limit` of them.
fn report_bytes(dir: &Path, name: &str, limit: u64) -> Vec<u8> {
    let file = std::fs::File::open(dir.join(format!("{name}.ncu-rep.gz"))).expect("open");
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .take(limit)
        .read_to_end(&mut bytes)
        .expect("gunzip");
    bytes
}

/// The bytes of a report the tests damage: up to the last block that ends within `limit` bytes
/// (the whole report when it is shorter).
fn damage_input(dir: &Path, name: &str, limit: usize) -> (Vec<u8>, ReportLayout) {
    let mut bytes = report_bytes(dir, name, limit as u64 + 1);
    let mut layout = ReportLayout::parse(&bytes);
    if bytes.len() > limit {
        bytes.truncate(layout.last_end_within(limit));
        layout = ReportLayout::parse(&bytes);
    }
    assert!(layout.kernels() > 0, "{name}: no kernels in the part read");
    (bytes, layout)
}

#[test]
fn a_report_cut_anywhere_keeps_the_kernels_before_the_cut_or_says_why() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let scratch = common::scratch_dir("ncu-cut");
    let started = Instant::now();
    let mut cuts = 0;
    // The smaller reports whole (up to 109 MB), the 180 MB one by its first 32 MB.
    for name in REPORTS {
        let limit = if name == "ncu_moe_full" {
            32 << 20
        } else {
            1 << 30
        };
        let (bytes, layout) = damage_input(&dir, name, limit);
        let path = scratch.join(format!("{name}.ncu-rep"));
        std::fs::write(&path, &bytes).expect("write");
        let whole = load::load_file(&path).expect("the uncut report loads");
        let whole = whole.ncu.expect("a report");
        assert_eq!(whole.workloads.len(), layout.kernels(), "{name}");
        assert_eq!(whole.warnings.total(), 0, "{name}: {:?}", whole.warnings);
        // Cut from the end down, so one file is shortened in place (its bytes are those of
        // the report up to the cut; checked below for the smaller cuts).
        let mut points = layout.cut_points();
        points.sort_by_key(|p| std::cmp::Reverse(p.0));
        points.dedup_by_key(|p| p.0);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open to cut");
        for (at, where_) in &points {
            file.set_len(*at as u64).expect("cut");
            let what = format!("{name} cut at byte {at} ({where_})");
            let expected = layout.kernels_before(*at);
            let at_boundary = layout.is_block_boundary(*at);
            match load_damaged(&path, &what) {
                Ok(trace) => {
                    let report = trace.ncu.expect("a report");
                    assert_eq!(report.workloads.len(), expected, "{what}");
                    for (w, full) in report.workloads.iter().zip(&whole.workloads) {
                        assert_eq!(w.display_name(), full.display_name(), "{what}");
                        assert!(same_metrics(w, full), "{what}: kernel {}", w.id);
                    }
                    let warned = report.warnings.messages().join("; ");
                    if at_boundary {
                        assert!(warned.is_empty(), "{what}: {warned}");
                    } else {
                        assert!(warned.contains("cut short"), "{what}: {warned:?}");
                        assert!(warned.contains(&format!("{expected} kernels")), "{warned}");
                    }
                }
                Err(e) => {
                    assert_eq!(expected, 0, "{what}: {e}");
                    if *at > layout.first_block() && !at_boundary {
                        assert!(e.to_string().contains("cut short"), "{what}: {e}");
                    }
                }
            }
            if *at <= 32 << 20 {
                assert!(
                    std::fs::read(&path).expect("read") == bytes[..*at],
                    "{what}"
                );
            }
            cuts += 1;
        }
        let _ = std::fs::remove_file(&path);
    }
    eprintln!(
        "{cuts} cut reports loaded in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(cuts > 200, "{cuts}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn flipped_bytes_give_an_error_or_kernels_never_a_panic() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let scratch = common::scratch_dir("ncu-flip");
    let started = Instant::now();
    let (mut flips, mut errors, mut warned) = (0, 0, 0);
    // Each report up to its last block within 24 MB: past the 14 MB of kernel code that opens
    // most reports, a few result blocks (their structure repeats to the end).
    for name in REPORTS {
        let (bytes, layout) = damage_input(&dir, name, 24 << 20);
        let path = scratch.join(format!("{name}.ncu-rep"));
        std::fs::write(&path, &bytes).expect("write");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open to flip");
        let mut put = |at: usize, byte: u8| {
            file.seek(SeekFrom::Start(at as u64)).expect("seek");
            file.write_all(&[byte]).expect("flip");
            file.flush().expect("flush");
        };
        for (at, mask, where_) in layout.flip_points(bytes.len()) {
            let flipped = bytes[at] ^ mask;
            put(at, flipped);
            let what = format!(
                "{name} byte {at} ({where_}) {:#04x} -> {flipped:#04x}",
                bytes[at]
            );
            match load_damaged(&path, &what) {
                Ok(trace) => {
                    let report = trace.ncu.expect("a report");
                    assert!(!report.workloads.is_empty(), "{what}");
                    warned += usize::from(report.warnings.total() > 0);
                }
                Err(_) => errors += 1,
            }
            put(at, bytes[at]);
            flips += 1;
        }
        assert!(
            std::fs::read(&path).expect("read") == bytes,
            "{name}: restored"
        );
        let _ = std::fs::remove_file(&path);
    }
    eprintln!(
        "{flips} flipped reports loaded in {:.1} s: {errors} errors, {warned} with warnings, the rest read (a flipped value is not detectable)",
        started.elapsed().as_secs_f64()
    );
    assert!(flips > 400, "{flips}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[path = "ncu_bad_input/made.rs"]
mod made;
