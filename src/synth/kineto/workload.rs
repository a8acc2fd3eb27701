//! The simulated process behind a synthetic Kineto trace: the CPU thread running
//! `kineto_workloads.py many` (operators, allocations, Python frames, launches) and the stream
//! running its kernels, one profiler step at a time. Durations and gaps are the medians of the
//! real capture with ±10 % jitter and an occasional slow call; launches stay inside their
//! operators and kernels wait for the stream.

use std::fmt;
use std::io;

use super::super::rng::Rng;
use super::python_stacks::{Frame, PythonStacks};

/// Loop iterations per step in `many()`.
pub(super) const ITERATIONS: u32 = 400;
/// `256 × 256` floats.
const TENSOR_BYTES: i64 = 262_144;

/// A CPU operator's name and its `record_shapes` arguments, as the real trace has them.
pub(super) struct OpSpec {
    pub(super) name: &'static str,
    /// Operators called from Python carry `"Sequence number"` and `"Fwd thread id"`.
    pub(super) sequenced: bool,
    pub(super) shapes: &'static str,
}

const fn op(name: &'static str, sequenced: bool, shapes: &'static str) -> OpSpec {
    OpSpec {
        name,
        sequenced,
        shapes,
    }
}

const MUL: OpSpec = op(
    "aten::mul",
    true,
    r#""Concrete Inputs": ["", ""], "Input type": ["float", "double"], "Input Strides": [[256, 1], []], "Input Dims": [[256, 256], []]"#,
);
const ADD: OpSpec = op(
    "aten::add",
    true,
    r#""Concrete Inputs": ["", "", "1"], "Input type": ["float", "double", "Scalar"], "Input Strides": [[256, 1], [], []], "Input Dims": [[256, 256], [], []]"#,
);
const RELU: OpSpec = op(
    "aten::relu",
    true,
    r#""Concrete Inputs": [""], "Input type": ["float"], "Input Strides": [[256, 1]], "Input Dims": [[256, 256]]"#,
);
const CLAMP_MIN: OpSpec = op(
    "aten::clamp_min",
    false,
    r#""Concrete Inputs": ["", "0"], "Input type": ["float", "Scalar"], "Input Strides": [[256, 1], []], "Input Dims": [[256, 256], []]"#,
);
const SUM: OpSpec = op(
    "aten::sum",
    true,
    r#""Concrete Inputs": ["", ""], "Input type": ["float", ""], "Input Strides": [[256, 1], []], "Input Dims": [[256, 256], []]"#,
);
const SUM_DIM: OpSpec = op(
    "aten::sum",
    false,
    r#""Concrete Inputs": ["", "[]", "False", ""], "Input type": ["float", "ScalarList", "Scalar", ""], "Input Strides": [[256, 1], [], [], []], "Input Dims": [[256, 256], [], [], []]"#,
);
const AS_STRIDED: OpSpec = op(
    "aten::as_strided",
    false,
    r#""Concrete Inputs": ["", "[1, 1]", "[0, 0]", ""], "Input type": ["float", "ScalarList", "ScalarList", ""], "Input Strides": [[], [], [], []], "Input Dims": [[], [], [], []]"#,
);
const ITEM: OpSpec = op(
    "aten::item",
    true,
    r#""Concrete Inputs": [""], "Input type": ["float"], "Input Strides": [[]], "Input Dims": [[]]"#,
);
const LOCAL_SCALAR_DENSE: OpSpec = op("aten::_local_scalar_dense", true, ITEM.shapes);

/// A kernel's name and launch configuration, as CUPTI reports them.
pub(super) struct KernelSpec {
    pub(super) name: &'static str,
    pub(super) registers: u32,
    pub(super) shared: u32,
    /// `"blocks per SM"` … `"est. achieved occupancy %"`: grid and block over 132 SMs.
    pub(super) occupancy: &'static str,
}

