//! `sightline digest TRACE…|DIR --out DIGESTS/`: each trace of a run reduced to its rank's
//! digest, written as Parquet tables into `DIGESTS/` ([`crate::digests::store`]) — by one task,
//! or by many, each digesting its shard ([`crate::digests::shard`]) where the traces are. A
//! digest that is current (same trace size, modification time and pattern) is kept; the run's
//! manifest is merged from every shard's digests as each task ends.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};

use crate::analysis::ranks::collectives;
use crate::digests::{self, shard, store};

#[derive(clap::Args, Debug)]
pub struct DigestArgs {
    /// The traces of one run, one per rank (nsys exports and PyTorch traces), or folders of them;
    /// every task of a sharded run must be given the same list.
    #[arg(required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// The folder of digests to write (made if missing; shared by every shard).
    #[arg(long, value_name = "DIGESTS")]
    pub out: PathBuf,
    /// Digest shard I of N only (trace i of the list is shard i % N's). Without it: the shard of
    /// the Slurm job array task (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT), the `srun`
    /// task (SLURM_PROCID of SLURM_NTASKS) or torchrun process (RANK of WORLD_SIZE), else the
    /// whole run.
    #[arg(long, value_name = "I/N", conflicts_with = "shards")]
    pub shard: Option<String>,
    /// N shards, this task's being JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
    #[arg(long, value_name = "N")]
    pub shards: Option<usize>,
    /// Ranges that count as collectives where a rank has neither NCCL kernels nor c10d::
    /// operators (a regex over NVTX / annotation names); `ranks DIGESTS/` takes the same.
    #[arg(long, value_name = "REGEX", default_value = collectives::DEFAULT_PATTERN)]
    pub collectives: String,
    /// Digest every trace of the shard again, even where a current digest is there.
    #[arg(long)]
    pub force: bool,
}

/// What became of one trace of the shard.
enum Done {
    Written { events: usize, seconds: f64 },
    Current,
}

pub fn digest(args: &DigestArgs) -> Result<i32> {
    let pattern = regex::Regex::new(&args.collectives)
        .map_err(|e| anyhow!("--collectives '{}': {e}", args.collectives))?;
    let shard = shard::find(args.shard.as_deref(), args.shards, &|n| {
        std::env::var(n).ok()
    })?;
    if let Some(d) = args.traces.iter().find(|p| store::is_digests(p)) {
        bail!("{} is a folder of digests, not of traces", d.display());
    }
    if args.out.exists() && !args.out.is_dir() {
        bail!("--out {} is a file, not a folder", args.out.display());
    }
    let files = crate::load::folder::run_traces(&args.traces).map_err(|e| anyhow!(e))?;
    if files.is_empty() {
        bail!("no trace to digest");
    }
    let names = store::folder_names(&files);
    let mut sorted = names.clone();
    sorted.sort();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        bail!("two traces would share the digest folder '{}'", w[0]);
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow!("cannot create {}: {e}", args.out.display()))?;
    let mine: Vec<usize> = (0..files.len()).filter(|&i| shard.owns(i)).collect();
    let started = Instant::now();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let outcomes = digests::on_workers(mine.len(), digests::workers(), |k| {
        let i = mine[k];
        store::remove_leftovers(&args.out, &names[i]);
        let source = digests::absolute(&files[i]);
        let place = args.out.join(&names[i]);
        if !args.force
            && store::read_entry(&place).is_ok_and(|e| e.is_current(&source, pattern.as_str()))
        {
            eprintln!("{}: current, kept", place.display());
            return anyhow::Ok(Done::Current);
        }
        let t = Instant::now();
        let mut made =
            digests::load_and_make(&files[i], (i, names[i].clone()), &pattern, &|_| {}, &cancel)?;
        made.entry.total = files.len();
        // Written over whatever is there: the folder was found stale above, or `--force`
        // asks for a fresh digest.
        store::write_rank(&args.out, &made.files(), &|_| false)
            .with_context(|| format!("writing the digest {}", place.display()))?;
        let seconds = t.elapsed().as_secs_f64();
        eprintln!(
            "{}: {} events → {} ({seconds:.2} s)",
            source.display(),
            made.entry.events,
            place.display()
        );
        Ok(Done::Written {
            events: made.entry.events,
            seconds,
        })
    });
    let (mut written, mut current, mut events, mut busy) = (0, 0, 0usize, 0.0);
    let mut failed = Vec::new();
    for o in outcomes {
        match o {
            Ok(Done::Written { events: n, seconds }) => {
                written += 1;
                events += n;
                busy += seconds;
            }
            Ok(Done::Current) => current += 1,
            Err(e) => failed.push(format!("{e:#}")),
        }
    }
    for f in &failed {
        eprintln!("error: {f}");
    }
    let manifest = store::merge_manifest(&args.out)?;
    let rate = if busy > 0.0 {
        format!(
            "; {events} events in {:.2} s, {:.0} events/s per worker",
            started.elapsed().as_secs_f64(),
            events as f64 / busy
        )
    } else {
        String::new()
    };
    eprintln!(
        "shard {}/{} ({}): {} of {} traces; {written} digested, {current} current, {} failed{rate}; \
         {} has {} digest{}",
        shard.index,
        shard.count,
        shard.from,
        mine.len(),
        files.len(),
        failed.len(),
        args.out.display(),
        manifest.ranks.len(),
        if manifest.ranks.len() == 1 { "" } else { "s" }
    );
    Ok(if failed.is_empty() { 0 } else { 1 })
}
