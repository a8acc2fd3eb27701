//! Synthetic PyTorch profiler (Kineto) traces: `sightline gen-trace OUT.pt.trace.json[.gz]`.
//!
//! The trace is what `torch.profiler` (PyTorch 2.11, `record_shapes`, `profile_memory`,
//! `with_stack`) writes for `../shared/tracegen/kineto_workloads.py many`: per step a
//! `ProfilerStep#N` and an `iteration_N` range around 400 × `y = torch.relu(y * 1.0001 + 0.001)`
//! on a 256 × 256 CUDA tensor, then `y.sum().item()`. Every event shape, key order, argument and
//! number format is copied from a real capture of it on an H100 (`MANY_STEPS=100`: 350.8 MB,
//! 1,065,914 events; this writes 350.6 MB and 1,065,910 for the same 98 steps), and so is the
//! order of the file's sections: CPU operators and annotations, `[memory]` instants, Python
//! functions, CUDA runtime calls with their kernels and `ac2g` flows, GPU annotations, metadata.
//! Times are written as Kineto writes them: µs with three decimals (ns), counted from
//! `baseTimeNanoseconds`. The timeline itself is simulated in [`workload`]; each section replays
//! it from the seed, so the file streams out in one pass per section with one step in memory.
//! The same event count and seed give the same bytes.

mod python_stacks;
mod workload;

use std::fmt;
use std::io::{self, Write};

use super::rng::Rng;
use python_stacks::PythonStacks;
use workload::{CpuName, Gpu, Memory, Python, Runtime};

/// Events of `--events` when none is given: the size of the real `MANY_STEPS=100` capture.
pub const DEFAULT_EVENTS: u64 = 1_070_000;
/// Kineto's base time in the real capture (1 Oct 2026); `ts` counts µs from it.
const BASE_TIME_NS: i64 = 1_790_857_026_000_000_000;
/// The CUDA stream PyTorch's default stream gets in Kineto traces.
const STREAM: u32 = 7;
/// The caching allocator's one 2 MiB segment this workload lives in.
const RESERVED_BYTES: i64 = 2_097_152;
/// Events outside the steps: 3 outer Python frames, what the stacks before the first and after
/// the last step add to one between steps (33 + 70 − 33), the final `cudaDeviceSynchronize` and
/// its flow, 58 metadata events, the `Trace` span with its sort index and two instants.
const FIXED_EVENTS: u64 = 3 + 70 + 2 + 58 + 4;
/// Events per step of `iterations` loop iterations: operators and annotations (4i + 7),
/// `[memory]` (10i + 2), Python (i + 55), runtime calls and their flows (6i + 6), kernels, the
/// copy and their flows (6i + 4), the GPU annotation.
const fn events_per_step(iterations: u64) -> u64 {
    27 * iterations + 75
}
/// CUPTI hands activities over in buffers: the real capture has an `Activity Buffer Request`
/// about every 35,000 runtime and GPU events, and a `Buffer Flush` per buffer at the end.
const EVENTS_PER_BUFFER: u64 = 35_000;

/// Profiler steps and loop iterations per step for about `events` events: whole steps of 400
/// iterations, or one shorter step for a small trace.
pub fn shape(events: u64) -> (u32, u32) {
    let full = events_per_step(u64::from(workload::ITERATIONS));
    if events >= full + FIXED_EVENTS {
        let steps = ((events - FIXED_EVENTS) as f64 / full as f64).round();
        (steps.min(f64::from(u32::MAX)) as u32, workload::ITERATIONS)
    } else {
        let iterations = events.saturating_sub(FIXED_EVENTS + events_per_step(0)) / 27;
        (
            1,
            iterations.clamp(1, u64::from(workload::ITERATIONS)) as u32,
        )
    }
}

