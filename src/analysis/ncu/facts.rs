//! What a joined Nsight Compute report adds to a trace: one workload's headline numbers (the ones
//! ncu-ui's Speed Of Light and Occupancy sections lead with), their averages per kernel name, the
//! names worth optimising (time on the timeline × headroom in ncu), and the DRAM throughput
//! weighted by each matched kernel's time on the timeline.

use std::collections::HashMap;

use super::join::NcuJoin;
use crate::trace::ncu::{NcuReport, NcuRule, NcuWorkload, RuleSpeedup};
use crate::trace::{StrId, Trace};

/// `gpu__time_duration.sum`: the kernel's duration as ncu measured it (ns), serialised and
/// replayed: not the timeline's.
pub const DURATION: &str = "gpu__time_duration.sum";
/// Compute (SM) throughput, % of peak.
pub const COMPUTE_PCT: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
/// Memory throughput (the busiest of DRAM, L2, L1), % of peak.
pub const MEMORY_PCT: &str = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
/// DRAM throughput, % of peak: ncu names it `dram__throughput` on some GPUs and
/// `gpu__dram_throughput` on others (Hopper with ncu 2025.3, as in the shared reports); the first
/// one a workload has counts.
pub const DRAM_PCT: [&str; 2] = [
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
];
/// Achieved occupancy, % of the warps an SM can hold.
pub const OCCUPANCY_PCT: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
pub const REGISTERS: &str = "launch__registers_per_thread";

/// One rule's advice.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleAdvice {
    /// The message's title, else the rule's name.
    pub title: String,
    pub message: String,
    /// "OPT", "WRN" …
    pub kind: &'static str,
    /// Estimated speedup, % of the kernel's time (global) or of the part the rule looks at
    /// (local).
    pub speedup_pct: Option<f64>,
    /// The estimate's type, as the rule gives it.
    pub speedup: Option<RuleSpeedup>,
}

impl RuleAdvice {
    /// `global` or `local`: what the estimated speedup is a share of; empty without one.
    pub fn speedup_kind(&self) -> &'static str {
        self.speedup.map_or("", |s| s.kind_label())
    }
}

/// The headline numbers of one workload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadFacts {
    pub duration_ns: Option<f64>,
    pub compute_pct: Option<f64>,
    pub memory_pct: Option<f64>,
    pub dram_pct: Option<f64>,
    pub occupancy_pct: Option<f64>,
    pub registers_per_thread: Option<f64>,
    /// Rules with something to say, ranked as ncu-ui ranks them ([`super::kernels::speedup_order`]:
    /// global estimates before local ones).
    pub rules: Vec<RuleAdvice>,
}

/// A workload's DRAM throughput, % of peak (see [`DRAM_PCT`]).
pub fn dram_pct(report: &NcuReport, w: &NcuWorkload) -> Option<f64> {
    DRAM_PCT.iter().find_map(|m| report.number(w, m))
}

fn advice(rule: &NcuRule) -> Option<RuleAdvice> {
    // A rule that passed says nothing worth a line (ncu writes no message, or an "OK" one).
    let first = rule
        .messages
        .iter()
        .find(|m| m.kind != 1 && !m.text.is_empty())?;
    let title = if first.title.is_empty() {
        rule.display_name.clone()
    } else {
        first.title.clone()
    };
    Some(RuleAdvice {
        title: if title.is_empty() {
            rule.identifier.clone()
        } else {
            title
        },
        message: super::rule_text::plain(&first.text),
        kind: first.kind_label(),
        speedup_pct: rule.speedup.map(|s| s.percent),
        speedup: rule.speedup,
    })
}

fn by_speedup(a: &RuleAdvice, b: &RuleAdvice) -> std::cmp::Ordering {
    super::kernels::speedup_order(a.speedup, b.speedup)
}

/// The headline numbers and rules of workload `w`.
pub fn workload_facts(report: &NcuReport, w: &NcuWorkload) -> WorkloadFacts {
    let mut rules: Vec<RuleAdvice> = w.rules.iter().filter_map(advice).collect();
    rules.sort_by(by_speedup);
    WorkloadFacts {
        duration_ns: report.number(w, DURATION),
        compute_pct: report.number(w, COMPUTE_PCT),
        memory_pct: report.number(w, MEMORY_PCT),
        dram_pct: dram_pct(report, w),
        occupancy_pct: report.number(w, OCCUPANCY_PCT),
        registers_per_thread: report.number(w, REGISTERS),
        rules,
    }
}

