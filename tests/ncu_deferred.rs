//! Per-instruction values (the Source Counters' `inst_executed` and its siblings, one value per
//! SASS instruction) are left in the report file at load and read from it when asked for:
//! read back from a gzipped report and from the plain one alike, they add up to the kernel's
//! own total, and a file changed since it was opened gives an error, not wrong values.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test
mod common;

use common::load_ncu as load;

use std::io::Read;

use sightline::load::ncu_rep::read_instances;
use sightline::trace::ncu::{InstanceList, NcuReport};

/// (workload, metric) of every list the load left in the file.
fn deferred(report: &NcuReport) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    for (i, w) in report.workloads.iter().enumerate() {
        for (id, list) in &w.value_instances {
            if matches!(list, InstanceList::Deferred(_)) {
                out.push((i, *id));
            }
        }
    }
    out
}

#[test]
fn per_instruction_values_are_read_from_the_file_when_asked() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let gz_path = dir.join("ncu_train_gemm.ncu-rep.gz");
    let scratch =
        std::env::temp_dir().join(format!("sightline-ncu-deferred-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let plain_path = scratch.join("ncu_train_gemm.ncu-rep");
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz_path).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    std::fs::write(&plain_path, &bytes).unwrap();

    let gz = load(&gz_path);
    let plain = load(&plain_path);
    let lists = deferred(&plain);
    assert_eq!(
        lists,
        deferred(&gz),
        "the same lists are left in either file"
    );
    assert!(!lists.is_empty(), "no list was left in the file");
    let inst_executed = plain.metric_id("inst_executed").expect("inst_executed");
    assert!(lists.iter().any(|&(_, id)| id == inst_executed));

    // Every deferred list of the plain file; the first and last of the gzipped one (each read
    // decompresses the file up to the list).
    let mut summed = 0;
    for (k, &(w, id)) in lists.iter().enumerate() {
        let workload = &plain.workloads[w];
        let list = workload.instances_of(id).unwrap();
        let values = read_instances(&plain, list).unwrap();
        assert_eq!(values.len(), list.len());
        if k == 0 || k == lists.len() - 1 {
            let from_gz = read_instances(&gz, gz.workloads[w].instances_of(id).unwrap()).unwrap();
            assert_eq!(
                values, from_gz,
                "kernel {w}, {}",
                plain.metric_names[id as usize]
            );
        }
        // One value per instruction: they add up to the kernel's own total.
        if id == inst_executed {
            let total: f64 = values.iter().filter_map(|i| i.value.as_f64()).sum();
            let own = workload.metric(id).and_then(|v| v.as_f64()).unwrap();
            assert_eq!(total, own, "kernel {w}: inst_executed per instruction");
            summed += 1;
        }
    }
    assert!(summed > 0);
    eprintln!(
        "{} lists left in the file by the load, read back; {summed} inst_executed lists add up to their kernel's total",
        lists.len()
    );

    // The file changed since it was opened: an error, not wrong values.
    let (w, id) = lists[lists.len() / 2];
    std::fs::write(&plain_path, &bytes[..bytes.len() / 3]).unwrap();
    let list = plain.workloads[w].instances_of(id).unwrap();
    match read_instances(&plain, list) {
        Err(e) => eprintln!("changed file: {e}"),
        Ok(v) => panic!("a cut file gave {} values", v.len()),
    }
    std::fs::write(&plain_path, b"not a report at all").unwrap();
    assert!(read_instances(&plain, list).is_err());
    let _ = std::fs::remove_dir_all(&scratch);
}