const ELEMENTWISE: &str = r#""blocks per SM": 0.484848,      "warps per SM": 1.939394,      "grid": [64, 1, 1],      "block": [128, 1, 1],      "est. achieved occupancy %": 3"#;
const MUL_KERNEL: KernelSpec = KernelSpec {
    name: "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
    registers: 32,
    shared: 0,
    occupancy: ELEMENTWISE,
};
const ADD_KERNEL: KernelSpec = KernelSpec {
    name: "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)",
    registers: 32,
    shared: 0,
    occupancy: ELEMENTWISE,
};
const CLAMP_KERNEL: KernelSpec = KernelSpec {
    name: "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
    registers: 28,
    shared: 0,
    occupancy: ELEMENTWISE,
};
const SUM_KERNEL: KernelSpec = KernelSpec {
    name: "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>)",
    registers: 32,
    shared: 2064,
    occupancy: r#""blocks per SM": 0.007576,      "warps per SM": 0.121212,      "grid": [1, 1, 1],      "block": [512, 1, 1],      "est. achieved occupancy %": 0"#,
};
const STEP_FUNCTION: &str = "kineto_workloads.py(163): step";
const RELU_FUNCTION: &str = "<built-in method relu of type object at 0x7f6e4b33e180>";
const SUM_FUNCTION: &str = "<built-in method sum of Tensor object at 0x7f6b8eb4c410>";
const ITEM_FUNCTION: &str = "<built-in method item of Tensor object at 0x7f6b8eb4c3c0>";
/// `<module>`, `many` and `profiled`, Python ids 1 to 3, around the whole trace.
pub(super) const OUTER_FUNCTIONS: [&str; 3] = [
    "kineto_workloads.py(198): <module>",
    "kineto_workloads.py(169): many",
    "kineto_workloads.py(42): profiled",
];
/// The Python id of `profiled`, which calls each step and `prof.step()`.
const PROFILED: u64 = 3;

/// Where a replayed block ends and where its marked calls are (ns).
#[derive(Default)]
struct BlockTimes {
    end: i64,
    open: i64,
    close: i64,
    sync: (i64, i64),
}

pub(super) struct CpuOp {
    pub(super) name: CpuName,
    pub(super) ts: i64,
    pub(super) dur: i64,
    pub(super) external_id: u64,
}

pub(super) enum CpuName {
    ProfilerStep(u32),
    Iteration(u32),
    Op(&'static OpSpec),
}

pub(super) struct Memory {
    pub(super) ts: i64,
    pub(super) bytes: i64,
    pub(super) total_allocated: i64,
    pub(super) on_gpu: bool,
    pub(super) addr: u64,
}

pub(super) struct Python {
    pub(super) name: &'static str,
    pub(super) ts: i64,
    pub(super) dur: i64,
    pub(super) id: u64,
    pub(super) parent: u64,
}

/// A runtime call and what it put on the GPU.
pub(super) struct Runtime {
    pub(super) name: &'static str,
    pub(super) cbid: u32,
    pub(super) ts: i64,
    pub(super) dur: i64,
    pub(super) external_id: Option<u64>,
    pub(super) correlation: u64,
    pub(super) gpu: Gpu,
}

pub(super) enum Gpu {
    None,
    Kernel(&'static KernelSpec, i64, i64),
    /// 4 bytes device to pinned host: start, duration.
    Memcpy(i64, i64),
}

/// What one step (with the Python stack that follows it) adds to each section of the file.
#[derive(Default)]
pub(super) struct Step {
    pub(super) ops: Vec<CpuOp>,
    pub(super) memory: Vec<Memory>,
    pub(super) python: Vec<Python>,
    pub(super) runtime: Vec<Runtime>,
    /// `iteration_N` on the stream: step number, start, duration, External id.
    pub(super) gpu_annotation: Option<(u32, i64, i64, u64)>,
}

/// The simulated process: a CPU clock, the stream's clock, the id counters and the allocator.
/// Each section of the file replays it from the same seed, so the sections agree.
pub(super) struct Sim<'a> {
    rng: Rng,
    stacks: &'a PythonStacks,
    steps: u32,
    iterations: u32,
    cpu_ns: i64,
    gpu_free_ns: i64,
    external_id: u64,
    correlation: u64,
    python_id: u64,
    /// Where the current `ProfilerStep#N` began (inside the Python stack before the step).
    profiler_step_ns: i64,
    /// The loop variable's buffer, once it is not the input `x`.
    y_addr: Option<u64>,
    gpu_base: u64,
    gpu_allocated: i64,
    host_addr: u64,
    /// Where the `<module>` frame begins and where the last Python stack ends.
    pub(super) module_start: i64,
    pub(super) python_end: i64,
}

impl<'a> Sim<'a> {
    fn new(seed: u64, stacks: &'a PythonStacks, steps: u32, iterations: u32) -> Self {
        let mut rng = Rng::new(seed);
        let start = 4_743_462_888_000_000 + rng.between(0, 10_000_000_000);
        let gpu_base = 0x7F00_0000_0000 + ((rng.next_u64() % 0x40_0000) << 21);
        let correlation = rng.between(9_000, 15_000) as u64;
        Self {
            rng,
            stacks,
            steps,
            iterations,
            cpu_ns: start,
            gpu_free_ns: 0,
            external_id: 0,
            correlation,
            python_id: OUTER_FUNCTIONS.len() as u64,
            profiler_step_ns: 0,
            y_addr: None,
            gpu_base,
            gpu_allocated: TENSOR_BYTES,
            host_addr: 930_930_688,
            module_start: start,
            python_end: start,
        }
    }