/// A running mean that ignores missing values.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mean {
    sum: f64,
    count: u32,
}

impl Mean {
    pub fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.sum += v;
            self.count += 1;
        }
    }

    pub fn get(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / f64::from(self.count))
    }
}

/// The averages, over the matched kernels of one name, of the throughputs and occupancy.
#[derive(Debug, Clone, Default)]
pub struct NameAverages {
    pub matched: usize,
    pub compute_pct: Mean,
    pub memory_pct: Mean,
    pub occupancy_pct: Mean,
    /// The rule with the largest estimated speedup among the name's workloads.
    pub top_rule: Option<RuleAdvice>,
}

impl NameAverages {
    /// 100 % less the larger of compute and memory throughput: how far the busiest unit is from
    /// its peak.
    pub fn headroom_pct(&self) -> Option<f64> {
        let busiest = match (self.compute_pct.get(), self.memory_pct.get()) {
            (Some(c), Some(m)) => c.max(m),
            (Some(v), None) | (None, Some(v)) => v,
            (None, None) => return None,
        };
        Some((100.0 - busiest).max(0.0))
    }
}

/// Averages per timeline kernel name (`trace.kernels.spans.name`) over its matched kernels.
pub fn averages_by_name(
    trace: &Trace,
    report: &NcuReport,
    join: &NcuJoin,
) -> HashMap<StrId, NameAverages> {
    let mut out: HashMap<StrId, NameAverages> = HashMap::new();
    for (kernel, workload) in join.pairs() {
        let (Some(&name), Some(w)) = (
            trace.kernels.spans.name.get(kernel),
            report.workloads.get(workload),
        ) else {
            continue;
        };
        let avg = out.entry(name).or_default();
        avg.matched += 1;
        avg.compute_pct.add(report.number(w, COMPUTE_PCT));
        avg.memory_pct.add(report.number(w, MEMORY_PCT));
        avg.occupancy_pct.add(report.number(w, OCCUPANCY_PCT));
        if let Some(top) = workload_facts(report, w).rules.into_iter().next()
            && top.speedup_pct.is_some()
            && avg
                .top_rule
                .as_ref()
                .is_none_or(|r| by_speedup(&top, r).is_lt())
        {
            avg.top_rule = Some(top);
        }
    }
    out
}

/// One row of the "worth optimising" table.
#[derive(Debug, Clone)]
pub struct WorthOptimising {
    pub name: StrId,
    /// The name's share of all kernel time on the timeline, 0–1.
    pub time_share: f64,
    pub total_ns: i64,
    pub launches: usize,
    pub averages: NameAverages,
    /// 100 % less the larger of compute and memory throughput.
    pub headroom_pct: f64,
    /// `time_share × headroom_pct`: % of all kernel time that is headroom.
    pub score: f64,
}

/// Kernel names with matched workloads, ranked by their time share on the timeline × their
/// headroom in ncu, largest first.
pub fn worth_optimising(trace: &Trace, report: &NcuReport, join: &NcuJoin) -> Vec<WorthOptimising> {
    let k = &trace.kernels.spans;
    let mut time: HashMap<StrId, (i64, usize)> = HashMap::new();
    let mut total_ns = 0i64;
    for i in 0..k.len() {
        let d = k.duration_ns(i).max(0);
        total_ns = total_ns.saturating_add(d);
        let e = time.entry(k.name[i]).or_default();
        e.0 = e.0.saturating_add(d);
        e.1 += 1;
    }
    let mut rows: Vec<WorthOptimising> = averages_by_name(trace, report, join)
        .into_iter()
        .filter_map(|(name, averages)| {
            let headroom_pct = averages.headroom_pct()?;
            let (ns, launches) = time.get(&name).copied().unwrap_or_default();
            let time_share = if total_ns > 0 {
                ns as f64 / total_ns as f64
            } else {
                0.0
            };
            Some(WorthOptimising {
                name,
                time_share,
                total_ns: ns,
                launches,
                averages,
                headroom_pct,
                score: time_share * headroom_pct,
            })
        })
        .collect();
    rows.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.name.cmp(&b.name)));
    rows
}

/// DRAM throughput weighted by kernel time on the timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightedDram {
    /// Σ (DRAM % × timeline duration) / Σ timeline duration, over matched kernels with a value.
    pub pct_of_peak: f64,
    /// Matched kernels that counted, and their time on the timeline.
    pub kernels: usize,
    pub kernel_ns: i64,
}

