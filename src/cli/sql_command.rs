//! `sightline sql TRACE "QUERY"`: runs a read-only query over the trace's views and prints the
//! rows as a table or CSV. `sightline sql --ranks FILE… "QUERY"` (or a folder) runs it over a run
//! of ranks: the same views with a `rank` column, times on the run's clock.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use super::Format;
use crate::analysis::ranks::digest::{RankDigest, analyse};
use crate::analysis::ranks::{ClockChoice, collectives};
use crate::digests::{self, cache::Cache, run_sql};
use crate::export::text_table;
use crate::sql::{SqlTrace, cell_text, views};

#[derive(clap::Args, Debug)]
#[command(after_help = views_help())]
pub struct SqlArgs {
    /// The trace: an nsys export (.sqlite) or a PyTorch profiler trace (.json / .json.gz); with
    /// --ranks, the traces of one run (one per rank), or a folder holding them.
    #[arg(required = true, num_args = 1.., value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// The query (SELECT or WITH … SELECT) over the views listed below.
    pub query: String,
    /// The traces are the ranks of one run (or one folder of their digests): every view gets a
    /// first column `rank`, and times are on the run's clock (as `sightline ranks` aligns the
    /// ranks); the run-level tables come from the ranks' digests.
    #[arg(long)]
    pub ranks: bool,
    /// With --ranks: neither read nor write the digest cache.
    #[arg(long)]
    pub no_cache: bool,
    /// With --ranks: the ranges that count as collectives where a rank has neither NCCL kernels
    /// nor c10d:: operators (as `sightline ranks --collectives`; digests keep the pattern they
    /// were made with).
    #[arg(long, value_name = "REGEX", default_value = collectives::DEFAULT_PATTERN)]
    pub collectives: String,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print at most N rows (a note on stderr says when more matched).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Stop a query that runs longer than SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
}

fn views_help() -> String {
    let mut s = String::from("Views:\n");
    for (name, columns) in views::VIEWS {
        s.push_str(&format!("  {name}({columns})\n"));
    }
    s.push_str(&format!(
        "  graph_executions({}) where the trace has CUDA graphs traced as a whole\n",
        views::GRAPH_EXECUTIONS
    ));
    s.push_str(&format!(
        "  gaps({}) GPU idle gaps as `sightline gaps` lists them\n",
        crate::sql::computed::GAPS
    ));
    s.push_str(&format!(
        "  samples({}) CPU samples, where the trace has them\n",
        crate::sql::computed::SAMPLES
    ));
    s.push_str(
        "With --ranks every view has a first column `rank`, and start/end/ts are on the run's \
         clock; the run's own tables, answered from its ranks' digests without opening a \
         trace:\n",
    );
    s.push_str(&format!("  {}\n", run_sql::TABLES));
    s
}

pub fn sql(args: &SqlArgs) -> Result<i32> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        anyhow::bail!("--timeout takes a positive number of seconds");
    }
    let trace = match (args.ranks, args.traces.as_slice()) {
        (true, _) => open_run(&args.traces, args.no_cache, &args.collectives)?,
        (false, [one]) => SqlTrace::open_for_query(one, &args.query)?,
        (false, _) => bail!("one trace, or --ranks for the traces of one run"),
    };
    let timeout = Duration::from_secs_f64(args.timeout);
    let result = trace.query(&args.query, args.limit, timeout, None)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(&mut out);
            w.write_record(&result.columns)?;
            for row in &result.rows {
                w.write_record(row.iter().map(cell_text))?;
            }
            w.flush()?;
        }
        Format::Table => {
            let header: Vec<&str> = result.columns.iter().map(String::as_str).collect();
            let rows: Vec<Vec<String>> = result
                .rows
                .iter()
                .map(|r| r.iter().map(cell_text).collect())
                .collect();
            let table = text_table::render(&header, &rows);
            out.write_all(table.as_bytes())?;
            if !table.ends_with('\n') {
                out.write_all(b"\n")?;
            }
        }
    }
    out.flush()?;
    if result.truncated {
        eprintln!(
            "note: more rows matched; {} printed (--limit)",
            result.rows.len()
        );
    }
    Ok(0)
}

/// The run's database: its ranks' digests (a folder of digests, the cache, or each trace read
/// now), aligned as `sightline ranks` aligns them; the run-level tables from the digests at
/// once, the event views filled from the traces only when the query reads one.
fn open_run(paths: &[PathBuf], no_cache: bool, collectives: &str) -> Result<SqlTrace> {
    let pattern = regex::Regex::new(collectives)
        .map_err(|e| anyhow::anyhow!("--collectives '{collectives}': {e}"))?;
    let cache = if no_cache { None } else { Cache::user() };
    let got = digests::of_run(paths, &pattern, cache.as_ref())?;
    if got.len() < 2 {
        bail!("a run needs two traces or more (one per rank)");
    }
    let given: Vec<(&RankDigest, i64)> = got.iter().map(|g| (&g.digest, 0)).collect();
    let run = analyse(&given, ClockChoice::Recorded);
    if let Some(why) = run.alignment.refused() {
        anyhow::bail!("not one run: {why}");
    }
    eprintln!("clock: {}", run.alignment.describe());
    for p in &run.ranks {
        eprintln!(
            "rank {}: {} (offset {} ns)",
            p.rank,
            got[p.index].entry.source.display(),
            p.offset_ns
        );
    }
    Ok(run_sql::run_database(&run, &got)?)
}