    /// A duration around `median_ns`: mostly within ±10 %, sometimes (3 %) a slow one.
    fn dur(&mut self, median_ns: i64) -> i64 {
        let d = self.rng.jitter(median_ns, 0.1);
        if self.rng.chance(0.03) {
            d + self.rng.between(d / 5, 2 * d)
        } else {
            d
        }
    }

    fn next_external_id(&mut self) -> u64 {
        self.external_id += 1;
        self.external_id
    }

    /// Replays a Python block from `start`, its depth-0 frames children of `parent`, with every
    /// time scaled by one factor of ±5 % so that steps differ but stay nested.
    fn python_stack(
        &mut self,
        frames: &[Frame],
        start: i64,
        parent: u64,
        out: &mut Step,
    ) -> BlockTimes {
        let scale = 0.95 + 0.1 * self.rng.unit();
        let at = |ns: i64| (ns as f64 * scale).round() as i64;
        let mut times = BlockTimes::default();
        let mut ids = [parent; 16];
        for f in frames {
            let depth = f.depth.min(ids.len() - 2);
            self.python_id += 1;
            ids[depth + 1] = self.python_id;
            // Ends scaled as ends, not as start + scaled duration, so that children stay inside.
            let ts = start + at(f.start_ns);
            let dur = (start + at(f.start_ns + f.dur_ns) - ts).max(1);
            out.python.push(Python {
                name: f.name,
                ts,
                dur,
                id: self.python_id,
                parent: ids[depth],
            });
            times.end = times.end.max(ts + dur);
            match f.mark {
                "open" => times.open = ts + dur / 2,
                "close" => times.close = ts + dur * 3 / 4,
                "sync" => times.sync = (ts + dur * 35 / 100, dur / 2),
                _ => {}
            }
        }
        times
    }

    /// A `[memory]` instant between `after + lo` and `after + hi` ns.
    fn memory(
        &mut self,
        out: &mut Step,
        after: i64,
        (lo, hi): (i64, i64),
        bytes: i64,
        on_gpu: bool,
        addr: u64,
    ) {
        let ts = after + self.rng.between(lo, hi);
        if on_gpu {
            self.gpu_allocated += bytes;
        }
        let total_allocated = if on_gpu {
            self.gpu_allocated
        } else {
            bytes.max(0)
        };
        out.memory.push(Memory {
            ts,
            bytes,
            total_allocated,
            on_gpu,
            addr,
        });
    }

