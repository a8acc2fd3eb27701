//! The performance subcommands: `gen-trace` writes a synthetic export of any size, `bench` loads
//! a trace and reports load time against its floor, memory and frame-build time.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;

use crate::bench::{self, BenchOptions};
use crate::synth::{self, GenOptions};

#[derive(clap::Args, Debug)]
pub struct GenTraceArgs {
    /// Where to write the export (.sqlite).
    pub out: PathBuf,
    /// Timeline events to write (kernels + memcpy + memset + CUDA API calls + NVTX ranges).
    #[arg(long, default_value_t = 1_000_000)]
    pub events: u64,
    #[arg(long, default_value_t = 2)]
    pub gpus: u32,
    /// CUDA streams per GPU.
    #[arg(long, default_value_t = 4)]
    pub streams: u32,
    /// CPU threads launching work (thread t drives GPU t % gpus).
    #[arg(long, default_value_t = 2)]
    pub threads: u32,
    /// Running time of a thread between two CPU samples, in ns, as nsys's --sampling-period
    /// (default about 1 kHz); 0 writes no samples (scheduling events still).
    #[arg(long, default_value_t = synth::DEFAULT_SAMPLING_PERIOD_NS)]
    pub sampling_period: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Replace OUT if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The trace (.sqlite export, or an .nsys-rep report, converted with nsys export).
    pub trace: PathBuf,
    /// Width of the simulated timeline in pixels.
    #[arg(long, default_value_t = 1920)]
    pub width: u32,
    /// Loads and floor scans to take the median of.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Frames built per zoom level.
    #[arg(long, default_value_t = 100)]
    pub frames: u32,
    /// Height of the simulated event area in pixels.
    #[arg(long, default_value_t = 1000)]
    pub height: u32,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Instead: open TRACE and NEW as the compare view does and report the memory the two
    /// traces and the compare view take.
    #[arg(long, value_name = "NEW")]
    pub compare: Option<PathBuf>,
}

pub fn gen_trace(args: &GenTraceArgs) -> Result<i32> {
    let options = GenOptions {
        events: args.events,
        gpus: args.gpus,
        streams: args.streams,
        threads: args.threads,
        sampling_period_ns: args.sampling_period,
        seed: args.seed,
    };
    let t = Instant::now();
    let counts = synth::generate(&args.out, &options, args.force)?;
    eprintln!(
        "{}: {} events ({} kernels, {} memcpy, {} memset, {} CUDA API, {} NVTX; {} syncs), \
         {} CPU samples ({} frames), {} scheduling events in {:.1} s",
        args.out.display(),
        counts.events(),
        counts.kernels,
        counts.memcpys,
        counts.memsets,
        counts.api_calls,
        counts.nvtx_ranges,
        counts.syncs,
        counts.cpu_samples,
        counts.sample_frames,
        counts.sched_events,
        t.elapsed().as_secs_f64()
    );
    Ok(0)
}

pub fn bench(args: &BenchArgs) -> Result<i32> {
    let options = BenchOptions {
        width_px: args.width,
        runs: args.runs,
        frames: args.frames,
        height_px: args.height,
    };
    // A report is converted (or its conversion reused) before the timings start.
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let control = crate::load::LoadControl {
        progress: &|_| {},
        cancel: &cancel,
    };
    let trace = crate::load::nsys_rep::sqlite_path(&args.trace, &control)?;
    if let Some(new) = &args.compare {
        let new = crate::load::nsys_rep::sqlite_path(new, &control)?;
        let report = bench::compare::run(&trace, &new)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", report.to_table());
        }
        return Ok(0);
    }
    let report = bench::run(&trace, &options)?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    Ok(0)
}
