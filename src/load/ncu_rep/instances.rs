//! A metric's instance values. Short lists are decoded with their workload; long ones — the
//! Source Counters' per-instruction values, one per SASS instruction (15,458 for a large
//! kernel) — are left in the file where they are and read only when asked for
//! ([`read_instances`]), as the per-instruction source data is.

use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};

use bytes::Bytes;
use prost::{DecodeError, Message};

use super::messages as msg;
use super::{Packing, report_packing, unpacked};
use crate::load::LoadError;
use crate::trace::ncu::{DeferredInstances, InstanceList, MetricInstance, NcuReport, ScalarValue};

/// Lists with at least this many elements, beside a single value, are left in the file.
/// Per-instruction lists of large kernels run to many thousands; the lists the details page
/// prints (the occupancy curves: 64, 256 and 455 points on an H200) stay well below.
const DEFER_MIN: usize = 1024;

/// A list beside a metric's single value, its elements a run of records (`run`, `count` of
/// them, at `offset` of the report's stream where known): left in the file when long, kept
/// packed in memory otherwise.
pub(super) fn beside_value(run: &[u8], count: u32, offset: Option<u64>) -> InstanceList {
    match offset {
        Some(offset) if count as usize >= DEFER_MIN => InstanceList::Deferred(DeferredInstances {
            offset,
            len: run.len() as u32,
            count,
        }),
        // A copy: a slice would keep the whole block in memory.
        _ => InstanceList::Packed {
            bytes: Bytes::copy_from_slice(run),
            count,
        },
    }
}

/// One list element from its encoded bytes.
pub(super) fn decode_element(bytes: &[u8]) -> Result<MetricInstance, DecodeError> {
    Ok(instance(&msg::MetricListElement::decode(bytes)?))
}

/// The first instance of a list (without decoding the rest of a packed one).
pub(super) fn first_instance(list: &InstanceList) -> Option<MetricInstance> {
    match list {
        InstanceList::Read(l) => l.first().cloned(),
        InstanceList::Packed { bytes, .. } => {
            // A run of field-3 records: the tag, the element's length, the element.
            let mut rest = bytes.get(1..)?;
            let len = prost::encoding::decode_varint(&mut rest).ok()? as usize;
            let e = msg::MetricListElement::decode(rest.get(..len)?).ok()?;
            Some(instance(&e))
        }
        InstanceList::Deferred(_) => None,
    }
}

fn instance(e: &msg::MetricListElement) -> MetricInstance {
    MetricInstance {
        correlation: e.correlation_id.as_ref().map(super::convert::scalar),
        value: e
            .element_value
            .as_ref()
            .map(super::convert::scalar)
            .unwrap_or(ScalarValue::Unknown),
    }
}

/// The elements of a run of list records (a packed or deferred list), `count` of them.
fn decode_span(bytes: Bytes, count: u32) -> Result<Vec<MetricInstance>, String> {
    // The run decodes as a metric result of only a list.
    let result = msg::MetricResult::decode(bytes).map_err(|e| e.to_string())?;
    if result.metric_value_list.len() != count as usize {
        return Err(format!(
            "{} elements where {count} were counted",
            result.metric_value_list.len()
        ));
    }
    decode_elements(&result.metric_value_list).map_err(|e| e.to_string())
}

/// The decoded elements of a list.
pub(super) fn decode_elements(elements: &[Bytes]) -> Result<Vec<MetricInstance>, DecodeError> {
    elements.iter().map(|bytes| decode_element(bytes)).collect()
}

/// The instances of a list, read from the report's file when they were left there.
pub fn read_instances<'a>(
    report: &NcuReport,
    list: &'a InstanceList,
) -> Result<Cow<'a, [MetricInstance]>, LoadError> {
    match list {
        InstanceList::Read(l) => Ok(Cow::Borrowed(l)),
        InstanceList::Packed { bytes, count } => decode_span(bytes.clone(), *count)
            .map(Cow::Owned)
            .map_err(|e| LoadError::NotNcuReport {
                path: report.path.clone(),
                detail: format!("a metric's instances do not decode ({e})"),
            }),
        InstanceList::Deferred(d) => read_deferred(report, d).map(Cow::Owned),
    }
}

fn read_deferred(
    report: &NcuReport,
    d: &DeferredInstances,
) -> Result<Vec<MetricInstance>, LoadError> {
    let path = report.path.as_path();
    let unreadable = |e: std::io::Error| LoadError::Unreadable {
        path: path.to_path_buf(),
        source: e,
    };
    let changed = |what: &str| LoadError::NotNcuReport {
        path: path.to_path_buf(),
        detail: format!("per-instruction values cannot be read: {what} since it was opened"),
    };
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let mut head = [0u8; 4];
    let n = file.read(&mut head).map_err(unreadable)?;
    let packing =
        report_packing(path, &head[..n]).ok_or_else(|| changed("the file is no report"))?;
    file.seek(SeekFrom::Start(0)).map_err(unreadable)?;
    let mut bytes = Vec::with_capacity(d.len as usize);
    if packing == Packing::Plain {
        file.seek(SeekFrom::Start(d.offset)).map_err(unreadable)?;
        file.take(u64::from(d.len))
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
    } else {
        let mut stream = unpacked(file, packing).map_err(unreadable)?;
        std::io::copy(&mut (&mut stream).take(d.offset), &mut std::io::sink())
            .map_err(unreadable)?;
        stream
            .take(u64::from(d.len))
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
    }
    decode_span(Bytes::from(bytes), d.count).map_err(|_| changed("the file has changed"))
}
