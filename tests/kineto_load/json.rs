//! The test's own reading of a PyTorch profiler trace: plain `flate2` + `serde_json`, every time
//! from the decimal text of `ts` / `dur`, with what each event should become in Sightline's model.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use sightline::trace::RangeKind;

/// One event as written; `ts` and `dur` keep their text.
#[derive(Deserialize)]
struct JsonEvent {
    ph: Option<String>,
    cat: Option<String>,
    name: Option<String>,
    pid: Option<Value>,
    tid: Option<Value>,
    ts: Option<Box<RawValue>>,
    dur: Option<Box<RawValue>>,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize)]
struct JsonDoc {
    #[serde(rename = "traceEvents")]
    events: Vec<JsonEvent>,
    #[serde(rename = "deviceProperties", default)]
    device_properties: Value,
    #[serde(rename = "distributedInfo", default)]
    distributed_info: Value,
}

/// Nanoseconds of a decimal number of microseconds: `4738408394765.824` → 4738408394765824.
fn ns_of_micros_text(text: &str) -> i64 {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int_part, frac) = digits.split_once('.').unwrap_or((digits, ""));
    assert!(
        frac.len() <= 3 && frac.bytes().all(|b| b.is_ascii_digit()),
        "`{text}`: more than nanosecond precision or not a plain decimal; extend this test"
    );
    let micros: i64 = int_part.parse().unwrap_or_else(|_| panic!("`{text}`"));
    let sub: i64 = format!("{frac:0<3}").parse().unwrap();
    let ns = micros * 1000 + sub;
    if negative { -ns } else { ns }
}

/// A number, or a string holding one (the 2021 schema writes `"tid": "25738"`).
fn id_value(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// A GPU op, CUDA call or range as the JSON has it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Op {
    pub start_ns: i64,
    pub end_ns: i64,
    pub name: String,
}

/// Everything this test expects of one file.
#[derive(Default)]
pub struct Expected {
    pub kernels: Vec<Op>,
    pub memcpys: Vec<Op>,
    pub memsets: Vec<Op>,
    pub api_calls: Vec<Op>,
    /// Ranges by kind, each with the (pid, tid) it was written on (the device for GPU lanes).
    pub ranges: HashMap<&'static str, Vec<(i64, i64, Op)>>,
    /// Kernel name → (count, total ns).
    pub kernel_sum: BTreeMap<String, (u64, i64)>,
    /// `[CUDA memcpy <direction>]` or `[CUDA memset]` → (count, total bytes).
    pub memory_sum: BTreeMap<String, (u64, i64)>,
    /// Per device: the intervals of its kernels, copies and memsets.
    pub gpu_intervals: BTreeMap<u32, Vec<(i64, i64)>>,
    /// Correlation id → the CUDA calls with it.
    pub calls_by_correlation: HashMap<u64, Vec<Op>>,
    pub memory_events: usize,
    /// CUDA `[memory]` events that say `Total Allocated`.
    pub memory_in_use_samples: usize,
    pub gpu_names: Vec<(u32, String)>,
    pub rank: Option<u32>,
}

pub const RANGE_KINDS: [(&str, RangeKind); 4] = [
    ("cpu_op", RangeKind::Operator),
    ("user_annotation", RangeKind::Annotation),
    ("python_function", RangeKind::Python),
    ("gpu_user_annotation", RangeKind::GpuAnnotation),
];

/// The label nsys gives a copy direction, from the direction in Kineto's name.
fn direction_label(kineto_name: &str) -> &'static str {
    let direction = kineto_name
        .strip_prefix("Memcpy ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("");
    match direction {
        "HtoD" => "Host-to-Device",
        "DtoH" => "Device-to-Host",
        "DtoD" => "Device-to-Device",
        "HtoH" => "Host-to-Host",
        "PtoP" => "Peer-to-Peer",
        "HtoA" => "Host-to-Array",
        "AtoH" => "Array-to-Host",
        "AtoA" => "Array-to-Array",
        "AtoD" => "Array-to-Device",
        "DtoA" => "Device-to-Array",
        _ => "Unknown",
    }
}

