//! The run-level tables of SQL over a run, made from its digests with no trace opened:
//! `ranks` (`sightline ranks`'s table with each rank's offset and trace), `collectives` (one row
//! per rank of each instance matched across ranks: its arrival and end on the run's clock),
//! `steps` (each rank's steps on the run's clock, with its wait in collectives) and the ranks'
//! kernel and CUDA API summaries (`kernel_sums`, `api_sums`: the digest tables with a `rank`
//! column first).

use std::path::{Path, PathBuf};

use rusqlite::types::Value;

use super::columns::{self, Columns, Values};
use crate::analysis::ranks::collectives::Collectives;
use crate::analysis::ranks::digest::DigestRun;
use crate::analysis::ranks::steps::StepGrid;
use crate::analysis::table::{Cell, Table};
use crate::sql::run_db::{RankTrace, RunRank, RunTable};
use crate::sql::{SqlError, SqlTrace};

/// The names of the run-level tables, as `sql --help` lists them.
pub const TABLES: &str = "ranks(rank, trace, path, offset_ns, span_ns, busy_ns, idle_ns, \
     kernel_ns, comm_ns, exposed_comm_ns, collectives, late_arrivals, wait_ns), \
     collectives(collective, instance, rank, start, end, last_rank, skew_ns), \
     steps(rank, step, start, end, duration, wait_ns), kernel_sums(rank, …cuda_gpu_kern_sum), \
     api_sums(rank, …cuda_api_sum)";

fn int(v: i64) -> Value {
    Value::Integer(v)
}

fn opt(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Integer)
}

fn cell(c: &Cell) -> Value {
    match c {
        Cell::Null => Value::Null,
        Cell::Int(v) => Value::Integer(*v),
        Cell::Float(v) | Cell::Fixed(v, _) => Value::Real(*v),
        Cell::Text(t) => Value::Text(t.to_string()),
    }
}

/// A rank's kernel and CUDA API summary tables, read from its digest folder.
pub fn summaries_in(folder: &Path) -> Option<(Columns, Columns)> {
    let read = |name: &str| columns::read_file(&folder.join(format!("{name}.parquet"))).ok();
    Some((read("kernels")?, read("cuda_api")?))
}

/// One table of the ranks' summaries: `rank` first, then the columns of each rank's table
/// (those of the first rank that has any).
fn summary_table(name: &str, per_rank: &[(u32, Option<&Columns>)]) -> RunTable {
    let first = per_rank
        .iter()
        .filter_map(|(_, c)| *c)
        .find(|c| !c.0.is_empty());
    let names: Vec<String> =
        first.map_or_else(Vec::new, |c| c.0.iter().map(|(n, _)| n.clone()).collect());
    let mut rows = Vec::new();
    for (rank, columns) in per_rank {
        let Some(c) = columns else { continue };
        for i in 0..c.rows() {
            let mut row = vec![int(i64::from(*rank))];
            for n in &names {
                row.push(match c.0.iter().find(|(m, _)| m == n).map(|(_, v)| v) {
                    Some(Values::Int(v)) => opt(v.get(i).copied().flatten()),
                    Some(Values::Float(v)) => {
                        v.get(i).copied().flatten().map_or(Value::Null, Value::Real)
                    }
                    Some(Values::Text(v)) => {
                        v.get(i).cloned().flatten().map_or(Value::Null, Value::Text)
                    }
                    None => Value::Null,
                });
            }
            rows.push(row);
        }
    }
    RunTable {
        name: name.to_string(),
        columns: std::iter::once("rank".to_string()).chain(names).collect(),
        rows,
    }
}

/// What the run-level tables need of one rank (by rank).
#[derive(Debug, Clone)]
pub struct RankRow {
    pub rank: u32,
    /// Its offset onto the run's clock.
    pub offset_ns: i64,
    /// Its trace.
    pub path: PathBuf,
    /// Where its digest's tables are (for its kernel and API summaries), if anywhere.
    pub folder: Option<PathBuf>,
}

/// Everything the run-level tables are made from; cheap to keep, made into tables on the SQL
/// thread when the run's database is first asked for.
#[derive(Debug, Clone)]
pub struct RunSqlInputs {
    pub ranks: Vec<RankRow>,
    /// `sightline ranks`'s table, a row per rank (by rank).
    pub table: Table,
    pub collectives: Collectives,
    pub steps: StepGrid,
    /// Summaries made now and kept nowhere, by rank index (else read from `folder`).
    pub held: Vec<Option<(Columns, Columns)>>,
}

