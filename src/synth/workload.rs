//! The synthetic workload: data-parallel training on `gpus` GPUs, written row by row into the
//! tables of an export through prepared statements.
//!
//! Time is simulated per CPU thread (its clock advances with each API call and idle gap) and per
//! stream (a stream runs one operation at a time, so work queues behind it), which yields the
//! shapes of real traces: kernels lagging their launches, a CPU waiting in
//! `cudaStreamSynchronize`, and GPU idle gaps between steps.

use rusqlite::{Statement, Transaction};

use super::GenOptions;
use super::cpu_side::{self, StackSet, ThreadSpan};
use super::rng::{Rng, Zipf};

/// How many rows of each kind were written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GenCounts {
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    pub api_calls: u64,
    pub nvtx_ranges: u64,
    /// CUDA graph executions (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE` rows; the inference shape only).
    pub graphs: u64,
    /// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` rows (not timeline events).
    pub syncs: u64,
    /// CPU samples (`COMPOSITE_EVENTS` rows), their frames (`SAMPLING_CALLCHAINS` rows) and
    /// scheduling events (`SCHED_EVENTS` rows): not timeline events either.
    pub cpu_samples: u64,
    pub sample_frames: u64,
    pub sched_events: u64,
    /// Latest timestamp written (ns).
    pub last_ns: i64,
}

impl GenCounts {
    /// Timeline events, as [`crate::trace::Trace::event_count`] counts them.
    pub fn events(&self) -> u64 {
        self.kernels + self.memcpys + self.memsets + self.graphs + self.api_calls + self.nvtx_ranges
    }

    /// Rows written to the event tables: the events plus synchronisations, CPU samples, their
    /// frames and scheduling events (not StringIds, ENUM or target-information rows).
    pub fn rows(&self) -> u64 {
        self.events() + self.syncs + self.cpu_samples + self.sample_frames + self.sched_events
    }
}

/// The process id of the synthetic workload's process.
pub(super) const PID: i64 = 4242;
/// `globalPid` packs (vm 1, pid): `(vm << 48) | (pid << 24)`, as 2022.4 writes it.
pub(super) const GLOBAL_PID: i64 = (1 << 48) | (PID << 24);
/// nsys numbers the streams an application creates from 7 in each context.
pub(super) const FIRST_STREAM_ID: i64 = 7;
const LAYERS: usize = 8;
const WARMUP_ITERATIONS: u64 = 5;
const KERNEL_NAMES: usize = 256;
/// Zipf exponent of kernel-name popularity.
const ZIPF_S: f64 = 1.1;
/// nsys starts recording a few hundred ms before the first CUDA call.
pub(super) const FIRST_CALL_NS: i64 = 400_000_000;
const SESSION_START_UTC_NS: i64 = 1_795_350_999_417_910_498;

const KERNEL_FAMILIES: [(&str, &str); 16] = [
    (
        "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64",
        "cutlass",
    ),
    (
        "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn",
        "cublas",
    ),
    ("vectorized_elementwise_kernel", "at::native"),
    ("softmax_warp_forward", "at::native"),
    ("softmax_warp_backward", "at::native"),
    ("layer_norm_kernel", "at::native"),
    ("layer_norm_grad_input_kernel", "at::native"),
    ("flash_fwd_kernel", "flash"),
    ("flash_bwd_dq_dk_dv_loop_kernel", "flash"),
    ("reduce_kernel", "at::native"),
    ("unrolled_elementwise_kernel", "at::native"),
    ("multi_tensor_apply_kernel", "at::native"),
    ("indexSelectLargeIndex", "at::native"),
    ("cunn_SoftMaxForward", "at::native"),
    ("ncclDevKernel_AllReduce_Sum_f16_RING_LL", "nccl"),
    ("elementwise_kernel", "at::native"),
];

struct KernelName {
    demangled: i64,
    short: i64,
    mangled: i64,
    duration_ns: i64,
    registers: i64,
    grid: [i64; 3],
    block: [i64; 3],
    static_shared: i64,
    dynamic_shared: i64,
}

struct ApiNames {
    launch: i64,
    memcpy: i64,
    memcpy_peer: i64,
    memset: i64,
    sync: i64,
}

