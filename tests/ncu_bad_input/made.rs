//! Small reports made here with the loader's own prost messages (plus fields and value kinds it
//! does not know), other files under a report's name, compressed reports cut or flipped, and
//! the command line on a damaged report.

use std::io::{Read, Write};
use std::path::Path;

use prost::Message;
use prost::encoding::{WireType, encode_key, encode_varint};
use sightline::load::ncu_rep::messages as msg;
use sightline::load::{self, LoadError};
use sightline::trace::ncu::MetricValue;

use super::{common, layout::ReportLayout, load_damaged, load_damaged_holding, report_bytes};

/// Fields no ncu wrote yet, of every wire type, appended to a message (protobuf readers skip
/// them).
fn with_unknown_fields(mut bytes: Vec<u8>) -> Vec<u8> {
    encode_key(900, WireType::Varint, &mut bytes);
    encode_varint(u64::MAX, &mut bytes);
    encode_key(901, WireType::SixtyFourBit, &mut bytes);
    bytes.extend_from_slice(&7u64.to_le_bytes());
    encode_key(902, WireType::ThirtyTwoBit, &mut bytes);
    bytes.extend_from_slice(&7u32.to_le_bytes());
    encode_key(903, WireType::LengthDelimited, &mut bytes);
    let nested = b"\x08\x01a new message".to_vec();
    encode_varint(nested.len() as u64, &mut bytes);
    bytes.extend_from_slice(&nested);
    bytes
}

/// A u32 length and the bytes.
fn prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A block to make: its header, its sources' and its results' encoded messages.
type MadeBlock = (msg::BlockHeader, Vec<Vec<u8>>, Vec<Vec<u8>>);

/// A report: the magic, a file header (with unknown fields), then one block per entry: its
/// header (payload size and counts filled in) and its sources and results.
fn report(blocks: Vec<MadeBlock>) -> Vec<u8> {
    let mut out = b"NVR\0".to_vec();
    let header = msg::FileHeader { version: Some(7) };
    prefixed(&mut out, &with_unknown_fields(header.encode_to_vec()));
    for (mut header, sources, results) in blocks {
        let mut payload = Vec::new();
        for m in sources.iter().chain(&results) {
            prefixed(&mut payload, m);
        }
        header.num_sources = Some(sources.len() as u32);
        header.num_results = Some(results.len() as u32);
        header.payload_size = Some(payload.len() as u32);
        prefixed(&mut out, &with_unknown_fields(header.encode_to_vec()));
        out.extend_from_slice(&payload);
    }
    out
}

fn string_table(names: &[&str]) -> Option<msg::StringTable> {
    Some(msg::StringTable {
        strings: names.iter().map(|s| s.to_string()).collect(),
    })
}

/// A metric result whose value is of a kind this reader does not know (field 6 of
/// `MetricValue`, as a newer ncu might write), with unknown fields around it.
fn unknown_kind_metric(name_id: u32) -> Vec<u8> {
    let mut value = Vec::new();
    encode_key(6, WireType::Varint, &mut value);
    encode_varint(42, &mut value);
    let mut out = Vec::new();
    encode_key(1, WireType::Varint, &mut out);
    encode_varint(u64::from(name_id), &mut out);
    encode_key(2, WireType::LengthDelimited, &mut out);
    encode_varint(value.len() as u64, &mut out);
    out.extend_from_slice(&value);
    with_unknown_fields(out)
}

/// A kernel with the metrics given, encoded, plus unknown-kind metrics for `unknown_ids`.
fn kernel(name: &str, metrics: Vec<msg::MetricResult>, unknown_ids: &[u32]) -> Vec<u8> {
    let result = msg::ProfileResult {
        kernel_demangled_name: Some(name.into()),
        kernel_mangled_name: Some(format!("_Z{}{name}", name.len())),
        grid_size: Some(msg::Uint64x3 {
            x: Some(4),
            y: Some(1),
            z: Some(1),
        }),
        metric_results: metrics.iter().map(|m| m.encode_to_vec().into()).collect(),
        context_id: Some(1),
        stream_id: Some(7),
        ..Default::default()
    };
    let mut bytes = result.encode_to_vec();
    for &id in unknown_ids {
        encode_key(13, WireType::LengthDelimited, &mut bytes);
        let m = unknown_kind_metric(id);
        encode_varint(m.len() as u64, &mut bytes);
        bytes.extend_from_slice(&m);
    }
    with_unknown_fields(bytes)
}

fn value(name_id: u32, v: msg::MetricValue) -> msg::MetricResult {
    msg::MetricResult {
        name_id: Some(name_id),
        metric_value: Some(v),
        metric_value_list: Vec::new(),
    }
}

fn u64_value(x: u64) -> msg::MetricValue {
    msg::MetricValue {
        uint64_value: Some(x),
        ..Default::default()
    }
}

