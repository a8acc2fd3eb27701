//! A metric's unit, derived from its name, ncu's auto scaling of a unit, and a value as ncu
//! prints it (`20,160` ns → `20.16 us`, `3.19e9` hz → `3.19 Ghz`, `210e9` byte/s →
//! `210.26 Gbyte/s`; integers with thousands separators, other numbers with two decimals). One
//! derivation for the pages the command line prints (`export::ncu_pages`) and the window.
//!
//! A report does not store units: ncu takes them from NVIDIA's metric database (the PerfWorks
//! library it ships) and its own registry of launch, device and derived metrics. No message of
//! the file carries a unit string for a metric (the `MetricResult` fields are the name id, the
//! value, the instance list and a flag set on PM-sampling metrics; sections name units only in
//! chart axis labels), but two things the file does say decide ncu's unit, and are read
//! first ([`metric_unit`], from `NcuReport::unitless`): a metric whose instances are keyed by
//! strings (a count per opcode) and a derived metric whose section limits its definition to
//! some architectures print no unit. Otherwise Sightline derives the unit from the structure of
//! PerfWorks names (`unit__counter_words.rollup.submetric`): `pct_of_peak_*` and `.pct` are
//! `%`; `.per_second` divides the counter's unit by time (bytes give `byte/s`, cycles `hz`);
//! `.per_cycle_*` and `.peak_sustained` divide it by cycles; the counter's unit is the word its
//! name counts (`bytes`, `sectors`, `cycles`, `requests`, `inst`, `warps`, `threads`,
//! `time_duration`; an `active` counter counts cycles); launch attributes have the units of
//! what they size (`block_dim_*` blocks, `shared_mem_per_block*` bytes per block,
//! `registers_per_thread` registers per thread). Device attributes and names that say no unit
//! have none. ncu names the units of derived metrics (`derived__…`) from their words only,
//! whatever the rollup and submetric after them. A few counters have a unit in ncu's database
//! that their names do not give ([`DATABASE_UNITS`]: `idc__requests` has none, `sm__icc_requests`
//! counts cycles); those are listed as ncu 2025.3 prints them.

use crate::export::text_table::group_thousands;
use crate::trace::ncu::{MetricId, MetricValue, NcuReport, ScalarValue};

/// The SI prefix a number reads best with, and its scale: `(1e12, "T")` for 5.16e13, `(1.0, "")`
/// below a thousand. The charts' labels (window and HTML report) format the scaled number.
pub fn si_prefix(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(s, _)| a >= *s)
        .unwrap_or((1.0, ""))
}

/// The base unit of a report's metric: none where the report says so, else [`base_unit`].
pub fn metric_unit(report: &NcuReport, id: MetricId, name: &str) -> String {
    if report.unitless.contains(&id) {
        String::new()
    } else {
        base_unit(name)
    }
}

/// [`metric_unit`] of a metric named by its name.
pub fn named_unit(report: &NcuReport, name: &str) -> String {
    match report.metric_id(name) {
        Some(id) => metric_unit(report, id, name),
        None => base_unit(name),
    }
}

/// Counters whose unit in ncu's metric database is not the one their names give, as ncu
/// 2025.3.1 prints them on its raw page (the report does not say; NVIDIA's Python reader
/// itself gives `idc__requests` the unit `request`, where ncu's pages print none). Keyed by
/// counter (the name before its rollup); each rollup has the counter's unit.
const DATABASE_UNITS: [(&str, &str); 5] = [
    ("gcc__xbar2gcc_sectors", ""),
    ("idc__requests", ""),
    ("lrc__average_xbar2gpc_sectors_op_read", ""),
    ("sm__icc_requests", "cycle"),
    ("smsp__imc_requests", "cycle"),
];

