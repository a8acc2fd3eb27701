//! The page reader (`load::nsys_sqlite::pages`) against SQLite itself: every row of every table
//! it reads, in every export of `../shared/traces` (and its subfolders) and `tests/fixtures`,
//! has the values `SELECT *, rowid … ORDER BY rowid` gives, cell for cell, with the same type.
//! Also on exports changed to reach the rarer parts of the format: rows that spill onto overflow
//! pages (a text of 5 MB), a column added after rows were written, a page size of 64 KiB and a
//! damaged file (which must never panic). Prints how many files, tables, rows and cells it
//! compared.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test
mod common;

use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use sightline::load::nsys_sqlite::Schema;
use sightline::load::nsys_sqlite::pages::{PageFile, Source};

fn exports(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            exports(&p, out);
        } else if p.extension().is_some_and(|x| x == "sqlite") {
            out.push(p);
        }
    }
}

#[derive(Default, Debug)]
struct Count {
    tables: usize,
    left_to_sqlite: usize,
    rows: usize,
    cells: usize,
}

/// A value with its bytes copied out of the page or statement it was read from.
#[derive(Debug, PartialEq)]
enum Owned {
    Null,
    Integer(i64),
    Real(u64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

/// The same for a value of either reader.
fn owned(v: ValueRef) -> Owned {
    match v {
        ValueRef::Null => Owned::Null,
        ValueRef::Integer(x) => Owned::Integer(x),
        ValueRef::Real(x) => Owned::Real(x.to_bits()),
        ValueRef::Text(t) => Owned::Text(t.to_vec()),
        ValueRef::Blob(b) => Owned::Blob(b.to_vec()),
    }
}

/// Compares every table of `path` the page reader reads with SQLite's rows.
fn compare_file(path: &Path, count: &mut Count) {
    let conn = common::open_ro(path);
    let schema = Schema::read(&conn).unwrap();
    let pages = PageFile::open(path).unwrap_or_else(|| panic!("{}: not read", path.display()));
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for table in tables {
        let Some(layout) = schema.layout(&table) else {
            count.left_to_sqlite += 1;
            continue;
        };
        let mut names: Vec<&str> = layout.columns.iter().map(String::as_str).collect();
        names.push("rowid");
        let sources = layout.sources(&names, |_| true);
        assert_eq!(sources.last(), Some(&Source::Rowid));
        let mut read: Vec<Vec<Owned>> = Vec::new();
        let leaves = pages.leaves(layout.root).unwrap();
        pages
            .scan(&leaves, &sources, |row| {
                read.push((0..names.len()).map(|i| owned(row.value(i))).collect());
                true
            })
            .unwrap_or_else(|e| panic!("{} {table}: {e}", path.display()));
        let sql = format!(
            "SELECT *, rowid FROM \"{}\" ORDER BY rowid",
            table.replace('"', "\"\"")
        );
        let mut stmt = conn.prepare(&sql).unwrap();
        let mut rows = stmt.query([]).unwrap();
        let mut r = 0;
        while let Some(row) = rows.next().unwrap() {
            assert!(
                r < read.len(),
                "{} {table}: fewer rows read",
                path.display()
            );
            for (c, name) in names.iter().enumerate() {
                let theirs = owned(row.get_ref(c).unwrap());
                assert_eq!(
                    read[r][c],
                    theirs,
                    "{} {table} row {r} column {name}",
                    path.display()
                );
                count.cells += 1;
            }
            r += 1;
        }
        assert_eq!(r, read.len(), "{} {table}: rows", path.display());
        count.rows += r;
        count.tables += 1;
    }
}

#[test]
fn every_table_of_every_export_reads_as_sqlite_reads_it() {
    let mut files = Vec::new();
    exports(&common::fixtures(), &mut files);
    let fixtures = files.len();
    if let Some(dir) = common::shared_traces() {
        exports(&dir, &mut files);
    }
    files.sort();
    let mut count = Count::default();
    for f in &files {
        compare_file(f, &mut count);
    }
    eprintln!(
        "{} exports ({fixtures} fixtures): {} tables read from pages ({} left to SQLite), {} rows, {} cells equal SQLite's",
        files.len(),
        count.tables,
        count.left_to_sqlite,
        count.rows,
        count.cells
    );
    assert!(count.tables > 100 && count.rows > 100_000);
}

/// A copy of the moe fixture to change, in a scratch folder.
fn scratch_copy(name: &str) -> PathBuf {
    let path = common::scratch_dir(name).join(format!("{name}.sqlite"));
    std::fs::copy(common::fixture("moe"), &path).unwrap();
    path
}

#[test]
fn overflow_pages_added_columns_and_big_pages() {
    // A 5 MB text spills onto overflow pages; rows written before a column was added lack it.
    let path = scratch_copy("changed");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO StringIds (id, value) SELECT max(id) + 1,
           'long_' || replace(hex(zeroblob(2500000)), '0', 'x') FROM StringIds;
         UPDATE NVTX_EVENTS SET text = 'mid_' || replace(hex(zeroblob(3000)), '0', 'y')
           WHERE rowid % 7 = 0;
         ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN later INTEGER;
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET later = rowid * 3 WHERE rowid % 2 = 0;
         ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME ADD COLUMN defaulted INTEGER DEFAULT 5;",
    )
    .unwrap();
    drop(conn);
    let mut count = Count::default();
    compare_file(&path, &mut count);
    let conn = common::open_ro(&path);
    let schema = Schema::read(&conn).unwrap();
    // A column with a default is read by SQLite alone (older rows read the default).
    assert!(schema.layout("CUPTI_ACTIVITY_KIND_RUNTIME").is_none());
    assert!(schema.layout("CUPTI_ACTIVITY_KIND_KERNEL").is_some());
    // 64 KiB pages (the header's page size field is 1).
    let big = scratch_copy("big_pages");
    let conn = rusqlite::Connection::open(&big).unwrap();
    conn.execute_batch("PRAGMA page_size = 65536; VACUUM;")
        .unwrap();
    drop(conn);
    compare_file(&big, &mut count);
    eprintln!("changed exports: {count:?}");
    for p in [&path, &big] {
        let _ = std::fs::remove_dir_all(p.parent().unwrap());
    }
}

#[test]
fn a_damaged_file_is_refused_or_read_never_a_panic() {
    let path = scratch_copy("damaged");
    let original = std::fs::read(&path).unwrap();
    let conn = common::open_ro(&path);
    let schema = Schema::read(&conn).unwrap();
    drop(conn);
    let roots: Vec<u32> = ["CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS", "StringIds"]
        .iter()
        .filter_map(|t| schema.layout(t).map(|l| l.root))
        .collect();
    let all = [
        Source::Column(0),
        Source::Column(5),
        Source::Column(30),
        Source::Rowid,
    ];
    let (mut refused, mut read) = (0, 0);
    for k in 0..300usize {
        let mut bytes = original.clone();
        // Flip a byte in a page header, a cell pointer or a cell, across the file.
        let at = (k * 7919 * 13 + (k % 3) * 1000) % bytes.len();
        let at = at.max(100);
        bytes[at] ^= 0x5a ^ (k as u8);
        if k % 10 == 0 {
            bytes.truncate(bytes.len() - (k * 977) % (bytes.len() / 2));
        }
        std::fs::write(&path, &bytes).unwrap();
        let Some(file) = PageFile::open(&path) else {
            refused += 1;
            continue;
        };
        for &root in &roots {
            match file.leaves(root) {
                Err(_) => refused += 1,
                Ok(leaves) => match file.scan(&leaves, &all, |row| {
                    for i in 0..all.len() {
                        let _ = row.value(i);
                    }
                    true
                }) {
                    Ok(()) => read += 1,
                    Err(_) => refused += 1,
                },
            }
        }
    }
    eprintln!("300 damaged copies: {refused} refused, {read} tables read");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
    assert!(refused > 0 && read > 0);
}

/// Whole loads through the page reader print what loads through SQLite print: every report of
/// `summary --report all`, on four and on one worker thread (the page reader splits a table
/// where a worker is free, so the parts and their joins are exercised).
#[test]
fn every_report_is_the_same_through_pages_and_through_sqlite() {
    let run = |path: &Path, pages: &str, threads: &str| {
        let mut args: Vec<&std::ffi::OsStr> = ["summary", "--report", "all", "--format", "csv"]
            .map(std::ffi::OsStr::new)
            .to_vec();
        args.push(path.as_os_str());
        let env = [
            ("SIGHTLINE_SQLITE_PAGES", pages),
            ("RAYON_NUM_THREADS", threads),
        ];
        let out = common::sightline_ok(&args, &env);
        (out.stdout, out.stderr)
    };
    let names = ["stress", "moe", "cpu_side", "nccl/n25_moe_a2a_rank0"];
    let mut bytes = 0;
    for name in names {
        let path = common::fixture(name);
        let sqlite = run(&path, "0", "4");
        for threads in ["4", "1"] {
            let paged = run(&path, "1", threads);
            assert!(paged == sqlite, "{name}, {threads} threads: output differs");
        }
        bytes += sqlite.0.len();
    }
    eprintln!(
        "{} exports: every report equal through pages and SQLite ({bytes} bytes each)",
        names.len()
    );
}

/// A damaged export reads the same through the page reader as through SQLite: the same exit
/// code, output and messages (SQLite's "damaged or truncated" where it finds the damage, the
/// same warnings where it reads on), on copies with three flipped bytes past the first page.
#[test]
fn a_damaged_export_says_what_sqlite_says() {
    let original = std::fs::read(common::fixture("moe")).unwrap();
    let dir = common::scratch_dir("pages_damaged_cli");
    let path = dir.join("damaged.sqlite");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut refused, mut read) = (0, 0);
    for _ in 0..80 {
        let mut bytes = original.clone();
        for _ in 0..3 {
            let at = 4096 + (next() as usize) % (bytes.len() - 4096);
            bytes[at] ^= (next() % 255 + 1) as u8;
        }
        std::fs::write(&path, &bytes).unwrap();
        let run = |pages: &str| {
            std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
                .args(["summary", "--format", "csv", "--report"])
                .arg("cuda_gpu_kern_sum,nvtx_sum,cuda_api_sum")
                .arg(&path)
                .env("SIGHTLINE_SQLITE_PAGES", pages)
                .output()
                .unwrap()
        };
        let (sqlite, paged) = (run("0"), run("1"));
        assert_eq!(paged.status.code(), sqlite.status.code());
        assert_eq!(
            String::from_utf8_lossy(&paged.stderr),
            String::from_utf8_lossy(&sqlite.stderr)
        );
        assert!(paged.stdout == sqlite.stdout, "output differs");
        if sqlite.status.success() {
            read += 1;
        } else {
            refused += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("80 damaged copies: {refused} refused and {read} read alike by both readers");
    assert!(refused > 0 && read > 0);
}
