//! `sightline ranks FILE…`: the traces of one run's ranks on one clock — a row per rank (GPU span,
//! busy, idle, kernel and communication time, collectives, late arrivals, wait), then with
//! `--instances` every collective matched across ranks with each rank's arrival.

use std::path::PathBuf;

use anyhow::Result;

use super::Format;
use super::report_commands::write_table;
use crate::analysis::ranks::{Run, collectives, table};
use crate::trace::Needs;

#[derive(clap::Args, Debug)]
pub struct RanksArgs {
    /// The traces of one run, one per rank (nsys exports and PyTorch traces, mixed or not), or
    /// folders of them.
    #[arg(required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Ranges that count as collectives where a rank has neither NCCL kernels nor c10d::
    /// operators (a regex over NVTX / annotation names).
    #[arg(long, value_name = "REGEX", default_value = collectives::DEFAULT_PATTERN)]
    pub collectives: String,
    /// Also print every collective instance with each rank's arrival.
    #[arg(long)]
    pub instances: bool,
}

pub fn ranks(args: &RanksArgs) -> Result<i32> {
    let pattern = regex::Regex::new(&args.collectives)
        .map_err(|e| anyhow::anyhow!("--collectives '{}': {e}", args.collectives))?;
    let traces = super::run_files::load_run(&args.traces, Needs::ALL)?;
    let refs: Vec<_> = traces.iter().collect();
    let run = Run::new(&refs, &pattern);

    eprintln!("clock: {}", run.alignment.describe());
    for (i, r) in run.ranks.iter().enumerate() {
        let source = run.collectives.per_rank[i]
            .source
            .map_or("none found", |s| s.label());
        eprintln!(
            "rank {} ({}): {}; collectives from {source}",
            r.rank,
            r.source.label(),
            r.trace.path.display()
        );
    }
    let c = &run.collectives;
    match c.straggler(run.ranks.len()) {
        Some((r, n)) => eprintln!(
            "straggler: rank {} arrived last at {n} of {} collectives and kept the others \
             waiting {:.1} ms in all",
            run.ranks[r].rank,
            c.instances.len(),
            c.wait_caused_ns(r) as f64 / 1e6
        ),
        None if c.instances.is_empty() => eprintln!("no collective is shared by two ranks"),
        None => eprintln!("no straggler: no rank keeps the others waiting longer than the rest"),
    }

    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let several = args.instances;
    write_table(
        &table::rank_table(&run),
        "Ranks:",
        "ranks",
        args.format,
        several,
        &mut out,
    )?;
    if args.instances {
        write_table(
            &table::instance_table(&run),
            "Collective instances:",
            "collectives",
            args.format,
            several,
            &mut out,
        )?;
    }
    std::io::Write::flush(&mut out)?;
    Ok(0)
}
