//! Unit tests of `key_averages()` on traces built by hand: self times, folding, threads,
//! annotations, collectives, input shapes, ranges.

use super::*;
use crate::trace::{NvtxStyle, TorchInfo, TraceFormat};

fn g(tid: i64) -> i64 {
    (7 << 24) | tid
}

/// A Kineto-like trace built by hand: ranges (kind, name, start, end, tid, external id,
/// shapes), CUDA calls (name, start, end, tid, correlation, external id), kernels (name,
/// start, end, external id) and memory records (time, tid, bytes, device type).
struct Build {
    trace: Trace,
}

impl Build {
    fn new() -> Self {
        let trace = Trace {
            strings: StringTable::new(),
            format: TraceFormat::Kineto,
            torch: Some(TorchInfo::default()),
            ..Default::default()
        };
        Self { trace }
    }

    #[allow(clippy::too_many_arguments)]
    fn range(
        mut self,
        kind: RangeKind,
        name: &str,
        start: i64,
        end: i64,
        tid: i64,
        external_id: u64,
        shapes: &str,
    ) -> Self {
        let t = &mut self.trace;
        let name = t.strings.intern(name);
        let shapes = t.strings.intern(shapes);
        let n = &mut t.nvtx;
        n.spans.push(start, end, name);
        n.style.push(NvtxStyle::PushPop);
        n.global_tid.push(g(tid));
        n.depth.push(0);
        n.kind.push(kind);
        n.external_id.push(external_id);
        n.input_shapes.push(shapes);
        self
    }

    fn op(self, name: &str, start: i64, end: i64, external_id: u64) -> Self {
        self.range(RangeKind::Operator, name, start, end, 1, external_id, "")
    }

    fn call(
        mut self,
        name: &str,
        start: i64,
        end: i64,
        tid: i64,
        correlation: u32,
        external_id: u64,
    ) -> Self {
        let t = &mut self.trace;
        let name = t.strings.intern(name);
        t.api_calls.spans.push(start, end, name);
        t.api_calls.global_tid.push(g(tid));
        t.api_calls.correlation_id.push(correlation);
        t.api_calls.external_id.push(external_id);
        self
    }

    fn kernel(mut self, name: &str, start: i64, end: i64, external_id: u64) -> Self {
        let t = &mut self.trace;
        let name = t.strings.intern(name);
        t.kernels.spans.push(start, end, name);
        t.kernels.external_id.push(external_id);
        self
    }

    fn memory(mut self, time_ns: i64, tid: i64, bytes: i64, device_type: u8) -> Self {
        if let Some(torch) = &mut self.trace.torch {
            let m = &mut torch.memory;
            m.time_ns.push(time_ns);
            m.global_tid.push(g(tid));
            m.bytes.push(bytes);
            m.device_type.push(device_type);
            m.device_id.push(if device_type == 0 { -1 } else { 0 });
        }
        self
    }

    fn rows(&self, group_by_input_shape: bool) -> Vec<KeyAverage> {
        let mut rows = key_averages(
            &self.trace,
            &Filter::all(),
            KeyAverageOptions {
                group_by_input_shape,
                with_events: true,
            },
        );
        rows.sort_by(|a, b| {
            (&a.name, a.device, &a.input_shapes).cmp(&(&b.name, b.device, &b.input_shapes))
        });
        rows
    }
}

fn row<'a>(rows: &'a [KeyAverage], name: &str, device: OpDevice) -> &'a KeyAverage {
    rows.iter()
        .find(|r| r.name == name && r.device == device)
        .unwrap_or_else(|| panic!("no row {name} {device:?} in {rows:#?}"))
}

