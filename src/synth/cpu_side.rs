//! The CPU side of a generated trace, as `nsys profile` records it by default on Linux
//! (`--sample=process-tree --cpuctxsw=process-tree`): CPU samples with call stacks
//! (`COMPOSITE_EVENTS` + `SAMPLING_CALLCHAINS`) and thread scheduling (`SCHED_EVENTS`) on the
//! workload's threads.
//!
//! Each thread alternates running bursts and waits off the CPU. A sched-in / sched-out pair
//! brackets every burst, except at the edges of the capture (a thread may already run when the
//! capture starts, a lone sched-out, or still run when it stops, a lone sched-in) and, rarely, a
//! lost sched-out in the middle (two sched-ins in a row), as real exports have. A thread is
//! sampled every `sampling_period_ns` of its own running time, jittered: nsys's
//! `--sampling-period` counts CPU-clock events, so samples fall inside running bursts only.
//! A sample's stack is one of a few hundred distinct stacks 5–40 frames deep, built once from
//! fixed function and module names (CPython, libc, libtorch, libcudart, libcuda with unresolved
//! addresses as nsys exports them, a data loader); stacks are drawn with Zipf popularity, so a few
//! dominate as in a real profile. The rows of all threads are written in time order, as nsys
//! writes them, and every choice comes from the seed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use rusqlite::Transaction;

use super::rng::{Rng, Zipf};

/// nsys's default `--sampling-period`: 1,000,000 CPU-clock events (ns), about 1 kHz per thread.
pub const DEFAULT_SAMPLING_PERIOD_NS: u64 = 1_000_000;
/// Distinct stacks to build (fewer if the vocabulary runs out of combinations).
const STACKS: usize = 320;
const MIN_DEPTH: usize = 5;
const MAX_DEPTH: usize = 40;
/// Zipf exponent of stack popularity.
const STACK_ZIPF_S: f64 = 1.05;
/// Logical CPUs of the simulated host.
const CPUS: i64 = 32;
/// `ENUM_SAMPLING_THREAD_STATE` 1 = Running, and `ENUM_STACK_UNWIND_METHOD` 7 = DWARF_DF: what
/// nsys writes for most samples and frames (checked on `cpu_side.sqlite` and the 2022.2 export in
/// `../shared/traces`).
const THREAD_STATE_RUNNING: i64 = 1;
const UNWIND_DWARF: i64 = 7;

const PY: usize = 0;
const LIBC: usize = 1;
const STDCXX: usize = 2;
const TORCH_PY: usize = 3;
const TORCH_CPU: usize = 4;
const TORCH_CUDA: usize = 5;
const C10_CUDA: usize = 6;
const CUDART: usize = 7;
const LIBCUDA: usize = 8;
const IMAGING: usize = 9;
const JPEG: usize = 10;
const NUMPY: usize = 11;
const CUBLAS_LT: usize = 12;

const MODULES: [&str; 13] = [
    "/usr/bin/python3.10",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
    "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_python.so",
    "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so",
    "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so",
    "/opt/conda/lib/python3.10/site-packages/torch/lib/libc10_cuda.so",
    "/usr/local/cuda-12.1/lib64/libcudart.so.12",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05",
    "/opt/conda/lib/python3.10/site-packages/PIL/_imaging.cpython-310-x86_64-linux-gnu.so",
    "/usr/lib/x86_64-linux-gnu/libjpeg.so.8.2.2",
    "/opt/conda/lib/python3.10/site-packages/numpy/core/_multiarray_umath.cpython-310-x86_64-linux-gnu.so",
    "/opt/conda/lib/python3.10/site-packages/nvidia/cublas/lib/libcublasLt.so.12",
];

type Name = (&'static str, usize);

/// The main thread's outermost frames, outermost first.
const MAIN_ROOT: &[Name] = &[
    ("_start", PY),
    ("__libc_start_main", LIBC),
    ("__libc_start_call_main", LIBC),
    ("main", PY),
    ("Py_BytesMain", PY),
    ("Py_RunMain", PY),
    ("pymain_run_python", PY),
    ("_PyRun_SimpleFileObject", PY),
    ("run_mod", PY),
    ("run_eval_code_obj", PY),
    ("PyEval_EvalCode", PY),
];

/// A Python `threading.Thread`'s outermost frames.
const THREAD_ROOT: &[Name] = &[
    ("clone3", LIBC),
    ("start_thread", LIBC),
    ("thread_run", PY),
    ("t_bootstrap", PY),
];

/// One Python-level call is an interpreter frame and the call path into the next one.
const PY_CALLS: &[Name] = &[
    ("_PyFunction_Vectorcall", PY),
    ("method_vectorcall", PY),
    ("PyObject_Call", PY),
    ("slot_tp_call", PY),
    ("_PyObject_MakeTpCall", PY),
    ("cfunction_call", PY),
    ("PyVectorcall_Call", PY),
];

/// A native call path below the Python frames: one choice per slot, outermost first.
type Family = &'static [&'static [Name]];