struct Thread {
    global_tid: i64,
    gpu: usize,
    cpu_ns: i64,
    /// Open NVTX ranges: (text, start).
    open: Vec<(String, i64)>,
    step: u64,
}

struct Stream {
    device: i64,
    stream_id: i64,
    free_ns: i64,
}

/// Why generation stopped early: the event budget ran out (normal) or SQLite failed.
enum Stop {
    Done,
    Sql(rusqlite::Error),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Self {
        Stop::Sql(e)
    }
}

struct Inserts<'t> {
    runtime: Statement<'t>,
    kernel: Statement<'t>,
    memcpy: Statement<'t>,
    memset: Statement<'t>,
    sync: Statement<'t>,
    nvtx: Statement<'t>,
}

impl<'t> Inserts<'t> {
    fn prepare(tx: &'t Transaction) -> rusqlite::Result<Self> {
        Ok(Self {
            runtime: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, \
                 correlationId, nameId, returnValue, callchainId) VALUES (?1, ?2, 0, ?3, ?4, ?5, 0, NULL)",
            )?,
            kernel: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, \
                 correlationId, globalPid, demangledName, shortName, mangledName, launchType, \
                 cacheConfig, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
                 staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, \
                 gridId, sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 0, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
                 ?18, ?19, 0, 155713536, ?20, ?21, NULL, 0)",
            )?,
            memcpy: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, \
                 correlationId, globalPid, bytes, copyKind, deprecatedSrcId, srcKind, dstKind, \
                 srcDeviceId, srcContextId, dstDeviceId, dstContextId, migrationCause, graphNodeId, \
                 virtualAddress) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, NULL, ?10, ?11, ?12, \
                 ?13, ?14, ?15, NULL, NULL, NULL)",
            )?,
            memset: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, \
                 correlationId, globalPid, value, bytes, graphNodeId, memKind) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, NULL, 2)",
            )?,
            sync: tx.prepare(
                "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, \
                 streamId, correlationId, globalPid, syncType, eventId) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, 3, 4294967295)",
            )?,
            nvtx: tx.prepare(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, \
                 globalTid, endGlobalTid, textId, domainId) VALUES \
                 (?1, ?2, 59, NULL, NULL, ?3, ?4, ?5, NULL, NULL, 0)",
            )?,
        })
    }
}

/// The simulation: threads, streams, names, the remaining event budget and the row counts.
struct Sim<'t> {
    rng: Rng,
    zipf: Zipf,
    kernels: Vec<KernelName>,
    api: ApiNames,
    threads: Vec<Thread>,
    /// `streams[gpu * per_gpu + s]`
    streams: Vec<Stream>,
    per_gpu: usize,
    gpus: usize,
    budget: u64,
    correlation_id: i64,
    grid_id: i64,
    counts: GenCounts,
    ins: Inserts<'t>,
}

