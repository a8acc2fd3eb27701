//! The rows of the timeline and the lookups the window needs around them, built once per trace.
//!
//! Order follows nsys-ui's default: per GPU a header (which doubles as the "all streams" summary
//! row) and one row per CUDA stream; then per process a header and its threads
//! ([`super::thread_rows`]); GPU memory counters last. Groups (GPU, process, thread) can be collapsed; the collapsed set lives in the view.

use std::collections::HashMap;
use std::sync::Arc;

use egui::Color32;

use crate::analysis::comm_overlap::CommTimeline;
use crate::timeline::palette;
use crate::trace::{NO_INDEX, Spans, StrId, Trace};

/// Which kind of event table an [`EventRef`] points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    Kernel,
    Memcpy,
    Memset,
    /// A CUDA graph execution traced as a whole (`trace.graphs`).
    Graph,
    /// A CUDA graph launch traced node by node (`trace.graph_launches`): its nodes grouped.
    GraphLaunch,
    ApiCall,
    Nvtx,
    Osrt,
    /// A CPU page fault on unified memory (`trace.unified_memory.cpu_page_faults`).
    CpuPageFault,
    /// A GPU page-fault group on unified memory (`trace.unified_memory.gpu_page_faults`).
    GpuPageFault,
}

impl EventKind {
    pub fn label(self) -> &'static str {
        match self {
            EventKind::Kernel => "Kernel",
            EventKind::Memcpy => "Memcpy",
            EventKind::Memset => "Memset",
            EventKind::Graph => "CUDA graph",
            EventKind::GraphLaunch => "CUDA graph launch",
            EventKind::ApiCall => "CUDA API",
            EventKind::Nvtx => "NVTX",
            EventKind::Osrt => "OS runtime",
            EventKind::CpuPageFault => "CPU page fault",
            EventKind::GpuPageFault => "GPU page fault",
        }
    }
}

/// One event of the trace: its table and its index in that table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventRef {
    pub kind: EventKind,
    pub index: u32,
}

impl EventRef {
    pub fn new(kind: EventKind, index: usize) -> Self {
        Self {
            kind,
            index: index as u32,
        }
    }

    pub fn spans(self, trace: &Trace) -> &Spans {
        spans_of(trace, self.kind)
    }

    pub fn start_ns(self, trace: &Trace) -> i64 {
        self.spans(trace).start_ns[self.index as usize]
    }

    pub fn end_ns(self, trace: &Trace) -> i64 {
        self.spans(trace).end_ns[self.index as usize]
    }

    pub fn name(self, trace: &Trace) -> &str {
        trace.str(self.spans(trace).name[self.index as usize])
    }
}

/// The table of a kind of event.
pub fn spans_of(trace: &Trace, kind: EventKind) -> &Spans {
    match kind {
        EventKind::Kernel => &trace.kernels.spans,
        EventKind::Memcpy => &trace.memcpys.spans,
        EventKind::Memset => &trace.memsets.spans,
        EventKind::Graph => &trace.graphs.spans,
        EventKind::GraphLaunch => &trace.graph_launches.spans,
        EventKind::ApiCall => &trace.api_calls.spans,
        EventKind::Nvtx => &trace.nvtx.spans,
        EventKind::Osrt => &trace.osrt.spans,
        EventKind::CpuPageFault => &trace.unified_memory.cpu_page_faults.spans,
        EventKind::GpuPageFault => &trace.unified_memory.gpu_page_faults.spans,
    }
}

/// A collapsible group of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupId {
    Gpu(u32),
    Process(u32),
    /// Index into `trace.threads`.
    Thread(usize),
    Memory,
    /// The GPU metric counters of a device (collapsed at first).
    GpuMetrics(u32),
    /// The deeper levels of one kind of range on a thread (Python frames), under the row of
    /// `nvtx_levels[first_level]`.
    Levels {
        thread: usize,
        first_level: usize,
    },
    /// The threads of a process that launch no GPU work and mark no ranges.
    QuietThreads(u32),
}

