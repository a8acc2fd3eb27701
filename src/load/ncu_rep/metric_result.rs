//! A profiled kernel's metric results, read from their wire bytes without prost's per-element
//! buffers: a result's instance list (per-instruction values: thousands of elements per metric)
//! is found as a run of records, not split into one shared buffer per element. The fields are
//! `MetricResult`'s ([`super::messages`]): 1 the name id, 2 the value, 3 each list element,
//! 4 a flag (unread). The list is then left in the file, kept packed or decoded as
//! [`super::instances`] says.

use bytes::Bytes;
use prost::Message;

use super::instances;
use super::messages as msg;
use crate::trace::ncu::InstanceList;

/// One metric result as the loader keeps it.
pub(crate) struct ParsedMetric {
    pub name_id: Option<u32>,
    pub value: Option<msg::MetricValue>,
    pub list: Option<InstanceList>,
}

/// A wire varint at `*at` of `buf`, moving past it.
fn varint(buf: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&b) = buf.get(*at) else {
            return Err("a metric result ends inside a number".into());
        };
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(value);
        }
    }
    Err("a metric result has a number of more than ten bytes".into())
}

/// The range of a length-delimited field's bytes starting at `*at`, moving past them.
fn delimited(buf: &[u8], at: &mut usize) -> Result<(usize, usize), String> {
    let len = varint(buf, at)? as usize;
    let start = *at;
    let end = start
        .checked_add(len)
        .filter(|&e| e <= buf.len())
        .ok_or("a metric result's field runs past its end")?;
    *at = end;
    Ok((start, end))
}

/// Metric result `m`, a slice of `payload` (a block's payload, at `payload_offset` of the
/// report's stream).
pub(super) fn parse(
    m: &Bytes,
    payload: &Bytes,
    payload_offset: u64,
) -> Result<ParsedMetric, String> {
    let buf = &m[..];
    let mut at = 0;
    let (mut name_id, mut value) = (None, None);
    // The list's elements (start, end in `buf`), and the run of records they make.
    let mut elements: Vec<(u32, u32)> = Vec::new();
    let (mut run_start, mut run_end, mut contiguous) = (0usize, 0usize, true);
    while at < buf.len() {
        let key_at = at;
        let key = varint(buf, &mut at)?;
        match (key >> 3, key & 7) {
            (1, 0) => name_id = Some(varint(buf, &mut at)? as u32),
            (2, 2) => {
                let (s, e) = delimited(buf, &mut at)?;
                value = Some(msg::MetricValue::decode(&buf[s..e]).map_err(|e| e.to_string())?);
            }
            (3, 2) => {
                let (s, e) = delimited(buf, &mut at)?;
                if elements.is_empty() {
                    run_start = key_at;
                } else if key_at != run_end {
                    contiguous = false;
                }
                run_end = e;
                elements.push((s as u32, e as u32));
            }
            (_, 0) => {
                varint(buf, &mut at)?;
            }
            (_, 1) => at += 8,
            (_, 2) => {
                delimited(buf, &mut at)?;
            }
            (_, 5) => at += 4,
            (_, t) => return Err(format!("a metric result has a field of wire type {t}")),
        }
    }
    if at > buf.len() {
        return Err("a metric result's last field runs past its end".into());
    }
    let list = if elements.is_empty() {
        None
    } else if value.is_some() && contiguous {
        // Where the run lies in the report's stream, when `m` is a slice of `payload`.
        let offset = (m.as_ptr() as usize)
            .checked_sub(payload.as_ptr() as usize)
            .filter(|&o| o + m.len() <= payload.len())
            .map(|o| payload_offset + (o + run_start) as u64);
        Some(instances::beside_value(
            &m[run_start..run_end],
            elements.len() as u32,
            offset,
        ))
    } else {
        let decoded = elements
            .iter()
            .map(|&(s, e)| instances::decode_element(&buf[s as usize..e as usize]))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        Some(InstanceList::Read(decoded))
    };
    Ok(ParsedMetric {
        name_id,
        value,
        list,
    })
}
