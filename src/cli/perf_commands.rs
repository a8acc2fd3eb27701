//! The performance subcommands: `gen-trace` writes a synthetic export (or PyTorch profiler
//! trace) of any size, `bench` loads a trace and reports load time against its floor, memory and
//! frame-build time.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;

use crate::bench::{self, BenchOptions};
use crate::synth::{self, GenOptions};

/// What `gen-trace` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GenFormat {
    /// An Nsight Systems 2022.4 SQLite export.
    Nsys,
    /// A PyTorch profiler (Kineto) trace: `kineto_workloads.py many` under `torch.profiler`.
    Kineto,
}

/// Which real export an nsys trace takes its shape from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GenShape {
    /// Data-parallel training: steps of forward/backward/optimizer kernels on --gpus GPUs,
    /// peer copies, CPU samples (default 1,000,000 events).
    Training,
    /// LLM inference on one H100, as a real 5.4 M-row export: millions of tiny kernels on 4
    /// streams (cuKernelGetName + cudaLaunchKernel each), NVTX ranges nested 6 deep, decode
    /// steps replaying CUDA graphs (cudaGraphLaunch + CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows), no
    /// CPU samples. Default 5,380,000 events: 1.4 M kernels, 2.9 M API calls, 1 M NVTX, about
    /// 5.4 M rows. --gpus, --streams and --threads do not apply.
    Inference,
}

#[derive(clap::Args, Debug)]
pub struct GenTraceArgs {
    /// Where to write: an export (.sqlite) or a PyTorch profiler trace (.json; .json.gz is
    /// gzipped).
    pub out: PathBuf,
    /// What to write; by default, a PyTorch profiler trace when OUT ends in .json or .json.gz.
    #[arg(long, value_enum)]
    pub format: Option<GenFormat>,
    /// The shape of an nsys trace.
    #[arg(long, value_enum, default_value_t = GenShape::Training)]
    pub shape: GenShape,
    /// Timeline events to write (nsys: kernels + memcpy + memset + CUDA graph executions + CUDA
    /// API calls + NVTX ranges, exactly; default 1,000,000, 5,380,000 for --shape inference).
    /// Kineto: about this many trace events, in whole profiler
    /// steps of 10,875 events (default 1,070,000: about 350 MB, like `MANY_STEPS=100`).
    #[arg(long)]
    pub events: Option<u64>,
    /// GPUs (nsys only).
    #[arg(long, default_value_t = 2)]
    pub gpus: u32,
    /// CUDA streams per GPU (nsys only).
    #[arg(long, default_value_t = 4)]
    pub streams: u32,
    /// CPU threads launching work, thread t driving GPU t % gpus (nsys only).
    #[arg(long, default_value_t = 2)]
    pub threads: u32,
    /// Running time of a thread between two CPU samples, in ns, as nsys's --sampling-period
    /// (default 1000000, about 1 kHz; none in the inference shape); 0 writes no samples
    /// (scheduling events still). Nsys only.
    #[arg(long)]
    pub sampling_period: Option<u64>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Replace OUT if it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The trace (.sqlite export; an .nsys-rep report, converted with nsys export; or a PyTorch
    /// profiler trace, .json or .json.gz, which has no SQLite floor).
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
    let name = args.out.to_string_lossy().to_ascii_lowercase();
    let kineto = name.ends_with(".json") || name.ends_with(".json.gz");
    let format = args.format.unwrap_or(if kineto {
        GenFormat::Kineto
    } else {
        GenFormat::Nsys
    });
    if format == GenFormat::Kineto {
        let events = args.events.unwrap_or(synth::kineto::DEFAULT_EVENTS);
        let t = Instant::now();
        let c = synth::generate_kineto(&args.out, events, args.seed, args.force)?;
        eprintln!(
            "{}: {} events ({} steps of {} iterations: {} CPU ops, {} [memory], {} Python \
             functions, {} CUDA runtime, {} kernels, {} memcpy) in {:.1} s",
            args.out.display(),
            c.events,
            c.steps,
            c.iterations_per_step,
            c.cpu_ops,
            c.memory_events,
            c.python_functions,
            c.runtime_calls,
            c.kernels,
            c.memcpys,
            t.elapsed().as_secs_f64()
        );
        return Ok(0);
    }
    let t = Instant::now();
    let counts = match args.shape {
        GenShape::Training => {
            let options = GenOptions {
                events: args.events.unwrap_or(1_000_000),
                gpus: args.gpus,
                streams: args.streams,
                threads: args.threads,
                sampling_period_ns: args
                    .sampling_period
                    .unwrap_or(synth::DEFAULT_SAMPLING_PERIOD_NS),
                seed: args.seed,
            };
            synth::generate(&args.out, &options, args.force)?
        }
        GenShape::Inference => {
            let options = synth::InferenceOptions {
                events: args.events.unwrap_or(synth::DEFAULT_INFERENCE_EVENTS),
                sampling_period_ns: args.sampling_period.unwrap_or(0),
                seed: args.seed,
            };
            synth::generate_inference(&args.out, &options, args.force)?
        }
    };
    eprintln!(
        "{}: {} events ({} kernels, {} memcpy, {} memset, {} CUDA graph executions, {} CUDA \
         API, {} NVTX; {} syncs), {} CPU samples ({} frames), {} scheduling events: {} rows in \
         {:.1} s",
        args.out.display(),
        counts.events(),
        counts.kernels,
        counts.memcpys,
        counts.memsets,
        counts.graphs,
        counts.api_calls,
        counts.nvtx_ranges,
        counts.syncs,
        counts.cpu_samples,
        counts.sample_frames,
        counts.sched_events,
        counts.rows(),
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
        needs: crate::trace::Needs::ALL,
    };
    if args.compare.is_none() && crate::load::ncu_rep::is_report_file(&args.trace) {
        let report = bench::ncu::run(&args.trace, args.runs)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", report.to_table());
        }
        return Ok(0);
    }
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
