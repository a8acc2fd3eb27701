//! Is each operator fast? Per PyTorch operator and distinct arguments: its FLOPs and bytes from
//! the shapes the trace recorded (`record_shapes=True`), its time from the GPU work it launched,
//! and where that puts it against the GPU's roofline — the numbers of TraceLens'
//! `unified_perf_summary` (AMD-AGI/TraceLens at commit `171dd747`, `TraceLens_generate_perf_
//! report_pytorch`), computed from the same trace.
//!
//! - [`calls`]: which operator calls get a row and which GPU work is theirs;
//! - [`models`]: FLOPs and bytes of a call from its arguments;
//! - [`args`]: the arguments as the trace writes them, printed as TraceLens prints them;
//! - [`peaks`]: the GPU's published peaks by data type.
//!
//! A row groups the calls of one operator name with the same arguments (Input Dims, Input type,
//! Input Strides, Concrete Inputs) on one thread, as TraceLens groups them. A call's time is the
//! merged busy time of all its GPU work (kernels, memsets, copies); TFLOP/s and TB/s are means
//! over calls of the call's FLOPs and bytes over its time.

pub mod args;
pub mod calls;
pub mod models;
pub mod peaks;

use std::collections::HashMap;

use self::args::ArgValue;
use self::calls::{CollectedCall, gpu_work_name};
use self::models::{CallArgs, ModelKind, Unit, Work, evaluate};
use self::peaks::{Peak, gpu_peaks};
use super::filter::{EventTable, Filter};
use super::gaps::{GpuOpKind, GpuOpRef};
use super::intervals;
use super::table::EventRef;
use crate::trace::{StrId, StringTable, Trace};

/// One row: an operator and its arguments, over its calls.
#[derive(Debug, Clone)]
pub struct OpEfficiency {
    pub name: String,
    /// TraceLens' `op category` (`GEMM`, `SDPA_fwd`, `elementwise`, `other`, …).
    pub category: String,
    /// `Input Dims` / `Input type` as TraceLens prints them (`((2048, 768), (768, 768))`).
    pub input_dims: String,
    pub input_types: String,
    /// `globalTid` of the thread the calls ran on.
    pub thread: i64,
    pub count: u64,
    /// Sum and mean over calls of each call's merged GPU busy time, µs.
    pub kernel_time_sum_us: f64,
    pub kernel_time_mean_us: f64,
    /// From the first call (equal for equal arguments); `None` without a model.
    pub gflops: Option<f64>,
    /// MB of 2²⁰ bytes.
    pub data_moved_mb: Option<f64>,
    pub flops_per_byte: Option<f64>,
    /// Means over calls.
    pub tflops_per_s: Option<f64>,
    pub tb_per_s: Option<f64>,
    /// Matrix or vector units, and the data type, that set the peak.
    pub unit: Option<Unit>,
    pub dtype: Option<String>,
    /// The GPU's peak for this unit and data type, and its memory bandwidth.
    pub peak: Option<Peak>,
    /// Achieved TFLOP/s against min(peak compute, bandwidth × FLOPS/Byte), in %.
    pub pct_of_roofline: Option<f64>,
    /// The operator calls (ranges) behind the row.
    pub calls: Vec<EventRef>,
    /// Their GPU work.
    pub gpu_work: Vec<GpuOpRef>,
}

impl OpEfficiency {
    /// The roofline for this row's data type at its arithmetic intensity, TFLOP/s.
    pub fn roofline_tflops(&self) -> Option<f64> {
        let peak = self.peak?;
        let intensity = self.flops_per_byte?;
        let compute = peak.tflops?;
        Some(match peak.tb_per_s {
            Some(bw) => compute.min(bw * intensity),
            None => compute,
        })
    }

    /// GPU time lost against the roofline: the time the calls took beyond what the roofline
    /// allows, µs.
    pub fn time_lost_us(&self) -> Option<f64> {
        let roof = self.roofline_tflops()?;
        let tflop = self.gflops? / 1e3 * self.count as f64;
        if roof <= 0.0 {
            return None;
        }
        Some((self.kernel_time_sum_us - tflop / roof * 1e6).max(0.0))
    }
}

