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

/// The wire tag of a list element: field 3, length-delimited.
const ELEMENT_TAG: u8 = (3 << 3) | 2;

/// A metric result's instance list: decoded, left in the file (a long list beside a single
/// value whose elements lie back to back in `payload`), or `None` when it has none.
pub(super) fn list(
    m: &msg::MetricResult,
    payload: &Bytes,
    payload_offset: u64,
) -> Result<Option<InstanceList>, DecodeError> {
    let elements = &m.metric_value_list;
    if elements.is_empty() {
        return Ok(None);
    }
    if m.metric_value.is_some()
        && elements.len() >= DEFER_MIN
        && let Some(span) = contiguous_span(elements, payload)
    {
        return Ok(Some(InstanceList::Deferred(DeferredInstances {
            offset: payload_offset + span.0 as u64,
            len: (span.1 - span.0) as u32,
            count: elements.len() as u32,
        })));
    }
    decode_elements(elements).map(|l| Some(InstanceList::Read(l)))
}

/// The decoded elements of a list.
pub(super) fn decode_elements(elements: &[Bytes]) -> Result<Vec<MetricInstance>, DecodeError> {
    elements
        .iter()
        .map(|bytes| {
            let e = msg::MetricListElement::decode(&bytes[..])?;
            Ok(MetricInstance {
                correlation: e.correlation_id.as_ref().map(super::convert::scalar),
                value: e
                    .element_value
                    .as_ref()
                    .map(super::convert::scalar)
                    .unwrap_or(ScalarValue::Unknown),
            })
        })
        .collect()
}

/// The byte range in `payload` of `elements` with their tags and lengths, when they are slices
/// of it lying back to back (as ncu writes them); `None` otherwise.
fn contiguous_span(elements: &[Bytes], payload: &Bytes) -> Option<(usize, usize)> {
    let base = payload.as_ptr() as usize;
    let start_of = |e: &Bytes| -> Option<usize> {
        (e.as_ptr() as usize)
            .checked_sub(base)?
            .checked_sub(1 + varint_len(e.len()))
    };
    let end_of = |e: &Bytes| (e.as_ptr() as usize - base) + e.len();
    let first = elements.first()?;
    let start = start_of(first)?;
    let mut expected = start;
    for e in elements {
        if start_of(e)? != expected || payload.get(expected) != Some(&ELEMENT_TAG) {
            return None;
        }
        expected = end_of(e);
    }
    (expected <= payload.len()).then_some((start, expected))
}

fn varint_len(mut v: usize) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// The instances of a list, read from the report's file when they were left there.
pub fn read_instances<'a>(
    report: &NcuReport,
    list: &'a InstanceList,
) -> Result<Cow<'a, [MetricInstance]>, LoadError> {
    match list {
        InstanceList::Read(l) => Ok(Cow::Borrowed(l)),
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
    // The span is a run of field-3 records: it decodes as a metric result of only a list.
    let result = msg::MetricResult::decode(Bytes::from(bytes))
        .map_err(|_| changed("the file has changed"))?;
    if result.metric_value_list.len() != d.count as usize {
        return Err(changed("the file has changed"));
    }
    decode_elements(&result.metric_value_list).map_err(|_| changed("the file has changed"))
}
