//! Communication/compute overlap per GPU (issue #10, part 3): how much of the time a GPU spends
//! communicating is hidden under compute, and where communication runs exposed.
//!
//! Communication is every kernel whose demangled name matches a regex (default `nccl`, always
//! case-insensitive, see [`comm_regex`]) plus every peer-to-peer memcpy (copyKind 10); compute is
//! every other kernel. Other memcpys and memsets are neither.
//!
//! Time semantics are those of [`super::overlap`] (copy/compute overlap): for one device, inside
//! its measured time (the active span `[first start, last end)` of *all* its operations starting
//! in the filter's range, less the time warm-up exclusion cuts out; see [`super::gaps`]):
//! - communication time `C` = |union of communication ops|, compute time `K` = |union of compute
//!   kernels| (unions over all streams of the device);
//! - overlap = |C ∩ K|; exposed communication = `C` − overlap, as intervals `C \ K`;
//! - share hidden = overlap / `C` (percent).

use regex::{Regex, RegexBuilder};

use super::filter::Filter;
use super::gaps::{self, GpuOp, GpuOpKind};
use super::intervals::{self, Interval};
use crate::trace::{CopyKind, StrId, Trace};

/// The communication pattern when none is given: NCCL (`ncclKernel_…`, `ncclDevKernel_…`) and
/// RCCL, the custom all-reduce of vLLM and SGLang (`cross_device_reduce_1stage`, …) and the
/// collectives named in snake or camel case (`one_shot_all_reduce`, `oneShotAllReduceKernel`,
/// `all_gather…`, `ReduceScatter…`, `AllToAll…`). The snake-case words must start the name or
/// follow a non-letter (case-sensitively), so that `small_reduce_kernel` stays compute.
pub const DEFAULT_COMM_PATTERN: &str = "nccl|rccl|cross_device_reduce|(?-i:(?:^|[^a-z])all_?(?:reduce|gather|to_?all)|All_?(?:Reduce|Gather|ToAll)|reduce_?scatter|ReduceScatter)";

/// `pattern` compiled case-insensitively (NCCL kernels are `ncclKernel_…`, `ncclDevKernel_…`).
pub fn comm_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).case_insensitive(true).build()
}

/// The default pattern compiled.
pub fn default_comm_regex() -> Regex {
    match comm_regex(DEFAULT_COMM_PATTERN) {
        Ok(regex) => regex,
        // A constant pattern of plain letters: this arm is never taken.
        Err(e) => unreachable!("'{DEFAULT_COMM_PATTERN}' is a valid regex: {e}"),
    }
}

/// Which kernel names are communication: per string id, decided once per distinct kernel name.
#[derive(Debug, Clone, Default)]
pub struct CommNames {
    /// Indexed by [`StrId`]; `true` for a kernel name the regex matches.
    is_comm: Vec<bool>,
    /// The matching kernel name ids, ascending.
    ids: Vec<StrId>,
}

impl CommNames {
    /// Classifies every distinct kernel name of `trace` (one regex match per distinct name).
    pub fn new(trace: &Trace, regex: &Regex) -> Self {
        let n = trace.strings.len();
        let (mut seen, mut is_comm) = (vec![false; n], vec![false; n]);
        let mut ids = Vec::new();
        for &name in &trace.kernels.spans.name {
            let i = name as usize;
            if i < n && !seen[i] {
                seen[i] = true;
                if regex.is_match(trace.str(name)) {
                    is_comm[i] = true;
                    ids.push(name);
                }
            }
        }
        ids.sort_unstable();
        Self { is_comm, ids }
    }

    /// Is a kernel of this name communication?
    pub fn is_comm(&self, name: StrId) -> bool {
        self.is_comm.get(name as usize).copied().unwrap_or(false)
    }

    /// The kernel name ids that are communication, ascending.
    pub fn ids(&self) -> &[StrId] {
        &self.ids
    }
}

/// Communication/compute overlap of one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommComputeOverlap {
    /// CUDA device id.
    pub device: u32,
    /// Active span within the range; `None` when nothing ran in the range.
    pub window: Option<Interval>,
    /// Window length less excluded time.
    pub measured_ns: i64,
    /// Union of communication ops.
    pub comm_ns: i64,
    /// Union of compute kernels.
    pub compute_ns: i64,
    /// Communication union ∩ compute union.
    pub overlap_ns: i64,
    /// Where communication runs with no compute: communication union less compute union.
    pub exposed: Vec<Interval>,
}