    /// `cudaLaunchKernel` at `ts` for the operator with `external_id`; the kernel follows on the
    /// stream once the launch has gone through and the stream is free.
    fn launch(
        &mut self,
        out: &mut Step,
        kernel: &'static KernelSpec,
        ts: i64,
        dur: i64,
        external_id: u64,
    ) {
        let gpu_dur = if kernel.shared == 0 {
            self.rng.jitter(1_150, 0.03)
        } else {
            self.rng.jitter(8_100, 0.02)
        };
        let gpu_ts = (ts + dur + self.rng.between(1_200, 2_500)).max(self.gpu_free_ns + 1_000);
        self.gpu_free_ns = gpu_ts + gpu_dur;
        self.correlation += self.rng.between(11, 13) as u64;
        out.runtime.push(Runtime {
            name: "cudaLaunchKernel",
            cbid: 211,
            ts,
            dur,
            external_id: Some(external_id),
            correlation: self.correlation,
            gpu: Gpu::Kernel(kernel, gpu_ts, gpu_dur),
        });
    }

    fn op(&mut self, out: &mut Step, spec: &'static OpSpec, ts: i64, dur: i64) -> u64 {
        let external_id = self.next_external_id();
        out.ops.push(CpuOp {
            name: CpuName::Op(spec),
            ts,
            dur,
            external_id,
        });
        external_id
    }

    /// `y * 1.0001 + 0.001` then `torch.relu`: an 8-byte host scalar per arithmetic operator,
    /// one 256 KiB output per operator from the three buffers the allocator cycles through (the
    /// old `y` is freed once relu has returned).
    fn iteration(&mut self, out: &mut Step, step_function: u64) {
        let [a, b, c] = [0, 1, 2].map(|k| self.gpu_base + k * TENSOR_BYTES as u64);
        let (scaled, shifted) = match self.y_addr {
            None => (a, b),
            Some(y) if y == a => (b, c),
            Some(_) => (a, c),
        };
        if self.rng.chance(0.02) {
            self.host_addr = 900_000_000 + 64 * self.rng.between(0, 700_000) as u64;
        }
        let mut t = self.cpu_ns;
        for (spec, kernel, output) in [(&MUL, &MUL_KERNEL, scaled), (&ADD, &ADD_KERNEL, shifted)] {
            self.memory(out, t, (-2_600, -1_800), 8, false, self.host_addr);
            let (launch_at, launch_dur) = (self.rng.jitter(7_500, 0.1), self.dur(6_400));
            let dur = self.dur(16_000).max(launch_at + launch_dur + 1_500);
            let id = self.op(out, spec, t, dur);
            self.memory(out, t, (3_600, 4_600), TENSOR_BYTES, true, output);
            self.launch(out, kernel, t + launch_at, launch_dur, id);
            t += dur;
            self.memory(out, t, (800, 1_300), -8, false, self.host_addr);
            if output == shifted {
                self.memory(out, t, (3_000, 4_000), -TENSOR_BYTES, true, scaled);
            }
            t += self.dur(if output == shifted { 3_900 } else { 4_600 });
        }
        let clamp_offset = self.rng.between(1_850, 2_300);
        let (launch_at, launch_dur) = (self.rng.jitter(6_500, 0.1), self.dur(6_600));
        let clamp_dur = self.dur(15_100).max(launch_at + launch_dur + 1_500);
        let relu_dur = clamp_offset + clamp_dur + self.rng.between(1_400, 2_100);
        let (from, to) = (
            t - self.rng.between(1_400, 1_700),
            t + relu_dur + self.rng.between(900, 1_400),
        );
        self.python(out, RELU_FUNCTION, from, to, step_function);
        self.op(out, &RELU, t, relu_dur);
        let clamp = t + clamp_offset;
        let id = self.op(out, &CLAMP_MIN, clamp, clamp_dur);
        // relu's output takes the buffer `y * 1.0001` just gave back.
        self.memory(out, clamp, (3_900, 4_700), TENSOR_BYTES, true, scaled);
        self.launch(out, &CLAMP_KERNEL, clamp + launch_at, launch_dur, id);
        t += relu_dur;
        self.memory(out, t, (2_300, 2_800), -TENSOR_BYTES, true, shifted);
        if let Some(y) = self.y_addr {
            self.memory(out, t, (2_900, 3_400), -TENSOR_BYTES, true, y);
        }
        self.y_addr = Some(scaled);
        self.cpu_ns = t + self.dur(7_300);
    }

