//! The `inference` shape of `gen-trace`: the shape of a real 5.4 M-row export of an LLM
//! inference server on one H100 (about 1.4 M kernels, 2.9 M CUDA API calls, 1 M NVTX ranges),
//! written row by row like [`super::workload`].
//!
//! One Python process serves a 32-layer decoder model. Each engine step is an NVTX range
//! `step_N` with nested ranges up to six levels deep (`execute_model` > `model_forward` >
//! `layer_K` > `self_attn` / `mlp` > `qkv_proj`, `attn`, …). A prefill step runs the model
//! eagerly: hundreds of tiny kernels (mostly 1.5–10 µs), each launched as PyTorch 2.11 on CUDA 13 does it,
//! `cuKernelGetName` (driver) then `cudaLaunchKernel` (as `../shared/traces/n25_graphs.sqlite`
//! records them: one of each per kernel, which is why the API calls are about twice the
//! kernels). A decode step replays a captured CUDA graph: `cudaStreamIsCapturing`, then
//! `cudaGraphLaunch`, whose GPU work is one `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` row with the
//! launch's correlation id, as Nsight Systems 2024+ traces graphs by default. Inputs are copied
//! in on their own stream, sampling runs on a third and the sampled tokens go out on a fourth,
//! joined by `cudaStreamWaitEvent`; the step ends in `cudaStreamSynchronize`. A second thread
//! detokenizes (NVTX only).
//!
//! The tables are the 2022.4 schema of the training shape plus the graph-trace table of a
//! 2025.3.1 export (`nsys_2025_3_graph_trace.sql`). No CPU samples by default (the real export's
//! 5.4 M rows are nearly all kernels, API calls and NVTX ranges, which leaves no room for
//! them); scheduling events are written.

mod kernels;

use kernels::*;
use rusqlite::{Statement, Transaction};

use super::cpu_side::{self, StackSet, ThreadSpan};
use super::rng::Rng;
use super::workload::{
    FIRST_CALL_NS, FIRST_STREAM_ID, GLOBAL_PID, GenCounts, PID, SystemShape, write_system_tables,
};

/// Timeline events by default: with the synchronisations and scheduling events, 5.42 M rows
/// (seed 1: 1.39 M kernels, 2.95 M API calls, 0.99 M NVTX ranges, 11 k graph executions, 40 k
/// copies; 22.6 s of trace).
pub const DEFAULT_EVENTS: u64 = 5_380_000;

/// The graph-trace table, as a 2025.3.1 export declares it.
pub const GRAPH_TRACE_SQL: &str = include_str!("nsys_2025_3_graph_trace.sql");

const LAYERS: usize = 32;
/// One GPU, four streams: the model, input copies, the sampler, output copies.
const STREAMS: usize = 4;
const COMPUTE: usize = 0;
const INPUT: usize = 1;
const SAMPLER: usize = 2;
const OUTPUT: usize = 3;
/// Batch sizes with a captured decode graph (as vLLM captures them); the graph of the current
/// batch size is replayed.
const GRAPH_BATCH_SIZES: usize = 35;

/// String ids of the kernels' names and of the API functions.
struct Names {
    kernels: Vec<[i64; 3]>,
    get_name: i64,
    launch: i64,
    is_capturing: i64,
    graph_launch: i64,
    memcpy: i64,
    record: i64,
    wait_event: i64,
    sync: i64,
}

/// Why a run stopped: the event budget ran out (normal) or SQLite failed.
enum Stop {
    Done,
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Self {
        Stop::Sql(e)
    }
}

type Step = Result<(), Stop>;

struct Inserts<'t> {
    api: Statement<'t>,
    kernel: Statement<'t>,
    graph: Statement<'t>,
    memcpy: Statement<'t>,
    sync: Statement<'t>,
    nvtx: Statement<'t>,
}