const LAUNCH: Family = &[
    &[
        ("torch::autograd::THPVariable_matmul", TORCH_PY),
        ("torch::autograd::THPVariable_add", TORCH_PY),
        ("torch::autograd::THPVariable_softmax", TORCH_PY),
        ("torch::autograd::THPVariable_layer_norm", TORCH_PY),
        ("torch::autograd::THPVariable_linear", TORCH_PY),
    ],
    &[
        ("at::_ops::mm::call", TORCH_CPU),
        ("at::_ops::add_Tensor::call", TORCH_CPU),
        ("at::_ops::_softmax::call", TORCH_CPU),
        ("at::_ops::native_layer_norm::call", TORCH_CPU),
        ("at::_ops::addmm::call", TORCH_CPU),
    ],
    &[
        ("c10::Dispatcher::call", TORCH_CPU),
        ("torch::autograd::VariableType::mm", TORCH_CPU),
    ],
    &[
        ("at::(anonymous namespace)::wrapper_CUDA_mm", TORCH_CUDA),
        ("at::native::add_kernel", TORCH_CUDA),
        ("at::native::softmax_cuda_out", TORCH_CUDA),
        ("at::native::layer_norm_cuda", TORCH_CUDA),
    ],
    &[
        ("at::cuda::blas::gemm<c10::Half>", TORCH_CUDA),
        (
            "at::native::gpu_kernel_impl<at::native::AddFunctor<float>>",
            TORCH_CUDA,
        ),
        ("cublasLtMatmul", CUBLAS_LT),
    ],
    &[("cudaLaunchKernel", CUDART)],
];

const SYNC: Family = &[
    &[
        ("torch::autograd::THPVariable_item", TORCH_PY),
        ("torch::autograd::THPVariable_cpu", TORCH_PY),
    ],
    &[("at::_ops::_local_scalar_dense::call", TORCH_CPU)],
    &[("at::native::_local_scalar_dense_cuda", TORCH_CUDA)],
    &[("at::cuda::memcpy_and_sync", TORCH_CUDA)],
    &[
        ("cudaStreamSynchronize", CUDART),
        ("cudaMemcpyAsync", CUDART),
    ],
];

const ALLOC: Family = &[
    &[("torch::autograd::THPVariable_empty", TORCH_PY)],
    &[("at::_ops::empty_memory_format::call", TORCH_CPU)],
    &[("at::native::empty_cuda", TORCH_CUDA)],
    &[(
        "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc",
        C10_CUDA,
    )],
    &[
        (
            "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
            C10_CUDA,
        ),
        ("std::_Rb_tree_insert_and_rebalance", STDCXX),
    ],
    &[("cudaMalloc", CUDART), ("cudaEventQuery", CUDART)],
];

const BACKWARD: Family = &[
    &[("THPEngine_run_backward", TORCH_PY)],
    &[("torch::autograd::python::PythonEngine::execute", TORCH_PY)],
    &[("torch::autograd::Engine::execute", TORCH_CPU)],
    &[("torch::autograd::Engine::thread_main", TORCH_CPU)],
    &[("torch::autograd::Engine::evaluate_function", TORCH_CPU)],
    &[
        ("torch::autograd::generated::MmBackward0::apply", TORCH_CPU),
        (
            "torch::autograd::generated::SoftmaxBackward0::apply",
            TORCH_CPU,
        ),
        (
            "torch::autograd::generated::NativeLayerNormBackward0::apply",
            TORCH_CPU,
        ),
        ("torch::autograd::generated::AddBackward0::apply", TORCH_CPU),
    ],
    &[
        ("at::_ops::mm::call", TORCH_CPU),
        ("at::_ops::_softmax_backward_data::call", TORCH_CPU),
        ("at::_ops::native_layer_norm_backward::call", TORCH_CPU),
    ],
    &[("at::cuda::blas::gemm<c10::Half>", TORCH_CUDA)],
    &[("cudaLaunchKernel", CUDART)],
];