#[test]
fn self_times_kernels_and_memory_follow_the_tree() {
    // ProfilerStep#1 [0, 100) > aten::linear [10, 60) > aten::mm [20, 50) (> cudaLaunchKernel
    // [30, 35) launching gemm [40, 70) on the GPU); a 64-byte CUDA alloc at 25 (inside mm), a
    // 16-byte CPU alloc at 60 (at linear's end: both ends count), a free of 8 CPU bytes at 200
    // that no event covers.
    let b = Build::new()
        .range(RangeKind::Annotation, "ProfilerStep#1", 0, 100, 1, 1, "")
        .op("aten::linear", 10, 60, 2)
        .op("aten::mm", 20, 50, 3)
        .call("cudaLaunchKernel", 30, 35, 1, 900, 3)
        .kernel("gemm", 40, 70, 3)
        .memory(25, 1, 64, 1)
        .memory(60, 1, 16, 0)
        .memory(200, 2, -8, 0);
    let rows = b.rows(false);
    let step = row(&rows, "ProfilerStep*", OpDevice::Cpu);
    assert!(step.user_annotation);
    assert_eq!(
        (step.count, step.cpu_total_ns, step.self_cpu_ns),
        (1, 100, 50)
    );
    assert_eq!((step.cuda_total_ns, step.self_cuda_ns), (30, 0));
    assert_eq!((step.cpu_mem_bytes, step.self_cpu_mem_bytes), (16, 0));
    assert_eq!((step.cuda_mem_bytes, step.self_cuda_mem_bytes), (64, 0));
    let linear = row(&rows, "aten::linear", OpDevice::Cpu);
    assert_eq!((linear.cpu_total_ns, linear.self_cpu_ns), (50, 20));
    assert_eq!(
        (linear.self_cpu_mem_bytes, linear.self_cuda_mem_bytes),
        (16, 0)
    );
    let mm = row(&rows, "aten::mm", OpDevice::Cpu);
    assert_eq!((mm.cpu_total_ns, mm.self_cpu_ns), (30, 25));
    assert_eq!((mm.cuda_total_ns, mm.self_cuda_ns), (30, 30));
    assert_eq!(mm.self_cuda_mem_bytes, 64);
    // The CUDA call is a child of mm but has no kernels of its own: its CUPTI correlation
    // (900) is not an op's id.
    let launch = row(&rows, "cudaLaunchKernel", OpDevice::Cpu);
    assert_eq!((launch.cpu_total_ns, launch.self_cpu_ns), (5, 5));
    assert_eq!(launch.cuda_total_ns, 0);
    let gemm = row(&rows, "gemm", OpDevice::Cuda);
    assert_eq!(
        (gemm.cpu_total_ns, gemm.self_cuda_ns, gemm.cuda_total_ns),
        (0, 30, 30)
    );
    assert_eq!(gemm.events, vec![EventRef::new(EventTable::Kernels, 0)]);
    // The uncovered free is an event of its own.
    let free = row(&rows, "[memory]", OpDevice::Cpu);
    assert_eq!(
        (free.count, free.cpu_mem_bytes, free.self_cpu_mem_bytes),
        (1, -8, -8)
    );
    assert!(free.events.is_empty());
    assert_eq!(rows.len(), 6);
}

#[test]
fn an_only_child_of_the_same_name_is_folded_into_its_parent() {
    // aten::to [0, 100) > aten::to [10, 90) > aten::copy_ [20, 80): the inner aten::to goes,
    // the outer one takes its child and its kernels (and drops its own).
    let b = Build::new()
        .op("aten::to", 0, 100, 1)
        .op("aten::to", 10, 90, 2)
        .op("aten::copy_", 20, 80, 3)
        .kernel("own", 200, 207, 1)
        .kernel("inner", 300, 311, 2)
        .kernel("copy", 400, 413, 3);
    let rows = b.rows(false);
    let to = row(&rows, "aten::to", OpDevice::Cpu);
    assert_eq!((to.count, to.cpu_total_ns, to.self_cpu_ns), (1, 100, 40));
    assert_eq!((to.cuda_total_ns, to.self_cuda_ns), (11 + 13, 11));
    let copy = row(&rows, "aten::copy_", OpDevice::Cpu);
    assert_eq!((copy.cuda_total_ns, copy.self_cuda_ns), (13, 13));
    // Two children: nothing folds.
    let b = Build::new()
        .op("aten::to", 0, 100, 1)
        .op("aten::to", 10, 40, 2)
        .op("aten::empty", 50, 60, 3);
    let to = row(&b.rows(false), "aten::to", OpDevice::Cpu).clone();
    assert_eq!((to.count, to.cpu_total_ns, to.self_cpu_ns), (2, 130, 90));
}