/// What a row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// Header of a GPU; its body is every stream of the device merged ("all streams").
    GpuSummary {
        device: u32,
    },
    /// Kernels, memcpys and memsets of `trace.streams[stream]`.
    Stream {
        stream: usize,
    },
    /// Where the GPU communicates with no compute running (from [`TimelineModel::comm`]); only
    /// for GPUs that communicate.
    ExposedComm {
        device: u32,
    },
    ProcessHeader {
        pid: u32,
    },
    /// Header of `trace.threads[thread]`; its body is the thread's CUDA API calls.
    ThreadHeader {
        thread: usize,
    },
    Nvtx {
        thread: usize,
        depth: usize,
    },
    ApiCalls {
        thread: usize,
    },
    Osrt {
        thread: usize,
    },
    /// Running intervals and CPU samples of `trace.threads[thread]` ([`super::cpu_row`]).
    ThreadCpu {
        thread: usize,
    },
    MemoryHeader,
    /// `trace.memory_usage[track]` as an area chart.
    Memory {
        track: usize,
    },
    /// Header of a GPU's metric counters ("Metrics"), under its GPU.
    MetricsHeader {
        device: u32,
    },
    /// `trace.gpu_metrics.series[series]` as a min/max line chart ([`super::counters`]).
    GpuMetric {
        series: usize,
    },
    /// CPU page faults of a process ([`super::unified_memory`]).
    UnifiedMemoryCpu {
        pid: u32,
    },
    /// GPU page faults of a device ([`super::unified_memory`]).
    UnifiedMemoryGpu {
        device: u32,
    },
    /// Header of a process's quiet threads ([`super::thread_rows`]); its body is empty.
    QuietThreads {
        pid: u32,
    },
    /// A lane of a query result pinned as a track ([`super::sql_tracks`]).
    SqlTrack {
        track: usize,
        lane: usize,
    },
}

/// One row of the timeline.
#[derive(Debug, Clone)]
pub struct Row {
    pub kind: RowKind,
    pub title: String,
    /// Indentation level of the title (0 for top-level headers).
    pub indent: u8,
    /// The group this row opens/closes, for headers.
    pub toggles: Option<GroupId>,
    /// Groups that hide this row when any of them is collapsed.
    pub hidden_by: Vec<GroupId>,
    pub height_px: f32,
}

impl Row {
    pub fn is_header(&self) -> bool {
        self.toggles.is_some()
    }
}

pub const EVENT_ROW_HEIGHT: f32 = 20.0;
pub const MEMORY_ROW_HEIGHT: f32 = 44.0;

/// Rows plus the per-trace lookups the painter and the panels use. Built once per trace.
#[derive(Debug, Clone, Default)]
pub struct TimelineModel {
    pub rows: Vec<Row>,
    /// Colour of each string id when used as a kernel name (a stable hash of the text).
    pub kernel_colors: Vec<Color32>,
    /// Per string id: whether an API call of that name waits for the GPU (drawn in red).
    pub sync_names: Vec<bool>,
    /// Largest value of each `trace.memory_usage` track, for the chart's scale.
    pub memory_peak_bytes: Vec<i64>,
    /// For each API call that launched GPU work, the kernels/memcpys/memsets it launched.
    pub launched: HashMap<u32, Vec<EventRef>>,
    thread_of_tid: HashMap<i64, usize>,
    row_of: HashMap<RowKind, usize>,
    /// Groups that start collapsed.
    pub initially_collapsed: Vec<GroupId>,
    /// Communication under the Overlap tab's pattern, once computed (see [`Self::set_comm`]).
    pub comm: Option<Arc<CommTimeline>>,
    /// The page faults of each unified-memory row, sorted for drawing.
    pub unified_memory: super::unified_memory::UnifiedMemoryLanes,
    /// Query results pinned as tracks, drawn first (see [`Self::set_sql_tracks`]).
    pub sql_tracks: Vec<Arc<crate::sql::track::SqlTrack>>,
}

