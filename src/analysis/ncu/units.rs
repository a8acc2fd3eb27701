//! A metric's value as ncu-ui prints it: the unit its name implies (a report stores values
//! without units: ncu knows them from its metric database), scaled as ncu scales it
//! (`20,160` nsecond → `20.16 us`, `3.19e9` cycle/second → `3.19 Ghz`, `210e9` byte/second →
//! `210.26 Gbyte/s`), integers with thousands separators, other numbers with two decimals.

use crate::export::text_table::group_thousands;
use crate::trace::ncu::MetricValue;

/// The base unit of a metric, guessed from its name the way ncu names its metrics
/// (`…pct…` %, `gpu__time_duration` nsecond, `…bytes…per_second` byte/second, `…cycles…`
/// cycle). Empty when the name says nothing (`.ratio`, launch attributes).
pub fn base_unit(metric: &str) -> String {
    let lower = metric.to_ascii_lowercase();
    if lower.contains("pct") {
        return "%".to_string();
    }
    if lower.contains("time_duration") || lower.ends_with("_time") {
        return "nsecond".to_string();
    }
    if lower.ends_with(".ratio") {
        return String::new();
    }
    if lower == "launch__registers_per_thread" {
        return "register/thread".to_string();
    }
    if lower.starts_with("launch__shared_mem_per_block") {
        return "byte/block".to_string();
    }
    if lower == "launch__shared_mem_config_size" {
        return "byte".to_string();
    }
    let counter = counter_unit(&lower);
    if lower.ends_with(".per_second") {
        return match counter {
            "byte" => "byte/second".to_string(),
            "cycle" => "hz".to_string(),
            "" => String::new(),
            c => format!("{c}/second"),
        };
    }
    if lower.ends_with(".per_cycle_elapsed") || lower.ends_with(".per_cycle_active") {
        return match counter {
            "" | "cycle" => String::new(),
            c => format!("{c}/cycle"),
        };
    }
    counter.to_string()
}

/// What a counter counts, from the words of its name.
fn counter_unit(lower: &str) -> &'static str {
    const WORDS: &[(&str, &str)] = &[
        ("bytes", "byte"),
        ("cycles", "cycle"),
        ("sectors", "sector"),
        ("inst", "inst"),
        ("warps", "warp"),
        ("requests", "request"),
        ("wavefronts", "wavefront"),
        ("threads", "thread"),
    ];
    WORDS
        .iter()
        .find(|(word, _)| lower.contains(word))
        .map_or("", |(_, unit)| unit)
}

/// A number scaled to the unit ncu prints it in: `(value, unit)`.
pub fn scale(value: f64, unit: &str) -> (f64, String) {
    let steps: &[(f64, &str)] = match unit {
        "nsecond" => &[(1.0, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s")],
        "byte" => &[
            (1.0, "byte"),
            (1e3, "Kbyte"),
            (1e6, "Mbyte"),
            (1e9, "Gbyte"),
        ],
        "byte/block" => &[
            (1.0, "byte/block"),
            (1e3, "Kbyte/block"),
            (1e6, "Mbyte/block"),
        ],
        "byte/second" => &[
            (1.0, "byte/s"),
            (1e3, "Kbyte/s"),
            (1e6, "Mbyte/s"),
            (1e9, "Gbyte/s"),
            (1e12, "Tbyte/s"),
        ],
        "hz" => &[(1.0, "hz"), (1e3, "Khz"), (1e6, "Mhz"), (1e9, "Ghz")],
        _ => return (value, unit.to_string()),
    };
    let a = value.abs();
    let (factor, name) = steps
        .iter()
        .rev()
        .find(|(f, _)| a >= *f)
        .copied()
        .unwrap_or(steps[0]);
    (value / factor, name.to_string())
}

/// A number as ncu prints it: whole numbers with thousands separators, others with two
/// decimals.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return group_thousands(&format!("{v:.0}"));
    }
    group_thousands(&format!("{v:.2}"))
}