impl CommComputeOverlap {
    /// Communication time not hidden under compute.
    pub fn exposed_ns(&self) -> i64 {
        self.comm_ns - self.overlap_ns
    }

    /// Overlap over communication time, in percent; `None` when no communication ran.
    pub fn hidden_percent(&self) -> Option<f64> {
        (self.comm_ns > 0).then(|| self.overlap_ns as f64 * 100.0 / self.comm_ns as f64)
    }
}

/// Is this kept op communication (`Some(true)`), compute (`Some(false)`) or neither?
fn classify(trace: &Trace, names: &CommNames, op: &GpuOp) -> Option<bool> {
    let i = op.op.index;
    match op.op.kind {
        GpuOpKind::Kernel => trace.kernels.spans.name.get(i).map(|&n| names.is_comm(n)),
        GpuOpKind::Memcpy => {
            (trace.memcpys.copy_kind.get(i) == Some(&CopyKind::PEER_TO_PEER)).then_some(true)
        }
        GpuOpKind::Memset => None,
        // A graph's kernels are not known one by one: counted as compute.
        GpuOpKind::Graph => Some(false),
    }
}

/// Communication/compute overlap of every device that ran anything, ascending by device (devices
/// without communication have `comm_ns == 0`).
pub fn comm_compute_overlap(
    trace: &Trace,
    filter: &Filter,
    regex: &Regex,
) -> Vec<CommComputeOverlap> {
    comm_compute_overlap_with(trace, filter, &CommNames::new(trace, regex))
}

/// [`comm_compute_overlap`] with the kernel names already classified.
pub fn comm_compute_overlap_with(
    trace: &Trace,
    filter: &Filter,
    names: &CommNames,
) -> Vec<CommComputeOverlap> {
    trace
        .devices()
        .into_iter()
        .map(|device| {
            let measured =
                gaps::measured_time(trace, filter, device, None, gaps::MeasureOver::ActiveSpan);
            let (mut comm, mut compute) = (Vec::new(), Vec::new());
            for op in &measured.kept {
                match classify(trace, names, op) {
                    Some(true) => comm.push((op.start_ns, op.end_ns)),
                    Some(false) => compute.push((op.start_ns, op.end_ns)),
                    None => {}
                }
            }
            let comm = intervals::intersect(&intervals::union(comm), &measured.region);
            let compute = intervals::intersect(&intervals::union(compute), &measured.region);
            let exposed = intervals::subtract(&comm, &compute);
            let comm_ns = intervals::total_ns(&comm);
            CommComputeOverlap {
                device,
                window: measured.window,
                measured_ns: measured.region_ns(),
                comm_ns,
                compute_ns: intervals::total_ns(&compute),
                overlap_ns: comm_ns - intervals::total_ns(&exposed),
                exposed,
            }
        })
        .collect()
}

/// The whole trace's communication under one pattern, what the timeline draws: which kernel
/// names are communication (coloured as such) and each device's exposed intervals.
#[derive(Debug, Clone, Default)]
pub struct CommTimeline {
    /// The pattern it was computed for, as typed.
    pub pattern: String,
    /// Kernel name ids that are communication, ascending.
    pub comm_kernel_names: Vec<StrId>,
    /// Every device that ran anything, over the whole trace (no range, no exclusion).
    pub devices: Vec<CommComputeOverlap>,
}

impl CommTimeline {
    /// Computes it; costs one pass over the GPU operations (call it off the UI thread).
    pub fn new(trace: &Trace, pattern: &str, regex: &Regex) -> Self {
        let names = CommNames::new(trace, regex);
        Self {
            pattern: pattern.to_string(),
            devices: comm_compute_overlap_with(trace, &Filter::all(), &names),
            comm_kernel_names: names.ids,
        }
    }

    /// The device's analysis when it communicates at all.
    pub fn device(&self, device: u32) -> Option<&CommComputeOverlap> {
        self.devices
            .iter()
            .find(|d| d.device == device && d.comm_ns > 0)
    }
}