const DECODE: Family = &[
    &[("_decode", IMAGING)],
    &[("ImagingJpegDecode", IMAGING)],
    &[("jpeg_read_scanlines", JPEG)],
    &[("process_data_simple_main", JPEG)],
    &[
        ("decompress_onepass", JPEG),
        ("decode_mcu", JPEG),
        ("jsimd_idct_islow_avx2", JPEG),
        ("ycc_rgb_convert", JPEG),
    ],
];

const COLLATE: Family = &[
    &[
        ("torch::autograd::THPVariable_stack", TORCH_PY),
        ("array_implement_array_function", NUMPY),
    ],
    &[
        ("at::_ops::stack::call", TORCH_CPU),
        ("PyArray_NewCopy", NUMPY),
    ],
    &[
        ("at::native::cat_out_cpu", TORCH_CPU),
        ("raw_array_assign_array", NUMPY),
    ],
    &[
        ("__memmove_avx_unaligned_erms", LIBC),
        ("malloc", LIBC),
        ("_int_malloc", LIBC),
    ],
];

const INTERPRETER: Family = &[&[
    ("_PyEval_EvalFrameDefault", PY),
    ("_PyDict_GetItem_KnownHash", PY),
    ("_PyType_Lookup", PY),
    ("PyObject_GetAttr", PY),
    ("_PyObject_GenericGetAttrWithDict", PY),
    ("list_dealloc", PY),
    ("PyTuple_New", PY),
    ("_Py_dict_lookup", PY),
    ("PyLong_FromLong", PY),
]];

const GIL: Family = &[
    &[("PyEval_RestoreThread", PY)],
    &[("take_gil", PY)],
    &[("pthread_cond_timedwait", LIBC)],
    &[("__futex_abstimed_wait_common", LIBC)],
];

/// Families with their weight (how many distinct stacks to try from each) and how many
/// unresolved libcuda frames may follow them: (family, tries, libcuda frames, leaf in libc).
const FAMILIES: [(Family, usize, usize, bool); 9] = [
    (LAUNCH, 6, 5, false),
    (SYNC, 3, 4, true),
    (ALLOC, 2, 3, true),
    (BACKWARD, 4, 5, false),
    (DECODE, 3, 0, false),
    (COLLATE, 2, 0, false),
    (INTERPRETER, 3, 0, false),
    (GIL, 1, 0, false),
    (LAUNCH, 1, 0, false),
];

/// Where a libcuda call ends up waiting.
const DRIVER_LEAVES: &[Name] = &[
    ("ioctl", LIBC),
    ("__sched_yield", LIBC),
    ("__GI___poll", LIBC),
];

/// Unresolved libcuda return addresses: most of libcuda has no symbols, so nsys exports the
/// address as the function's text (flag `unresolved`).
const LIBCUDA_ADDRESSES: usize = 48;
const LIBCUDA_BASE: i64 = 0x7f3a_1c00_0000;

/// One distinct frame: StringIds ids of its function and module, its instruction pointer, and
/// whether nsys could not resolve it.
struct FrameRow {
    function: i64,
    module: i64,
    ip: i64,
    unresolved: bool,
}

/// The distinct frames and stacks samples are drawn from.
pub struct StackSet {
    frames: Vec<FrameRow>,
    /// Per kind of thread (0 the main thread, 1 the others): stacks as indices into `frames`,
    /// innermost first.
    stacks: [Vec<Vec<u16>>; 2],
}

