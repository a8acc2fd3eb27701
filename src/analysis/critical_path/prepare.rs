//! What the critical path of any range needs from the whole trace, built once: every GPU
//! operation in stream order with its launching call, the calls' kinds (launch, host wait, stream
//! wait), the synchronization rows by call, and per device the operations by end time (to find
//! what another stream finished just before an operation started).

use std::collections::HashMap;

use super::Part;
use crate::analysis::comm_overlap::{CommNames, default_comm_regex};
use crate::analysis::gap_causes::is_sync_call;
use crate::trace::{CopyKind, NO_INDEX, StrId, Trace, pid_of};

/// Which GPU table an operation is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpTable {
    Kernel,
    Memcpy,
    Memset,
    Graph,
}

/// One GPU operation.
#[derive(Debug, Clone, Copy)]
pub struct GpuOp {
    pub start_ns: i64,
    pub end_ns: i64,
    pub table: OpTable,
    /// Row in its table.
    pub index: u32,
    /// Index into `trace.streams`.
    pub stream: u32,
    /// Index into `trace.api_calls` of the launching call, [`NO_INDEX`] when unknown.
    pub call: u32,
    pub part: Part,
}

/// What a CUDA call is to the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Other,
    /// `cudaStreamWaitEvent`: the next work launched to that stream waits for an event.
    StreamWait,
    /// Device / context synchronize: waits for every stream.
    DeviceSync,
    /// Stream or event synchronize: waits for one stream (which one, the sync row says).
    StreamSync,
    /// A copy or memset call: blocking when its operation ends inside the call.
    Copy,
}

/// Kind of a synchronization row (`sync_type_label`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    Event,
    StreamWait,
    Stream,
    Context,
    Unknown,
}

/// The per-trace lookups.
pub struct Prepared {
    /// Every GPU operation, by (stream, start, end).
    pub ops: Vec<GpuOp>,
    /// `(call, op)` pairs sorted by call: the operations each call launched.
    pub call_ops: Vec<(u32, u32)>,
    /// Per string id, the kind of a call of that name.
    pub call_kind: Vec<CallKind>,
    /// Per call index, the synchronization rows correlated with it: `(kind, stream index)`.
    pub syncs_of_call: HashMap<u32, Vec<(SyncKind, Option<u32>)>>,
    /// Per device, `(end, op)` sorted by end.
    pub ends_by_device: HashMap<u32, Vec<(i64, u32)>>,
    /// Per process, the indices into `trace.streams` of its streams.
    pub streams_of_pid: HashMap<u32, Vec<u32>>,
    /// Per stream, the range of `ops` it holds.
    pub stream_ops: Vec<std::ops::Range<usize>>,
    /// Per `cudaStreamWaitEvent` call whose synchronization row names its event: that event.
    pub wait_event: HashMap<u32, u64>,
    /// Per CUDA event, its records: (recording call's start, stream index), by start.
    pub records: HashMap<u64, Vec<(i64, u32)>>,
}

impl Prepared {
    pub fn new(trace: &Trace) -> Self {
        let comm = CommNames::new(trace, &default_comm_regex());
        let mut ops = Vec::new();
        let mut stream_ops = Vec::with_capacity(trace.streams.len());
        for (s, track) in trace.streams.iter().enumerate() {
            let first = ops.len();
            let k = &trace.kernels;
            for i in track.kernels.range.clone() {
                let part = if comm.is_comm(k.spans.name[i]) {
                    Part::Communication
                } else {
                    Part::Kernels
                };
                ops.push(op(&k.spans, i, OpTable::Kernel, s, &k.api_call, part));
            }
            let m = &trace.memcpys;
            for i in track.memcpys.range.clone() {
                let part = match m.copy_kind.get(i).copied() {
                    Some(CopyKind::HOST_TO_DEVICE) | Some(CopyKind(11)) => Part::CopyH2D,
                    Some(CopyKind::DEVICE_TO_HOST) | Some(CopyKind(12)) => Part::CopyD2H,
                    _ => Part::CopyOther,
                };
                ops.push(op(&m.spans, i, OpTable::Memcpy, s, &m.api_call, part));
            }
            let ms = &trace.memsets;
            for i in track.memsets.range.clone() {
                ops.push(op(
                    &ms.spans,
                    i,
                    OpTable::Memset,
                    s,
                    &ms.api_call,
                    Part::Memset,
                ));
            }
            let g = &trace.graphs;
            for i in track.graphs.range.clone() {
                ops.push(op(
                    &g.spans,
                    i,
                    OpTable::Graph,
                    s,
                    &g.api_call,
                    Part::Kernels,
                ));
            }
            ops[first..].sort_by_key(|o| (o.start_ns, o.end_ns, o.index));
            stream_ops.push(first..ops.len());
        }
        let mut call_ops: Vec<(u32, u32)> = ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.call != NO_INDEX)
            .map(|(i, o)| (o.call, i as u32))
            .collect();
        call_ops.sort_unstable();