/// Writes every row of a generated trace into `tx`, whose tables already exist.
pub fn write(tx: &Transaction, options: &GenOptions) -> rusqlite::Result<GenCounts> {
    let mut rng = Rng::new(options.seed);
    let mut strings: Vec<String> = Vec::new();
    let mut intern = |s: String| -> i64 {
        strings.push(s);
        strings.len() as i64
    };
    let api = ApiNames {
        launch: intern("cudaLaunchKernel_v7000".into()),
        memcpy: intern("cudaMemcpyAsync_v3020".into()),
        memcpy_peer: intern("cudaMemcpyPeerAsync_v4000".into()),
        memset: intern("cudaMemsetAsync_v3020".into()),
        sync: intern("cudaStreamSynchronize_v3020".into()),
    };
    let mut kernels = Vec::with_capacity(KERNEL_NAMES);
    for k in 0..KERNEL_NAMES {
        let (short, namespace) = KERNEL_FAMILIES[k % KERNEL_FAMILIES.len()];
        let variant = k / KERNEL_FAMILIES.len();
        let vector = [1, 2, 4, 8][variant % 4];
        let demangled = format!(
            "void {namespace}::{short}<{vector}, {namespace}::Functor_{variant}<float>, \
             {namespace}::Array<char*, {}> >(int, {namespace}::Functor_{variant}<float>)",
            2 + variant % 3
        );
        let mangled = format!(
            "_ZN{}{namespace}{}{short}ILi{vector}EEvi",
            variant,
            short.len()
        );
        // Log-uniform 2 us .. 400 us: many tiny elementwise kernels, a few long GEMMs.
        let duration_ns = (2_000f64 * (200f64).powf(rng.unit())) as i64;
        let threads_per_block = [128, 256, 512, 1024][rng.between(0, 3) as usize];
        kernels.push(KernelName {
            demangled: intern(demangled),
            short: intern(short.to_string()),
            mangled: intern(mangled),
            duration_ns,
            registers: rng.between(16, 255),
            grid: [rng.between(1, 8192), rng.between(1, 4), 1],
            block: [threads_per_block, 1, 1],
            static_shared: [0, 1024, 16384][rng.between(0, 2) as usize],
            dynamic_shared: [0, 0, 49152, 98304][rng.between(0, 3) as usize],
        });
    }
    let gpus = options.gpus as usize;
    let per_gpu = options.streams as usize;
    let mut threads = Vec::new();
    let mut thread_names = Vec::new();
    for t in 0..options.threads as usize {
        let tid = PID + t as i64;
        let name = intern(if t == 0 {
            "python3".to_string()
        } else {
            format!("pt_rank{t}")
        });
        thread_names.push((name, GLOBAL_PID | tid));
        threads.push(Thread {
            global_tid: GLOBAL_PID | tid,
            gpu: t % gpus,
            cpu_ns: FIRST_CALL_NS + rng.between(0, 50_000),
            open: Vec::new(),
            step: 0,
        });
    }
    // The CPU side draws from its own generator, so the GPU side of a seed is the same with or
    // without samples; its strings come after the others, so their ids do not move either.
    let mut cpu_rng = Rng::new(options.seed ^ 0xC0FF_EE00_5A3B_1E5D);
    let stacks = StackSet::new(&mut cpu_rng, &mut intern);
    let spans: Vec<ThreadSpan> = threads
        .iter()
        .enumerate()
        .map(|(t, th)| ThreadSpan {
            global_tid: th.global_tid,
            first_call_ns: th.cpu_ns,
            main: t == 0,
        })
        .collect();
    let streams: Vec<Stream> = (0..gpus * per_gpu)
        .map(|i| Stream {
            device: (i / per_gpu) as i64,
            stream_id: FIRST_STREAM_ID + (i % per_gpu) as i64,
            free_ns: 0,
        })
        .collect();

    let shape = SystemShape {
        process_name: "python3 train.py",
        gpus: options.gpus,
        streams: options.streams,
    };
    write_system_tables(tx, &shape, &strings, &thread_names)?;

    let mut sim = Sim {
        rng,
        zipf: Zipf::new(KERNEL_NAMES, ZIPF_S),
        kernels,
        api,
        threads,
        streams,
        per_gpu,
        gpus,
        budget: options.events,
        correlation_id: 0,
        grid_id: 0,
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
        options.sampling_period_ns,
        cpu_rng.next_u64(),
    )?;
    counts.cpu_samples = cpu.samples;
    counts.sample_frames = cpu.sample_frames;
    counts.sched_events = cpu.sched_events;
    Ok(counts)
}

/// The process, its GPUs and streams per GPU, as [`write_system_tables`] writes them.
pub(super) struct SystemShape<'a> {
    pub process_name: &'a str,
    pub gpus: u32,
    pub streams: u32,
}