impl RunSqlInputs {
    /// The inputs of a run analysed from digests (`got`: the digests in the order given).
    pub fn of_digest_run(run: &DigestRun, got: &[super::Got]) -> Self {
        let at = |i: usize| got.get(i);
        Self {
            ranks: run
                .ranks
                .iter()
                .map(|p| RankRow {
                    rank: p.rank,
                    offset_ns: p.offset_ns,
                    path: at(p.index)
                        .map(|g| g.entry.source.clone())
                        .unwrap_or_default(),
                    folder: at(p.index).and_then(|g| g.folder.clone()),
                })
                .collect(),
            table: run.table.clone(),
            collectives: run.collectives.clone(),
            steps: run.steps.clone(),
            held: run
                .ranks
                .iter()
                .map(|p| at(p.index).and_then(|g| g.held.clone()))
                .collect(),
        }
    }

    /// The run-level tables.
    pub fn tables(&self) -> Vec<RunTable> {
        let summaries: Vec<Option<(Columns, Columns)>> = self
            .ranks
            .iter()
            .enumerate()
            .map(|(k, r)| {
                self.held
                    .get(k)
                    .cloned()
                    .flatten()
                    .or_else(|| r.folder.as_deref().and_then(summaries_in))
            })
            .collect();
        run_tables(self, &summaries)
    }
}

/// The run's database as `sightline sql --ranks` and Python's `Run.sql` query it: the run-level
/// tables from the digests now, each rank's event views from its trace at the first query that
/// reads one (times moved by the rank's offset onto the run's clock).
pub fn run_database(run: &DigestRun, got: &[super::Got]) -> Result<SqlTrace, SqlError> {
    let ranks = run
        .ranks
        .iter()
        .filter_map(|p| {
            let g = got.get(p.index)?;
            Some(RankTrace {
                rank: RunRank {
                    rank: p.rank,
                    offset_ns: p.offset_ns,
                },
                path: g.entry.source.clone(),
                trace: None,
                made_from: g.digest.source_stamp,
            })
        })
        .collect();
    SqlTrace::for_run_digests(&RunSqlInputs::of_digest_run(run, got).tables(), ranks)
}

fn run_tables(run: &RunSqlInputs, summaries: &[Option<(Columns, Columns)>]) -> Vec<RunTable> {
    let numbers: Vec<u32> = run.ranks.iter().map(|p| p.rank).collect();
    let mut ranks = RunTable {
        name: "ranks".into(),
        columns: [
            "rank",
            "trace",
            "path",
            "offset_ns",
            "span_ns",
            "busy_ns",
            "idle_ns",
            "kernel_ns",
            "comm_ns",
            "exposed_comm_ns",
            "collectives",
            "late_arrivals",
            "wait_ns",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for (p, row) in run.ranks.iter().zip(&run.table.rows) {
        let mut values = vec![
            int(i64::from(p.rank)),
            row.cells.get(1).map_or(Value::Null, cell),
            Value::Text(p.path.to_string_lossy().into_owned()),
            int(p.offset_ns),
        ];
        values.extend(row.cells.iter().skip(2).map(cell));
        ranks.rows.push(values);
    }
    let mut collectives = RunTable {
        name: "collectives".into(),
        columns: [
            "collective",
            "instance",
            "rank",
            "start",
            "end",
            "last_rank",
            "skew_ns",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for inst in &run.collectives.instances {
        for (r, arrival) in inst.arrivals.iter().enumerate() {
            let Some(start) = arrival else { continue };
            collectives.rows.push(vec![
                Value::Text(inst.name.clone()),
                int(inst.ordinal as i64),
                int(i64::from(numbers.get(r).copied().unwrap_or_default())),
                int(*start),
                opt(inst.ends.get(r).copied().flatten()),
                opt(inst
                    .last
                    .and_then(|l| numbers.get(l))
                    .map(|&n| i64::from(n))),
                int(inst.skew_ns),
            ]);
        }
    }
    let mut steps = RunTable {
        name: "steps".into(),
        columns: ["rank", "step", "start", "end", "duration", "wait_ns"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
    };
    for (r, list) in run.steps.per_rank.iter().enumerate() {
        for s in list {
            steps.rows.push(vec![
                int(i64::from(numbers.get(r).copied().unwrap_or_default())),
                int(i64::try_from(s.number).unwrap_or(i64::MAX)),
                int(s.start_ns),
                int(s.end_ns),
                int(s.duration_ns()),
                int(s.wait_ns),
            ]);
        }
    }
    let by_rank = |pick: fn(&(Columns, Columns)) -> &Columns| -> Vec<(u32, Option<&Columns>)> {
        run.ranks
            .iter()
            .enumerate()
            .map(|(k, p)| (p.rank, summaries.get(k).and_then(|s| s.as_ref()).map(pick)))
            .collect()
    };
    vec![
        ranks,
        collectives,
        steps,
        summary_table("kernel_sums", &by_rank(|s| &s.0)),
        summary_table("api_sums", &by_rank(|s| &s.1)),
    ]
}