/// What the operator efficiency reads from a trace.
pub const NEEDS: crate::trace::Needs = crate::trace::Needs::GPU_WORK
    .union(crate::trace::Needs::API_CALLS)
    .union(crate::trace::Needs::GPU_LINKS)
    .union(crate::trace::Needs::NVTX);

/// One row per operator and arguments, by kernel time descending. Under a filter, the calls
/// that start in its range count.
pub fn op_efficiency(trace: &Trace, filter: &Filter) -> Vec<OpEfficiency> {
    // Operators are PyTorch's: a torch.profiler trace's, or an nsys export's emit_nvtx ranges
    // with shapes. Other NVTX ranges are not operators with recorded arguments.
    if !trace.nvtx.has_operators() {
        return Vec::new();
    }
    let collected = calls::collect(trace);
    let peaks = gpu_peaks(trace);
    let mut rows: Vec<OpEfficiency> = Vec::new();
    // Calls with GPU time, per row: TraceLens' means skip a call whose rate is NaN.
    let mut timed: Vec<u64> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut parsed: HashMap<StrId, Option<ArgValue>> = HashMap::new();
    for call in &collected {
        let Some((key, start_ns, event)) = key_of(trace, call) else {
            continue;
        };
        if !filter.keeps(event.table, event.index as usize, start_ns) {
            continue;
        }
        let busy_ns = busy_ns(trace, &call.gpu_work);
        let work = call
            .model
            .and_then(|m| model_work(trace, call, m, &mut parsed));
        let at = *index.entry(key.clone()).or_insert_with(|| {
            rows.push(new_row(trace, call, &key, work.as_ref(), &peaks));
            timed.push(0);
            rows.len() - 1
        });
        let row = &mut rows[at];
        row.count += 1;
        row.kernel_time_sum_us += busy_ns as f64 / 1e3;
        row.calls.push(event);
        row.gpu_work.extend_from_slice(&call.gpu_work);
        if let Some(work) = &work
            && busy_ns > 0
        {
            timed[at] += 1;
            let seconds = busy_ns as f64 / 1e9;
            add_mean(&mut row.tflops_per_s, work.flops / 1e12 / seconds);
            if let Some(bytes) = work.bytes {
                add_mean(&mut row.tb_per_s, bytes / 1e12 / seconds);
            }
        }
    }
    // Means: the sums above, over the calls (that had time, for the rates).
    for (row, &timed) in rows.iter_mut().zip(&timed) {
        row.kernel_time_mean_us = row.kernel_time_sum_us / row.count.max(1) as f64;
        let calls_timed = timed.max(1) as f64;
        row.tflops_per_s = row.tflops_per_s.map(|s| s / calls_timed);
        row.tb_per_s = row.tb_per_s.map(|s| s / calls_timed);
        row.pct_of_roofline = match (row.tflops_per_s, row.roofline_tflops()) {
            (Some(achieved), Some(roof)) if roof > 0.0 => Some(achieved / roof * 100.0),
            _ => None,
        };
    }
    rows.sort_by(|a, b| {
        b.kernel_time_sum_us
            .total_cmp(&a.kernel_time_sum_us)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.input_dims.cmp(&b.input_dims))
    });
    rows
}

/// The operator name of range `i`: its name, or the name in front of an emit_nvtx text's
/// fields (`aten::mm, seq = 5, …` → `aten::mm`).
pub fn op_name(trace: &Trace, i: usize) -> &str {
    let name = trace.str(trace.nvtx.spans.name[i]);
    match trace.nvtx.kind_of(i) {
        crate::trace::RangeKind::Nvtx => crate::trace::emit_nvtx::operator_name(name),
        _ => name,
    }
}

/// The `n` rows that lost most GPU time against their roofline ([`OpEfficiency::time_lost_us`]),
/// most first; none where the GPU's peaks are unknown.
pub fn furthest_from_roofline(rows: &[OpEfficiency], n: usize) -> Vec<OpEfficiency> {
    let mut lost: Vec<(f64, &OpEfficiency)> = rows
        .iter()
        .filter_map(|r| Some((r.time_lost_us()?, r)))
        .filter(|(l, _)| *l > 0.0)
        .collect();
    lost.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    lost.into_iter().take(n).map(|(_, r)| r.clone()).collect()
}