/// What was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KinetoCounts {
    pub steps: u32,
    pub iterations_per_step: u32,
    /// Everything in `traceEvents`.
    pub events: u64,
    /// `cpu_op` events (the `user_annotation` ranges not counted).
    pub cpu_ops: u64,
    pub memory_events: u64,
    pub python_functions: u64,
    pub runtime_calls: u64,
    pub kernels: u64,
    pub memcpys: u64,
}

/// A time in ns written as Kineto writes µs: `4743462888653.654`.
struct Us(i64);

impl fmt::Display for Us {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let ns = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:03}", ns / 1000, ns % 1000)
    }
}

/// `traceEvents`, one event after another, counted.
struct Events<W: Write> {
    w: W,
    count: u64,
}

impl<W: Write> Events<W> {
    /// Starts the next event (the separator before all but the first).
    fn next(&mut self) -> io::Result<&mut W> {
        if self.count > 0 {
            self.w.write_all(b",\n")?;
        }
        self.count += 1;
        Ok(&mut self.w)
    }
}

/// Writes the trace of about `events` events to `w`; `trace_name` is its `traceName`.
pub fn write<W: Write>(w: W, events: u64, seed: u64, trace_name: &str) -> io::Result<KinetoCounts> {
    let (steps, iterations) = shape(events);
    let stacks = PythonStacks::parse();
    let replay = |f: &mut dyn FnMut(&workload::Step) -> io::Result<()>| {
        workload::replay(seed, &stacks, steps, iterations, f)
    };
    let mut head_rng = Rng::new(seed ^ 0x7124_CE1D);
    let pid = 400 + head_rng.between(0, 200);
    let trace_id = format!("{:016X}{:016X}", head_rng.next_u64(), head_rng.next_u64());
    let mut out = Events { w, count: 0 };
    write_header(&mut out.w, &trace_id)?;
    let mut counts = KinetoCounts {
        steps,
        iterations_per_step: iterations,
        ..Default::default()
    };
    let mut ev_idx = 0u64;
    let sim = replay(&mut |step| {
        for op in &step.ops {
            write_op(out.next()?, pid, op, ev_idx)?;
            ev_idx += 1;
            counts.cpu_ops += u64::from(matches!(op.name, CpuName::Op(_)));
        }
        Ok(())
    })?;
    let (module_start, module_end) = (sim.module_start, sim.python_end);
    replay(&mut |step| {
        for m in &step.memory {
            write_memory(out.next()?, pid, m, ev_idx)?;
            ev_idx += 1;
        }
        counts.memory_events += step.memory.len() as u64;
        Ok(())
    })?;
    for (k, name) in workload::OUTER_FUNCTIONS.iter().enumerate() {
        let ts = module_start + [0, 2_937, 6_754][k];
        let id = k as u64 + 1;
        let frame = Python {
            name,
            ts,
            dur: module_end - ts,
            id,
            parent: id - 1,
        };
        write_python(out.next()?, pid, &frame, ev_idx)?;
        ev_idx += 1;
        counts.python_functions += 1;
    }
    replay(&mut |step| {
        for p in &step.python {
            write_python(out.next()?, pid, p, ev_idx)?;
            ev_idx += 1;
        }
        counts.python_functions += step.python.len() as u64;
        Ok(())
    })?;

    let mut buffer_rng = Rng::new(seed ^ 0xB0FF_E125);
    let mut buffers = Vec::new();
    let (mut section, mut next_buffer) = (0u64, EVENTS_PER_BUFFER);
    let mut annotations = Vec::new();
    replay(&mut |step| {
        for r in &step.runtime {
            let launch = matches!(r.gpu, Gpu::Kernel(..));
            // A buffer request landing inside a launch loses the launch's External id (and,
            // for every third buffer, its kernel's), as 12 launches and 4 kernels of the real
            // capture have none.
            let request = launch && section >= next_buffer;
            let lost = |lose: bool| if lose { None } else { r.external_id };
            let gpu_external = lost(request && buffers.len() % 3 == 2);
            match r.gpu {
                Gpu::Kernel(kernel, ts, dur) => {
                    write_kernel(out.next()?, r, gpu_external, kernel, ts, dur)?;
                    counts.kernels += 1;
                }
                Gpu::Memcpy(ts, dur) => {
                    write_memcpy(out.next()?, r, gpu_external, ts, dur)?;
                    counts.memcpys += 1;
                }
                Gpu::None => {}
            }
            if let Gpu::Kernel(_, ts, _) | Gpu::Memcpy(ts, _) = r.gpu {
                write_flow(out.next()?, "f", 0, r.correlation, ts)?;
            }
            write_runtime(out.next()?, pid, r, lost(request))?;
            write_flow(out.next()?, "s", pid, r.correlation, r.ts)?;
            section += if matches!(r.gpu, Gpu::None) { 2 } else { 4 };
            if request {
                next_buffer += EVENTS_PER_BUFFER;
                let ts = r.ts + buffer_rng.between(5_000, 8_000);
                let dur = buffer_rng.between(2_400_000, 4_700_000);
                buffers.push((ts, dur));
                write_overhead(out.next()?, "Activity Buffer Request", ts, dur)?;
            }
        }
        counts.runtime_calls += step.runtime.len() as u64;
        annotations.extend(step.gpu_annotation);
        Ok(())
    })?;
    for (ts, dur) in buffers {
        let flush = ts + dur + buffer_rng.between(50_000, 100_000);
        let dur = buffer_rng.between(60_000, 200_000);
        write_overhead(out.next()?, "Buffer Flush", flush, dur)?;
    }
    // Kineto writes the GPU annotations last step first.
    for (n, ts, dur, id) in annotations.into_iter().rev() {
        write!(
            out.next()?,
            "  {{\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"iteration_{n}\", \"pid\": 0, \"tid\": {STREAM},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {id}\n    }}\n  }}",
            Us(ts),
            Us(dur)
        )?;
    }
    write_metadata(&mut out, pid, Us(module_start + 80_684))?;
    let trace_start = module_start - 636_516;
    // The export after the last step takes about 10 ms per step.
    let window_end = module_end + 18_000_000 + 9_000_000 * i64::from(steps);
    write_footer(&mut out, trace_start, module_end, window_end, trace_name)?;
    out.w.flush()?;
    counts.events = out.count;
    Ok(counts)
}

