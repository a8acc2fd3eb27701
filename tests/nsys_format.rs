//! What `--nsys-format 2025.3` changes beyond the NVTX names and the rounding (which the golden
//! tests cover on real 2025.3 exports): cases no export here has, checked on edited copies of the
//! fixtures against Nsight Systems 2025.3.1's own SQL for them.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};

use sightline::analysis::{Filter, NsysFormat, ReportInput, reports};
use sightline::load;
use sightline::trace::Trace;

/// A report's columns and rows as CSV cell texts, as `format` prints them.
fn rows_of(trace: &Trace, name: &str, format: NsysFormat) -> (Vec<String>, Vec<Vec<String>>) {
    let report = reports::find(name).expect("registered");
    let table = report.compute(&ReportInput {
        trace,
        filter: &Filter::all(),
        options: &Default::default(),
        with_events: false,
        row_limit: None,
        nsys_format: format,
        sink: None,
    });
    let rows = table
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.csv_text()).collect())
        .collect();
    (table.columns, rows)
}

/// A copy of fixture `name` in a scratch directory, edited with `sql`.
fn edited_copy(name: &str, sql: &str) -> (PathBuf, PathBuf) {
    let dir = common::scratch_dir(&format!("nsys-format-{name}"));
    let path = dir.join(format!("{name}.sqlite"));
    std::fs::copy(common::fixture(name), &path).expect("copy fixture");
    rusqlite::Connection::open(&path)
        .expect("open copy")
        .execute_batch(sql)
        .expect("edit copy");
    (dir, path)
}