fn add_mean(sum: &mut Option<f64>, v: f64) {
    *sum = Some(sum.unwrap_or(0.0) + v);
}

/// TraceLens' grouping: name, category, thread, and the four argument texts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    name: String,
    thread: i64,
    dims: StrId,
    types: StrId,
    strides: StrId,
    concrete: StrId,
    model: Option<ModelKind>,
}

/// The row key of a call, its start and the event that stands for it.
fn key_of(trace: &Trace, call: &CollectedCall) -> Option<(Key, i64, EventRef)> {
    let nvtx = &trace.nvtx;
    let text = |v: &Vec<StrId>, i: usize| v.get(i).copied().unwrap_or(StringTable::EMPTY);
    match (call.range, call.call) {
        (Some(i), _) => {
            let op_name = op_name(trace, i);
            let name = match &call.synthetic_of {
                Some(work) => format!("{op_name}->{work} (Synthetic Op)"),
                None => op_name.to_string(),
            };
            let key = Key {
                name,
                thread: nvtx.global_tid.get(i).copied().unwrap_or(0),
                dims: text(&nvtx.input_shapes, i),
                types: text(&nvtx.input_types, i),
                strides: text(&nvtx.input_strides, i),
                concrete: text(&nvtx.concrete_inputs, i),
                model: call.model,
            };
            Some((
                key,
                nvtx.spans.start_ns[i],
                EventRef::new(EventTable::Nvtx, i),
            ))
        }
        (None, Some(c)) => {
            let api = &trace.api_calls;
            let work = call.synthetic_of.as_deref().unwrap_or("");
            let key = Key {
                name: format!("{}->{work} (Synthetic Op)", trace.str(api.spans.name[c])),
                thread: api.global_tid.get(c).copied().unwrap_or(0),
                dims: StringTable::EMPTY,
                types: StringTable::EMPTY,
                strides: StringTable::EMPTY,
                concrete: StringTable::EMPTY,
                model: None,
            };
            Some((
                key,
                api.spans.start_ns[c],
                EventRef::new(EventTable::ApiCalls, c),
            ))
        }
        _ => None,
    }
}

fn parsed_arg<'c>(
    trace: &Trace,
    id: StrId,
    cache: &'c mut HashMap<StrId, Option<ArgValue>>,
) -> &'c Option<ArgValue> {
    cache.entry(id).or_insert_with(|| {
        (id != StringTable::EMPTY)
            .then(|| args::parse(trace.str(id)))
            .flatten()
    })
}

/// The model's work for a call; `None` where the model cannot read its arguments.
fn model_work(
    trace: &Trace,
    call: &CollectedCall,
    kind: ModelKind,
    cache: &mut HashMap<StrId, Option<ArgValue>>,
) -> Option<Work> {
    let i = call.range?;
    let nvtx = &trace.nvtx;
    let id = |v: &Vec<StrId>| v.get(i).copied().unwrap_or(StringTable::EMPTY);
    let dims = parsed_arg(trace, id(&nvtx.input_shapes), cache).clone();
    let types = parsed_arg(trace, id(&nvtx.input_types), cache).clone();
    let concrete = parsed_arg(trace, id(&nvtx.concrete_inputs), cache).clone();
    let items = |v: &Option<ArgValue>| v.as_ref().map(|v| v.items().to_vec()).unwrap_or_default();
    let (dims, types, concrete) = (items(&dims), items(&types), items(&concrete));
    evaluate(
        kind,
        &CallArgs {
            dims: &dims,
            types: &types,
            concrete: &concrete,
        },
    )
    .ok()
}