fn write_header(w: &mut impl Write, trace_id: &str) -> io::Result<()> {
    write!(
        w,
        r#"
  {{
    "schemaVersion": 1,
    "deviceProperties": [
    {{
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85017493504,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    }}
    ],
      "trace_id": "{trace_id}",
      "with_stack": 1,
      "profile_memory": 1,
      "cuda_driver_version": 13000,
      "record_shapes": 1,
      "cuda_runtime_version": 13000,
      "cupti_version": 130001,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": {BASE_TIME_NS},
  "traceEvents": [
"#
    )
}

fn write_op(w: &mut impl Write, pid: i64, op: &workload::CpuOp, ev_idx: u64) -> io::Result<()> {
    let (cat, spec) = match op.name {
        CpuName::Op(spec) => ("cpu_op", Some(spec)),
        _ => ("user_annotation", None),
    };
    write!(
        w,
        "  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{}\", \"pid\": {pid}, \"tid\": {pid},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {},",
        op.name,
        Us(op.ts),
        Us(op.dur),
        op.external_id
    )?;
    match spec {
        Some(spec) if spec.sequenced => write!(
            w,
            "\"Sequence number\": 0, \"Fwd thread id\": 0, \"Record function id\": 0, {}, ",
            spec.shapes
        )?,
        Some(spec) => write!(w, "\"Record function id\": 0, {}, ", spec.shapes)?,
        None => write!(w, "\"Record function id\": 0, ")?,
    }
    write!(w, "\"Ev Idx\": {ev_idx}\n    }}\n  }}")
}

fn write_memory(w: &mut impl Write, pid: i64, m: &Memory, ev_idx: u64) -> io::Result<()> {
    // Host allocations are reported on device -1 of type 0 (CPU), with nothing reserved.
    let (reserved, device, kind) = if m.on_gpu {
        (RESERVED_BYTES, 0, 1)
    } else {
        (0, -1, 0)
    };
    write!(
        w,
        "  {{\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": {pid}, \"tid\": {pid},\n    \"ts\": {},\n    \"args\": {{\n      \"Total Reserved\": {reserved}, \"Total Allocated\": {}, \"Bytes\": {}, \"Device Id\": {device}, \"Device Type\": {kind}, \"Addr\": {}, \"finished\": false, \"Ev Idx\": {ev_idx}\n    }}\n  }}",
        Us(m.ts),
        m.total_allocated,
        m.bytes,
        m.addr
    )
}

fn write_python(w: &mut impl Write, pid: i64, p: &Python, ev_idx: u64) -> io::Result<()> {
    let parent = match p.parent {
        0 => "null".to_string(),
        id => id.to_string(),
    };
    write!(
        w,
        "  {{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"{}\", \"pid\": {pid}, \"tid\": {pid},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"Python parent id\": {parent}, \"Python id\": {}, \"Ev Idx\": {ev_idx}\n    }}\n  }}",
        p.name,
        Us(p.ts),
        Us(p.dur),
        p.id
    )
}

/// `"External id": N,` or, for an activity Kineto could not link to an operator, nothing.
struct External(Option<u64>);

impl fmt::Display for External {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, "\"External id\": {id},"),
            None => Ok(()),
        }
    }
}