/// A metric's value and unit as ncu-ui shows them. `unit_override` is the unit a section asks
/// for (empty: the metric's own). Instanced metrics show their instance count.
pub fn display(metric: &str, unit_override: &str, value: &MetricValue) -> (String, String) {
    match value {
        MetricValue::Str(s) => (s.clone(), String::new()),
        MetricValue::List(items) => (format!("{} instances", items.len()), String::new()),
        MetricValue::Unknown => ("?".to_string(), String::new()),
        MetricValue::U32(_) | MetricValue::U64(_) | MetricValue::F32(_) | MetricValue::F64(_) => {
            let v = value.as_f64().unwrap_or(0.0);
            let unit = if unit_override.is_empty() {
                base_unit(metric)
            } else {
                unit_override.to_string()
            };
            let (scaled, unit) = scale(v, &unit);
            let integer = matches!(value, MetricValue::U32(_) | MetricValue::U64(_));
            let text = if integer && scaled == v {
                group_thousands(&format!("{v:.0}"))
            } else {
                format_number(scaled)
            };
            (text, unit)
        }
    }
}

/// The change from `baseline` to `value` in percent of the baseline (`None` when the baseline
/// is 0 and the value is not).
pub fn delta_pct(value: f64, baseline: f64) -> Option<f64> {
    if baseline == 0.0 {
        return (value == 0.0).then_some(0.0);
    }
    Some((value - baseline) / baseline.abs() * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_ncu_metric_names() {
        assert_eq!(base_unit("gpu__time_duration.sum"), "nsecond");
        assert_eq!(
            base_unit("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            "%"
        );
        assert_eq!(base_unit("dram__bytes.sum.per_second"), "byte/second");
        assert_eq!(base_unit("gpc__cycles_elapsed.avg.per_second"), "hz");
        assert_eq!(base_unit("gpc__cycles_elapsed.max"), "cycle");
        assert_eq!(base_unit("smsp__inst_executed.sum"), "inst");
        assert_eq!(
            base_unit("sm__inst_executed.avg.per_cycle_active"),
            "inst/cycle"
        );
        assert_eq!(
            base_unit("smsp__average_warp_latency_per_inst_issued.ratio"),
            ""
        );
    }

    /// The values of kernel 0 of `ncu_moe_full` as ncu's details page prints them.
    #[test]
    fn values_scale_as_ncu_prints_them() {
        let show = |m: &str, v: MetricValue| {
            let (t, u) = display(m, "", &v);
            format!("{t} {u}")
        };
        assert_eq!(
            show("gpu__time_duration.sum", MetricValue::F64(20160.0)),
            "20.16 us"
        );
        assert_eq!(
            show(
                "dram__cycles_elapsed.avg.per_second",
                MetricValue::F64(3_193_386_243.4)
            ),
            "3.19 Ghz"
        );
        assert_eq!(
            show(
                "dram__bytes.sum.per_second",
                MetricValue::F64(210_260_317_460.3)
            ),
            "210.26 Gbyte/s"
        );
        assert_eq!(
            show("gpc__cycles_elapsed.max", MetricValue::F64(30187.0)),
            "30,187 cycle"
        );
        assert_eq!(
            show("smsp__inst_executed.sum", MetricValue::U64(1_736_960)),
            "1,736,960 inst"
        );
        assert_eq!(
            show("launch__registers_per_thread", MetricValue::U64(80)),
            "80 register/thread"
        );
    }

    #[test]
    fn deltas_are_percent_of_the_baseline() {
        assert_eq!(delta_pct(150.0, 100.0), Some(50.0));
        assert_eq!(delta_pct(50.0, 100.0), Some(-50.0));
        assert_eq!(delta_pct(0.0, 0.0), Some(0.0));
        assert_eq!(delta_pct(1.0, 0.0), None);
    }
}