pub fn read_json(path: &Path) -> Expected {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("open"))
        .read_to_end(&mut bytes)
        .expect("gunzip");
    let doc: JsonDoc = serde_json::from_slice(&bytes).expect("the trace is JSON");
    let mut e = Expected::default();
    for ev in &doc.events {
        let ph = ev.ph.as_deref().unwrap_or("");
        let name = ev.name.clone().unwrap_or_default();
        if name == "[memory]" && (ph == "i" || ph == "I") {
            e.memory_events += 1;
            let a = &ev.args;
            if a["Device Type"].as_i64() == Some(1)
                && a["Device Id"].as_i64().is_some_and(|d| d >= 0)
                && a.get("Total Allocated").is_some()
            {
                e.memory_in_use_samples += 1;
            }
            continue;
        }
        if ph != "X" {
            continue;
        }
        // The 2021 schema's `Operator` is today's `cpu_op`.
        let cat = match ev.cat.as_deref().unwrap_or("") {
            "Operator" => "cpu_op",
            other => other,
        };
        let time = |raw: &Option<Box<RawValue>>| {
            ns_of_micros_text(raw.as_ref().expect("ts and dur on every X event").get())
        };
        let start_ns = time(&ev.ts);
        let end_ns = start_ns + time(&ev.dur);
        let op = Op {
            start_ns,
            end_ns,
            name: name.clone(),
        };
        let device = || {
            id_value(ev.args.get("device"))
                .or(id_value(ev.pid.as_ref()))
                .expect("a device") as u32
        };
        let correlation = ev.args.get("correlation").and_then(Value::as_u64);
        let gpu_work = [
            "kernel",
            "Kernel",
            "gpu_memcpy",
            "Memcpy",
            "gpu_memset",
            "Memset",
        ];
        if gpu_work.contains(&cat) {
            let intervals = e.gpu_intervals.entry(device()).or_default();
            intervals.push((start_ns, end_ns));
        }
        let mut add_bytes = |label: String| {
            let s = e.memory_sum.entry(label).or_default();
            s.0 += 1;
            s.1 += ev.args["bytes"]
                .as_i64()
                .expect("bytes of a copy or memset");
        };
        match cat {
            "kernel" | "Kernel" => {
                let s = e.kernel_sum.entry(name).or_default();
                s.0 += 1;
                s.1 += end_ns - start_ns;
                e.kernels.push(op);
            }
            "gpu_memcpy" | "Memcpy" => {
                add_bytes(format!("[CUDA memcpy {}]", direction_label(&name)));
                e.memcpys.push(op);
            }
            "gpu_memset" | "Memset" => {
                add_bytes("[CUDA memset]".to_string());
                e.memsets.push(op);
            }
            "cuda_runtime" | "cuda_driver" | "Runtime" | "Driver" => {
                if let Some(c) = correlation {
                    e.calls_by_correlation
                        .entry(c)
                        .or_default()
                        .push(op.clone());
                }
                e.api_calls.push(op);
            }
            _ => {
                if let Some(&(key, kind)) = RANGE_KINDS.iter().find(|(c, _)| *c == cat) {
                    let (pid, tid) = if kind == RangeKind::GpuAnnotation {
                        (-1, i64::from(device()))
                    } else {
                        (
                            id_value(ev.pid.as_ref()).expect("pid"),
                            id_value(ev.tid.as_ref()).expect("tid"),
                        )
                    };
                    e.ranges.entry(key).or_default().push((pid, tid, op));
                }
            }
        }
    }
    for d in doc.device_properties.as_array().into_iter().flatten() {
        e.gpu_names.push((
            d["id"].as_u64().expect("device id") as u32,
            d["name"].as_str().expect("device name").to_string(),
        ));
    }
    e.rank = doc.distributed_info["rank"].as_u64().map(|r| r as u32);
    e
}