fn write_kernel(
    w: &mut impl Write,
    r: &Runtime,
    external: Option<u64>,
    kernel: &workload::KernelSpec,
    ts: i64,
    dur: i64,
) -> io::Result<()> {
    write!(
        w,
        "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, \"tid\": {STREAM},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      {}      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": {STREAM}, \"correlation\": {},      \"registers per thread\": {},      \"shared memory\": {},      {}\n    }}\n  }}",
        kernel.name,
        Us(ts),
        Us(dur),
        External(external),
        r.correlation,
        kernel.registers,
        kernel.shared,
        kernel.occupancy
    )
}

fn write_memcpy(
    w: &mut impl Write,
    r: &Runtime,
    external: Option<u64>,
    ts: i64,
    dur: i64,
) -> io::Result<()> {
    // The float `.item()` reads; the bandwidth is Kineto's bytes / ns, printed shortest.
    write!(
        w,
        "  {{\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Pinned)\", \"pid\": 0, \"tid\": {STREAM},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      {}      \"device\": 0, \"context\": 1,      \"stream\": {STREAM}, \"correlation\": {},      \"bytes\": 4, \"memory bandwidth (GB/s)\": {}\n    }}\n  }}",
        Us(ts),
        Us(dur),
        External(external),
        r.correlation,
        4.0 / dur.max(1) as f64
    )
}

fn write_runtime(
    w: &mut impl Write,
    pid: i64,
    r: &Runtime,
    external: Option<u64>,
) -> io::Result<()> {
    write!(
        w,
        "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"{}\", \"pid\": {pid}, \"tid\": {pid},\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      {}      \"cbid\": {}, \"correlation\": {}\n    }}\n  }}",
        r.name,
        Us(r.ts),
        Us(r.dur),
        External(external),
        r.cbid,
        r.correlation
    )
}

/// An `ac2g` flow: `s` on the launching thread, `f` (binding to the enclosing slice) on the
/// stream, both with the correlation id.
fn write_flow(w: &mut impl Write, ph: &str, pid: i64, id: u64, ts: i64) -> io::Result<()> {
    let (tid, end) = if ph == "f" {
        (i64::from(STREAM), ", \"bp\": \"e\"")
    } else {
        (pid, "")
    };
    write!(
        w,
        "  {{\n    \"ph\": \"{ph}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"{end}\n  }}",
        Us(ts)
    )
}

