//! Reader for GPU metric samples (`nsys profile --gpu-metrics-device`), in both export forms:
//!
//! - Nsight Systems 2023.4+ writes `GPU_METRICS` (timestamp, typeId, metricId, value), with the
//!   metric names in `TARGET_INFO_GPU_METRICS` (typeId, metricId → metricName). The same export
//!   still writes every sample a second time as JSON in `GENERIC_EVENTS` (checked on
//!   tests/fixtures/gpu_metrics_2023.sqlite: 275 JSON rows for GPU 0, 275 distinct timestamps × 30
//!   metrics in `GPU_METRICS`), so when `GPU_METRICS` exists the JSON rows are not read.
//! - 2022.x writes only the JSON form: one `GENERIC_EVENTS` row per sample, `data` an object
//!   metric name → value string; its `typeId` is a `GENERIC_EVENT_TYPES` row (its JSON lists the
//!   fields) whose source in `GENERIC_EVENT_SOURCES` is named "GpuMetrics". Other generic-event
//!   sources (ETW providers, …) are not metrics and are skipped.
//!
//! Time: in 2022.4 (tests/fixtures/gpu_metrics.sqlite) `timestamp` is NULL and `rawTimestamp` is
//! already on the session clock (the source says `"TimeSource": "SessionNs"`): the samples with
//! SM Active > 0 lie in 523.25–664.75 ms, the kernels in 523.34–664.75 ms. The 2023.4 JSON rows
//! are the same. So a row's time is `timestamp` when present, else `rawTimestamp`.
//!
//! GPU: typeId (and sourceId) are serialized GlobalIds whose low byte is the GPU's id, the `id`
//! column of `TARGET_INFO_GPU` (nsys 2023.4's recipe gpu_metric_util_map.py also takes
//! `typeId & 0xFF`). Checked on the two-GPU 2023.4 capture: typeIds 0x1000100000000 and
//! 0x1000100000001 are GPUs 0 and 1 there (PCI 06.0 and 07.0), and SM Active is non-zero only on
//! the GPU the kernels ran on. The id is mapped to the CUDA device through `cuDevice`.

use std::collections::HashMap;

use serde_json::Value;

use super::connection::{Row, int, text};
use super::reader::Reader;
use crate::load::LoadError;
use crate::trace::{GpuMetricSeries, GpuMetrics, LoadWarnings};

pub const T_GPU_METRICS: &str = "GPU_METRICS";
pub const T_METRIC_NAMES: &str = "TARGET_INFO_GPU_METRICS";
pub const T_GENERIC_EVENTS: &str = "GENERIC_EVENTS";
const T_GENERIC_TYPES: &str = "GENERIC_EVENT_TYPES";
const T_GENERIC_SOURCES: &str = "GENERIC_EVENT_SOURCES";

/// The GPU id inside a metrics typeId (see the module comment).
fn gpu_id_of_type(type_id: i64) -> i64 {
    type_id & 0xFF
}

/// (CUDA device, metric name as exported).
type SeriesKey = (u32, String);

/// Samples gathered per (device, metric name) before the series are built.
#[derive(Default)]
struct Gathered {
    index: HashMap<SeriesKey, usize>,
    series: Vec<(SeriesKey, Vec<(i64, f64)>)>,
}

impl Gathered {
    /// The slot of a (device, metric name), created on first use.
    fn slot(&mut self, key: SeriesKey) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.series.push((key.clone(), Vec::new()));
        self.index.insert(key, self.series.len() - 1);
        self.series.len() - 1
    }

    fn push(&mut self, slot: usize, t_ns: i64, value: f64) {
        self.series[slot].1.push((t_ns, value));
    }

    fn finish(self) -> GpuMetrics {
        let mut series: Vec<GpuMetricSeries> = self
            .series
            .into_iter()
            .map(|((device, name), samples)| GpuMetricSeries::new(device, name, samples))
            .collect();
        series.sort_by(|a, b| (a.device, &a.name).cmp(&(b.device, &b.name)));
        GpuMetrics { series }
    }
}

/// GPU id (`TARGET_INFO_GPU.id`) → CUDA device, and how to place a sample whose id is unknown.
struct GpuMap {
    device_of_id: HashMap<i64, u32>,
}