/// Does `trace` hold any communication of positive length under `regex` (cheap when no string of
/// the trace matches: the kernels are scanned only then)?
pub fn has_comm(trace: &Trace, regex: &Regex) -> bool {
    let m = &trace.memcpys;
    let p2p = (0..m.spans.len()).any(|i| {
        m.copy_kind[i] == CopyKind::PEER_TO_PEER && m.spans.end_ns[i] > m.spans.start_ns[i]
    });
    if p2p {
        return true;
    }
    let any_string = (0..trace.strings.len() as StrId).any(|id| regex.is_match(trace.str(id)));
    if !any_string {
        return false;
    }
    let names = CommNames::new(trace, regex);
    let k = &trace.kernels.spans;
    (0..k.len()).any(|i| names.is_comm(k.name[i]) && k.end_ns[i] > k.start_ns[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{StreamKey, StreamTrack};

    /// A trace of one device, one stream: kernels `(start, end, name)` and P2P copies.
    fn trace(kernels: &[(i64, i64, &str)], p2p: &[(i64, i64)]) -> Trace {
        let mut t = Trace {
            strings: crate::trace::StringTable::new(),
            ..Default::default()
        };
        for &(s, e, name) in kernels {
            let id = t.strings.intern(name);
            t.kernels.spans.push(s, e, id);
        }
        let copy = t.strings.intern("[CUDA memcpy Peer-to-Peer]");
        for &(s, e) in p2p {
            t.memcpys.spans.push(s, e, copy);
            t.memcpys.copy_kind.push(CopyKind::PEER_TO_PEER);
        }
        let mut track = StreamTrack {
            key: StreamKey::default(),
            ..Default::default()
        };
        track.kernels.range = 0..kernels.len();
        track.memcpys.range = 0..p2p.len();
        t.streams.push(track);
        t
    }

    #[test]
    fn comm_hidden_and_exposed_by_hand() {
        // Compute [0,10) and [20,30); NCCL [5,25) (any case); P2P [28,40).
        let t = trace(
            &[
                (0, 10, "gemm"),
                (20, 30, "gemm"),
                (5, 25, "NCCLKernel_AllReduce"),
            ],
            &[(28, 40)],
        );
        let r = comm_compute_overlap(&t, &Filter::all(), &default_comm_regex());
        assert_eq!(r.len(), 1);
        let d = &r[0];
        // Comm union [5,25) ∪ [28,40) = 32; compute union 20; overlap [5,10) [20,25) [28,30) = 12.
        assert_eq!((d.comm_ns, d.compute_ns, d.overlap_ns), (32, 20, 12));
        assert_eq!(d.exposed, vec![(10, 20), (30, 40)]);
        assert_eq!(d.exposed_ns(), 20);
        assert_eq!(d.hidden_percent(), Some(37.5));
        assert!(has_comm(&t, &default_comm_regex()));
    }

    #[test]
    fn no_comm_means_nothing_hidden_and_no_row_data() {
        let t = trace(&[(0, 10, "gemm"), (5, 8, "relu")], &[]);
        let regex = default_comm_regex();
        let d = &comm_compute_overlap(&t, &Filter::all(), &regex)[0];
        assert_eq!((d.comm_ns, d.compute_ns, d.overlap_ns), (0, 10, 0));
        assert_eq!(d.hidden_percent(), None);
        assert!(d.exposed.is_empty());
        assert!(!has_comm(&t, &regex));
        // Another regex makes `relu` communication, fully hidden under `gemm`.
        let relu = comm_regex("RELU").unwrap_or_else(|e| panic!("{e}"));
        let d = &comm_compute_overlap(&t, &Filter::all(), &relu)[0];
        assert_eq!((d.comm_ns, d.compute_ns, d.overlap_ns), (3, 10, 3));
        assert_eq!(d.hidden_percent(), Some(100.0));
        assert!(comm_regex("nccl(").is_err());
    }

    #[test]
    fn the_default_pattern_names_nccl_and_custom_all_reduce_but_not_compute() {
        let regex = default_comm_regex();
        for comm in [
            "ncclDevKernel_AllReduce_Sum_f16_RING_LL",
            "ncclKernel_AllGather_RING_LL_Sum_int8_t",
            "void vllm::cross_device_reduce_1stage<__half, 8>(vllm::RankData*, float)",
            "void sglang::cross_device_reduce_2stage<float, 2>(sglang::RankData*)",
            "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 4>(float**)",
            "multimem_all_reduce_kernel",
            "tensorrt_llm::kernels::oneShotAllReduceKernel",
            "allgather_kernel",
            "reduce_scatter_kernel",
            "AllToAllDispatch",
        ] {
            assert!(regex.is_match(comm), "{comm}");
        }
        for compute in [
            "small_reduce_kernel",
            "small_gather",
            "void at::native::reduce_kernel<512, 1>",
            "cub::DeviceReduceSingleTileKernel",
            "vectorized_gather_kernel",
            "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn",
            "softmax_warp_forward",
        ] {
            assert!(!regex.is_match(compute), "{compute}");
        }
    }
}