/// The base unit of a metric, `""` when it has none (or none can be derived).
pub fn base_unit(name: &str) -> String {
    let name = strip_unit_prefix(name);
    let (counter, rollup) = name.split_once('.').unwrap_or((name, ""));
    if let Some((_, unit)) = DATABASE_UNITS.iter().find(|(c, _)| *c == counter)
        && matches!(rollup, "sum" | "avg" | "min" | "max" | "ratio")
    {
        return (*unit).into();
    }
    if let Some(words) = name.strip_prefix("derived__") {
        return derived_unit(words).into();
    }
    let mut parts = name.splitn(3, '.');
    let counter = parts.next().unwrap_or("");
    let second = parts.next().unwrap_or("");
    let rest = parts.next().unwrap_or("");
    let sub = if second == "pct" || second == "ratio" || second == "max_rate" {
        second
    } else {
        rest
    };
    if sub.contains("pct_of_peak") || sub == "pct" || (sub.is_empty() && counter.ends_with("_pct"))
    {
        return "%".into();
    }
    if let Some(u) = launch_unit(counter) {
        return u.into();
    }
    let words = counter.split_once("__").map(|(_, w)| w).unwrap_or(counter);
    if has_word(words, &["passes"]) {
        return "pass".into();
    }
    // Source-level memory metrics (`memory_l1_tag_requests_global`) count sectors; the
    // `…_type` ones hold a type code.
    if words.ends_with("_type") {
        return String::new();
    }
    if !counter.contains("__")
        && (has_word(words, &["sectors", "wavefronts"]) || words.starts_with("memory_l"))
    {
        return "sectors".into();
    }
    // L1TEX tag-stage requests carry no unit in ncu's database (L2's `lts__t_requests` do).
    if counter.starts_with("l1tex__t_requests") || words.contains("l1tex_t_requests") {
        return String::new();
    }
    if sub == "ratio"
        && let Some(u) = average_ratio_unit(words)
    {
        return u.into();
    }
    if (sub == "ratio" || sub == "max_rate")
        && let Some(u) = per_unit(words)
    {
        return u;
    }
    let unit = counter_unit(words);
    match sub {
        // A counter's peak rate per second: its unit per second; none for a counter of none
        // (the tensor `ops_path` counters of the shared reports).
        "per_second" | "peak_sustained_elapsed.per_second" => match unit {
            "byte" => "byte/s".into(),
            "cycle" => "hz".into(),
            "" => String::new(),
            u => format!("{u}/s"),
        },
        "per_cycle_elapsed" | "per_cycle_active" | "peak_sustained" => match unit {
            "warp" => "warp".into(),
            "" | "cycle" => String::new(),
            u => format!("{u}/cycle"),
        },
        _ => unit.into(),
    }
}

/// The unit the details page gives a roofline's derived metric (`derived__sm__sass_thread_inst_
/// executed_op_ffma_pred_on_x2`: inst, where the raw page says thread): the unit of the counter
/// its name derives from, none where the report makes the metric unitless.
fn roofline_derived_unit(report: &NcuReport, id: MetricId, name: &str) -> String {
    if report.unitless.contains(&id) {
        return String::new();
    }
    let words = name.strip_prefix("derived__").unwrap_or(name);
    let counter = words.split('.').next().unwrap_or(words);
    let words = counter.split_once("__").map_or(counter, |(_, w)| w);
    counter_unit(words).into()
}

/// Metrics the details page (and ncu-ui) prints in another unit than the raw page, as ncu
/// 2025.3.1 prints them (the report does not say): the membar warp stall samples and the
/// Source Counters' excessive L2 sectors print as bytes there (`97.92 Kbyte` for 97,920).
const DETAILS_UNITS: [(&str, &str); 3] = [
    (
        "derived__memory_l2_theoretical_sectors_global_excessive",
        "byte",
    ),
    ("smsp__pcsamp_warps_issue_stalled_membar", "byte"),
    ("smsp__pcsamp_warps_issue_stalled_membar_not_issued", "byte"),
];

/// The unit a section entry's metric shows in: the unit the section asks for, else the
/// details page's own ([`DETAILS_UNITS`]), else a roofline's derived metric's
/// ([`roofline_derived_unit`]), else the metric's ([`named_unit`]).
pub fn entry_unit(report: &NcuReport, name: &str, asked: &str, in_roofline: bool) -> String {
    if !asked.is_empty() {
        return asked.to_string();
    }
    if let Some((_, unit)) = DETAILS_UNITS.iter().find(|(n, _)| *n == name) {
        return (*unit).to_string();
    }
    match report.metric_id(name) {
        Some(id) if in_roofline && name.starts_with("derived__") => {
            roofline_derived_unit(report, id, name)
        }
        _ => named_unit(report, name),
    }
}

/// Names of ncu's section-scoped copies (`SM_A.TriageCompute.l1tex__…`,
/// `TriageAC.tpc__warps_active_realtime.avg…`) without their qualifiers: PerfWorks counters are
/// `unit__counter`, so the segments before the first that has `__`.
fn strip_unit_prefix(name: &str) -> &str {
    let mut offset = 0;
    for segment in name.split('.') {
        if segment.contains("__") {
            return &name[offset..];
        }
        offset += segment.len() + 1;
    }
    name
}

/// Whether `words` (`_`-separated) has one of `any` as a whole word.
fn has_word(words: &str, any: &[&str]) -> bool {
    words.split('_').any(|w| any.contains(&w))
}