impl GpuMap {
    fn read(r: &Reader) -> Result<Self, LoadError> {
        let mut device_of_id = HashMap::new();
        let t = "TARGET_INFO_GPU";
        if !r.schema.has_table(t) {
            return Ok(Self { device_of_id });
        }
        let conn = r.open()?;
        let mut cuda_of_gpu: HashMap<i64, i64> = HashMap::new();
        let cd = "TARGET_INFO_CUDA_DEVICE";
        if r.schema.has_column(cd, "gpuId") && r.schema.has_column(cd, "cudaId") {
            r.for_each_row(
                &conn,
                cd,
                &r.schema.select(cd, &["gpuId", "cudaId"]),
                |row| {
                    if let (Some(g), Some(c)) = (int(row, 0), int(row, 1)) {
                        cuda_of_gpu.entry(g).or_insert(c);
                    }
                },
            )?;
        }
        let sql = r.schema.select(t, &["id", "cuDevice"]);
        r.for_each_row(&conn, t, &sql, |row| {
            let Some(id) = int(row, 0) else { return };
            let device = int(row, 1)
                .or_else(|| cuda_of_gpu.get(&id).copied())
                .unwrap_or(id);
            device_of_id.insert(id, device.clamp(0, i64::from(u32::MAX)) as u32);
        })?;
        Ok(Self { device_of_id })
    }

    /// The CUDA device of a sample's GPU id: the listed GPU; the only GPU when the id is not
    /// listed and there is one; the id itself when the export lists no GPU at all (nothing to
    /// contradict it); else `None` (the caller counts a warning).
    fn device(&self, gpu_id: i64) -> Option<u32> {
        if let Some(&d) = self.device_of_id.get(&gpu_id) {
            return Some(d);
        }
        match self.device_of_id.len() {
            0 => u32::try_from(gpu_id).ok(),
            1 => self.device_of_id.values().next().copied(),
            _ => None,
        }
    }
}

const UNMAPPED: &str = "[is|are] for a GPU that is not in TARGET_INFO_GPU (skipped)";

pub fn read_gpu_metrics(r: &Reader) -> Result<(GpuMetrics, LoadWarnings), LoadError> {
    let mut warnings = LoadWarnings::default();
    if r.schema.has_table(T_GPU_METRICS) {
        let gpus = GpuMap::read(r)?;
        let gathered = read_table_form(r, &gpus, &mut warnings)?;
        return Ok((gathered.finish(), warnings));
    }
    if r.schema.has_table(T_GENERIC_EVENTS) && r.schema.has_table(T_GENERIC_TYPES) {
        let gpus = GpuMap::read(r)?;
        let gathered = read_json_form(r, &gpus, &mut warnings)?;
        return Ok((gathered.finish(), warnings));
    }
    Ok((GpuMetrics::default(), warnings))
}

/// 2023.4+: `GPU_METRICS` joined (here, not in SQL) to `TARGET_INFO_GPU_METRICS`.
fn read_table_form(
    r: &Reader,
    gpus: &GpuMap,
    warnings: &mut LoadWarnings,
) -> Result<Gathered, LoadError> {
    let conn = r.open()?;
    let mut names: HashMap<(i64, i64), String> = HashMap::new();
    if r.schema.has_table(T_METRIC_NAMES) {
        let sql = r
            .schema
            .select(T_METRIC_NAMES, &["typeId", "metricId", "metricName"]);
        r.for_each_row(&conn, T_METRIC_NAMES, &sql, |row| {
            if let (Some(t), Some(m), Some(n)) = (int(row, 0), int(row, 1), text(row, 2)) {
                names.insert((t, m), String::from_utf8_lossy(n).into_owned());
            }
        })?;
    }
    // Each (typeId, metricId) once: its series slot, or None when it cannot be placed.
    let mut slots: HashMap<(i64, i64), Option<usize>> = HashMap::new();
    let mut gathered = Gathered::default();
    let sql = r
        .schema
        .select(T_GPU_METRICS, &["timestamp", "typeId", "metricId", "value"]);
    let (mut no_time, mut no_name, mut unmapped, mut no_value) = (0u64, 0u64, 0u64, 0u64);
    let mut last: Option<((i64, i64), usize)> = None;
    r.for_each_row(&conn, T_GPU_METRICS, &sql, |row| {
        let (Some(type_id), Some(metric_id)) = (int(row, 1), int(row, 2)) else {
            no_name += 1;
            return;
        };
        let Some(t) = int(row, 0) else {
            no_time += 1;
            return;
        };
        let Some(value) = number(row, 3) else {
            no_value += 1;
            return;
        };
        let id = (type_id, metric_id);
        // Rows come in runs of one sample's metrics: look up the key only when it changes.
        let slot = match last {
            Some((k, slot)) if k == id => slot,
            _ => {
                let slot = *slots.entry(id).or_insert_with(|| {
                    let name = names.get(&id)?;
                    let device = gpus.device(gpu_id_of_type(type_id))?;
                    Some(gathered.slot((device, name.clone())))
                });
                let Some(slot) = slot else {
                    if names.contains_key(&id) {
                        unmapped += 1;
                    } else {
                        no_name += 1;
                    }
                    return;
                };
                last = Some((id, slot));
                slot
            }
        };
        gathered.push(slot, t, value);
    })?;
    let t = T_GPU_METRICS;
    warnings.skip(t, "[has|have] no timestamp (skipped)", no_time);
    warnings.skip(
        t,
        "[names a metric|name metrics] not in TARGET_INFO_GPU_METRICS (skipped)",
        no_name,
    );
    warnings.skip(t, UNMAPPED, unmapped);
    warnings.skip(t, "[has|have] no numeric value (skipped)", no_value);
    Ok(gathered)
}