impl<'t> Inserts<'t> {
    fn prepare(tx: &'t Transaction) -> rusqlite::Result<Self> {
        Ok(Self {
            api: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, \
                 correlationId, nameId, returnValue, callchainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, NULL)",
            )?,
            kernel: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, \
                 correlationId, globalPid, demangledName, shortName, mangledName, launchType, \
                 cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
                 staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, \
                 gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig) VALUES \
                 (?1, ?2, 0, 1, ?3, ?4, ?5, ?6, ?7, ?8, 0, 0, 128, ?9, 1, 1, 256, 1, 1, 0, 0, 0, \
                 155713536, ?10, 32768, NULL, 0)",
            )?,
            graph: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, contextId, \
                 greenContextId, streamId, correlationId, globalPid, graphId, graphExecId) VALUES \
                 (?1, ?2, 0, 1, NULL, ?3, ?4, ?5, ?6, ?7)",
            )?,
            memcpy: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, \
                 correlationId, globalPid, bytes, copyKind, deprecatedSrcId, srcKind, dstKind, \
                 srcDeviceId, srcContextId, dstDeviceId, dstContextId, migrationCause, graphNodeId, \
                 virtualAddress) VALUES (?1, ?2, 0, 1, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?9, NULL, \
                 NULL, NULL, NULL, NULL, NULL, NULL)",
            )?,
            sync: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, \
                 streamId, correlationId, globalPid, syncType, eventId) VALUES \
                 (?1, ?2, 0, 1, ?3, ?4, ?5, 3, 4294967295)",
            )?,
            nvtx: tx.prepare(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, \
                 globalTid, endGlobalTid, textId, domainId) VALUES \
                 (?1, ?2, 59, NULL, NULL, NULL, ?3, ?4, NULL, NULL, 0)",
            )?,
        })
    }
}

struct Thread {
    global_tid: i64,
    cpu_ns: i64,
    /// Open NVTX ranges: (text, start).
    open: Vec<(String, i64)>,
}

/// The simulation: the main thread (model runner) and the detokenizer thread, the GPU's four
/// streams (when each is next free), the remaining event budget and the rows written.
struct Sim<'t> {
    rng: Rng,
    names: Names,
    threads: [Thread; 2],
    stream_free_ns: [i64; STREAMS],
    budget: u64,
    correlation_id: i64,
    grid_id: i64,
    step: u64,
    /// Index into [`GRAPH_BATCH_SIZES`] of the running batch's decode graph.
    batch: usize,
    counts: GenCounts,
    ins: Inserts<'t>,
}

const MAIN: usize = 0;
const DETOKENIZER: usize = 1;