/// DRAM throughput (% of peak) of the matched kernels, weighted by each one's duration on the
/// timeline; `None` without a matched kernel that has the metric.
pub fn weighted_dram(trace: &Trace, report: &NcuReport, join: &NcuJoin) -> Option<WeightedDram> {
    let (mut weighted, mut weight, mut kernels) = (0.0f64, 0i64, 0usize);
    for (kernel, workload) in join.pairs() {
        let Some(pct) = report
            .workloads
            .get(workload)
            .and_then(|w| dram_pct(report, w))
        else {
            continue;
        };
        if kernel >= trace.kernels.spans.len() {
            continue;
        }
        let d = trace.kernels.spans.duration_ns(kernel).max(0);
        weighted += pct * d as f64;
        weight = weight.saturating_add(d);
        kernels += 1;
    }
    (weight > 0).then(|| WeightedDram {
        pct_of_peak: weighted / weight as f64,
        kernels,
        kernel_ns: weight,
    })
}

/// The columns the kernel summary gains with an attached report.
pub const SUMMARY_COLUMNS: [&str; 3] = [
    "Compute (SM) % (ncu)",
    "Memory % (ncu)",
    "Achieved Occupancy % (ncu)",
];

/// Adds [`SUMMARY_COLUMNS`] to a kernel summary (`cuda_gpu_kern_sum`, computed with its rows'
/// events): each row's name's averages over its matched kernels; empty where none matched.
pub fn add_summary_columns(
    trace: &Trace,
    table: &mut crate::analysis::Table,
    averages: &HashMap<StrId, NameAverages>,
) {
    use crate::analysis::{Cell, EventTable, RowEvents};
    table
        .columns
        .extend(SUMMARY_COLUMNS.iter().map(|c| c.to_string()));
    for row in &mut table.rows {
        let name = match &row.events {
            RowEvents::Events(events) => events
                .iter()
                .find(|e| e.table == EventTable::Kernels)
                .and_then(|e| trace.kernels.spans.name.get(e.index as usize)),
            _ => None,
        };
        let avg = name.and_then(|n| averages.get(n));
        let cell = |v: Option<f64>| v.map_or(Cell::Null, |v| Cell::Fixed(v, 1));
        row.cells.extend([
            cell(avg.and_then(|a| a.compute_pct.get())),
            cell(avg.and_then(|a| a.memory_pct.get())),
            cell(avg.and_then(|a| a.occupancy_pct.get())),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_skip_missing_values_and_headroom_takes_the_busier_unit() {
        let mut m = Mean::default();
        assert_eq!(m.get(), None);
        m.add(Some(10.0));
        m.add(None);
        m.add(Some(30.0));
        assert_eq!(m.get(), Some(20.0));
        let mut a = NameAverages::default();
        assert_eq!(a.headroom_pct(), None);
        a.compute_pct.add(Some(40.0));
        assert_eq!(a.headroom_pct(), Some(60.0));
        a.memory_pct.add(Some(85.0));
        assert_eq!(a.headroom_pct(), Some(15.0));
    }

    #[test]
    fn rules_rank_by_estimated_speedup_and_passed_rules_say_nothing() {
        use crate::trace::ncu::RuleMessage;
        let rule = |id: &str, kind: u32, speedup: Option<f64>| NcuRule {
            identifier: id.to_string(),
            display_name: format!("{id} rule"),
            messages: vec![RuleMessage {
                text: format!("{id} says"),
                kind,
                title: String::new(),
                speedup: None,
            }],
            speedup: speedup.map(|percent| RuleSpeedup {
                kind: if id == "Global" { 2 } else { 1 },
                percent,
            }),
            ..Default::default()
        };
        let w = NcuWorkload {
            rules: vec![
                rule("Small", 4, Some(12.0)),
                rule("Passed", 1, None),
                rule("Big", 4, Some(80.0)),
                rule("Note", 0, None),
                rule("Global", 4, Some(10.0)),
            ],
            ..Default::default()
        };
        let facts = workload_facts(&NcuReport::default(), &w);
        let titles: Vec<&str> = facts.rules.iter().map(|r| r.title.as_str()).collect();
        // A global estimate ranks before every local one, however large.
        assert_eq!(
            titles,
            ["Global rule", "Big rule", "Small rule", "Note rule"]
        );
        assert_eq!(facts.rules[0].speedup_kind(), "global");
        assert_eq!(facts.rules[1].speedup_kind(), "local");
        assert_eq!(facts.rules[0].kind, "OPT");
        assert_eq!(facts.duration_ns, None);
    }
}