/// ncu's units of the averages over issue slots and instructions: warps stalled per issue
/// slot count instructions, warps per instruction count cycles (warp latency), thread
/// instructions per instruction nothing.
fn average_ratio_unit(words: &str) -> Option<&'static str> {
    if words.ends_with("_per_issue_active") {
        Some("inst")
    } else if words.contains("thread_inst_executed") && words.contains("_per_inst_") {
        Some("")
    } else if words.starts_with("average_warp") && words.contains("_per_inst_") {
        Some("cycle")
    } else {
        None
    }
}

/// A derived metric's unit from its words: percentages (with what an occupancy curve varies),
/// threads, bytes, sectors; other derived metrics have none in ncu 2025.3.
fn derived_unit(words: &str) -> &'static str {
    let name = words.split('.').next().unwrap_or(words);
    if has_word(name, &["pct"]) {
        if name.ends_with("_per_register_count") {
            "%/register"
        } else if name.ends_with("_per_shared_mem_size") {
            "%/byte"
        } else {
            "%"
        }
    } else if name.contains("thread") {
        "thread"
    } else if has_word(name, &["bytes"]) {
        "byte"
    } else if has_word(name, &["sectors"]) {
        "sector"
    } else {
        ""
    }
}

fn counter_unit(words: &str) -> &'static str {
    if words.starts_with("attribute_") {
        return "";
    }
    if has_word(words, &["ctas"]) {
        return "block";
    }
    if has_word(words, &["cgas"]) {
        return "";
    }
    if words.contains("branch_targets") || words.contains("branch_resolving") {
        return "branches";
    }
    if words.contains("no_instructions") {
        return "inst";
    }
    if has_word(words, &["samples"]) {
        return "sample";
    }
    if has_word(words, &["bytes", "byte"]) {
        "byte"
    } else if has_word(words, &["sectors"]) {
        "sector"
    } else if has_word(words, &["cycles"]) {
        "cycle"
    } else if has_word(words, &["requests"]) {
        "request"
    } else if has_word(words, &["inst"]) || words.contains("inst_executed") {
        "inst"
    } else if has_word(words, &["warps"]) {
        "warp"
    } else if has_word(words, &["threads", "thread"]) {
        "thread"
    } else if words.contains("time_duration") || has_word(words, &["time"]) {
        "ns"
    } else if has_word(words, &["active"]) {
        "cycle"
    } else {
        ""
    }
}

/// `…_bytes_per_sector….ratio` → `byte/sector`: a ratio of two counted things.
fn per_unit(words: &str) -> Option<String> {
    let ws: Vec<&str> = words.split('_').collect();
    let singular = |w: &str| match w {
        "bytes" => Some("byte"),
        "sectors" | "sector" => Some("sector"),
        "cycles" | "cycle" => Some("cycle"),
        "inst" => Some("inst"),
        _ => None,
    };
    ws.windows(3).find_map(|w| {
        if w[1] != "per" {
            return None;
        }
        Some(format!("{}/{}", singular(w[0])?, singular(w[2])?))
    })
}

/// Units of the launch attributes, from what they size.
fn launch_unit(counter: &str) -> Option<&'static str> {
    let w = counter.strip_prefix("launch__")?;
    if w.contains("registers_per_thread") {
        Some("register/thread")
    } else if w.starts_with("shared_mem_per_block") {
        Some("byte/block")
    } else if w.ends_with("_size")
        && !w.starts_with("occupancy_")
        && (w.contains("mem") || w.contains("cache"))
    {
        Some("byte")
    } else if w.starts_with("block_dim")
        || w.starts_with("occupancy_limit_")
        || w.ends_with("potential_size")
    {
        Some("block")
    } else if w == "sm_count" {
        Some("SM")
    } else if w.starts_with("cluster_max_active") {
        Some("cluster")
    } else {
        None
    }
}

/// A column's unit as ncu's auto scaling shows it, and the factor its values are divided by:
/// the largest prefix that keeps the column's largest value at 1 or more (bytes: K, M, G, T,
/// P; hertz: K, M, G; nanoseconds: us, ms, s; per second: per ms, us, ns).
pub fn scaled(unit: &str, max: f64) -> (String, f64) {
    let steps = |n: usize| {
        let mut k = 0;
        let mut f = 1.0;
        while k < n && max >= f * 1000.0 {
            f *= 1000.0;
            k += 1;
        }
        (k, f)
    };
    if let Some(i) = unit.find("byte") {
        let (k, f) = steps(5);
        let prefix = ["", "K", "M", "G", "T", "P"][k];
        return (format!("{}{prefix}{}", &unit[..i], &unit[i..]), f);
    }
    if unit == "hz" {
        let (k, f) = steps(3);
        return (format!("{}hz", ["", "K", "M", "G"][k]), f);
    }
    if unit == "ns" {
        let (k, f) = steps(3);
        return (["ns", "us", "ms", "s"][k].to_string(), f);
    }
    if let Some(num) = unit.strip_suffix("/s") {
        let (k, f) = steps(3);
        return (format!("{num}/{}", ["s", "ms", "us", "ns"][k]), f);
    }
    (unit.to_string(), 1.0)
}