#[test]
fn unknown_fields_and_value_kinds_are_read_around() {
    let dir = common::scratch_dir("ncu-made");
    let names = ["gpu__time_duration.sum", "new__metric.kind", "sm__ratio"];
    let instanced = msg::MetricResult {
        name_id: Some(1),
        metric_value: None,
        metric_value_list: vec![
            msg::MetricListElement {
                correlation_id: Some(u64_value(3)),
                element_value: Some(msg::MetricValue::default()),
            }
            .encode_to_vec()
            .into(),
        ],
    };
    let first = kernel(
        "first_kernel",
        vec![
            value(0, u64_value(1234)),
            value(
                2,
                msg::MetricValue {
                    double_value: Some(0.5),
                    ..Default::default()
                },
            ),
            value(99, u64_value(1)), // names no string of the table
        ],
        &[1],
    );
    let second = kernel(
        "second_kernel",
        vec![value(0, u64_value(99)), instanced],
        &[],
    );
    let header = msg::BlockHeader {
        string_table: string_table(&names),
        process: Some(msg::ProcessInfo {
            process_id: Some(77),
            hostname: Some("host".into()),
            process_name: Some("/usr/bin/python3".into()),
        }),
        ..Default::default()
    };
    let bytes = report(vec![(
        header,
        vec![b"a cubin".to_vec()],
        vec![first, second],
    )]);
    let path = dir.join("made.ncu-rep");
    std::fs::write(&path, &bytes).unwrap();
    let trace = load_damaged(&path, "a made report").expect("loads");
    let r = trace.ncu.expect("a report");
    assert_eq!(r.format_version, 7);
    assert_eq!(r.workloads.len(), 2);
    let (a, b) = (&r.workloads[0], &r.workloads[1]);
    assert_eq!(a.display_name(), "first_kernel");
    assert_eq!((a.pid, a.context, a.stream, a.grid), (77, 1, 7, [4, 1, 1]));
    assert_eq!(r.value(a, names[0]), Some(&MetricValue::U64(1234)));
    assert_eq!(r.value(a, names[1]), Some(&MetricValue::Unknown));
    assert_eq!(r.value(a, names[2]), Some(&MetricValue::F64(0.5)));
    assert_eq!(r.value(b, names[0]), Some(&MetricValue::U64(99)));
    let Some(MetricValue::List(list)) = r.value(b, names[1]) else {
        panic!("{:?}", r.value(b, names[1]));
    };
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].value, sightline::trace::ncu::ScalarValue::Unknown);
    let warned = r.warnings.messages().join("; ");
    assert!(warned.contains("no string"), "{warned}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_report_of_no_workloads_is_an_error_naming_the_file() {
    let dir = common::scratch_dir("ncu-empty");
    let session = msg::BlockHeader {
        session_details: Some(msg::SessionDetails {
            process_id: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    };
    for (name, bytes) in [
        ("no_blocks.ncu-rep", report(Vec::new())),
        (
            "session_only.ncu-rep",
            report(vec![(session, vec![], vec![])]),
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let e = load_damaged(&path, name).expect_err(name);
        assert!(matches!(e, LoadError::NotNcuReport { .. }), "{e}");
        assert!(e.to_string().contains("no profiled kernels"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files that are no report, under a report's name: each refused with a message that names the
/// file and says what it is instead.
#[test]
fn other_files_named_ncu_rep_are_refused_by_name() {
    let dir = common::scratch_dir("ncu-other");
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.ncu-rep", Vec::new(), "empty"),
        ("notes.ncu-rep", b"ID,Process ID\nhello\n".to_vec(), "text"),
        ("image.ncu-rep", png, "PNG"),
        ("magic.ncu-rep", b"NVX\0\x02\0\0\0\x08\x07".to_vec(), "NVR"),
        ("short.ncu-rep", b"NV".to_vec(), "NVR"),
        ("old.nsight-cuprof-report", b"\0\x01\x02".to_vec(), "NVR"),
    ];
    for (name, bytes, says) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let e = load_damaged(&path, name).expect_err(name);
        assert!(matches!(e, LoadError::NotNcuReport { .. }), "{name}: {e}");
        assert!(e.to_string().contains(says), "{name}: {e}");
    }
    // An SQLite file that is not an nsys export, named .ncu-rep: told by its content.
    let path = dir.join("recipes.ncu-rep");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE recipes(id INTEGER); INSERT INTO recipes VALUES (1);")
            .unwrap();
    }
    let e = load_damaged(&path, "sqlite").expect_err("sqlite");
    assert!(matches!(e, LoadError::NotNsys { .. }), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cut of a shared report that ends inside its third result block.
fn roofline_start(dir: &Path) -> (Vec<u8>, ReportLayout) {
    let bytes = report_bytes(dir, "ncu_graphs_roofline", 4 << 20);
    let layout = ReportLayout::parse(&bytes);
    (bytes, layout)
}

#[test]
fn compressed_reports_cut_or_flipped_give_kernels_or_an_error() {
    let Some(shared) = common::shared_ncu() else {
        return;
    };
    let dir = common::scratch_dir("ncu-packed");
    // The shared gzip itself, cut at several points (the stream ends mid-block).
    let gz = std::fs::read(shared.join("ncu_graphs_roofline.ncu-rep.gz")).unwrap();
    let (mut kept, mut refused) = (0, 0);
    for at in [5, 30, 200, 4096, gz.len() / 10, gz.len() / 2, gz.len() - 9] {
        let path = dir.join(format!("cut{at}.ncu-rep.gz"));
        std::fs::write(&path, &gz[..at]).unwrap();
        match load_damaged_holding(&path, &format!("gzip cut at {at}"), 26 << 20) {
            Ok(t) => {
                let r = t.ncu.expect("a report");
                assert!(!r.workloads.is_empty());
                let warned = r.warnings.messages().join("; ");
                assert!(warned.contains("cut short"), "gzip cut at {at}: {warned}");
                kept += 1;
            }
            Err(_) => refused += 1,
        }
    }
    assert!(kept >= 2 && refused >= 2, "{kept} {refused}");
    // A gzip of a report cut inside a block.
    let (bytes, layout) = roofline_start(&shared);
    let cut = layout.blocks[4].start + 100;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&bytes[..cut]).unwrap();
    let path = dir.join("cut_inside.ncu-rep.gz");
    std::fs::write(&path, enc.finish().unwrap()).unwrap();
    let r = load_damaged(&path, "gzip of a cut report")
        .unwrap()
        .ncu
        .unwrap();
    assert_eq!(r.workloads.len(), layout.kernels_before(cut));
    assert!(r.warnings.messages().join(" ").contains("cut short"));
    // zstd (`.ncu-repz`): whole, cut, and with bytes flipped.
    let whole = layout.last_end_within(bytes.len());
    let zst = ruzstd::encoding::compress_to_vec(
        &bytes[..whole],
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let path = dir.join("report.ncu-repz");
    std::fs::write(&path, &zst).unwrap();
    let r = load_damaged_holding(&path, "zstd", whole)
        .unwrap()
        .ncu
        .unwrap();
    assert_eq!(r.workloads.len(), layout.kernels());
    let mut loads = 0;
    for k in 1..40 {
        let at = zst.len() * k / 40;
        std::fs::write(&path, &zst[..at]).unwrap();
        let _ = load_damaged_holding(&path, &format!("zstd cut at {at}"), whole);
        let mut flipped = zst.clone();
        flipped[at] ^= 0xff;
        std::fs::write(&path, &flipped).unwrap();
        let _ = load_damaged_holding(&path, &format!("zstd flipped at {at}"), whole);
        loads += 2;
    }
    eprintln!("gzip: {kept} cuts kept kernels, {refused} refused; zstd: {loads} damaged loads");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Huge values in the length fields, read by the command line under a 400 MB address-space
/// limit: a message saying what is wrong (or the kernels before the damage), never an abort.
#[test]
fn summary_of_a_damaged_report_says_so_within_a_memory_limit() {
    let Some(shared) = common::shared_ncu() else {
        return;
    };
    let dir = common::scratch_dir("ncu-cli");
    let (bytes, layout) = roofline_start(&shared);
    let bytes = bytes[..layout.last_end_within(bytes.len())].to_vec();
    let set_u32 = |at: usize, v: u32| {
        let mut b = bytes.clone();
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        b
    };
    let result_block = layout.blocks.iter().find(|b| b.results > 0).unwrap();
    let result_message = result_block.messages.iter().find(|m| m.2).unwrap().0;
    // The header of the first result block re-encoded with huge counts and payload size.
    let huge_header = {
        let b = result_block;
        let mut header = msg::BlockHeader::decode(&bytes[b.start + 4..b.payload_start]).unwrap();
        header.payload_size = Some(u32::MAX);
        header.num_results = Some(u32::MAX);
        let header = header.encode_to_vec();
        let mut out = bytes[..b.start].to_vec();
        prefixed(&mut out, &header);
        out.extend_from_slice(&bytes[b.payload_start..]);
        out
    };
    let cases = [
        ("file_header_len.ncu-rep", set_u32(4, u32::MAX), false),
        (
            "block_header_len.ncu-rep",
            set_u32(result_block.start, u32::MAX),
            true,
        ),
        (
            "message_len.ncu-rep",
            set_u32(result_message, 0x7fff_ffff),
            true,
        ),
        ("payload_size.ncu-rep", huge_header, true),
        ("empty.ncu-rep", Vec::new(), false),
    ];
    for (name, bytes, may_keep) in cases {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 400000 && exec \"$0\" summary \"$1\"")
            .arg(env!("CARGO_BIN_EXE_sightline"))
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{name}: {:?} {}", out.status.code(), stderr.trim());
        assert!(out.status.code().is_some(), "{name}: killed: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(stderr.contains(name), "{name}: {stderr}");
        if out.status.success() {
            assert!(may_keep && stderr.contains("warning"), "{name}: {stderr}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
            assert!(stderr.contains("Nsight Compute report"), "{name}: {stderr}");
        }
        // The in-process loader says the same.
        let mut file = std::fs::File::open(&path).unwrap();
        let mut first = Vec::new();
        file.read_to_end(&mut first).unwrap();
        assert_eq!(first, bytes, "{name}: the file is unchanged");
        let _ = load::load_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