    /// `y.sum().item()`: the reduction into a 512-byte block of the allocator, then `.item()`
    /// copies the float to the host and waits for the stream. Returns when `.item()` returned.
    fn sum_and_item(&mut self, out: &mut Step, step_function: u64) -> i64 {
        let free = match self.y_addr {
            Some(y) if y == self.gpu_base => self.gpu_base + TENSOR_BYTES as u64,
            _ => self.gpu_base,
        };
        let sum_function = self.cpu_ns + self.dur(25_000);
        let outer = sum_function + self.rng.jitter(10_400, 0.1);
        let inner = outer + self.rng.jitter(26_500, 0.1);
        let (launch_at, launch_dur) = (self.rng.jitter(43_700, 0.1), self.dur(16_200));
        let inner_dur = self.dur(65_000).max(launch_at + launch_dur + 2_000);
        let outer_end = inner + inner_dur + self.rng.between(500, 1_500);
        let sum_end = outer_end + self.rng.between(1_000, 12_000);
        self.python(out, SUM_FUNCTION, sum_function, sum_end, step_function);
        self.op(out, &SUM, outer, outer_end - outer);
        let id = self.op(out, &SUM_DIM, inner, inner_dur);
        self.memory(out, inner, (6_400, 7_800), 512, true, free);
        let strided = self.rng.jitter(6_700, 0.1);
        let strided_at = inner + self.rng.jitter(18_500, 0.1);
        self.op(out, &AS_STRIDED, strided_at, strided);
        self.launch(out, &SUM_KERNEL, inner + launch_at, launch_dur, id);

        let item_function = sum_end + self.dur(5_000);
        let item = item_function + self.rng.jitter(5_500, 0.1);
        let dense = item + self.rng.jitter(5_100, 0.1);
        let copy = dense + self.rng.jitter(18_400, 0.1);
        let copy_dur = self.dur(38_000);
        let gpu_copy =
            (copy + copy_dur - self.rng.between(1_000, 3_000)).max(self.gpu_free_ns + 1_000);
        let copy_gpu_dur = self.rng.between(1_350, 1_450);
        self.gpu_free_ns = gpu_copy + copy_gpu_dur;
        let sync = copy + copy_dur + self.rng.between(1_300, 2_000);
        let sync_end = sync + self.dur(17_000).max(self.gpu_free_ns - sync + 500);
        let dense_end = sync_end + self.rng.between(2_000, 3_000);
        let item_end = dense_end + self.rng.between(600, 1_000);
        let item_function_end = item_end + self.rng.between(2_000, 9_000);
        self.python(
            out,
            ITEM_FUNCTION,
            item_function,
            item_function_end,
            step_function,
        );
        self.op(out, &ITEM, item, item_end - item);
        let id = self.op(out, &LOCAL_SCALAR_DENSE, dense, dense_end - dense);
        for (name, cbid, ts, end, gpu) in [
            (
                "cudaMemcpyAsync",
                41,
                copy,
                copy + copy_dur,
                Gpu::Memcpy(gpu_copy, copy_gpu_dur),
            ),
            ("cudaStreamSynchronize", 131, sync, sync_end, Gpu::None),
        ] {
            self.correlation += if cbid == 41 {
                self.rng.between(5, 7) as u64
            } else {
                1
            };
            out.runtime.push(Runtime {
                name,
                cbid,
                ts,
                dur: end - ts,
                external_id: Some(id),
                correlation: self.correlation,
                gpu,
            });
        }
        self.correlation += self.rng.between(20, 40) as u64;
        self.memory(out, item_end, (4_100, 5_100), -512, true, free);
        item_function_end
    }

    fn python(&mut self, out: &mut Step, name: &'static str, ts: i64, end: i64, parent: u64) {
        self.python_id += 1;
        out.python.push(Python {
            name,
            ts,
            dur: end - ts,
            id: self.python_id,
            parent,
        });
    }

    /// The Python stack before the first step, where `ProfilerStep#2` begins.
    fn prologue(&mut self, out: &mut Step) {
        let stacks = self.stacks;
        let block = self.python_stack(&stacks.start, self.cpu_ns + 9_440, PROFILED, out);
        self.profiler_step_ns = block.open;
        self.cpu_ns = block.end + self.rng.between(3_000, 5_000);
    }