/// StringIds, the process, its threads, GPUs, streams, session start and export metadata.
pub(super) fn write_system_tables(
    tx: &Transaction,
    shape: &SystemShape,
    strings: &[String],
    thread_names: &[(i64, i64)],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare("INSERT INTO StringIds (id, value) VALUES (?1, ?2)")?;
    for (i, s) in strings.iter().enumerate() {
        stmt.execute((i as i64 + 1, s))?;
    }
    tx.execute(
        "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?1, ?2, ?3)",
        (GLOBAL_PID, PID, shape.process_name),
    )?;
    let mut stmt =
        tx.prepare("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, 20, ?2)")?;
    for &(name, global_tid) in thread_names {
        stmt.execute((name, global_tid))?;
    }
    let mut stmt = tx.prepare(
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, l2CacheSize, \
         totalMemory, memoryBandwidth, clockRate, smCount, pwGpuId, uuid, luid, chipName, cuDevice, \
         computeMajor, computeMinor, smMajor, smMinor) VALUES (281474976710656, ?1, \
         'NVIDIA H100 80GB HBM3', ?2, 1, 52428800, 85017493504, 3352320000000, 1980000000, 132, ?1, \
         ?3, 0, 'GH100', ?1, 9, 0, 9, 0)",
    )?;
    for g in 0..i64::from(shape.gpus) {
        stmt.execute((
            g,
            format!("0000:{:02x}:00.0", 0x18 + g),
            format!("5eed0000-0000-4000-8000-{g:012x}"),
        ))?;
    }
    let mut stmt = tx.prepare(
        "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, \
         priority, flag) VALUES (?1, 0, 1, ?2, ?3, 0, 1)",
    )?;
    for g in 0..i64::from(shape.gpus) {
        for s in 0..i64::from(shape.streams) {
            stmt.execute((FIRST_STREAM_ID + s, PID, g + 1))?;
        }
    }
    tx.execute(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime) \
         VALUES (?1, '2026-11-22T12:36:39', '2026-11-22T12:36:39')",
        [SESSION_START_UTC_NS],
    )?;
    let mut stmt = tx.prepare("INSERT INTO EXPORT_META_DATA (name, value) VALUES (?1, ?2)")?;
    for (name, value) in [
        ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
        ("EXPORT_PRODUCT_VERSION", "2022.4.2.1"),
        ("EXPORT_PRODUCT_DATE", "2022.4"),
        ("EXPORT_SCHEMA_VERSION", "3.0.0"),
        ("EXPORT_SCHEMA_VERSION_MAJOR", "3"),
        ("EXPORT_SCHEMA_VERSION_MINOR", "0"),
        ("EXPORT_SCHEMA_VERSION_MICRO", "0"),
        ("EXPORT_PLATFORM", "linux-desktop"),
        ("EXPORT_ARCH", "x64"),
        ("EXPORT_HOST", "sightline gen-trace"),
    ] {
        stmt.execute((name, value))?;
    }
    Ok(())
}

type Step = Result<(), Stop>;

