//! Seeded mutation fuzzing of the loader, run in the test suite: copies of real fixtures are
//! damaged — bytes flipped, the file truncated, and SQL mutations (NULLs in NOT NULL columns,
//! text in integer columns, dropped tables, enormous strings, negative and huge times) — and each
//! variant must load or fail with an error: never panic, never hang. The seed is fixed, so a
//! failure names a variant that can be replayed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use rusqlite::Connection;

/// A small seeded generator (SplitMix64): the same variants on every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1).max(1) as u64) as i64
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

const FIXTURES: [&str; 4] = ["cpu_side", "moe", "transformer", "p2p_2gpu"];

/// The event tables and the columns a mutation may spoil, with what the loader reads.
const TARGETS: &[(&str, &[&str])] = &[
    (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        &[
            "start",
            "end",
            "deviceId",
            "streamId",
            "demangledName",
            "correlationId",
            "globalPid",
        ],
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        &["start", "end", "copyKind", "bytes", "deviceId"],
    ),
    (
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &[
            "start",
            "end",
            "globalTid",
            "nameId",
            "correlationId",
            "callchainId",
        ],
    ),
    (
        "NVTX_EVENTS",
        &["start", "end", "text", "eventType", "globalTid", "textId"],
    ),
    (
        "OSRT_API",
        &["start", "end", "nameId", "globalTid", "callchainId"],
    ),
    ("COMPOSITE_EVENTS", &["id", "start", "globalTid"]),
    (
        "SAMPLING_CALLCHAINS",
        &["id", "symbol", "module", "stackDepth"],
    ),
    ("SCHED_EVENTS", &["start", "isSchedIn", "globalTid", "cpu"]),
    (
        "CUDA_UM_CPU_PAGE_FAULT_EVENTS",
        &["start", "address", "CpuInstruction"],
    ),
    ("StringIds", &["id", "value"]),
    ("TARGET_INFO_GPU", &["id", "name"]),
    ("ThreadNames", &["nameId", "globalTid"]),
];

/// One SQL mutation of a copy; returns a description for the failure message.
fn mutate_sql(conn: &Connection, rng: &mut Rng) -> String {
    let (table, columns) = TARGETS[rng.between(0, TARGETS.len() as i64 - 1) as usize];
    let exists: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
            [table],
            |r| r.get(0),
        )
        .unwrap();
    if exists == 0 {
        return format!("{table}: absent, nothing done");
    }
    let column = columns[rng.between(0, columns.len() as i64 - 1) as usize];
    let has_column: i64 = conn
        .query_row(
            &format!("SELECT count(*) FROM pragma_table_info('{table}') WHERE name=?1"),
            [column],
            |r| r.get(0),
        )
        .unwrap();
    // Every other row or so, or all of them.
    let which = if rng.chance(0.5) {
        "rowid % 2 = 0"
    } else {
        "1"
    };
    let (what, sql) = match rng.between(0, 6) {
        0 => ("drop table", format!("DROP TABLE \"{table}\"")),
        1 => (
            "NULLs",
            format!("UPDATE \"{table}\" SET \"{column}\" = NULL WHERE {which}"),
        ),
        2 => (
            "text in an integer column",
            format!("UPDATE \"{table}\" SET \"{column}\" = 'x' || rowid WHERE {which}"),
        ),
        3 => (
            "an enormous string",
            format!(
                "UPDATE \"{table}\" SET \"{column}\" = hex(zeroblob(200000)) WHERE rowid IN (SELECT rowid FROM \"{table}\" LIMIT 3)"
            ),
        ),
        4 => (
            "negative values",
            format!("UPDATE \"{table}\" SET \"{column}\" = -\"{column}\" - 1 WHERE {which}"),
        ),
        5 => (
            "huge values",
            format!("UPDATE \"{table}\" SET \"{column}\" = 9223372036854775807 WHERE {which}"),
        ),
        _ => (
            "delete rows",
            format!("DELETE FROM \"{table}\" WHERE {which}"),
        ),
    };
    if has_column == 0 && what != "drop table" && what != "delete rows" {
        return format!("{table}.{column}: absent, nothing done");
    }
    // A table with NOT NULL or CHECK constraints may refuse the update: that variant is skipped.
    match conn.execute_batch(&sql) {
        Ok(()) => format!("{table}.{column}: {what}"),
        Err(e) => format!("{table}.{column}: {what} refused by SQLite ({e})"),
    }
}

/// Loads `path`; a panic fails the test with `variant` named.
fn load_survives(path: &Path, variant: &str) -> bool {
    let result =
        std::panic::catch_unwind(|| sightline::load::load_file(path).map(|t| t.event_count()));
    match result {
        Ok(r) => r.is_ok(),
        Err(_) => panic!("the loader panicked on {variant}"),
    }
}

#[test]
fn damaged_copies_load_or_fail_cleanly() {
    let dir = common::scratch_dir("fuzz");
    let mut rng = Rng::new(0x5eed_1234);
    let (mut loaded, mut refused, mut variants, mut applied) = (0, 0, 0, 0);
    for round in 0..60 {
        for name in FIXTURES {
            let src = common::fixture(name);
            let path = dir.join(format!("{name}-{round}.sqlite"));
            std::fs::copy(&src, &path).unwrap();
            let kind = rng.between(0, 9);
            let variant = if kind <= 5 {
                // SQL mutations, one to three of them.
                let conn = Connection::open(&path).unwrap();
                let n = rng.between(1, 3);
                let done: Vec<String> = (0..n).map(|_| mutate_sql(&conn, &mut rng)).collect();
                drop(conn);
                applied += done
                    .iter()
                    .filter(|d| !d.contains("nothing done") && !d.contains("refused"))
                    .count();
                format!("{name} round {round}: {}", done.join("; "))
            } else if kind <= 7 {
                // Byte flips past the header (the header itself is the not-SQLite case).
                let mut bytes = std::fs::read(&path).unwrap();
                let flips = rng.between(1, 64);
                for _ in 0..flips {
                    let at = rng.between(100, bytes.len() as i64 - 1) as usize;
                    bytes[at] ^= 1 << rng.between(0, 7);
                }
                std::fs::write(&path, &bytes).unwrap();
                format!("{name} round {round}: {flips} bytes flipped")
            } else {
                let len = std::fs::metadata(&path).unwrap().len();
                let keep = rng.between(0, len as i64 - 1) as u64;
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(keep)
                    .unwrap();
                format!("{name} round {round}: truncated to {keep} of {len} bytes")
            };
            if load_survives(&path, &variant) {
                loaded += 1;
            } else {
                refused += 1;
            }
            variants += 1;
            let _ = std::fs::remove_file(&path);
        }
    }
    println!(
        "{variants} damaged variants ({applied} SQL mutations applied): {loaded} loaded, \
         {refused} refused with an error"
    );
    assert_eq!(variants, 240);
    assert!(applied > 150, "the SQL mutations took effect: {applied}");
    assert!(
        loaded > 0 && refused > 0,
        "both outcomes occur: {loaded} / {refused}"
    );
}