fn write_overhead(w: &mut impl Write, name: &str, ts: i64, dur: i64) -> io::Result<()> {
    write!(
        w,
        "  {{\n    \"ph\": \"X\", \"cat\": \"overhead\", \"name\": \"{name}\", \"pid\": -1, \"tid\": 0,\n    \"ts\": {}, \"dur\": {}\n  }}",
        Us(ts),
        Us(dur)
    )
}

/// Process and thread names and sort order. Kineto names every device slot it knows of, used or
/// not, and the profiled thread twice.
fn write_metadata<W: Write>(out: &mut Events<W>, pid: i64, ts: Us) -> io::Result<()> {
    let mut entry = |pid: &dyn fmt::Display, tid: i64, name: &str, arg: &str| {
        write!(
            out.next()?,
            "  {{\n    \"name\": \"{name}\", \"ph\": \"M\", \"ts\": {ts}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      {arg}\n    }}\n  }}"
        )
    };
    entry(&pid, 0, "process_name", "\"name\": \"python3\"")?;
    entry(&pid, 0, "process_labels", "\"labels\": \"CPU\"")?;
    entry(
        &pid,
        0,
        "process_sort_index",
        &format!("\"sort_index\": {pid}"),
    )?;
    for gpu in 0..16 {
        entry(&gpu, 0, "process_name", "\"name\": \"python3\"")?;
        entry(
            &gpu,
            0,
            "process_labels",
            &format!("\"labels\": \"GPU {gpu}\""),
        )?;
        let sort = format!("\"sort_index\": {}", 5_000_000 + gpu);
        entry(&gpu, 0, "process_sort_index", &sort)?;
    }
    let stream = i64::from(STREAM);
    entry(
        &0,
        stream,
        "thread_name",
        &format!("\"name\": \"stream {STREAM} \""),
    )?;
    entry(
        &0,
        stream,
        "thread_sort_index",
        &format!("\"sort_index\": {STREAM}"),
    )?;
    for _ in 0..2 {
        let name = format!("\"name\": \"thread {pid} (python3)\"");
        entry(&pid, pid, "thread_name", &name)?;
        entry(
            &pid,
            pid,
            "thread_sort_index",
            &format!("\"sort_index\": {pid}"),
        )?;
    }
    Ok(())
}

/// The profiler's own span and instants, then `traceName`.
fn write_footer<W: Write>(
    out: &mut Events<W>,
    start: i64,
    end: i64,
    window_end: i64,
    trace_name: &str,
) -> io::Result<()> {
    write!(
        out.next()?,
        "  {{\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": {}, \"dur\": {},\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {{\n      \"Op count\": 0\n    }}\n  }}",
        Us(start),
        Us(end - start)
    )?;
    write!(
        out.next()?,
        "  {{\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": {},\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {{\n      \"sort_index\": 536870912\n    }}\n  }}",
        Us(start)
    )?;
    write!(
        out.next()?,
        "  {{\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": {}\n  }}",
        Us(start)
    )?;
    write!(
        out.next()?,
        "  {{\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": {}\n  }}",
        Us(window_end)
    )?;
    let name = serde_json::to_string(trace_name).map_err(io::Error::other)?;
    write!(out.w, "\n  ],\n  \"traceName\": {name}\n}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_microseconds_with_three_decimals() {
        assert_eq!(Us(4_743_462_888_653_654).to_string(), "4743462888653.654");
        assert_eq!(Us(1_152).to_string(), "1.152");
        assert_eq!(Us(7).to_string(), "0.007");
    }

    #[test]
    fn events_come_in_whole_steps_or_one_short_step() {
        assert_eq!(shape(1_070_000), (98, 400));
        assert_eq!(shape(DEFAULT_EVENTS).0, 98);
        let (steps, iterations) = shape(3_000);
        assert_eq!(steps, 1);
        assert!((100..110).contains(&iterations), "{iterations}");
        assert_eq!(shape(0), (1, 1));
    }
}