#[test]
fn cuda_calls_nest_on_the_thread_of_the_op_that_made_them() {
    // The op is on thread 1; its CUDA call recorded on thread 2 nests under it all the same.
    let b = Build::new()
        .op("aten::add", 0, 100, 5)
        .call("cudaLaunchKernel", 10, 30, 2, 77, 5)
        .call("cudaDeviceSynchronize", 40, 60, 2, 78, 0);
    let rows = b.rows(false);
    assert_eq!(row(&rows, "aten::add", OpDevice::Cpu).self_cpu_ns, 80);
    // A call linked to no op stays on its own thread.
    assert_eq!(
        row(&rows, "cudaDeviceSynchronize", OpDevice::Cpu).self_cpu_ns,
        20
    );
}

#[test]
fn gpu_annotations_and_collectives_are_their_own_rows() {
    let b = Build::new()
        .range(RangeKind::Annotation, "forward", 0, 100, 1, 1, "")
        .range(RangeKind::GpuAnnotation, "forward", 50, 250, 99, 1, "")
        .range(
            RangeKind::Annotation,
            "gloo:all_reduce",
            10,
            500,
            3,
            2,
            "[[4]]",
        )
        .op("aten::relu", 20, 30, 3)
        .range(RangeKind::Python, "model.py(1): f", 0, 100, 1, 0, "");
    let rows = b.rows(false);
    let cpu = row(&rows, "forward", OpDevice::Cpu);
    assert_eq!((cpu.cpu_total_ns, cpu.cuda_total_ns), (100, 0));
    let gpu = row(&rows, "forward", OpDevice::Cuda);
    assert!(gpu.user_annotation);
    assert_eq!(
        (gpu.cpu_total_ns, gpu.self_cuda_ns, gpu.cuda_total_ns),
        (0, 200, 200)
    );
    // c10d's collectives are async: CPU total only, and they parent nothing.
    let gloo = row(&rows, "gloo:all_reduce", OpDevice::Cpu);
    assert_eq!((gloo.cpu_total_ns, gloo.self_cpu_ns), (490, 0));
    assert_eq!(row(&rows, "aten::relu", OpDevice::Cpu).self_cpu_ns, 10);
    assert!(!rows.iter().any(|r| r.name.contains("model.py")));
}

#[test]
fn input_shapes_group_as_python_prints_them() {
    let b = Build::new()
        .op("aten::cat", 0, 10, 1)
        .range(
            RangeKind::Operator,
            "aten::cat",
            20,
            30,
            1,
            2,
            "[[[2, 3], [4, 3]], []]",
        )
        .range(
            RangeKind::Operator,
            "aten::mm",
            40,
            50,
            1,
            3,
            "[[2,3],[3, -1]]",
        )
        .range(
            RangeKind::Operator,
            "aten::mm",
            60,
            70,
            1,
            4,
            "[[2, 3], [3, -1]]",
        );
    let rows = b.rows(true);
    let shapes: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.name.as_str(), r.input_shapes.as_deref().unwrap_or("?")))
        .collect();
    assert_eq!(
        shapes,
        vec![
            ("aten::cat", "[[], []]"),
            ("aten::cat", "[]"),
            ("aten::mm", "[[2, 3], [3, -1]]"),
        ]
    );
    assert_eq!(rows[2].count, 2);
    assert_eq!(b.rows(false).len(), 2);
}