/// A single value scaled as ncu-ui shows it: `(value in the scaled unit, scaled unit)`.
pub fn scale(value: f64, unit: &str) -> (f64, String) {
    let (unit, factor) = scaled(unit, value.abs());
    (value / factor, unit)
}

/// A number as ncu prints it: whole numbers with thousands separators, others with two
/// decimals.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    // Whole numbers print without decimals however large, as ncu prints them
    // (`13,203,800,584,126,984` tensor operations).
    if v.fract() == 0.0 {
        return group_thousands(&format!("{v:.0}"));
    }
    group_thousands(&format!("{v:.2}"))
}

/// A metric's value and unit as ncu-ui shows them, in `unit` (the metric's base unit, as
/// [`metric_unit`] or [`entry_unit`] decide it; empty: none), scaled. Instanced metrics show
/// their instance count.
pub fn display(unit: &str, value: &MetricValue) -> (String, String) {
    match value {
        MetricValue::Str(s) => (s.clone(), String::new()),
        MetricValue::List(items) => (format!("{} instances", items.len()), String::new()),
        MetricValue::Unknown => ("?".to_string(), String::new()),
        MetricValue::U32(_) | MetricValue::U64(_) | MetricValue::F32(_) | MetricValue::F64(_) => {
            let v = value.as_f64().unwrap_or(0.0);
            let (scaled, unit) = scale(v, unit);
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

/// An instance's value as text, with no unit: a string as it is, a number as [`display`]
/// writes it.
pub fn scalar_text(value: &ScalarValue) -> String {
    let v = match value {
        ScalarValue::Str(s) => return s.clone(),
        ScalarValue::Unknown => return String::new(),
        ScalarValue::U32(i) => MetricValue::U32(*i),
        ScalarValue::U64(i) => MetricValue::U64(*i),
        ScalarValue::F32(x) => MetricValue::F32(*x),
        ScalarValue::F64(x) => MetricValue::F64(*x),
    };
    display("", &v).0
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
    fn units_from_names() {
        assert_eq!(base_unit("dram__bytes.sum.per_second"), "byte/s");
        assert_eq!(base_unit("gpc__cycles_elapsed.max.per_second"), "hz");
        assert_eq!(
            base_unit("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            "%"
        );
        assert_eq!(base_unit("gpu__time_duration.sum"), "ns");
        assert_eq!(base_unit("device__attribute_clock_rate"), "");
        assert_eq!(base_unit("launch__block_dim_x"), "block");
        assert_eq!(
            base_unit("derived__lts__lts2xbar_bytes.sum.per_second"),
            "byte"
        );
        assert_eq!(
            base_unit("derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2"),
            "thread"
        );
        assert_eq!(
            base_unit("derived__pct_occupancy_per_register_count"),
            "%/register"
        );
        assert_eq!(
            base_unit("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"),
            "inst"
        );
        assert_eq!(
            base_unit("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            ""
        );
        assert_eq!(base_unit("lts__t_requests_srcunit_tex.sum"), "request");
        assert_eq!(base_unit("idc__requests.sum"), "");
        assert_eq!(base_unit("sm__icc_requests.sum"), "cycle");
        assert_eq!(base_unit("memory_l1_tag_requests_global"), "sectors");
        assert_eq!(
            base_unit("SM_B.TriageCompute.l1tex__t_sectors.sum"),
            "sector"
        );
        assert_eq!(scaled("byte/s", 2.2e10), ("Gbyte/s".to_string(), 1e9));
        assert_eq!(scaled("sector/s", 1.2e9), ("sector/ns".to_string(), 1e9));
        assert_eq!(scaled("ns", 196_384.0), ("us".to_string(), 1e3));
        assert_eq!(scaled("cycle", 1e9), ("cycle".to_string(), 1.0));
    }

    /// The values of kernel 0 of `ncu_moe_full` as ncu's details page prints them.
    #[test]
    fn values_scale_as_ncu_prints_them() {
        let show = |m: &str, v: MetricValue| {
            let (t, u) = display(&base_unit(m), &v);
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
