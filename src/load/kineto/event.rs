//! One Chrome-trace event as PyTorch's profiler (Kineto) writes it, read from its own bytes with
//! no copy of its strings, and the exact reading of its times.
//!
//! `ts` and `dur` are microseconds with a fractional nanosecond part, whatever `displayTimeUnit`
//! says. A float64 keeps about 16 significant digits, and epoch-based traces write 16 before the
//! point: read as text, each value is exact (nanoseconds = the decimal µs × 1000, half to even past
//! the third decimal).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;

/// The fields Sightline reads; every other field is skipped unparsed.
#[derive(Deserialize, Default)]
pub struct RawEvent<'a> {
    #[serde(borrow)]
    pub ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub cat: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub pid: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tid: Option<&'a RawValue>,
    #[serde(borrow)]
    pub ts: Option<&'a RawValue>,
    #[serde(borrow)]
    pub dur: Option<&'a RawValue>,
    #[serde(borrow)]
    pub args: Option<Args<'a>>,
}

/// The `args` Sightline reads. Numbers are read leniently ([`Num`]): an integer, a float or a
/// numeric string all count, anything else is as good as absent.
#[derive(Deserialize, Default)]
pub struct Args<'a> {
    /// The 2021 schema writes `external id`.
    #[serde(rename = "External id", alias = "external id")]
    pub external_id: Option<Num>,
    pub device: Option<Num>,
    pub context: Option<Num>,
    pub stream: Option<Num>,
    pub correlation: Option<Num>,
    /// Bytes of a copy or memset.
    pub bytes: Option<Num>,
    /// Bytes of a `[memory]` event (negative: freed).
    #[serde(rename = "Bytes")]
    pub alloc_bytes: Option<Num>,
    #[serde(rename = "Device Type")]
    pub device_type: Option<Num>,
    #[serde(rename = "Device Id")]
    pub device_id: Option<Num>,
    #[serde(rename = "Total Allocated")]
    pub total_allocated: Option<Num>,
    #[serde(rename = "Input Dims", borrow)]
    pub input_dims: Option<&'a RawValue>,
    #[serde(rename = "Input type", borrow)]
    pub input_type: Option<&'a RawValue>,
    #[serde(rename = "Input Strides", borrow)]
    pub input_strides: Option<&'a RawValue>,
    #[serde(rename = "Concrete Inputs", borrow)]
    pub concrete_inputs: Option<&'a RawValue>,
    #[serde(borrow)]
    pub grid: Option<&'a RawValue>,
    #[serde(borrow)]
    pub block: Option<&'a RawValue>,
    #[serde(rename = "registers per thread")]
    pub registers: Option<Num>,
    #[serde(rename = "shared memory")]
    pub shared_memory: Option<Num>,
    /// The name of a metadata event (`process_name`, `thread_name`).
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    /// `process_labels` ("CPU", "GPU 0").
    #[serde(borrow)]
    pub labels: Option<Cow<'a, str>>,
    /// `record_param_comms`'s (and, in recent PyTorch, an NCCL kernel's) collective:
    /// `allreduce`, `broadcast`, … Read raw: a writer that puts a number here must not cost the
    /// event.
    #[serde(rename = "Collective name", borrow)]
    pub collective_name: Option<&'a RawValue>,
    /// The collective's sequence number in its process group (recent PyTorch).
    #[serde(rename = "Seq")]
    pub seq: Option<Num>,
    #[serde(rename = "Process Group Name", borrow)]
    pub process_group: Option<&'a RawValue>,
    /// XLA's trace-viewer JSON (`jax.profiler`'s `*.trace.json.gz`, `perfetto_trace.json.gz`)
    /// writes no `cat`: its GPU work carries these details (as its XPlane's stats), its CUDA
    /// calls a `correlation_id` and a `device_id`.
    #[serde(rename = "correlation_id")]
    pub xla_correlation: Option<Num>,
    #[serde(rename = "device_id")]
    pub xla_device: Option<Num>,
    #[serde(borrow)]
    pub kernel_details: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub memcpy_details: Option<Cow<'a, str>>,
    #[serde(rename = "Memset_details", borrow)]
    pub memset_details: Option<Cow<'a, str>>,
}

/// A raw JSON value as text: a string's contents, anything else as written.
pub fn raw_text(raw: &RawValue) -> String {
    serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| raw.get().to_string())
}

/// A number written as an integer, a float or a numeric string.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
    /// Present but not a number (`null`, `true`, an object, text).
    NotANumber,
}

impl Num {
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Num::Int(v) => Some(v),
            Num::Float(f) if f.is_finite() && f.abs() < 9.2e18 => Some(f.round() as i64),
            _ => None,
        }
    }
}