        let mut ends_by_device: HashMap<u32, Vec<(i64, u32)>> = HashMap::new();
        for (i, o) in ops.iter().enumerate() {
            let device = trace.streams[o.stream as usize].key.device;
            ends_by_device
                .entry(device)
                .or_default()
                .push((o.end_ns, i as u32));
        }
        for v in ends_by_device.values_mut() {
            v.sort_unstable();
        }
        let mut streams_of_pid: HashMap<u32, Vec<u32>> = HashMap::new();
        for (s, track) in trace.streams.iter().enumerate() {
            streams_of_pid
                .entry(track.key.pid)
                .or_default()
                .push(s as u32);
        }

        // One test per distinct call name, not per string of the trace.
        let mut call_kind = vec![CallKind::Other; trace.strings.len()];
        let mut seen = vec![false; trace.strings.len()];
        for &name in &trace.api_calls.spans.name {
            let i = name as usize;
            if i < seen.len() && !seen[i] {
                seen[i] = true;
                call_kind[i] = kind_of_name(trace.str(name as StrId));
            }
        }
        let links = sync_links(trace);
        Self {
            syncs_of_call: links.syncs_of_call,
            wait_event: links.wait_event,
            records: links.records,
            ops,
            call_ops,
            call_kind,
            ends_by_device,
            streams_of_pid,
            stream_ops,
        }
    }

    /// The operations `call` launched.
    pub fn ops_of_call(&self, call: u32) -> impl Iterator<Item = u32> + '_ {
        let from = self.call_ops.partition_point(|&(c, _)| c < call);
        self.call_ops[from..]
            .iter()
            .take_while(move |&&(c, _)| c == call)
            .map(|&(_, o)| o)
    }

    /// The operation before `op` on its stream.
    pub fn prev_on_stream(&self, op: u32) -> Option<u32> {
        let o = &self.ops[op as usize];
        let range = &self.stream_ops[o.stream as usize];
        (op as usize > range.start).then(|| op - 1)
    }

    /// The kind of the call `call`.
    pub fn kind_of_call(&self, trace: &Trace, call: usize) -> CallKind {
        let name = trace.api_calls.spans.name[call] as usize;
        self.call_kind.get(name).copied().unwrap_or(CallKind::Other)
    }

    /// The operation of stream `stream` that ended last within `[from, to]`.
    pub fn last_end_on_stream(&self, stream: u32, from: i64, to: i64) -> Option<u32> {
        let range = self.stream_ops[stream as usize].clone();
        let ops = &self.ops[range.clone()];
        // Ops of a stream run one after another: by start, their ends ascend too.
        let n = ops.partition_point(|o| o.start_ns <= to);
        ops[..n]
            .iter()
            .enumerate()
            .rev()
            .take(64)
            .filter(|(_, o)| o.end_ns >= from && o.end_ns <= to)
            .max_by_key(|(_, o)| o.end_ns)
            .map(|(i, _)| (range.start + i) as u32)
    }

    /// The operations of stream `stream` running in `[r0, r1)` that were launched before `r0` (or
    /// by no call in the trace): work queued ahead of the range.
    pub fn queued_before(&self, trace: &Trace, stream: u32, r0: i64, r1: i64) -> Vec<u32> {
        let Some(range) = self.stream_ops.get(stream as usize).cloned() else {
            return Vec::new();
        };
        let ops = &self.ops[range.clone()];
        // Ops of a stream run one after another: by start, their ends ascend too.
        let from = ops.partition_point(|o| o.end_ns <= r0);
        ops[from..]
            .iter()
            .enumerate()
            .take_while(|(_, o)| o.start_ns < r1)
            .filter(|(_, o)| {
                o.call == NO_INDEX || trace.api_calls.spans.start_ns[o.call as usize] < r0
            })
            .map(|(i, _)| (range.start + from + i) as u32)
            .collect()
    }

    /// The operation that the record of `event` made before `before` waits for: the last one
    /// launched to the recorded stream before the record call.
    pub fn recorded_op(&self, trace: &Trace, event: u64, before: i64) -> Option<u32> {
        let records = self.records.get(&event)?;
        let n = records.partition_point(|&(t, _)| t < before);
        let &(at, stream) = records[..n].last()?;
        let range = self.stream_ops[stream as usize].clone();
        let ops = &self.ops[range.clone()];
        let call_start = |o: &GpuOp| {
            (o.call != NO_INDEX).then(|| trace.api_calls.spans.start_ns[o.call as usize])
        };
        // A stream runs its work in launch order.
        let k = ops.partition_point(|o| call_start(o).is_none_or(|c| c < at));
        k.checked_sub(1).map(|k| (range.start + k) as u32)
    }

    /// The operation of another stream of `op`'s device that ended last at or before `op`
    /// started, and after `after`.
    pub fn other_stream_before(&self, trace: &Trace, op: u32, after: i64) -> Option<u32> {
        let o = &self.ops[op as usize];
        let device = trace.streams[o.stream as usize].key.device;
        let ends = self.ends_by_device.get(&device)?;
        let n = ends.partition_point(|&(end, _)| end <= o.start_ns);
        ends[..n]
            .iter()
            .rev()
            .take_while(|&&(end, _)| end > after)
            .take(256)
            .find(|&&(_, other)| self.ops[other as usize].stream != o.stream)
            .map(|&(_, other)| other)
    }
}