#[test]
fn profiler_overhead_nests_on_the_main_thread_and_takes_the_kernels_of_its_cpp_parent() {
    // On the main thread (tid 7 = pid 7): step [0, 1000) > add [100, 200) (kernel 5 ns) >
    // a buffer request [150, 180), drawn on worker thread 9 but nested, as PyTorch nests it, on
    // the main thread; a 64-byte CUDA alloc at 160, inside the request. Then mul [250, 320)
    // (kernel 7 ns) and a flush [300, 400) that starts inside mul and outlasts it, around
    // relu [350, 380) (kernel 11 ns).
    let overhead = |b: Build, name: &str, start: i64, end: i64, tid: i64| {
        b.range(RangeKind::ProfilerOverhead, name, start, end, tid, 0, "")
    };
    let main_op = |b: Build, name: &str, start: i64, end: i64, id: u64| {
        b.range(RangeKind::Operator, name, start, end, 7, id, "")
    };
    let b = Build::new().range(RangeKind::Annotation, "step", 0, 1000, 7, 1, "");
    let b = main_op(b, "aten::add", 100, 200, 2).kernel("add_kernel", 500, 505, 2);
    let b = overhead(b, "Activity Buffer Request", 150, 180, 9).memory(160, 7, 64, 1);
    let b = main_op(b, "aten::mul", 250, 320, 3).kernel("mul_kernel", 600, 607, 3);
    let b = overhead(b, "Buffer Flush", 300, 400, 7);
    let b = main_op(b, "aten::relu", 350, 380, 4).kernel("relu_kernel", 700, 711, 4);
    let rows = b.rows(false);
    let cpu = |name: &str| row(&rows, name, OpDevice::Cpu).clone();
    // The request is add's child: its 30 ns and the allocation leave add's self figures.
    let request = cpu("Activity Buffer Request");
    assert!(!request.user_annotation);
    assert_eq!((request.self_cpu_ns, request.cpu_total_ns), (30, 30));
    assert_eq!(
        (request.cuda_mem_bytes, request.self_cuda_mem_bytes),
        (64, 64)
    );
    let add = cpu("aten::add");
    assert_eq!(
        (add.self_cpu_ns, add.self_cuda_mem_bytes, add.cuda_mem_bytes),
        (70, 0, 64)
    );
    // Its id is add's (its parent in PyTorch's C++ tree): it takes add's kernel, counted in
    // add's CUDA total a second time through its child, as PyTorch counts it.
    assert_eq!((request.self_cuda_ns, request.cuda_total_ns), (5, 5));
    assert_eq!((add.self_cuda_ns, add.cuda_total_ns), (5, 10));
    // The flush outlasts mul, so it is the step's child and relu's parent; its C++ parent is
    // mul, whose kernel it takes.
    let flush = cpu("Buffer Flush");
    assert_eq!((flush.self_cpu_ns, flush.cpu_total_ns), (70, 100));
    assert_eq!((flush.self_cuda_ns, flush.cuda_total_ns), (7, 18));
    assert_eq!(cpu("aten::mul").self_cpu_ns, 70);
    assert_eq!(cpu("aten::relu").self_cpu_ns, 30);
    assert_eq!(cpu("step").self_cpu_ns, 1000 - 100 - 70 - 100);
}

#[test]
fn an_nsys_export_has_no_rows() {
    let mut t = Trace::default();
    let name = t.strings.intern("range");
    t.nvtx.spans.push(0, 10, name);
    assert!(key_averages(&t, &Filter::all(), KeyAverageOptions::default()).is_empty());
}

#[test]
fn a_range_counts_the_events_that_start_in_it() {
    let b = Build::new()
        .op("aten::add", 0, 10, 1)
        .op("aten::add", 100, 120, 2);
    let range = crate::analysis::TimeRange {
        start_ns: Some(50),
        end_ns: Some(200),
    };
    let rows = key_averages(
        &b.trace,
        &Filter::range(range),
        KeyAverageOptions::default(),
    );
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].count, rows[0].cpu_total_ns), (1, 20));
}
