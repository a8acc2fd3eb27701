//! `sightline ranks FILE…`: the traces of one run's ranks on one clock — a row per rank (GPU span,
//! busy, idle, kernel and communication time, collectives, late arrivals, wait), then with
//! `--instances` every collective matched across ranks with each rank's arrival.

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::Format;
use super::report_commands::write_table;
use crate::analysis::ranks::{ClockChoice, Run, collectives, straggler_verdict, table};
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
    /// The run's clock: `recorded` (the clock the traces record, where every trace has one and
    /// their spans overlap on it; else the end of a collective every rank takes part in) or
    /// `collective` (that collective's end, even where a recorded clock exists).
    #[arg(long, value_enum, default_value_t = AlignArg::Recorded)]
    pub align: AlignArg,
}

/// `--align`'s values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlignArg {
    Recorded,
    Collective,
}

impl From<AlignArg> for ClockChoice {
    fn from(a: AlignArg) -> Self {
        match a {
            AlignArg::Recorded => ClockChoice::Recorded,
            AlignArg::Collective => ClockChoice::Collective,
        }
    }
}

pub fn ranks(args: &RanksArgs) -> Result<i32> {
    let pattern = regex::Regex::new(&args.collectives)
        .map_err(|e| anyhow::anyhow!("--collectives '{}': {e}", args.collectives))?;
    let traces = super::run_files::load_run(&args.traces, Needs::ALL)?;
    let refs: Vec<_> = traces.iter().collect();
    let run = Run::on_clock(&refs, &pattern, args.align.into());
    if let Some(why) = run.refused() {
        bail!("not one run: {why}");
    }

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
    let numbers: Vec<u32> = run.ranks.iter().map(|r| r.rank).collect();
    eprintln!(
        "{}",
        straggler_verdict(&run.collectives, &numbers, &run.alignment)
    );

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