fn op(
    spans: &crate::trace::Spans,
    i: usize,
    table: OpTable,
    stream: usize,
    api_call: &[u32],
    part: Part,
) -> GpuOp {
    GpuOp {
        start_ns: spans.start_ns[i],
        end_ns: spans.end_ns[i].max(spans.start_ns[i]),
        table,
        index: i as u32,
        stream: stream as u32,
        call: api_call.get(i).copied().unwrap_or(NO_INDEX),
        part,
    }
}

/// The kind of a call by its raw name (`cudaStreamSynchronize_v3020`, `cuLaunchKernelEx`).
pub fn kind_of_name(name: &str) -> CallKind {
    let base = name.split("_v").next().unwrap_or(name);
    if base.starts_with("cudaStreamWaitEvent") || base.starts_with("cuStreamWaitEvent") {
        CallKind::StreamWait
    } else if base.contains("DeviceSynchronize") || base.contains("CtxSynchronize") {
        CallKind::DeviceSync
    } else if base.contains("StreamSynchronize") || base.contains("EventSynchronize") {
        CallKind::StreamSync
    } else if base.starts_with("cudaMemcpy")
        || base.starts_with("cuMemcpy")
        || base.starts_with("cudaMemset")
        || base.starts_with("cuMemset")
        || is_sync_call(name)
    {
        CallKind::Copy
    } else {
        CallKind::Other
    }
}

/// What the synchronization rows and CUDA event records say about the calls.
struct SyncLinks {
    syncs_of_call: HashMap<u32, Vec<(SyncKind, Option<u32>)>>,
    wait_event: HashMap<u32, u64>,
    records: HashMap<u64, Vec<(i64, u32)>>,
}

/// The call of correlation id `corr` in process `pid` (any process when the row names none).
fn call_of(api: &crate::trace::ApiCalls, calls: &[u32], pid: Option<u32>) -> Option<u32> {
    calls
        .iter()
        .copied()
        .find(|&c| pid.is_none_or(|p| pid_of(api.global_tid[c as usize]) == p))
        .or_else(|| calls.first().copied())
}

