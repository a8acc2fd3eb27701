//! `sightline sql TRACE "QUERY"`: runs a read-only query over the trace's views and prints the
//! rows as a table or CSV.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use super::Format;
use crate::export::text_table;
use crate::sql::{SqlTrace, cell_text, views};

#[derive(clap::Args, Debug)]
#[command(after_help = views_help())]
pub struct SqlArgs {
    /// The trace: an nsys export (.sqlite) or a PyTorch profiler trace (.json / .json.gz).
    pub trace: PathBuf,
    /// The query (SELECT or WITH … SELECT) over the views listed below.
    pub query: String,
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
    s
}

pub fn sql(args: &SqlArgs) -> Result<i32> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        anyhow::bail!("--timeout takes a positive number of seconds");
    }
    let trace = SqlTrace::open_for_query(&args.trace, &args.query)?;
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
