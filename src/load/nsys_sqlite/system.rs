//! Readers for what the export says about the machine and session: GPUs, processes, thread and
//! stream names, the session start time, the exporter's version and GPU memory usage.

use std::collections::HashMap;

use super::connection::{Row, int, text};
use super::reader::{FileStrings, Reader};
use crate::load::LoadError;
use crate::trace::{GpuInfo, MemoryUsageSample, MemoryUsageTrack, StreamKey, pid_of};

fn text_string(row: &Row, i: usize) -> Option<String> {
    text(row, i).map(|b| String::from_utf8_lossy(b).into_owned())
}

/// GPUs. 2022.x–2025.x write `TARGET_INFO_GPU` (CUDA ordinal in `cuDevice`, or mapped through
/// `TARGET_INFO_CUDA_DEVICE` from 2025); exports before 2021.2 write `deviceId` there and the
/// details in `TARGET_INFO_CUDA_GPU`.
pub fn read_gpus(r: &Reader) -> Result<Vec<GpuInfo>, LoadError> {
    let mut gpus: Vec<GpuInfo> = Vec::new();
    let conn = r.open()?;
    let mut cuda_of_gpu: HashMap<i64, i64> = HashMap::new();
    let t = "TARGET_INFO_CUDA_DEVICE";
    if r.schema.has_column(t, "gpuId") && r.schema.has_column(t, "cudaId") {
        r.for_each_row(&conn, t, &r.schema.select(t, &["gpuId", "cudaId"]), |row| {
            if let (Some(g), Some(c)) = (int(row, 0), int(row, 1)) {
                cuda_of_gpu.entry(g).or_insert(c);
            }
        })?;
    }
    let t = "TARGET_INFO_GPU";
    if r.schema.has_table(t) {
        let sql = r.schema.select(
            t,
            &[
                "cuDevice",
                "id",
                "deviceId",
                "name",
                "smCount",
                "totalMemory",
                "busLocation",
            ],
        );
        r.for_each_row(&conn, t, &sql, |row| {
            let id = int(row, 1);
            let device = int(row, 0)
                .or_else(|| id.and_then(|g| cuda_of_gpu.get(&g).copied()))
                .or(id)
                .or_else(|| int(row, 2))
                .unwrap_or(gpus.len() as i64);
            gpus.push(GpuInfo {
                device: device.max(0) as u32,
                name: text_string(row, 3).unwrap_or_default(),
                sm_count: int(row, 4).map(|v| v.max(0) as u32),
                memory_bytes: int(row, 5).map(|v| v.max(0) as u64),
                bus_location: text_string(row, 6),
                compute_capability: None,
                kind: Default::default(),
            });
        })?;
    }
    let t = "TARGET_INFO_CUDA_GPU";
    if r.schema.has_table(t) {
        let sql = r.schema.select(
            t,
            &["deviceId", "name", "numMultiprocessors", "globalMemorySize"],
        );
        r.for_each_row(&conn, t, &sql, |row| {
            let device = int(row, 0).unwrap_or(0).max(0) as u32;
            let idx = match gpus.iter().position(|g| g.device == device) {
                Some(i) => i,
                None => {
                    gpus.push(GpuInfo {
                        device,
                        ..Default::default()
                    });
                    gpus.len() - 1
                }
            };
            let g = &mut gpus[idx];
            if g.name.is_empty() {
                g.name = text_string(row, 1).unwrap_or_default();
            }
            g.sm_count = g.sm_count.or(int(row, 2).map(|v| v.max(0) as u32));
            g.memory_bytes = g.memory_bytes.or(int(row, 3).map(|v| v.max(0) as u64));
        })?;
    }
    gpus.sort_by_key(|g| g.device);
    gpus.dedup_by_key(|g| g.device);
    Ok(gpus)
}

/// Facts about processes and threads, keyed the way the model wants them.
#[derive(Default)]
pub struct Names {
    /// pid → process name
    pub processes: Vec<(u32, String)>,
    /// globalTid → thread name
    pub threads: HashMap<i64, String>,
    /// globalTid → scheduling priority (`ThreadNames.priority`)
    pub thread_priorities: HashMap<i64, i32>,
    /// stream → name given with `nvtxNameCudaStream`
    pub streams: HashMap<StreamKey, String>,
}

pub fn read_names(r: &Reader, strings: &FileStrings) -> Result<Names, LoadError> {
    let mut names = Names::default();
    let conn = r.open()?;
    let t = "PROCESSES";
    if r.schema.has_table(t) {
        r.for_each_row(
            &conn,
            t,
            &r.schema.select(t, &["globalPid", "pid", "name"]),
            |row| {
                let pid = int(row, 1)
                    .map(|p| p as u32)
                    .or_else(|| int(row, 0).map(pid_of));
                if let (Some(pid), Some(name)) = (pid, text_string(row, 2)) {
                    names.processes.push((pid, name));
                }
            },
        )?;
    }
    let t = "ThreadNames";
    if r.schema.has_table(t) {
        r.for_each_row(
            &conn,
            t,
            &r.schema.select(t, &["globalTid", "nameId", "priority"]),
            |row| {
                let Some(g) = int(row, 0) else {
                    return;
                };
                if let Some(name) = strings.text(int(row, 1)) {
                    names.threads.insert(g, name.to_string());
                }
                if let Some(p) = int(row, 2) {
                    let p = p.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                    names.thread_priorities.insert(g, p);
                }
            },
        )?;
    }
    let t = "TARGET_INFO_NVTX_CUDA_STREAM";
    if r.schema.has_table(t) {
        let sql = r.schema.select(
            t,
            &["name", "processId", "deviceId", "contextId", "streamId"],
        );
        r.for_each_row(&conn, t, &sql, |row| {
            let key = StreamKey {
                device: int(row, 2).unwrap_or(0) as u32,
                pid: int(row, 1).unwrap_or(0) as u32,
                context: int(row, 3).unwrap_or(0) as u32,
                stream: int(row, 4).unwrap_or(0) as u32,
            };
            if let Some(name) = text_string(row, 0) {
                names.streams.insert(key, name);
            }
        })?;
    }
    Ok(names)
}