/// A numeric column: integers and reals as they are, text parsed.
fn number(row: &Row, i: usize) -> Option<f64> {
    use rusqlite::types::ValueRef;
    match row.get(i)? {
        ValueRef::Integer(v) => Some(v as f64),
        ValueRef::Real(f) => Some(f),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A metric value in the JSON form: nsys writes strings ("52"); numbers are accepted too.
fn json_number(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// 2022.x: the `GENERIC_EVENTS` rows whose type belongs to the "GpuMetrics" source.
fn read_json_form(
    r: &Reader,
    gpus: &GpuMap,
    warnings: &mut LoadWarnings,
) -> Result<Gathered, LoadError> {
    let conn = r.open()?;
    let mut metric_sources: Vec<i64> = Vec::new();
    if r.schema.has_table(T_GENERIC_SOURCES) {
        let sql = r.schema.select(T_GENERIC_SOURCES, &["sourceId", "data"]);
        r.for_each_row(&conn, T_GENERIC_SOURCES, &sql, |row| {
            let json: Option<Value> = text(row, 1).and_then(|d| serde_json::from_slice(d).ok());
            let is_metrics = json
                .as_ref()
                .and_then(|j| j.get("Name"))
                .and_then(Value::as_str)
                == Some("GpuMetrics");
            if let (true, Some(id)) = (is_metrics, int(row, 0)) {
                metric_sources.push(id);
            }
        })?;
    }
    // The metric types: a "GpuMetrics" source and a non-empty field list. nsys 2023.4 also
    // writes field-less types under that source (data "null"); they hold no samples.
    let mut metric_types: Vec<i64> = Vec::new();
    let sql = r
        .schema
        .select(T_GENERIC_TYPES, &["typeId", "sourceId", "data"]);
    r.for_each_row(&conn, T_GENERIC_TYPES, &sql, |row| {
        let (Some(type_id), Some(source)) = (int(row, 0), int(row, 1)) else {
            return;
        };
        if !metric_sources.contains(&source) {
            return;
        }
        let json: Option<Value> = text(row, 2).and_then(|d| serde_json::from_slice(d).ok());
        let has_fields = json
            .as_ref()
            .and_then(|j| j.get("Fields"))
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if has_fields {
            metric_types.push(type_id);
        }
    })?;
    let mut gathered = Gathered::default();
    if metric_types.is_empty() {
        return Ok(gathered);
    }
    let list: Vec<String> = metric_types.iter().map(i64::to_string).collect();
    let sql = format!(
        "{} WHERE typeId IN ({})",
        r.schema.select(
            T_GENERIC_EVENTS,
            &["timestamp", "rawTimestamp", "typeId", "data"]
        ),
        list.join(", ")
    );
    let (mut no_time, mut unmapped, mut bad_json, mut bad_values) = (0u64, 0u64, 0u64, 0u64);
    r.for_each_row(&conn, T_GENERIC_EVENTS, &sql, |row| {
        let Some(t) = int(row, 0).or_else(|| int(row, 1)) else {
            no_time += 1;
            return;
        };
        let Some(device) = int(row, 2).and_then(|ty| gpus.device(gpu_id_of_type(ty))) else {
            unmapped += 1;
            return;
        };
        let json: Option<serde_json::Map<String, Value>> =
            text(row, 3).and_then(|d| serde_json::from_slice(d).ok());
        let Some(object) = json else {
            bad_json += 1;
            return;
        };
        for (name, v) in object {
            match json_number(&v) {
                Some(value) => {
                    let slot = gathered.slot((device, name));
                    gathered.push(slot, t, value);
                }
                None => bad_values += 1,
            }
        }
    })?;
    let t = T_GENERIC_EVENTS;
    // GENERIC_EVENTS holds other events too: these are counted, not taken off its rows.
    let samples = "GPU metric [sample|samples]";
    warnings.add_about(t, samples, "[has|have] no timestamp (skipped)", no_time);
    warnings.add_about(t, samples, UNMAPPED, unmapped);
    warnings.add_about(
        t,
        samples,
        "[has|have] data that is not a JSON object (skipped)",
        bad_json,
    );
    warnings.add_about(
        t,
        "GPU metric [value is|values are]",
        "not a number (skipped)",
        bad_values,
    );
    Ok(gathered)
}