impl StackSet {
    /// Builds the stacks from `rng`, naming every string through `intern` (the StringIds id).
    pub fn new(rng: &mut Rng, intern: &mut dyn FnMut(String) -> i64) -> Self {
        let mut set = StackSet {
            frames: Vec::new(),
            stacks: [Vec::new(), Vec::new()],
        };
        let mut string_ids: HashMap<String, i64> = HashMap::new();
        let mut frame_ids: HashMap<(String, usize), u16> = HashMap::new();
        let mut frame = |set: &mut StackSet, function: &str, module: usize, unresolved: bool| {
            let key = (function.to_string(), module);
            if let Some(&id) = frame_ids.get(&key) {
                return id;
            }
            let mut id_of = |s: &str| {
                *string_ids
                    .entry(s.to_string())
                    .or_insert_with(|| intern(s.to_string()))
            };
            let row = FrameRow {
                function: id_of(function),
                module: id_of(MODULES[module]),
                ip: if unresolved {
                    i64::from_str_radix(function.trim_start_matches("0x"), 16).unwrap_or(0)
                } else {
                    // A stable address inside the module for a resolved function.
                    0x7f00_0000_0000
                        + (module as i64) * 0x0100_0000_0000 / 16
                        + (set.frames.len() as i64) * 0x1_3a7
                },
                unresolved,
            };
            let id = set.frames.len() as u16;
            set.frames.push(row);
            frame_ids.insert(key, id);
            id
        };
        let libcuda: Vec<String> = (0..LIBCUDA_ADDRESSES)
            .map(|_| format!("{:#x}", LIBCUDA_BASE + rng.between(0x1_0000, 0x3ff_ffff)))
            .collect();
        let mut seen: HashSet<Vec<u16>> = HashSet::new();
        for round in 0..64 {
            for (f, &(family, tries, driver_frames, libc_leaf)) in FAMILIES.iter().enumerate() {
                for _ in 0..tries {
                    if seen.len() >= STACKS {
                        break;
                    }
                    // Outermost first, then reversed to innermost first.
                    let main = rng.chance(0.6);
                    let root = if main { MAIN_ROOT } else { THREAD_ROOT };
                    let mut names: Vec<(String, usize, bool)> = root
                        .iter()
                        .map(|&(n, m)| (n.to_string(), m, false))
                        .collect();
                    let mut native: Vec<(String, usize, bool)> = family
                        .iter()
                        .map(|slot| {
                            let (n, m) = slot[rng.between(0, slot.len() as i64 - 1) as usize];
                            (n.to_string(), m, false)
                        })
                        .collect();
                    if driver_frames > 0 {
                        // Each family calls into its own corner of the driver.
                        let pool = LIBCUDA_ADDRESSES / 4;
                        let first = (f % 4) * pool;
                        for _ in 0..rng.between(1, driver_frames as i64) {
                            let a = first + rng.between(0, pool as i64 - 1) as usize;
                            native.push((libcuda[a].clone(), LIBCUDA, true));
                        }
                        if libc_leaf {
                            let (n, m) = DRIVER_LEAVES
                                [rng.between(0, DRIVER_LEAVES.len() as i64 - 1) as usize];
                            native.push((n.to_string(), m, false));
                        }
                    }
                    let room = MAX_DEPTH.saturating_sub(names.len() + native.len()) / 2;
                    let levels = rng.between(1, room.clamp(1, 8) as i64);
                    for _ in 0..levels {
                        names.push(("_PyEval_EvalFrameDefault".into(), PY, false));
                        let (n, m) = PY_CALLS[rng.between(0, PY_CALLS.len() as i64 - 1) as usize];
                        names.push((n.to_string(), m, false));
                    }
                    names.extend(native);
                    names.truncate(MAX_DEPTH);
                    // One stack in ten lost its outer frames to a failed unwind.
                    if rng.chance(0.1) {
                        let keep = rng.between(MIN_DEPTH as i64, 10) as usize;
                        names.drain(..names.len().saturating_sub(keep));
                    }
                    if names.len() < MIN_DEPTH {
                        continue;
                    }
                    let ids: Vec<u16> = names
                        .iter()
                        .rev()
                        .map(|(n, m, u)| frame(&mut set, n, *m, *u))
                        .collect();
                    let kind = usize::from(!main);
                    if seen.insert(ids.clone()) {
                        set.stacks[kind].push(ids);
                    }
                }
            }
            if seen.len() >= STACKS || round == 63 {
                break;
            }
        }
        set
    }

    /// Distinct stacks built.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.stacks[0].len() + self.stacks[1].len()
    }
}

/// A workload thread: its `globalTid`, its first CUDA call, and whether it is the main thread.
pub struct ThreadSpan {
    pub global_tid: i64,
    pub first_call_ns: i64,
    pub main: bool,
}

/// Rows written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuSideCounts {
    pub samples: u64,
    pub sample_frames: u64,
    pub sched_events: u64,
}

/// The next row a thread will write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Row {
    SchedIn,
    Sample,
    SchedOut,
}

