//! Two Nsight Compute reports of the same program, kernel by kernel: `sightline diff A.ncu-rep
//! B.ncu-rep`. A kernel is its name (as ncu shows it) and its invocation index among the
//! kernels of that name, in report order — the k-th `gemm` of the baseline against the k-th
//! `gemm` of the new run, never matched by ID (a kernel more or less shifts every ID after it).
//! Every metric whose value differs is listed, with the change in percent of the baseline;
//! a metric or a kernel only one report has is listed as such.

use std::collections::HashMap;

use crate::trace::ncu::{MetricValue, NcuReport, NcuWorkload};

/// One difference.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricChange {
    pub kernel: String,
    /// The kernel's index among the kernels of its name (from 0).
    pub invocation: usize,
    /// The metric's name; empty for a kernel only one report has.
    pub metric: String,
    /// The value as text in each report (`None`: the report does not have it).
    pub base: Option<String>,
    pub new: Option<String>,
    /// (new − base) / |base| × 100 for numbers, when base is not 0.
    pub change_pct: Option<f64>,
}

/// Each workload keyed by (name, invocation index of that name).
fn keyed(report: &NcuReport) -> Vec<((&str, usize), &NcuWorkload)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    report
        .workloads
        .iter()
        .map(|w| {
            let name = w.display_name();
            let n = seen.entry(name).or_default();
            let key = (name, *n);
            *n += 1;
            (key, w)
        })
        .collect()
}

fn text(v: &MetricValue) -> String {
    match v {
        MetricValue::Str(s) => s.clone(),
        MetricValue::F32(x) => x.to_string(),
        MetricValue::F64(x) => x.to_string(),
        MetricValue::U32(x) => x.to_string(),
        MetricValue::U64(x) => x.to_string(),
        MetricValue::List(items) => format!("{} instances", items.len()),
        MetricValue::Unknown => "?".to_string(),
    }
}

/// Values equal as ncu stored them (a list by its instances' values).
fn same(a: &MetricValue, b: &MetricValue) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

/// Every difference between `base` and `new`, in the baseline's kernel order (kernels only the
/// new report has come last), metrics by name.
pub fn metric_changes(base: &NcuReport, new: &NcuReport) -> Vec<MetricChange> {
    let new_keyed = keyed(new);
    let new_by_key: HashMap<(&str, usize), &NcuWorkload> = new_keyed.iter().copied().collect();
    let mut out = Vec::new();
    let mut matched = std::collections::HashSet::new();
    for (key, b) in keyed(base) {
        let Some(n) = new_by_key.get(&key) else {
            out.push(kernel_only(key, true));
            continue;
        };
        matched.insert(key);
        let mut names: Vec<&str> = b
            .metrics
            .iter()
            .map(|(id, _)| base.metric_name(*id))
            .chain(n.metrics.iter().map(|(id, _)| new.metric_name(*id)))
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let bv = base.value(b, name);
            let nv = new.value(n, name);
            let changed = match (bv, nv) {
                (Some(x), Some(y)) => !same(x, y),
                _ => true,
            };
            if !changed {
                continue;
            }
            let change_pct = match (
                bv.and_then(MetricValue::as_f64),
                nv.and_then(MetricValue::as_f64),
            ) {
                (Some(x), Some(y)) if x != 0.0 => Some((y - x) / x.abs() * 100.0),
                _ => None,
            };
            out.push(MetricChange {
                kernel: key.0.to_string(),
                invocation: key.1,
                metric: name.to_string(),
                base: bv.map(text),
                new: nv.map(text),
                change_pct,
            });
        }
    }
    for (key, _) in new_keyed {
        if !matched.contains(&key) {
            out.push(kernel_only(key, false));
        }
    }
    out
}

fn kernel_only(key: (&str, usize), in_base: bool) -> MetricChange {
    let here = Some("(kernel)".to_string());
    MetricChange {
        kernel: key.0.to_string(),
        invocation: key.1,
        metric: String::new(),
        base: if in_base { here.clone() } else { None },
        new: if in_base { None } else { here },
        change_pct: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(kernels: &[(&str, f64)]) -> NcuReport {
        let mut r = NcuReport::default();
        let id = r.intern_metric("gpu__time_duration.sum");
        let same = r.intern_metric("launch__grid_size");
        for (i, (name, ns)) in kernels.iter().enumerate() {
            r.workloads.push(NcuWorkload {
                id: i as u32,
                demangled_name: name.to_string(),
                metrics: vec![(id, MetricValue::F64(*ns)), (same, MetricValue::U64(64))],
                ..Default::default()
            });
        }
        r
    }

    #[test]
    fn kernels_pair_by_name_and_invocation_not_by_id() {
        let base = report(&[("gemm", 100.0), ("relu", 10.0), ("gemm", 200.0)]);
        // One kernel more in front: IDs shift, names and invocations do not.
        let new = report(&[
            ("copy", 5.0),
            ("gemm", 50.0),
            ("relu", 10.0),
            ("gemm", 200.0),
        ]);
        let changes = metric_changes(&base, &new);
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert_eq!(
            (changes[0].kernel.as_str(), changes[0].invocation),
            ("gemm", 0)
        );
        assert_eq!(changes[0].metric, "gpu__time_duration.sum");
        assert_eq!(changes[0].change_pct, Some(-50.0));
        assert_eq!(changes[1].kernel, "copy");
        assert!(changes[1].base.is_none() && changes[1].new.is_some());
        assert!(metric_changes(&base, &base).is_empty());
    }
}
