//! `sightline ranks FILE…|DIGESTS/`: the traces of one run's ranks on one clock — a row per rank
//! (GPU span, busy, idle, kernel and communication time, collectives, late arrivals, wait), then
//! with `--instances` every collective matched across ranks with each rank's arrival. It works
//! from each rank's digest: read from a folder of digests (`sightline digest`), from the cache
//! of earlier opens, or made from the trace now (and cached, unless `--no-cache`).

use std::path::PathBuf;

use anyhow::{Result, bail};

use super::Format;
use super::report_commands::write_table;
use crate::analysis::ranks::digest::{RankDigest, analyse};
use crate::analysis::ranks::{ClockChoice, collectives, straggler_verdict, table};
use crate::digests::{self, cache::Cache};

#[derive(clap::Args, Debug)]
pub struct RanksArgs {
    /// The traces of one run, one per rank (nsys exports and PyTorch traces, mixed or not), or
    /// folders of them; or one folder of their digests (`sightline digest`).
    #[arg(required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Neither read nor write the digest cache (`digests/` in `$SIGHTLINE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/sightline`, else `~/.cache/sightline`): every trace is read.
    #[arg(long)]
    pub no_cache: bool,
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
    #[command(flatten)]
    pub names: super::analysis_commands::NameFitArgs,
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
    let cache = if args.no_cache { None } else { Cache::user() };
    let got = digests::of_run(&args.traces, &pattern, cache.as_ref())?;
    if got.len() < 2 {
        bail!("a run needs two traces or more (one per rank)");
    }
    for g in &got {
        for line in &g.entry.warnings {
            eprintln!("warning: {}: {line}", g.entry.source.display());
        }
    }
    let given: Vec<(&RankDigest, i64)> = got.iter().map(|g| (&g.digest, 0)).collect();
    let run = analyse(&given, args.align.into());
    if let Some(why) = run.alignment.refused() {
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
            given[r.index].0.hints.path.display()
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
        &run.table,
        "Ranks:",
        "ranks",
        args.format,
        several,
        args.names.fit(),
        &mut out,
    )?;
    if args.instances {
        write_table(
            &table::instance_table_of(&numbers, &run.collectives),
            "Collective instances:",
            "collectives",
            args.format,
            several,
            args.names.fit(),
            &mut out,
        )?;
    }
    std::io::Write::flush(&mut out)?;
    Ok(0)
}