impl TimelineModel {
    pub fn new(trace: &Trace) -> Self {
        let mut rows = Vec::new();
        let mut initially_collapsed = Vec::new();
        let unified_memory = super::unified_memory::UnifiedMemoryLanes::new(trace);
        for device in super::counters::gpu_row_devices(trace) {
            rows.push(Row {
                kind: RowKind::GpuSummary { device },
                title: trace.gpu_title(device),
                indent: 0,
                toggles: Some(GroupId::Gpu(device)),
                hidden_by: Vec::new(),
                height_px: EVENT_ROW_HEIGHT,
            });
            for (i, s) in trace.streams.iter().enumerate() {
                if s.key.device != device || s.op_count() == 0 {
                    continue;
                }
                let name = s.name.map(|n| trace.str(n)).filter(|n| !n.is_empty());
                let title = match name {
                    Some(n) => format!("Stream {} · {n}", s.key.stream),
                    None => format!("Stream {}", s.key.stream),
                };
                rows.push(Row {
                    kind: RowKind::Stream { stream: i },
                    title,
                    indent: 1,
                    toggles: None,
                    hidden_by: vec![GroupId::Gpu(device)],
                    height_px: EVENT_ROW_HEIGHT,
                });
            }
            super::thread_rows::push_gpu_lane_rows(
                trace,
                device,
                &mut rows,
                &mut initially_collapsed,
            );
            rows.extend(unified_memory.gpu_row(device));
            super::counters::push_metric_rows(trace, device, &mut rows, &mut initially_collapsed);
        }
        let mut pids: Vec<u32> = trace
            .threads
            .iter()
            .filter(|t| t.gpu_lane.is_none())
            .map(|t| t.pid)
            .collect();
        pids.extend(unified_memory.cpu_pids());
        pids.sort_unstable();
        pids.dedup();
        let mut thread_of_tid = HashMap::new();
        for pid in pids {
            // nsys records the executable's full path; its file name is what people recognise.
            let full_name = trace.process_name(pid);
            let process_name = full_name.rsplit('/').next().unwrap_or(full_name);
            rows.push(Row {
                kind: RowKind::ProcessHeader { pid },
                title: if process_name.is_empty() {
                    format!("Process {pid}")
                } else {
                    format!("{process_name} [{pid}]")
                },
                indent: 0,
                toggles: Some(GroupId::Process(pid)),
                hidden_by: Vec::new(),
                height_px: EVENT_ROW_HEIGHT,
            });
            rows.extend(unified_memory.process_row(pid));
            super::thread_rows::push_thread_rows(
                trace,
                pid,
                &mut rows,
                &mut initially_collapsed,
                &mut thread_of_tid,
            );
        }
        for t in trace
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| t.gpu_lane.is_some())
        {
            thread_of_tid.insert(t.1.global_tid, t.0);
        }
        if !trace.memory_usage.is_empty() {
            rows.push(Row {
                kind: RowKind::MemoryHeader,
                title: "GPU memory in use".to_string(),
                indent: 0,
                toggles: Some(GroupId::Memory),
                hidden_by: Vec::new(),
                height_px: EVENT_ROW_HEIGHT,
            });
            for (i, m) in trace.memory_usage.iter().enumerate() {
                rows.push(Row {
                    kind: RowKind::Memory { track: i },
                    title: format!("GPU {} · pid {}", m.device, m.pid),
                    indent: 1,
                    toggles: None,
                    hidden_by: vec![GroupId::Memory],
                    height_px: MEMORY_ROW_HEIGHT,
                });
            }
        }
        let memory_peak_bytes: Vec<i64> = trace
            .memory_usage
            .iter()
            .map(|m| m.samples.iter().map(|s| s.bytes_in_use).max().unwrap_or(0))
            .collect();
        for row in &mut rows {
            if let RowKind::Memory { track } = row.kind {
                let peak = memory_peak_bytes[track] as f64 / (1u64 << 20) as f64;
                row.title = format!("{} · peak {peak:.0} MiB", row.title);
            }
        }
        let row_of = row_lookup(&rows);

        let mut kernel_colors = vec![Color32::GRAY; trace.strings.len()];
        let mut seen = vec![false; trace.strings.len()];
        for &name in &trace.kernels.spans.name {
            let n = name as usize;
            if n < seen.len() && !seen[n] {
                seen[n] = true;
                kernel_colors[n] = palette::kernel_color(trace.str(name));
            }
        }

        let mut sync_names = vec![false; trace.strings.len()];
        for &name in &trace.api_calls.spans.name {
            if let Some(flag) = sync_names.get_mut(name as usize) {
                *flag = trace.str(name).contains("ynchronize");
            }
        }

        let mut launched: HashMap<u32, Vec<EventRef>> = HashMap::new();
        let mut link = |calls: &[u32], kind: EventKind| {
            for (i, &call) in calls.iter().enumerate() {
                if call != NO_INDEX {
                    launched
                        .entry(call)
                        .or_default()
                        .push(EventRef::new(kind, i));
                }
            }
        };
        // A node-level graph launch first: its nodes follow it in the call's list.
        link(&trace.graph_launches.api_call, EventKind::GraphLaunch);
        link(&trace.kernels.api_call, EventKind::Kernel);
        link(&trace.memcpys.api_call, EventKind::Memcpy);
        link(&trace.memsets.api_call, EventKind::Memset);
        link(&trace.graphs.api_call, EventKind::Graph);