fn new_row(
    trace: &Trace,
    call: &CollectedCall,
    key: &Key,
    work: Option<&Work>,
    peaks: &peaks::GpuPeaks,
) -> OpEfficiency {
    let tuple = |id: StrId| {
        if id == StringTable::EMPTY {
            return String::new();
        }
        match args::parse(trace.str(id)) {
            Some(v) => v.python_tuple(),
            None => trace.str(id).to_string(),
        }
    };
    let (gflops, bytes) = match work {
        Some(w) => (Some(w.flops / 1e9), w.bytes),
        None => (None, None),
    };
    let unit = work.map(|w| w.unit);
    let dtype = work.and_then(|w| w.dtype.clone());
    let tf32 = call
        .gpu_work
        .iter()
        .any(|&w| gpu_work_name(trace, w).contains("tf32"));
    let peak = match (unit, dtype.as_deref()) {
        (Some(unit), Some(dtype)) => peaks.peak(unit, dtype, tf32),
        _ => None,
    };
    OpEfficiency {
        name: key.name.clone(),
        category: category(trace, call),
        input_dims: tuple(key.dims),
        input_types: tuple(key.types),
        thread: key.thread,
        count: 0,
        kernel_time_sum_us: 0.0,
        kernel_time_mean_us: 0.0,
        gflops,
        data_moved_mb: bytes.map(|b| b / (1024.0 * 1024.0)),
        flops_per_byte: match (work, bytes) {
            (Some(w), Some(b)) if b > 0.0 => Some(w.flops / b),
            _ => None,
        },
        tflops_per_s: None,
        tb_per_s: None,
        unit,
        dtype,
        peak,
        pct_of_roofline: None,
        calls: Vec::new(),
        gpu_work: Vec::new(),
    }
}

/// Operators TraceLens files under a category without a model (`CATEGORY_ONLY_OP_MAPPING`).
const CATEGORY_ONLY: [(&str, &str); 5] = [
    ("aten::miopen_convolution", "CONV_fwd"),
    ("aten::cudnn_convolution", "CONV_fwd"),
    ("aten::_efficient_attention_forward", "SDPA_fwd"),
    ("aten::_efficient_attention_backward", "SDPA_bwd"),
    ("FlashAttnFuncBackward", "SDPA_bwd"),
];

/// TraceLens' `categorize_torch_op`: the model's category, a category-only name, `triton…`,
/// `record_param_comms`, then the first kernel's name (`void at::native…elementwise…`).
fn category(trace: &Trace, call: &CollectedCall) -> String {
    if let Some(model) = call.model {
        return model.category().to_string();
    }
    if call.synthetic_of.is_none()
        && let Some(i) = call.range
    {
        let name = op_name(trace, i);
        if let Some((_, c)) = CATEGORY_ONLY.iter().find(|(n, _)| *n == name) {
            return c.to_string();
        }
        if name.starts_with("triton") {
            return "triton".to_string();
        }
        if name.starts_with("record_param_comms") {
            return "record_param_comms".to_string();
        }
    }
    let first = call
        .gpu_work
        .iter()
        .min_by_key(|&&w| launch_start(trace, w))
        .map(|&w| gpu_work_name(trace, w));
    if let Some(kernel) = first.filter(|k| k.starts_with("void at::native")) {
        for needle in ["elementwise", "reduce", "multi_tensor_apply"] {
            if kernel.contains(needle) {
                return needle.to_string();
            }
        }
    }
    "other".to_string()
}

/// When the call that launched `work` started (TraceLens lists kernels in launch order).
fn launch_start(trace: &Trace, work: GpuOpRef) -> i64 {
    crate::analysis::gap_causes::launch_call(trace, work)
        .map_or(i64::MAX, |c| trace.api_calls.spans.start_ns[c])
}

/// Merged busy time of GPU work, ns.
pub fn busy_ns(trace: &Trace, work: &[GpuOpRef]) -> i64 {
    let spans: Vec<(i64, i64)> = work
        .iter()
        .filter_map(|w| {
            let s = match w.kind {
                GpuOpKind::Kernel => &trace.kernels.spans,
                GpuOpKind::Memcpy => &trace.memcpys.spans,
                GpuOpKind::Memset => &trace.memsets.spans,
                GpuOpKind::Graph => &trace.graphs.spans,
            };
            Some((*s.start_ns.get(w.index)?, *s.end_ns.get(w.index)?))
        })
        .collect();
    intervals::total_ns(&intervals::union(spans))
}