/// The integer value of an optional lenient number.
pub fn int(v: Option<Num>) -> Option<i64> {
    v.and_then(Num::as_i64)
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
                Ok(Num::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
                Ok(i64::try_from(v).map_or(Num::Float(v as f64), Num::Int))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
                Ok(Num::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                Ok(v.trim()
                    .parse::<i64>()
                    .map(Num::Int)
                    .or_else(|_| v.trim().parse::<f64>().map(Num::Float))
                    .unwrap_or(Num::NotANumber))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Num, E> {
                Ok(Num::NotANumber)
            }
            fn visit_unit<E>(self) -> Result<Num, E> {
                Ok(Num::NotANumber)
            }
            fn visit_none<E>(self) -> Result<Num, E> {
                Ok(Num::NotANumber)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Num, D::Error> {
                d.deserialize_any(V)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Num, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Num::NotANumber)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Num::NotANumber)
            }
        }
        d.deserialize_any(V)
    }
}

/// Nanoseconds of a JSON number of microseconds, read exactly from its text: `12.3456` µs is
/// 12346 ns (half to even past the third decimal). `None` for anything that is not a finite
/// number in range (a string holding a number counts).
pub fn micros_to_ns(raw: &RawValue) -> Option<i64> {
    let text = raw.get().trim();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    decimal_micros_to_ns(text)
}

fn decimal_micros_to_ns(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.bytes().any(|b| b == b'e' || b == b'E') {
        // An exponent (rare: a writer that prints floats): exact enough through f64.
        let v: f64 = text.parse().ok()?;
        let ns = (v * 1000.0).round_ties_even();
        return (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64);
    }
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut ns: i64 = 0;
    for b in int_part.bytes() {
        ns = ns.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    ns = ns.checked_mul(1000)?;
    let frac = frac_part.as_bytes();
    let mut sub: i64 = 0;
    for i in 0..3 {
        sub = sub * 10 + frac.get(i).map_or(0, |&b| i64::from(b - b'0'));
    }
    ns = ns.checked_add(sub)?;
    if frac.len() > 3 {
        // Half to even on what follows the nanoseconds.
        let rest = &frac[3..];
        let first = rest[0];
        let beyond_half = rest[1..].iter().any(|&b| b != b'0');
        let round_up = first > b'5' || (first == b'5' && (beyond_half || ns % 2 == 1));
        if round_up {
            ns = ns.checked_add(1)?;
        }
    }
    Some(if negative { -ns } else { ns })
}

/// A process or thread id as Kineto writes it: a number, or a string holding one (2021 schema:
/// `"tid": "25738"`); other strings (`"stream 7"`, `"Spans"`) are not ids.
pub fn id_of(raw: Option<&RawValue>) -> Option<i64> {
    let text = raw?.get().trim();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    text.parse::<i64>().ok()
}

/// Three small integers written as a JSON array (`grid`, `block`).
pub fn triple(raw: Option<&RawValue>) -> [u32; 3] {
    let parsed: Option<Vec<Num>> = raw.and_then(|r| serde_json::from_str(r.get()).ok());
    let mut out = [0u32; 3];
    if let Some(v) = parsed {
        for (slot, n) in out.iter_mut().zip(v) {
            *slot = n.as_i64().unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
        }
    }
    out
}

/// `Input Dims` as PyTorch prints `input_shapes` (Python's `str` of a list of lists):
/// `[[2048, 2048], []]`.
pub fn input_shapes_text(raw: &RawValue) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
        return raw.get().to_string();
    };
    let mut out = String::new();
    python_repr(&value, &mut out);
    out
}

fn python_repr(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_repr(item, out);
            }
            out.push(']');
        }
        Value::String(s) => {
            out.push('\'');
            out.push_str(s);
            out.push('\'');
        }
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(text: &str) -> Option<i64> {
        decimal_micros_to_ns(text)
    }

    #[test]
    fn decimal_microseconds_are_exact_nanoseconds() {
        assert_eq!(ns("4738408394765.824"), Some(4_738_408_394_765_824));
        assert_eq!(ns("1623142623460111"), Some(1_623_142_623_460_111_000));
        assert_eq!(ns("0.864"), Some(864));
        assert_eq!(ns("12.3"), Some(12_300));
        assert_eq!(ns("-5.5"), Some(-5_500));
        assert_eq!(ns("1.5e3"), Some(1_500_000));
        // Half to even past the third decimal.
        assert_eq!(ns("1.0005"), Some(1_000));
        assert_eq!(ns("1.0015"), Some(1_002));
        assert_eq!(ns("1.00051"), Some(1_001));
        assert_eq!(ns("abc"), None);
        assert_eq!(ns(""), None);
        assert_eq!(ns("99999999999999999999"), None);
    }

    #[test]
    fn a_float64_would_lose_these_nanoseconds() {
        // 16 digits before the point: f64 cannot hold the last one exactly.
        let text = "4738408394765823.999";
        let via_f64 = (text.parse::<f64>().unwrap() * 1000.0) as i64;
        assert_eq!(ns(text), Some(4_738_408_394_765_823_999));
        assert_ne!(via_f64, 4_738_408_394_765_823_999);
    }

    #[test]
    fn input_dims_print_as_python_lists() {
        let raw: Box<RawValue> = serde_json::from_str("[[2048, 2048], [], [\"a\"], null]").unwrap();
        assert_eq!(input_shapes_text(&raw), "[[2048, 2048], [], ['a'], None]");
    }
}