/// What the export says about its session: start (UTC ns), exporter version, and the rank the
/// process environment gives, each when recorded.
pub type Session = (Option<i64>, Option<String>, Option<(String, u32)>);

/// Session start (UTC ns), exporter version and rank from the environment, when recorded.
pub fn read_session(r: &Reader) -> Result<Session, LoadError> {
    let conn = r.open()?;
    let mut start = None;
    let t = "TARGET_INFO_SESSION_START_TIME";
    if r.schema.has_column(t, "utcEpochNs") {
        r.for_each_row(&conn, t, &r.schema.select(t, &["utcEpochNs"]), |row| {
            start = start.or(int(row, 0));
        })?;
    }
    let mut version = None;
    for t in ["META_DATA_EXPORT", "EXPORT_META_DATA"] {
        if r.schema.has_column(t, "name") && r.schema.has_column(t, "value") {
            r.for_each_row(&conn, t, &r.schema.select(t, &["name", "value"]), |row| {
                if text(row, 0) == Some(b"EXPORT_PRODUCT_VERSION".as_slice()) {
                    version = text_string(row, 1);
                }
            })?;
        }
    }
    let env_rank = read_env_rank(r, &conn)?;
    Ok((start, version, env_rank))
}

/// The variables that give a process's rank, by precedence: torchrun / PyTorch, Open MPI, Slurm.
pub const RANK_VARIABLES: [&str; 3] = ["RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"];

/// The rank in the profiled processes' environment (`META_DATA_CAPTURE` rows
/// `PROCESS_N:ENVIRONMENT_VARIABLE` = `NAME="value"`, nsys 2023+): the first of
/// [`RANK_VARIABLES`] that the processes set, when they all set it to the same number (an export
/// of a launcher and all its workers holds several ranks, and so none).
fn read_env_rank(
    r: &Reader,
    conn: &rusqlite::Connection,
) -> Result<Option<(String, u32)>, LoadError> {
    let t = "META_DATA_CAPTURE";
    if !(r.schema.has_column(t, "name") && r.schema.has_column(t, "value")) {
        return Ok(None);
    }
    let mut seen: Vec<Vec<String>> = vec![Vec::new(); RANK_VARIABLES.len()];
    r.for_each_row(conn, t, &r.schema.select(t, &["name", "value"]), |row| {
        let is_env = text(row, 0).is_some_and(|n| n.ends_with(b":ENVIRONMENT_VARIABLE"));
        let Some(value) = text(row, 1).filter(|_| is_env) else {
            return;
        };
        let value = String::from_utf8_lossy(value);
        let Some((name, v)) = value.split_once('=') else {
            return;
        };
        if let Some(k) = RANK_VARIABLES.iter().position(|x| *x == name) {
            let v = v.trim().trim_matches('"').to_string();
            if !seen[k].contains(&v) {
                seen[k].push(v);
            }
        }
    })?;
    Ok(RANK_VARIABLES
        .iter()
        .zip(&seen)
        .find_map(|(name, values)| match values.as_slice() {
            [one] => one.parse().ok().map(|rank| (name.to_string(), rank)),
            _ => None,
        }))
}

pub const T_MEMORY_USAGE: &str = "CUDA_GPU_MEMORY_USAGE_EVENTS";
pub const MEMORY_USAGE_COLUMNS: &[&str] = &[
    "start",
    "globalPid",
    "deviceId",
    "bytes",
    "memoryOperationType",
];

/// GPU memory in use over time per (process, device): allocations add, frees subtract
/// (`memoryOperationType`: 0 allocation, 1 deallocation, `ENUM_CUDA_DEV_MEM_EVENT_OPER`).
pub fn read_memory_usage(r: &Reader) -> Result<Vec<MemoryUsageTrack>, LoadError> {
    let t = T_MEMORY_USAGE;
    if !r.schema.has_table(t) {
        return Ok(Vec::new());
    }
    let conn = r.open()?;
    let mut events: Vec<(u32, u32, i64, i64)> = Vec::new();
    let sql = r.schema.select(t, MEMORY_USAGE_COLUMNS);
    r.for_each_row(&conn, t, &sql, |row| {
        let (Some(start), Some(bytes)) = (int(row, 0), int(row, 3)) else {
            return;
        };
        let sign = if int(row, 4) == Some(1) { -1 } else { 1 };
        let pid = pid_of(int(row, 1).unwrap_or(0));
        let device = int(row, 2).unwrap_or(0).max(0) as u32;
        events.push((pid, device, start, sign * bytes));
    })?;
    events.sort_by_key(|e| (e.0, e.1, e.2));
    let mut tracks: Vec<MemoryUsageTrack> = Vec::new();
    for (pid, device, start, delta) in events {
        if tracks
            .last()
            .is_none_or(|t| (t.pid, t.device) != (pid, device))
        {
            tracks.push(MemoryUsageTrack {
                pid,
                device,
                samples: Vec::new(),
            });
        }
        if let Some(track) = tracks.last_mut() {
            let before = track.samples.last().map_or(0, |s| s.bytes_in_use);
            track.samples.push(MemoryUsageSample {
                time_ns: start,
                bytes_in_use: (before + delta).max(0),
            });
        }
    }
    Ok(tracks)
}