/// Writes every row of an inference-shaped trace into `tx`, whose tables already exist.
pub fn write(
    tx: &Transaction,
    events: u64,
    sampling_period_ns: u64,
    seed: u64,
) -> rusqlite::Result<GenCounts> {
    let mut rng = Rng::new(seed);
    let mut strings: Vec<String> = Vec::new();
    // One id per distinct string, as nsys writes StringIds.
    let mut intern = |s: &str| -> i64 {
        let i = match strings.iter().position(|x| x == s) {
            Some(i) => i,
            None => {
                strings.push(s.to_string());
                strings.len() - 1
            }
        };
        i as i64 + 1
    };
    let names = Names {
        kernels: KERNELS
            .iter()
            .map(|(demangled, short, mangled, _, _)| {
                [intern(demangled), intern(short), intern(mangled)]
            })
            .collect(),
        get_name: intern("cuKernelGetName"),
        launch: intern("cudaLaunchKernel_v7000"),
        is_capturing: intern("cudaStreamIsCapturing_v10000"),
        graph_launch: intern("cudaGraphLaunch_v10000"),
        memcpy: intern("cudaMemcpyAsync_v3020"),
        record: intern("cudaEventRecord_v3020"),
        wait_event: intern("cudaStreamWaitEvent_v3020"),
        sync: intern("cudaStreamSynchronize_v3020"),
    };
    let thread_names = [
        (intern("python3"), GLOBAL_PID | PID),
        (intern("detokenizer"), GLOBAL_PID | (PID + 1)),
    ];
    let first_ns = FIRST_CALL_NS + rng.between(0, 50_000);
    let threads = thread_names.map(|(_, global_tid)| Thread {
        global_tid,
        cpu_ns: first_ns,
        open: Vec::new(),
    });
    // As in the training shape: the CPU side has its own generator and its strings come last.
    let mut cpu_rng = Rng::new(seed ^ 0xC0FF_EE00_5A3B_1E5D);
    let mut intern_owned = |s: String| intern(&s);
    let stacks = StackSet::new(&mut cpu_rng, &mut intern_owned);
    let spans: Vec<ThreadSpan> = threads
        .iter()
        .enumerate()
        .map(|(t, th)| ThreadSpan {
            global_tid: th.global_tid,
            first_call_ns: th.cpu_ns,
            main: t == MAIN,
        })
        .collect();
    let shape = SystemShape {
        process_name: "python3 -m vllm.entrypoints.openai.api_server",
        gpus: 1,
        streams: STREAMS as u32,
    };
    write_system_tables(tx, &shape, &strings, &thread_names)?;

    let mut sim = Sim {
        rng,
        names,
        threads,
        stream_free_ns: [0; STREAMS],
        budget: events,
        correlation_id: 0,
        grid_id: 0,
        step: 0,
        batch: 4,
        counts: GenCounts::default(),
        ins: Inserts::prepare(tx)?,
    };
    match sim.run() {
        Ok(()) | Err(Stop::Done) => {}
        Err(Stop::Sql(e)) => return Err(e),
    }
    sim.finish()?;
    let mut counts = sim.counts;
    let cpu = cpu_side::write(
        tx,
        &stacks,
        &spans,
        counts.last_ns,
        sampling_period_ns,
        cpu_rng.next_u64(),
    )?;
    counts.cpu_samples = cpu.samples;
    counts.sample_frames = cpu.sample_frames;
    counts.sched_events = cpu.sched_events;
    Ok(counts)
}