/// The synchronization rows of each call, found by correlation id (within the call's process
/// where the row names one); the event each stream wait waited for; where each event was
/// recorded.
fn sync_links(trace: &Trace) -> SyncLinks {
    let api = &trace.api_calls;
    let s = &trace.syncs;
    let rec = &s.records;
    // Only the correlation ids of synchronization rows and event records are looked up.
    let mut by_corr: HashMap<u32, Vec<u32>> = s
        .correlation_id
        .iter()
        .chain(&rec.correlation_id)
        .map(|&c| (c, Vec::new()))
        .collect();
    for (i, c) in api.correlation_id.iter().enumerate() {
        if let Some(calls) = by_corr.get_mut(c) {
            calls.push(i as u32);
        }
    }
    let stream_of: HashMap<(u32, u32, u32), u32> = trace
        .streams
        .iter()
        .enumerate()
        .map(|(s, t)| ((t.key.pid, t.key.device, t.key.stream), s as u32))
        .collect();
    let mut out: HashMap<u32, Vec<(SyncKind, Option<u32>)>> = HashMap::new();
    let mut wait_event: HashMap<u32, u64> = HashMap::new();
    for i in 0..s.spans.len() {
        let kind = match trace.str(s.spans.name[i]) {
            "Event synchronize" => SyncKind::Event,
            "Stream wait event" => SyncKind::StreamWait,
            "Stream synchronize" => SyncKind::Stream,
            "Context synchronize" => SyncKind::Context,
            _ => SyncKind::Unknown,
        };
        let Some(calls) = s.correlation_id.get(i).and_then(|c| by_corr.get(c)) else {
            continue;
        };
        let row_pid = s.global_pid.get(i).map(|&g| pid_of(g)).filter(|&p| p != 0);
        let Some(call) = call_of(api, calls, row_pid) else {
            continue;
        };
        if let Some(&e) = s.event_id.get(i)
            && kind == SyncKind::StreamWait
            && e != crate::trace::SyncEvents::NO_EVENT
        {
            wait_event.insert(call, e);
        }
        let pid = pid_of(api.global_tid[call as usize]);
        let device = u32::from(s.device.get(i).copied().unwrap_or(0));
        let stream = s
            .stream
            .get(i)
            .and_then(|&st| stream_of.get(&(pid, device, st)).copied());
        out.entry(call).or_default().push((kind, stream));
    }
    let mut records: HashMap<u64, Vec<(i64, u32)>> = HashMap::new();
    for i in 0..rec.event_id.len() {
        let Some(calls) = by_corr.get(&rec.correlation_id[i]) else {
            continue;
        };
        let pid = pid_of(rec.global_pid[i]);
        let Some(call) = call_of(api, calls, Some(pid).filter(|&p| p != 0)) else {
            continue;
        };
        let pid = pid_of(api.global_tid[call as usize]);
        let key = (pid, u32::from(rec.device[i]), rec.stream[i]);
        if let Some(&stream) = stream_of.get(&key) {
            records
                .entry(rec.event_id[i])
                .or_default()
                .push((api.spans.start_ns[call as usize], stream));
        }
    }
    for v in records.values_mut() {
        v.sort_unstable();
    }
    SyncLinks {
        syncs_of_call: out,
        wait_event,
        records,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_kinds_by_name() {
        assert_eq!(
            kind_of_name("cudaStreamWaitEvent_v3020"),
            CallKind::StreamWait
        );
        assert_eq!(kind_of_name("cudaDeviceSynchronize"), CallKind::DeviceSync);
        assert_eq!(
            kind_of_name("cudaStreamSynchronize_v3020"),
            CallKind::StreamSync
        );
        assert_eq!(kind_of_name("cudaEventSynchronize"), CallKind::StreamSync);
        assert_eq!(kind_of_name("cudaMemcpyAsync_v3020"), CallKind::Copy);
        assert_eq!(kind_of_name("cudaMemcpy"), CallKind::Copy);
        assert_eq!(kind_of_name("cudaLaunchKernel_v7000"), CallKind::Other);
        assert_eq!(kind_of_name("cudaEventRecord"), CallKind::Other);
    }
}
