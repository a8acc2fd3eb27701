//! The report's configuration block: what the trace is (format, the profiler that wrote it,
//! GPUs), what the capture recorded (from the tables the export holds, and a PyTorch trace's own
//! metadata), its span, and which range and exclusion the figures cover.

use serde::Serialize;

use crate::analysis::{TimeRange, WarmupExclusion};
use crate::trace::{Trace, TraceFormat};

/// One run's configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    pub trace: String,
    /// "Nsight Systems export" or "PyTorch profiler trace".
    pub format: &'static str,
    /// "Nsight Systems 2023.4.4", "PyTorch profiler (schema 1)", or "unknown".
    pub profiler: String,
    pub gpus: Vec<String>,
    /// What the capture recorded, as found in the export ("CUDA API calls: 2,781", …).
    pub captured: Vec<String>,
    /// The capture options the file records: an nsys export's `META_DATA_CAPTURE` (2023.x on),
    /// a PyTorch trace's metadata and versions.
    pub options: Vec<(String, String)>,
    pub first_ns: i64,
    pub last_ns: i64,
    pub span_ns: i64,
    /// The range the figures cover (trace time), `None` for an open end.
    pub range_start_ns: Option<i64>,
    pub range_end_ns: Option<i64>,
    /// The NVTX ranges excluded (warm-up), `None` when nothing is excluded.
    pub excluded_ranges: Option<usize>,
}

/// `n` with thousands separators.
fn count(n: usize) -> String {
    crate::export::text_table::group_thousands(&n.to_string())
}

impl Config {
    pub fn of(trace: &Trace, range: TimeRange, exclusion: Option<&WarmupExclusion>) -> Config {
        let t = trace;
        let profiler = match (t.format, &t.exporter_version, &t.torch) {
            (TraceFormat::NsysSqlite, Some(v), _) => format!("Nsight Systems {v}"),
            (TraceFormat::NsysSqlite, None, _) => {
                "Nsight Systems (version not recorded in the export)".to_string()
            }
            (TraceFormat::Kineto, _, Some(info)) => match info.schema_version {
                Some(s) => format!("PyTorch profiler (trace schema {s})"),
                None => "PyTorch profiler".to_string(),
            },
            (TraceFormat::Kineto, _, None) => "PyTorch profiler".to_string(),
            (TraceFormat::NsightCompute, _, _) => "Nsight Compute".to_string(),
            (TraceFormat::XPlane, _, _) => match t.xla.as_ref().and_then(|x| {
                x.metadata
                    .iter()
                    .find(|(k, _)| k == "jax_version")
                    .map(|(_, v)| v.clone())
            }) {
                Some(v) => format!("JAX profiler (XPlane, JAX {v})"),
                None => "XLA profiler (XPlane)".to_string(),
            },
        };
        let mut captured = Vec::new();
        let mut add = |what: &str, n: usize| {
            if n > 0 {
                captured.push(format!("{what}: {}", count(n)));
            }
        };
        add("CUDA API calls", t.api_calls.spans.len());
        add("Kernels", t.kernels.spans.len());
        add("Memory copies", t.memcpys.spans.len());
        add("Memsets", t.memsets.spans.len());
        add(
            "CUDA graph executions (graph-level trace)",
            t.graphs.spans.len(),
        );
        add(
            "CUDA graph launches (node-level trace)",
            t.graph_launches.spans.len(),
        );
        add("NVTX / annotation ranges", t.nvtx.spans.len());
        add("OS runtime calls", t.osrt.spans.len());
        add("GPU metric samples", t.gpu_metrics.sample_count());
        add("CPU samples", t.cpu_samples.len());
        add("Synchronization events", t.syncs.spans.len());
        let options = match &t.torch {
            Some(i) => {
                let mut o = i.metadata.clone();
                if let (Some(r), Some(w)) = (i.rank, i.world_size) {
                    o.push(("rank".into(), format!("{r} of {w}")));
                }
                o
            }
            None => crate::load::nsys_sqlite::capture_options::capture_options(&t.path),
        };
        Config {
            trace: t.path.display().to_string(),
            format: t.format.label(),
            profiler,
            gpus: t.gpus.iter().map(|g| t.gpu_title(g.device)).collect(),
            captured,
            options,
            first_ns: t.first_ns,
            last_ns: t.last_ns,
            span_ns: t.last_ns - t.first_ns,
            range_start_ns: range.start_ns,
            range_end_ns: range.end_ns,
            excluded_ranges: exclusion.map(|e| e.ranges.len()),
        }
    }
}