impl Sim<'_> {
    fn run(&mut self) -> Step {
        loop {
            // New requests arrive now and then: their prompts run eagerly (prefill); the
            // running batch otherwise decodes one token per step through its CUDA graph.
            let prefill = self.rng.chance(0.2);
            self.engine_step(prefill)?;
            self.batch = (self.batch as i64 + self.rng.between(-1, 1))
                .clamp(0, GRAPH_BATCH_SIZES as i64 - 1) as usize;
            // Waiting for requests: usually a moment, now and then a long lull.
            let idle = if self.step % 500 == 499 {
                self.rng.between(5_000_000, 40_000_000)
            } else {
                self.rng.between(20_000, 120_000)
            };
            self.threads[MAIN].cpu_ns += idle;
        }
    }

    /// One engine step on the main thread, then the detokenizer's share of it.
    fn engine_step(&mut self, prefill: bool) -> Step {
        let n = self.step;
        self.step += 1;
        self.push(MAIN, format!("step_{n}"))?;
        self.push(MAIN, "schedule".into())?;
        self.cpu(MAIN, 15_000, 90_000);
        self.pop(MAIN)?;

        self.push(MAIN, "prepare_inputs".into())?;
        for _ in 0..2 {
            let bytes = self.rng.between(1, 64) * 1024;
            self.memcpy(INPUT, 1, bytes)?;
        }
        self.launch(INPUT, FILL)?;
        self.launch(INPUT, INDEX)?;
        self.record_and_wait(INPUT, COMPUTE)?;
        self.pop(MAIN)?;

        self.push(MAIN, "execute_model".into())?;
        if prefill {
            self.model_forward()?;
        } else {
            self.push(MAIN, "cuda_graph_replay".into())?;
            self.graph_launch()?;
            self.pop(MAIN)?;
        }
        self.pop(MAIN)?;

        self.push(MAIN, "sample".into())?;
        self.record_and_wait(COMPUTE, SAMPLER)?;
        self.module(SAMPLER, "logits_processor", &[COPY, TEMPERATURE])?;
        self.module(SAMPLER, "softmax", &[SOFTMAX])?;
        self.module(SAMPLER, "top_k_top_p", &[TOP_K, ARGMAX])?;
        self.pop(MAIN)?;

        self.push(MAIN, "output".into())?;
        self.record_and_wait(SAMPLER, OUTPUT)?;
        self.launch(OUTPUT, INDEX)?;
        let tokens = 8 * (self.batch as i64 + 1);
        self.memcpy(OUTPUT, 2, tokens)?;
        self.synchronize(OUTPUT)?;
        self.pop(MAIN)?;
        self.pop(MAIN)?;

        // The detokenizer picks the tokens up once the step has synchronised.
        let now = self.threads[MAIN].cpu_ns;
        let d = &mut self.threads[DETOKENIZER];
        d.cpu_ns = d.cpu_ns.max(now) + self.rng.between(5_000, 30_000);
        self.push(DETOKENIZER, "detokenize".into())?;
        self.cpu(DETOKENIZER, 20_000, 150_000);
        self.pop(DETOKENIZER)
    }

    /// A prefill: the whole model run eagerly, module by module.
    fn model_forward(&mut self) -> Step {
        self.push(MAIN, "model_forward".into())?;
        self.module(COMPUTE, "embed_tokens", &[EMBED])?;
        for layer in 0..LAYERS {
            self.push(MAIN, format!("layer_{layer}"))?;
            // The input norm adds the previous layer's residual (one fused kernel).
            self.launch(COMPUTE, if layer == 0 { RMS_NORM } else { ADD_RMS_NORM })?;
            self.push(MAIN, "self_attn".into())?;
            self.gemm("qkv_proj", GEMM_QKV)?;
            self.module(COMPUTE, "rotary_emb", &[ROTARY])?;
            self.module(COMPUTE, "attn", &[RESHAPE_CACHE, FLASH_FWD, FLASH_COMBINE])?;
            self.gemm("o_proj", GEMM_SPLIT_K)?;
            self.pop(MAIN)?;
            self.launch(COMPUTE, ADD_RMS_NORM)?;
            self.push(MAIN, "mlp".into())?;
            self.gemm("gate_up_proj", GEMM_MLP)?;
            self.module(COMPUTE, "act_fn", &[SILU_AND_MUL])?;
            self.gemm("down_proj", GEMM_SPLIT_K)?;
            self.pop(MAIN)?;
            if self.rng.chance(0.5) {
                self.launch(COMPUTE, TRITON_ADD)?;
            }
            self.pop(MAIN)?;
        }
        self.launch(COMPUTE, ADD_RMS_NORM)?;
        self.module(COMPUTE, "lm_head", &[INDEX, LM_HEAD])?;
        self.pop(MAIN)
    }

    /// A linear layer: one GEMM, split-K ones followed by their reduction, sometimes a copy.
    fn gemm(&mut self, name: &str, kernel: usize) -> Step {
        self.push(MAIN, name.into())?;
        self.launch(COMPUTE, kernel)?;
        if kernel == GEMM_SPLIT_K || self.rng.chance(0.3) {
            self.launch(COMPUTE, SPLIT_K_REDUCE)?;
        }
        if self.rng.chance(0.3) {
            self.launch(COMPUTE, COPY)?;
        }
        self.pop(MAIN)
    }

    /// A module as one NVTX range around its kernels on `stream`.
    fn module(&mut self, stream: usize, name: &str, kernels: &[usize]) -> Step {
        self.push(MAIN, name.into())?;
        for &k in kernels {
            self.launch(stream, k)?;
        }
        self.pop(MAIN)
    }

    /// Host work on thread `t` for a time between `lo` and `hi` ns.
    fn cpu(&mut self, t: usize, lo: i64, hi: i64) {
        self.threads[t].cpu_ns += self.rng.between(lo, hi);
    }

    /// Takes `n` events from the budget, or stops the run when fewer are left.
    fn spend(&mut self, n: u64) -> Step {
        if self.budget < n {
            return Err(Stop::Done);
        }
        self.budget -= n;
        Ok(())
    }

    /// Opens an NVTX push/pop range; its row (one event, paid now) is written when it closes.
    fn push(&mut self, t: usize, text: String) -> Step {
        // A range is only worth opening if something can still happen inside it.
        if self.budget < 3 {
            return Err(Stop::Done);
        }
        self.spend(1)?;
        let th = &mut self.threads[t];
        th.open.push((text, th.cpu_ns));
        th.cpu_ns += self.rng.between(400, 1_200);
        Ok(())
    }

    fn pop(&mut self, t: usize) -> Step {
        let th = &mut self.threads[t];
        let Some((text, start)) = th.open.pop() else {
            return Ok(());
        };
        th.cpu_ns += self.rng.between(300, 900);
        let end = th.cpu_ns;
        insert!(self.ins.nvtx; start, end, &text, th.global_tid);
        self.counts.nvtx_ranges += 1;
        self.counts.last_ns = self.counts.last_ns.max(end);
        Ok(())
    }

    /// A CUDA call on the main thread (`event_class` 0 runtime, 1 driver) lasting
    /// `duration_ns`; returns (start, correlationId).
    fn api_call(
        &mut self,
        name: i64,
        event_class: i64,
        duration_ns: i64,
    ) -> Result<(i64, i64), Stop> {
        self.correlation_id += 1;
        let gap = self.rng.between(200, 1_500);
        let th = &mut self.threads[MAIN];
        let start = th.cpu_ns;
        let end = start + duration_ns;
        th.cpu_ns = end + gap;
        insert!(self.ins.api; start, end, event_class, th.global_tid, self.correlation_id, name);
        self.counts.api_calls += 1;
        self.counts.last_ns = self.counts.last_ns.max(end);
        Ok((start, self.correlation_id))
    }

    /// When the GPU can start an operation launched at `launch_ns` on `stream`, and books it.
    fn schedule(&mut self, stream: usize, launch_ns: i64, duration_ns: i64) -> (i64, i64) {
        let ready = launch_ns + self.rng.between(1_500, 4_000);
        let queued = self.stream_free_ns[stream] + self.rng.between(300, 1_200);
        let start = ready.max(queued);
        let end = start + duration_ns.max(1);
        self.stream_free_ns[stream] = end;
        self.counts.last_ns = self.counts.last_ns.max(end);
        (start, end)
    }

    /// One kernel: `cuKernelGetName`, `cudaLaunchKernel`, the kernel on `stream`.
    fn launch(&mut self, stream: usize, kernel: usize) -> Step {
        self.spend(3)?;
        let name_ns = self.rng.between(150, 700);
        self.api_call(self.names.get_name, 1, name_ns)?;
        let call_ns = self.rng.jitter(4_500, 0.5);
        let (launch, corr) = self.api_call(self.names.launch, 0, call_ns)?;
        let (_, _, _, lo, hi) = KERNELS[kernel];
        let duration = self.rng.between(lo, hi);
        let (start, end) = self.schedule(stream, launch, duration);
        self.grid_id += 1;
        let [demangled, short, mangled] = self.names.kernels[kernel];
        let grid = self.rng.between(1, 1056);
        insert!(self.ins.kernel;
            start, end, FIRST_STREAM_ID + stream as i64, corr, GLOBAL_PID,
            demangled, short, mangled, grid, self.grid_id,
        );
        self.counts.kernels += 1;
        Ok(())
    }

    /// A decode step's graph replay: `cudaStreamIsCapturing`, `cudaGraphLaunch` and the graph's
    /// execution on the compute stream (every layer's kernels back to back, about 1 ms).
    fn graph_launch(&mut self) -> Step {
        self.spend(1)?;
        let check_ns = self.rng.between(300, 600);
        self.api_call(self.names.is_capturing, 0, check_ns)?;
        self.spend(2)?;
        let call_ns = self.rng.jitter(12_000, 0.3);
        let (launch, corr) = self.api_call(self.names.graph_launch, 0, call_ns)?;
        let per_layer = 20_000 + 400 * self.batch as i64;
        let duration = self.rng.jitter(per_layer * LAYERS as i64, 0.1);
        let (start, end) = self.schedule(COMPUTE, launch, duration);
        let id = self.batch as i64 + 1;
        insert!(self.ins.graph;
            start, end, FIRST_STREAM_ID + COMPUTE as i64, corr, GLOBAL_PID, id, id,
        );
        self.counts.graphs += 1;
        Ok(())
    }

    /// `cudaMemcpyAsync` of `copy_kind` (1 HtoD from pinned memory, 2 DtoH to pageable).
    fn memcpy(&mut self, stream: usize, copy_kind: i64, bytes: i64) -> Step {
        self.spend(2)?;
        let call_ns = self.rng.jitter(5_000, 0.4);
        let (launch, corr) = self.api_call(self.names.memcpy, 0, call_ns)?;
        let duration = self.rng.jitter(1_200 + bytes / 20, 0.1);
        let (start, end) = self.schedule(stream, launch, duration);
        // Memory kinds of 2022.4 (ENUM_CUDA_MEM_KIND): 0 pageable, 1 pinned, 2 device.
        let (src_kind, dst_kind) = if copy_kind == 1 { (1, 2) } else { (2, 0) };
        insert!(self.ins.memcpy;
            start, end, FIRST_STREAM_ID + stream as i64, corr, GLOBAL_PID, bytes, copy_kind,
            src_kind, dst_kind,
        );
        self.counts.memcpys += 1;
        Ok(())
    }

    /// `cudaEventRecord` on `from`, `cudaStreamWaitEvent` on `to`: `to`'s later work waits for
    /// what `from` has queued.
    fn record_and_wait(&mut self, from: usize, to: usize) -> Step {
        self.spend(2)?;
        let record_ns = self.rng.between(1_000, 2_500);
        self.api_call(self.names.record, 0, record_ns)?;
        let wait_ns = self.rng.between(800, 2_000);
        self.api_call(self.names.wait_event, 0, wait_ns)?;
        self.stream_free_ns[to] = self.stream_free_ns[to].max(self.stream_free_ns[from]);
        Ok(())
    }

    /// `cudaStreamSynchronize`: the main thread waits until `stream` has drained.
    fn synchronize(&mut self, stream: usize) -> Step {
        self.spend(1)?;
        let drained = self.stream_free_ns[stream];
        let now = self.threads[MAIN].cpu_ns;
        let duration = (drained - now).max(0) + self.rng.between(1_000, 3_000);
        let (start, corr) = self.api_call(self.names.sync, 0, duration)?;
        insert!(self.ins.sync;
            start, start + duration, FIRST_STREAM_ID + stream as i64, corr, GLOBAL_PID,
        );
        self.counts.syncs += 1;
        Ok(())
    }

    /// Closes every open range and spends what is left of the budget on synchronize calls.
    fn finish(&mut self) -> rusqlite::Result<()> {
        let settle = |r: Step| match r {
            Ok(()) | Err(Stop::Done) => Ok(()),
            Err(Stop::Sql(e)) => Err(e),
        };
        for t in 0..self.threads.len() {
            while !self.threads[t].open.is_empty() {
                settle(self.pop(t))?;
            }
        }
        while self.budget > 0 {
            settle(self.synchronize(COMPUTE))?;
        }
        Ok(())
    }
}