    /// Step `n` (0-based; PyTorch numbers it `n + 2` after one wait and one warm-up step) and
    /// the Python stack after it, where its `ProfilerStep#N` ends.
    fn step(&mut self, n: u32, out: &mut Step) {
        let number = n + 2;
        let step_start = self.cpu_ns;
        let (profiler_step_id, iteration_id) = (self.next_external_id(), self.next_external_id());
        self.python_id += 1;
        let step_function = self.python_id;
        let step_index = out.python.len();
        out.python.push(Python {
            name: STEP_FUNCTION,
            ts: step_start,
            dur: 0,
            id: step_function,
            parent: PROFILED,
        });
        let stacks = self.stacks;
        let enter = self.python_stack(&stacks.enter, step_start + 2_633, step_function, out);
        let iteration_start = enter.open;
        self.cpu_ns = enter.end + self.dur(12_000);
        self.y_addr = None;
        let first_runtime = out.runtime.len();
        for _ in 0..self.iterations {
            self.iteration(out, step_function);
        }
        let gpu_start = match out.runtime.get(first_runtime).map(|r| &r.gpu) {
            Some(Gpu::Kernel(_, ts, _)) => ts - 1,
            _ => step_start,
        };
        let exit_start = self.sum_and_item(out, step_function) + self.dur(23_800);
        let exit = self.python_stack(&stacks.exit, exit_start, step_function, out);
        let step_end = exit.end + self.dur(6_000);
        out.python[step_index].dur = step_end - step_start;
        if let Some(y) = self.y_addr.take() {
            self.memory(out, step_end, (1_800, 2_400), -TENSOR_BYTES, true, y);
        }
        out.gpu_annotation = Some((
            number,
            gpu_start,
            self.gpu_free_ns + 1 - gpu_start,
            iteration_id,
        ));

        let last = n + 1 == self.steps;
        let frames = if last { &stacks.end } else { &stacks.between };
        let after_start = step_end + self.dur(7_300);
        let after = self.python_stack(frames, after_start, PROFILED, out);
        if last {
            self.correlation += self.rng.between(3, 6) as u64;
            out.runtime.push(Runtime {
                name: "cudaDeviceSynchronize",
                cbid: 165,
                ts: after.sync.0,
                dur: after.sync.1,
                external_id: None,
                correlation: self.correlation,
                gpu: Gpu::None,
            });
        }
        out.ops.insert(
            0,
            CpuOp {
                name: CpuName::ProfilerStep(number),
                ts: self.profiler_step_ns,
                dur: after.close - self.profiler_step_ns,
                external_id: profiler_step_id,
            },
        );
        out.ops.insert(
            1,
            CpuOp {
                name: CpuName::Iteration(number),
                ts: iteration_start,
                dur: exit.close - iteration_start,
                external_id: iteration_id,
            },
        );
        self.profiler_step_ns = after.open;
        self.python_end = after.end;
        self.cpu_ns = after.end + self.dur(1_600);
    }
}

impl fmt::Display for CpuName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuName::ProfilerStep(n) => write!(f, "ProfilerStep#{n}"),
            CpuName::Iteration(n) => write!(f, "iteration_{n}"),
            CpuName::Op(spec) => f.write_str(spec.name),
        }
    }
}

/// Runs the process from `seed`: the stack before the first step, then each step, handing each
/// to `f`. Returns the simulation, whose clocks then stand at the end of the trace.
pub(super) fn replay<'a>(
    seed: u64,
    stacks: &'a PythonStacks,
    steps: u32,
    iterations: u32,
    f: &mut dyn FnMut(&Step) -> io::Result<()>,
) -> io::Result<Sim<'a>> {
    let mut sim = Sim::new(seed, stacks, steps, iterations);
    let mut step = Step::default();
    sim.prologue(&mut step);
    f(&step)?;
    for n in 0..steps {
        step = Step::default();
        sim.step(n, &mut step);
        f(&step)?;
    }
    Ok(sim)
}