impl Sim<'_> {
    fn run(&mut self) -> Step {
        for t in 0..self.threads.len() {
            self.push(t, "warmup".into())?;
        }
        for iteration in 0.. {
            for t in 0..self.threads.len() {
                if iteration == WARMUP_ITERATIONS {
                    self.pop(t)?;
                }
                self.training_step(t, iteration >= WARMUP_ITERATIONS)?;
            }
        }
        Ok(())
    }

    /// One iteration on thread `t`: load a batch, forward, backward with gradient exchange,
    /// optimizer, read the loss back, then sit idle before the next one.
    fn training_step(&mut self, t: usize, named: bool) -> Step {
        let gpu = self.threads[t].gpu;
        let compute = gpu * self.per_gpu;
        let copy_in = compute + usize::from(self.per_gpu > 1);
        let comm = compute + self.per_gpu - 1;
        if named {
            let n = self.threads[t].step;
            self.threads[t].step += 1;
            self.push(t, format!("step_{n}"))?;
        }
        self.push(t, "data_loading".into())?;
        let batch_bytes = self.rng.between(1, 8) * (1 << 20);
        self.memcpy(t, copy_in, 1, batch_bytes, None)?;
        let grad_bytes = self.rng.between(16, 4096) * 4096;
        self.memset(t, compute, grad_bytes)?;
        self.pop(t)?;

        self.push(t, "forward_pass".into())?;
        for layer in 0..LAYERS {
            self.push(t, format!("layer_{layer}_forward"))?;
            for _ in 0..self.rng.between(4, 8) {
                self.launch_kernel(t, compute)?;
            }
            self.pop(t)?;
        }
        self.pop(t)?;

        self.push(t, "backward_pass".into())?;
        for layer in (0..LAYERS).rev() {
            self.push(t, format!("layer_{layer}_backward"))?;
            for _ in 0..self.rng.between(6, 12) {
                self.launch_kernel(t, compute)?;
            }
            if layer % 2 == 0 {
                let bucket = self.rng.between(1, 32) * (1 << 20);
                if self.gpus > 1 {
                    let peer = (gpu + 1) % self.gpus;
                    self.memcpy(t, comm, 10, bucket, Some(peer))?;
                } else {
                    self.memcpy(t, comm, 8, bucket, None)?;
                }
            }
            self.pop(t)?;
        }
        self.pop(t)?;

        self.push(t, "optimizer_step".into())?;
        for _ in 0..self.rng.between(4, 8) {
            self.launch_kernel(t, compute)?;
        }
        let state_bytes = self.rng.between(1, 16) * (1 << 20);
        self.memcpy(t, compute, 8, state_bytes, None)?;
        self.pop(t)?;

        self.memcpy(t, compute, 2, 4, None)?;
        self.synchronize(t, compute)?;
        if named {
            self.pop(t)?;
        }
        // Host-side work between steps leaves the GPU idle: usually short, now and then long
        // (evaluation, checkpointing).
        let idle = if self.threads[t].step % 100 == 99 {
            self.rng.between(10_000_000, 30_000_000)
        } else {
            self.rng.between(200_000, 2_000_000)
        };
        self.threads[t].cpu_ns += idle;
        Ok(())
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
        th.cpu_ns += self.rng.between(300, 1_500);
        Ok(())
    }

    fn pop(&mut self, t: usize) -> Step {
        let th = &mut self.threads[t];
        let Some((text, start)) = th.open.pop() else {
            return Ok(());
        };
        th.cpu_ns += self.rng.between(200, 800);
        let end = th.cpu_ns;
        let color: Option<i64> = text.starts_with("step_").then_some(0xFF76_B900);
        insert!(self.ins.nvtx; start, end, color, &text, th.global_tid);
        self.counts.nvtx_ranges += 1;
        self.counts.last_ns = self.counts.last_ns.max(end);
        Ok(())
    }

    /// An API call on thread `t` lasting `duration_ns`; returns (start, end, correlationId).
    fn api_call(&mut self, t: usize, name: i64, duration_ns: i64) -> Result<(i64, i64, i64), Stop> {
        self.correlation_id += 1;
        let th = &mut self.threads[t];
        let start = th.cpu_ns;
        let end = start + duration_ns;
        th.cpu_ns = end + self.rng.between(300, 3_000);
        insert!(self.ins.runtime; start, end, th.global_tid, self.correlation_id, name);
        self.counts.api_calls += 1;
        Ok((start, end, self.correlation_id))
    }

    /// When the GPU can start an operation launched at `launch_ns` on `stream`, and books it.
    fn schedule(&mut self, stream: usize, launch_ns: i64, duration_ns: i64) -> (i64, i64) {
        let ready = launch_ns + self.rng.between(2_000, 6_000);
        let queued = self.streams[stream].free_ns + self.rng.between(500, 2_500);
        let start = ready.max(queued);
        let end = start + duration_ns.max(1);
        self.streams[stream].free_ns = end;
        self.counts.last_ns = self.counts.last_ns.max(end);
        (start, end)
    }

    fn launch_kernel(&mut self, t: usize, compute: usize) -> Step {
        self.spend(2)?;
        // Most kernels run on the compute stream; the rest spread over the GPU's other streams.
        let stream = if self.per_gpu > 1 && self.rng.chance(0.2) {
            compute + self.rng.between(1, self.per_gpu as i64 - 1) as usize
        } else {
            compute
        };
        let k = self.zipf.sample(&mut self.rng);
        let call_ns = self.rng.jitter(4_000, 0.4);
        let (launch, _, corr) = self.api_call(t, self.api.launch, call_ns)?;
        let duration = self.rng.jitter(self.kernels[k].duration_ns, 0.2);
        let (start, end) = self.schedule(stream, launch, duration);
        self.grid_id += 1;
        let s = &self.streams[stream];
        let n = &self.kernels[k];
        insert!(self.ins.kernel;
            start, end, s.device, s.device + 1, s.stream_id, corr, GLOBAL_PID,
            n.demangled, n.short, n.mangled, n.registers,
            n.grid[0], n.grid[1], n.grid[2], n.block[0], n.block[1], n.block[2],
            n.static_shared, n.dynamic_shared, self.grid_id, n.dynamic_shared.max(32768),
        );
        self.counts.kernels += 1;
        Ok(())
    }

    /// A copy of `copy_kind` (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP to `peer`).
    fn memcpy(
        &mut self,
        t: usize,
        stream: usize,
        copy_kind: i64,
        bytes: i64,
        peer: Option<usize>,
    ) -> Step {
        self.spend(2)?;
        let name = if peer.is_some() {
            self.api.memcpy_peer
        } else {
            self.api.memcpy
        };
        let call_ns = self.rng.jitter(6_000, 0.4);
        let (launch, _, corr) = self.api_call(t, name, call_ns)?;
        // Bandwidths in bytes per ns: PCIe ~ 20 GB/s, HBM ~ 1.5 TB/s, NVLink ~ 300 GB/s.
        let bytes_per_ns = match copy_kind {
            1 | 2 => 20.0,
            8 => 1500.0,
            _ => 300.0,
        };
        let duration = 1_000 + (bytes as f64 / bytes_per_ns) as i64;
        let duration = self.rng.jitter(duration, 0.1);
        let (start, end) = self.schedule(stream, launch, duration);
        // Memory kinds of 2022.4 (ENUM_CUDA_MEM_KIND): 0 pageable, 1 pinned, 2 device.
        let (src_kind, dst_kind) = match copy_kind {
            1 => (if self.rng.chance(0.5) { 1 } else { 0 }, 2),
            2 => (2, 0),
            _ => (2, 2),
        };
        let s = &self.streams[stream];
        let (src_device, src_context, dst_device, dst_context) = match peer {
            Some(p) => (
                Some(s.device),
                Some(s.device + 1),
                Some(p as i64),
                Some(p as i64 + 1),
            ),
            None => (None, None, None, None),
        };
        insert!(self.ins.memcpy;
            start, end, s.device, s.device + 1, s.stream_id, corr, GLOBAL_PID, bytes, copy_kind,
            src_kind, dst_kind, src_device, src_context, dst_device, dst_context,
        );
        self.counts.memcpys += 1;
        Ok(())
    }

    fn memset(&mut self, t: usize, stream: usize, bytes: i64) -> Step {
        self.spend(2)?;
        let call_ns = self.rng.jitter(4_000, 0.4);
        let (launch, _, corr) = self.api_call(t, self.api.memset, call_ns)?;
        let duration = 800 + bytes / 2_000;
        let duration = self.rng.jitter(duration, 0.1);
        let (start, end) = self.schedule(stream, launch, duration);
        let s = &self.streams[stream];
        insert!(self.ins.memset;
            start, end, s.device, s.device + 1, s.stream_id, corr, GLOBAL_PID, bytes,
        );
        self.counts.memsets += 1;
        Ok(())
    }

    /// `cudaStreamSynchronize`: the thread waits until the stream has drained.
    fn synchronize(&mut self, t: usize, stream: usize) -> Step {
        self.spend(1)?;
        let drained = self.streams[stream].free_ns;
        let now = self.threads[t].cpu_ns;
        let duration = (drained - now).max(0) + self.rng.between(1_000, 3_000);
        let (start, end, corr) = self.api_call(t, self.api.sync, duration)?;
        let s = &self.streams[stream];
        insert!(self.ins.sync;
            start, end, s.device, s.device + 1, s.stream_id, corr, GLOBAL_PID,
        );
        self.counts.syncs += 1;
        Ok(())
    }

    /// Closes every open range and spends a last odd event on a synchronize call.
    fn finish(&mut self) -> rusqlite::Result<()> {
        let unwrap = |r: Step| match r {
            Ok(()) | Err(Stop::Done) => Ok(()),
            Err(Stop::Sql(e)) => Err(e),
        };
        for t in 0..self.threads.len() {
            while !self.threads[t].open.is_empty() {
                unwrap(self.pop(t))?;
            }
        }
        while self.budget > 0 {
            let compute = self.threads[0].gpu * self.per_gpu;
            unwrap(self.synchronize(0, compute))?;
        }
        Ok(())
    }
}