/// nsys 2025.3.1's `um_cpu_page_faults_sum.py` query, run on the export itself.
fn nsys_2025_page_fault_rows(path: &Path) -> Vec<Vec<String>> {
    let conn = common::open_ro(path);
    let mut stmt = conn
        .prepare(
            "WITH summary AS (
                 SELECT count(*) AS num, CpuInstruction AS sourceId, SourceFile AS sourceFile,
                        SourceLine AS sourceLine
                 FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS
                 GROUP BY sourceId, sourceFile, sourceLine)
             SELECT summary.num, str_instr.value, str_file.value, summary.sourceLine
             FROM summary
             LEFT JOIN StringIds AS str_file ON str_file.id == summary.sourceFile
             LEFT JOIN StringIds AS str_instr ON str_instr.id == summary.sourceId
             ORDER BY 1 DESC",
        )
        .expect("prepare");
    let text = |v: rusqlite::types::ValueRef| match v {
        rusqlite::types::ValueRef::Null => String::new(),
        rusqlite::types::ValueRef::Integer(i) => i.to_string(),
        rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).to_string(),
        other => panic!("unexpected {other:?}"),
    };
    stmt.query_map([], |r| {
        Ok((0..4).map(|c| text(r.get_ref(c).unwrap())).collect())
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

#[test]
fn cpu_page_faults_group_by_source_file_and_line_in_2025_3() {
    // The fixture (nsys 2023.4's schema) has no source columns: 2025.3 prints them empty and
    // groups as 2023.4 does.
    let trace = load::load_file(&common::fixture("cpu_side")).expect("load cpu_side");
    let (old_columns, old_rows) = rows_of(&trace, "um_cpu_page_faults_sum", NsysFormat::V2023_4);
    let (columns, rows) = rows_of(&trace, "um_cpu_page_faults_sum", NsysFormat::V2025_3);
    assert_eq!(old_columns, ["CPU Page Faults", "CPU Instruction Address"]);
    assert_eq!(
        columns,
        [
            "CPU Page Faults",
            "CPU Instruction Address",
            "Source File",
            "Source Line"
        ]
    );
    assert!(!old_rows.is_empty());
    let widened: Vec<Vec<String>> = old_rows
        .iter()
        .map(|r| [r.clone(), vec![String::new(), String::new()]].concat())
        .collect();
    assert_eq!(rows, widened);

    // With the columns a newer export has, filled so that the groups have distinct counts.
    let (dir, path) = edited_copy(
        "cpu_side",
        "ALTER TABLE CUDA_UM_CPU_PAGE_FAULT_EVENTS ADD COLUMN SourceFile INTEGER;
         ALTER TABLE CUDA_UM_CPU_PAGE_FAULT_EVENTS ADD COLUMN SourceLine INTEGER;
         INSERT INTO StringIds (id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), 'a.cu');
         INSERT INTO StringIds (id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), 'b.cu');
         UPDATE CUDA_UM_CPU_PAGE_FAULT_EVENTS SET
             SourceFile = CASE
                 WHEN rowid <= 40 THEN (SELECT id FROM StringIds WHERE value = 'a.cu')
                 WHEN rowid <= 100 THEN (SELECT id FROM StringIds WHERE value = 'b.cu')
             END,
             SourceLine = CASE WHEN rowid > 10 AND rowid <= 100 THEN 7 END;",
    );
    let edited = load::load_file(&path).expect("load edited copy");
    let (_, rows) = rows_of(&edited, "um_cpu_page_faults_sum", NsysFormat::V2025_3);
    let want = nsys_2025_page_fault_rows(&path);
    assert_eq!(want.len(), 4, "{want:?}");
    assert_eq!(rows, want);
    // 2023.4 still counts by instruction only.
    let (_, rows) = rows_of(&edited, "um_cpu_page_faults_sum", NsysFormat::V2023_4);
    assert_eq!(rows, old_rows);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cuda_gpu_trace_prints_a_zero_context_or_stream_empty_in_2025_3() {
    let (dir, path) = edited_copy(
        "p2p_2gpu",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET contextId = 0, streamId = 0
         WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);",
    );
    let trace = load::load_file(&path).expect("load edited copy");
    let (columns, old) = rows_of(&trace, "cuda_gpu_trace", NsysFormat::V2023_4);
    let (_, new) = rows_of(&trace, "cuda_gpu_trace", NsysFormat::V2025_3);
    let ctx = columns.iter().position(|c| c == "Ctx").expect("Ctx");
    let strm = columns.iter().position(|c| c == "Strm").expect("Strm");
    let zeros = old
        .iter()
        .filter(|r| r[ctx] == "0" && r[strm] == "0")
        .count();
    assert_eq!(zeros, 1, "the edited kernel");
    assert_eq!(old.len(), new.len());
    for (a, b) in old.iter().zip(&new) {
        for (c, (x, y)) in a.iter().zip(b).enumerate() {
            if (c == ctx || c == strm) && x == "0" {
                assert_eq!(y, "", "column {}", columns[c]);
            } else {
                assert_eq!(x, y, "column {}", columns[c]);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nvtx_names_always_carry_the_domain_in_2025_3() {
    // moe (nsys 2022.4) has ranges in the default domain and in its own `workload` domain.
    let trace = load::load_file(&common::fixture("moe")).expect("load moe");
    let name_col = |columns: &[String]| columns.iter().position(|c| c == "Range").expect("Range");
    let (columns, old) = rows_of(&trace, "nvtx_pushpop_sum", NsysFormat::V2023_4);
    let (_, new) = rows_of(&trace, "nvtx_pushpop_sum", NsysFormat::V2025_3);
    let c = name_col(&columns);
    let mut old_names: Vec<String> = old
        .iter()
        .map(|r| {
            let n = &r[c];
            if n.starts_with("workload:") {
                n.clone()
            } else {
                format!(":{n}")
            }
        })
        .collect();
    let mut new_names: Vec<String> = new.iter().map(|r| r[c].clone()).collect();
    old_names.sort();
    new_names.sort();
    assert_eq!(new_names, old_names);
    assert!(new_names.iter().any(|n| n.starts_with("workload:")));
}

#[test]
fn ranges_without_text_are_named_by_their_domain_in_2025_3() {
    // One push/pop range without text in the default domain, one in `workload`.
    let (dir, path) = edited_copy(
        "moe",
        "UPDATE NVTX_EVENTS SET text = NULL, textId = NULL WHERE rowid IN (
             (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59 AND domainId = 0),
             (SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59 AND domainId = 1));",
    );
    let trace = load::load_file(&path).expect("load edited copy");
    let names = |format| {
        let (columns, rows) = rows_of(&trace, "nvtx_pushpop_trace", format);
        let c = columns.iter().position(|c| c == "Name").expect("Name");
        rows.into_iter().map(|r| r[c].clone()).collect::<Vec<_>>()
    };
    let count = |names: &[String], name: &str| names.iter().filter(|n| *n == name).count();
    // 2023.4: NULL (empty) for both; 2025.3: `:` and `workload:`.
    let old = names(NsysFormat::V2023_4);
    assert_eq!(count(&old, ""), 2);
    let new = names(NsysFormat::V2025_3);
    assert_eq!((count(&new, ":"), count(&new, "workload:")), (1, 1));
    assert_eq!(count(&new, ""), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