        Self {
            rows,
            kernel_colors,
            sync_names,
            memory_peak_bytes,
            launched,
            thread_of_tid,
            row_of,
            initially_collapsed,
            comm: None,
            unified_memory,
            sql_tracks: Vec::new(),
        }
    }

    /// Shows `tracks` (pinned query results) as the first rows, in place of the ones before.
    pub fn set_sql_tracks(&mut self, tracks: Vec<Arc<crate::sql::track::SqlTrack>>) {
        self.rows
            .retain(|r| !matches!(r.kind, RowKind::SqlTrack { .. }));
        let mut rows = super::sql_tracks::rows_of(&tracks);
        rows.append(&mut self.rows);
        self.rows = rows;
        self.row_of = row_lookup(&self.rows);
        self.sql_tracks = tracks;
    }

    /// Shows `comm` (computed off the UI thread for this trace): communication kernels take the
    /// communication colours, and each GPU that communicates gets an exposed-communication row
    /// first under its header. Costs the distinct kernel names and the rows, not the events.
    pub fn set_comm(&mut self, trace: &Trace, comm: Arc<CommTimeline>) {
        if let Some(old) = &self.comm {
            for &name in &old.comm_kernel_names {
                if let Some(c) = self.kernel_colors.get_mut(name as usize) {
                    *c = palette::kernel_color(trace.str(name));
                }
            }
        }
        for &name in &comm.comm_kernel_names {
            if let Some(c) = self.kernel_colors.get_mut(name as usize) {
                *c = palette::comm_kernel_color(trace.str(name));
            }
        }
        self.rows
            .retain(|r| !matches!(r.kind, RowKind::ExposedComm { .. }));
        for d in comm.devices.iter().filter(|d| d.comm_ns > 0) {
            let Some(header) = self
                .rows
                .iter()
                .position(|r| r.kind == RowKind::GpuSummary { device: d.device })
            else {
                continue;
            };
            self.rows.insert(
                header + 1,
                Row {
                    kind: RowKind::ExposedComm { device: d.device },
                    title: "Exposed communication".to_string(),
                    indent: 1,
                    toggles: None,
                    hidden_by: vec![GroupId::Gpu(d.device)],
                    height_px: EVENT_ROW_HEIGHT,
                },
            );
        }
        self.row_of = row_lookup(&self.rows);
        self.comm = Some(comm);
    }

    /// The exposed-communication intervals of a GPU, sorted and disjoint.
    pub fn exposed_comm(&self, device: u32) -> &[(i64, i64)] {
        self.comm
            .as_ref()
            .and_then(|c| c.device(device))
            .map_or(&[], |d| d.exposed.as_slice())
    }

    /// Colour of a kernel by its name id.
    pub fn kernel_color(&self, name: StrId) -> Color32 {
        self.kernel_colors
            .get(name as usize)
            .copied()
            .unwrap_or(Color32::GRAY)
    }

    /// Keeps only the rows for which `keep(index, row)` holds (`sightline render --rows`); the
    /// row lookups follow.
    pub fn retain_rows(&mut self, mut keep: impl FnMut(usize, &Row) -> bool) {
        let mut index = 0;
        self.rows.retain(|r| {
            index += 1;
            keep(index - 1, r)
        });
        self.row_of = row_lookup(&self.rows);
    }

    /// The row index of a row kind, if the trace has that row.
    pub fn row_index(&self, kind: RowKind) -> Option<usize> {
        self.row_of.get(&kind).copied()
    }

    /// Index into `trace.threads` of a `globalTid`.
    pub fn thread_of(&self, global_tid: i64) -> Option<usize> {
        self.thread_of_tid.get(&global_tid).copied()
    }

    /// The row an event is drawn in (its own row; callers fall back to the group header when the
    /// group is collapsed).
    pub fn row_of_event(&self, trace: &Trace, event: EventRef) -> Option<usize> {
        let i = event.index as usize;
        let kind = match event.kind {
            EventKind::Kernel
            | EventKind::Memcpy
            | EventKind::Memset
            | EventKind::Graph
            | EventKind::GraphLaunch => RowKind::Stream {
                stream: stream_of(trace, event)?,
            },
            EventKind::ApiCall => RowKind::ApiCalls {
                thread: self.thread_of(*trace.api_calls.global_tid.get(i)?)?,
            },
            EventKind::Nvtx => {
                let thread = self.thread_of(*trace.nvtx.global_tid.get(i)?)?;
                let depth = usize::from(*trace.nvtx.depth.get(i)?);
                RowKind::Nvtx {
                    thread,
                    depth: trace.threads[thread].level_of(trace.nvtx.kind_of(i), depth)?,
                }
            }
            EventKind::Osrt => RowKind::Osrt {
                thread: trace
                    .threads
                    .iter()
                    .position(|t| t.osrt.range.contains(&i))?,
            },
            EventKind::CpuPageFault | EventKind::GpuPageFault => {
                super::unified_memory::row_kind_of(trace, event)?
            }
        };
        self.row_index(kind)
    }

    /// The row that stands for `row` on screen: itself, or the header of its outermost collapsed
    /// group.
    pub fn shown_row(&self, row: usize, view: &super::ViewState) -> usize {
        let Some(r) = self.rows.get(row) else {
            return row;
        };
        for g in &r.hidden_by {
            if view.collapsed.contains(g) {
                let header = match *g {
                    GroupId::Gpu(device) => RowKind::GpuSummary { device },
                    GroupId::Process(pid) => RowKind::ProcessHeader { pid },
                    GroupId::Thread(thread) => RowKind::ThreadHeader { thread },
                    GroupId::Memory => RowKind::MemoryHeader,
                    GroupId::GpuMetrics(device) => RowKind::MetricsHeader { device },
                    GroupId::Levels {
                        thread,
                        first_level,
                    } => RowKind::Nvtx {
                        thread,
                        depth: first_level,
                    },
                    GroupId::QuietThreads(pid) => RowKind::QuietThreads { pid },
                };
                return self.row_index(header).unwrap_or(row);
            }
        }
        row
    }

    /// The GPU op ↔ API call partners of an event: the launching call of a GPU op, or the ops an
    /// API call launched.
    pub fn partners(&self, trace: &Trace, event: EventRef) -> Vec<EventRef> {
        let i = event.index as usize;
        let call = match event.kind {
            EventKind::Kernel => trace.kernels.api_call.get(i).copied(),
            EventKind::Memcpy => trace.memcpys.api_call.get(i).copied(),
            EventKind::Memset => trace.memsets.api_call.get(i).copied(),
            EventKind::Graph => trace.graphs.api_call.get(i).copied(),
            EventKind::GraphLaunch => trace.graph_launches.api_call.get(i).copied(),
            EventKind::ApiCall => {
                return self.launched.get(&event.index).cloned().unwrap_or_default();
            }
            EventKind::Nvtx
            | EventKind::Osrt
            | EventKind::CpuPageFault
            | EventKind::GpuPageFault => None,
        };
        match call {
            Some(c) if c != NO_INDEX && (c as usize) < trace.api_calls.spans.len() => {
                vec![EventRef {
                    kind: EventKind::ApiCall,
                    index: c,
                }]
            }
            _ => Vec::new(),
        }
    }
}

/// Index into `trace.streams` of a GPU op. Tables are sorted by track, so each stream's slice
/// ends where the next begins and a binary search over slice ends finds it.
pub fn stream_of(trace: &Trace, event: EventRef) -> Option<usize> {
    let i = event.index as usize;
    let slice_of = |s: &crate::trace::StreamTrack| match event.kind {
        EventKind::Kernel => s.kernels.range.clone(),
        EventKind::Memcpy => s.memcpys.range.clone(),
        EventKind::Graph => s.graphs.range.clone(),
        EventKind::GraphLaunch => s.graph_launches.range.clone(),
        _ => s.memsets.range.clone(),
    };
    let guess = trace.streams.partition_point(|s| slice_of(s).end <= i);
    if trace
        .streams
        .get(guess)
        .is_some_and(|s| slice_of(s).contains(&i))
    {
        return Some(guess);
    }
    trace.streams.iter().position(|s| slice_of(s).contains(&i))
}

/// Where each row kind is in `rows`.
fn row_lookup(rows: &[Row]) -> HashMap<RowKind, usize> {
    rows.iter().enumerate().map(|(i, r)| (r.kind, i)).collect()
}