/// One thread's scheduling and sampling, generated lazily in time order.
struct ThreadClock {
    global_tid: i64,
    /// Scheduling draws from `rng`, sampling (period jitter, stacks) from `sample_rng`, so the
    /// scheduling of a seed is the same at any sampling period.
    rng: Rng,
    sample_rng: Rng,
    zipf: Zipf,
    /// Which stack list, and where its popularity ranking starts (threads differ in hot stacks).
    kind: usize,
    rotation: usize,
    period_ns: i64,
    end_ns: i64,
    /// Whether the thread still runs when the capture stops (no final sched-out).
    running_at_end: bool,
    cpu: i64,
    running: bool,
    /// Running: when the burst ends; waiting: when the next burst starts.
    until_ns: i64,
    /// Running time left before the next sample (ns).
    to_sample_ns: i64,
    /// The time of the last row handed out (bursts advance from it).
    now_ns: i64,
    /// A sched-out not written (lost), so the next sched-in follows a sched-in.
    lose_sched_out: bool,
    done: bool,
}

impl ThreadClock {
    fn new(span: &ThreadSpan, seed: u64, period_ns: i64, end_ns: i64, stacks: usize) -> Self {
        let mut rng = Rng::new(seed ^ (span.global_tid as u64).wrapping_mul(0x9E37_79B9));
        let sample_rng = Rng::new(rng.next_u64() ^ 0x5A3D_1E00_0000_0001);
        // The main thread runs Python long before the first CUDA call; the others start shortly
        // before theirs.
        let lead = if span.main {
            rng.between(100_000_000, 300_000_000)
        } else {
            rng.between(1_000_000, 5_000_000)
        };
        let start = (span.first_call_ns - lead).max(1_000);
        let running = rng.chance(0.5);
        let mut clock = ThreadClock {
            global_tid: span.global_tid,
            zipf: Zipf::new(stacks.max(1), STACK_ZIPF_S),
            kind: usize::from(!span.main),
            rotation: (seed as usize ^ span.global_tid as usize) % stacks.max(1),
            period_ns,
            end_ns,
            running_at_end: rng.chance(0.5),
            cpu: rng.between(0, CPUS - 1),
            running,
            until_ns: start,
            to_sample_ns: 0,
            now_ns: start,
            lose_sched_out: false,
            done: false,
            rng,
            sample_rng,
        };
        clock.to_sample_ns = clock.next_period();
        if running {
            // Already on a CPU when the capture starts: its first row is a lone sched-out.
            clock.until_ns = start + clock.burst_ns();
        }
        clock
    }

    fn next_period(&mut self) -> i64 {
        if self.period_ns <= 0 {
            i64::MAX / 4
        } else {
            self.sample_rng.jitter(self.period_ns, 0.1)
        }
    }

    /// A running burst: log-uniform 20 µs .. 20 ms, now and then none at all (in and out at the
    /// same timestamp, which only file order puts right).
    fn burst_ns(&mut self) -> i64 {
        if self.rng.chance(0.002) {
            return 0;
        }
        (20_000.0 * 1000f64.powf(self.rng.unit())) as i64
    }

    /// A wait off the CPU: log-uniform 3 µs .. 3 ms.
    fn wait_ns(&mut self) -> i64 {
        (3_000.0 * 1000f64.powf(self.rng.unit())) as i64
    }

    /// When the next row is due and what it is; `None` when the thread is done.
    fn peek(&self) -> Option<(i64, Row)> {
        if self.done {
            return None;
        }
        if !self.running {
            return (self.until_ns < self.end_ns).then_some((self.until_ns, Row::SchedIn));
        }
        let sample_at = self.now_ns.saturating_add(self.to_sample_ns);
        let burst_end = self.until_ns.min(self.end_ns);
        if sample_at < burst_end {
            Some((sample_at, Row::Sample))
        } else {
            Some((burst_end, Row::SchedOut))
        }
    }

