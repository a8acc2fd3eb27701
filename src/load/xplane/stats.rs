//! Reading an XPlane's stats: their names (by the plane's `stat_metadata`), their values as text
//! or numbers (a `ref_value` names the stat metadata whose name is the value), and the launch
//! details XLA's CUPTI collector writes as one text (`kernel_details`, `memcpy_details`,
//! `Memset_details`).

use std::borrow::Cow;
use std::collections::HashMap;

use super::proto::{StatValue, XPlane, XStat};

/// A plane's stat names, looked up both ways.
pub struct StatNames<'a> {
    plane: &'a XPlane,
    by_name: HashMap<&'a str, i64>,
}

impl<'a> StatNames<'a> {
    pub fn new(plane: &'a XPlane) -> Self {
        let by_name = plane
            .stat_metadata
            .iter()
            .map(|(&id, m)| (m.name.as_str(), id))
            .collect();
        Self { plane, by_name }
    }

    /// The id of the stat called `name`, if the plane has one.
    pub fn id(&self, name: &str) -> Option<i64> {
        self.by_name.get(name).copied()
    }

    /// The name of stat `id` ("" when the plane does not list it).
    pub fn name(&self, id: i64) -> &'a str {
        self.plane
            .stat_metadata
            .get(&id)
            .map_or("", |m| m.name.as_str())
    }

    /// The value of `stat` as text: numbers as written, a reference resolved.
    pub fn text(&self, stat: &'a XStat) -> Cow<'a, str> {
        match &stat.value {
            Some(StatValue::Str(s)) => Cow::Borrowed(s.as_str()),
            Some(StatValue::Ref(r)) => {
                Cow::Borrowed(i64::try_from(*r).map_or("", |id| self.name(id)))
            }
            Some(StatValue::Int64(v)) => Cow::Owned(v.to_string()),
            Some(StatValue::Uint64(v)) => Cow::Owned(v.to_string()),
            Some(StatValue::Double(v)) => Cow::Owned(v.to_string()),
            Some(StatValue::Bytes(b)) => Cow::Owned(format!("<{} bytes>", b.len())),
            None => Cow::Borrowed(""),
        }
    }

    /// The stat `id` among `stats`.
    pub fn find(stats: &'a [XStat], id: Option<i64>) -> Option<&'a XStat> {
        let id = id?;
        stats.iter().find(|s| s.metadata_id == id)
    }
}

/// A stat's value as an integer: integers as they are, text that holds one (XLA writes
/// `correlation_id` as text), a double rounded.
pub fn integer(stat: &XStat, names: &StatNames) -> Option<i64> {
    match &stat.value {
        Some(StatValue::Int64(v)) => Some(*v),
        Some(StatValue::Uint64(v)) => i64::try_from(*v).ok(),
        Some(StatValue::Double(v)) if v.is_finite() && v.abs() < 9.2e18 => Some(v.round() as i64),
        _ => names.text(stat).trim().parse().ok(),
    }
}

/// A stat's value as a number (an integer or a double, or text holding one).
pub fn number(stat: &XStat, names: &StatNames) -> Option<f64> {
    match &stat.value {
        Some(StatValue::Double(v)) => Some(*v),
        Some(StatValue::Int64(v)) => Some(*v as f64),
        Some(StatValue::Uint64(v)) => Some(*v as f64),
        _ => names.text(stat).trim().parse().ok(),
    }
}

pub use crate::trace::xla::{detail, detail_dims, detail_u64};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_details_read_as_xla_writes_them() {
        let d = "regs:168 static_shared:0 dynamic_shared:231424 grid:64,2,1 block:384,1,1 occ_pct:18.75";
        assert_eq!(detail_u64(d, "regs"), Some(168));
        assert_eq!(detail_u64(d, "dynamic_shared"), Some(231424));
        assert_eq!(detail_dims(d, "grid"), [64, 2, 1]);
        assert_eq!(detail_dims(d, "block"), [384, 1, 1]);
        assert_eq!(detail(d, "occ_pct"), Some("18.75"));
        assert_eq!(detail(d, "nothing"), None);
        assert_eq!(detail_dims(d, "nothing"), [0, 0, 0]);
    }
}