    /// Moves past the row `peek` returned; `false` when that row is not written (a lost or
    /// final sched-out).
    fn advance(&mut self, at: i64, row: Row) -> bool {
        match row {
            Row::SchedIn => {
                self.running = true;
                self.now_ns = at;
                self.until_ns = at + self.burst_ns();
                if self.rng.chance(0.8) {
                    // Usually back on the same CPU.
                } else {
                    self.cpu = self.rng.between(0, CPUS - 1);
                }
                true
            }
            Row::Sample => {
                self.now_ns = at;
                self.to_sample_ns = self.next_period();
                true
            }
            Row::SchedOut => {
                self.to_sample_ns -= at - self.now_ns;
                self.now_ns = at;
                self.running = false;
                if at >= self.end_ns {
                    self.done = true;
                    return !self.running_at_end;
                }
                self.until_ns = at + self.wait_ns();
                let lost = self.lose_sched_out;
                self.lose_sched_out = self.rng.chance(0.002);
                !lost
            }
        }
    }

    fn stack(&mut self, stacks: &StackSet) -> usize {
        let list = &stacks.stacks[self.kind];
        (self.zipf.sample(&mut self.sample_rng) + self.rotation) % list.len().max(1)
    }
}

/// Writes the scheduling events and samples of `threads` from their start to `end_ns`; a
/// `period_ns` of 0 writes scheduling only.
pub fn write(
    tx: &Transaction,
    stacks: &StackSet,
    threads: &[ThreadSpan],
    end_ns: i64,
    period_ns: u64,
    seed: u64,
) -> rusqlite::Result<CpuSideCounts> {
    let mut sched = tx.prepare(
        "INSERT INTO SCHED_EVENTS (start, cpu, isSchedIn, globalTid) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let mut sample = tx.prepare(
        "INSERT INTO COMPOSITE_EVENTS (id, start, cpu, threadState, globalTid, cpuCycles) \
         VALUES (?1, ?2, ?3, ?4, ?5, 1)",
    )?;
    let mut frame = tx.prepare(
        "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, kernelMode, thumbCode, unresolved, \
         specialEntry, originalIP, unwindMethod, stackDepth) VALUES \
         (?1, ?2, ?3, NULL, NULL, ?4, NULL, ?5, ?6, ?7)",
    )?;
    let period_ns = i64::try_from(period_ns).unwrap_or(i64::MAX);
    let mut clocks: Vec<ThreadClock> = threads
        .iter()
        .map(|span| {
            let kind = usize::from(!span.main);
            ThreadClock::new(span, seed, period_ns, end_ns, stacks.stacks[kind].len())
        })
        .collect();
    let mut due: BinaryHeap<Reverse<(i64, Row, usize)>> = BinaryHeap::new();
    for (t, clock) in clocks.iter().enumerate() {
        if let Some((at, row)) = clock.peek() {
            due.push(Reverse((at, row, t)));
        }
    }
    let mut counts = CpuSideCounts::default();
    while let Some(Reverse((at, row, t))) = due.pop() {
        let clock = &mut clocks[t];
        let cpu = clock.cpu;
        let written = clock.advance(at, row);
        match row {
            Row::SchedIn | Row::SchedOut if written => {
                let is_in = i64::from(row == Row::SchedIn);
                insert!(sched; at, cpu, is_in, clock.global_tid);
                counts.sched_events += 1;
            }
            Row::Sample if !stacks.stacks[clock.kind].is_empty() => {
                counts.samples += 1;
                let id = counts.samples as i64;
                insert!(sample; id, at, cpu, THREAD_STATE_RUNNING, clock.global_tid);
                let s = clock.stack(stacks);
                for (depth, &f) in stacks.stacks[clock.kind][s].iter().enumerate() {
                    let f = &stacks.frames[f as usize];
                    let unresolved: Option<i64> = f.unresolved.then_some(1);
                    insert!(frame;
                        id, f.function, f.module, unresolved, f.ip, UNWIND_DWARF, depth as i64,
                    );
                    counts.sample_frames += 1;
                }
            }
            _ => {}
        }
        if let Some((at, row)) = clock.peek() {
            due.push(Reverse((at, row, t)));
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_distinct_and_within_depth() {
        let mut strings = Vec::new();
        let mut intern = |s: String| {
            strings.push(s);
            strings.len() as i64
        };
        let set = StackSet::new(&mut Rng::new(1), &mut intern);
        assert!(set.len() >= 200, "{} stacks", set.len());
        for list in &set.stacks {
            assert!(!list.is_empty());
            for s in list {
                assert!((MIN_DEPTH..=MAX_DEPTH).contains(&s.len()), "{}", s.len());
            }
        }
        let mut all: Vec<&Vec<u16>> = set.stacks.iter().flatten().collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
