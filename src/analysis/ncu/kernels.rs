//! The kernel table of an Nsight Compute report, one row per workload as ncu-ui's summary page
//! lists them (ID, name, launch shape, duration, throughputs, occupancy, registers and the rule
//! with the largest estimated speedup), computed once per report; and the per-column filters
//! and sort the window applies to it.

use std::cmp::Ordering;

use super::units;
use crate::trace::ncu::{NcuReport, NcuWorkload, RuleSpeedup};

pub const DURATION: &str = "gpu__time_duration.sum";
pub const SM_THROUGHPUT: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
pub const MEMORY_THROUGHPUT: &str =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
/// ncu's SpeedOfLight section (2025.3) reads DRAM throughput from `gpu__dram_throughput`; older
/// sets name it `dram__throughput`: the first the workload has is shown.
pub const DRAM_THROUGHPUT: [&str; 2] = [
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
];
pub const ACHIEVED_OCCUPANCY: &str = "sm__warps_active.avg.pct_of_peak_sustained_active";
pub const REGISTERS: &str = "launch__registers_per_thread";

/// A column of the kernel table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelColumn {
    Id,
    Name,
    Grid,
    Block,
    Duration,
    Compute,
    Memory,
    Dram,
    Occupancy,
    Registers,
    TopRule,
    Speedup,
}

impl KernelColumn {
    pub const ALL: [KernelColumn; 12] = [
        KernelColumn::Id,
        KernelColumn::Name,
        KernelColumn::Grid,
        KernelColumn::Block,
        KernelColumn::Duration,
        KernelColumn::Compute,
        KernelColumn::Memory,
        KernelColumn::Dram,
        KernelColumn::Occupancy,
        KernelColumn::Registers,
        KernelColumn::TopRule,
        KernelColumn::Speedup,
    ];

    pub fn title(self) -> &'static str {
        match self {
            KernelColumn::Id => "ID",
            KernelColumn::Name => "Name",
            KernelColumn::Grid => "Grid",
            KernelColumn::Block => "Block",
            KernelColumn::Duration => "Duration",
            KernelColumn::Compute => "Compute (SM) %",
            KernelColumn::Memory => "Memory %",
            KernelColumn::Dram => "DRAM %",
            KernelColumn::Occupancy => "Achieved occupancy %",
            KernelColumn::Registers => "Registers/thread",
            KernelColumn::TopRule => "Top rule",
            KernelColumn::Speedup => "Est. speedup %",
        }
    }

    /// The metric the column shows, for its tooltip.
    pub fn metric(self) -> Option<&'static str> {
        match self {
            KernelColumn::Duration => Some(DURATION),
            KernelColumn::Compute => Some(SM_THROUGHPUT),
            KernelColumn::Memory => Some(MEMORY_THROUGHPUT),
            KernelColumn::Dram => Some(DRAM_THROUGHPUT[1]),
            KernelColumn::Occupancy => Some(ACHIEVED_OCCUPANCY),
            KernelColumn::Registers => Some(REGISTERS),
            _ => None,
        }
    }

    pub fn is_numeric(self) -> bool {
        !matches!(
            self,
            KernelColumn::Name | KernelColumn::Grid | KernelColumn::Block | KernelColumn::TopRule
        )
    }
}

/// The rule with the largest estimated speedup.
#[derive(Debug, Clone, PartialEq)]
pub struct TopRule {
    /// The rule's title (its first message's, else its name).
    pub title: String,
    pub section: String,
    pub speedup_pct: f64,
    /// "local" or "global".
    pub kind: &'static str,
}

/// One row of the kernel table.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    /// Index in [`NcuReport::workloads`].
    pub workload: usize,
    pub id: u32,
    pub name: String,
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub duration_ns: Option<f64>,
    pub compute_pct: Option<f64>,
    pub memory_pct: Option<f64>,
    pub dram_pct: Option<f64>,
    pub occupancy_pct: Option<f64>,
    pub registers: Option<f64>,
    pub top_rule: Option<TopRule>,
}

impl KernelRow {
    pub fn of(report: &NcuReport, workload: usize, w: &NcuWorkload) -> KernelRow {
        let num = |name: &str| report.number(w, name);
        KernelRow {
            workload,
            id: w.id,
            name: w.display_name().to_string(),
            grid: w.grid,
            block: w.block,
            duration_ns: num(DURATION),
            compute_pct: num(SM_THROUGHPUT),
            memory_pct: num(MEMORY_THROUGHPUT),
            dram_pct: DRAM_THROUGHPUT.iter().find_map(|m| num(m)),
            occupancy_pct: num(ACHIEVED_OCCUPANCY),
            registers: num(REGISTERS),
            top_rule: top_rule(w),
        }
    }

    /// The number a numeric column sorts and filters by.
    pub fn number(&self, column: KernelColumn) -> Option<f64> {
        match column {
            KernelColumn::Id => Some(f64::from(self.id)),
            KernelColumn::Duration => self.duration_ns,
            KernelColumn::Compute => self.compute_pct,
            KernelColumn::Memory => self.memory_pct,
            KernelColumn::Dram => self.dram_pct,
            KernelColumn::Occupancy => self.occupancy_pct,
            KernelColumn::Registers => self.registers,
            KernelColumn::Speedup => self.top_rule.as_ref().map(|r| r.speedup_pct),
            KernelColumn::Name | KernelColumn::Grid | KernelColumn::Block => None,
            KernelColumn::TopRule => None,
        }
    }

    /// The cell's text; empty where the report has no value (never 0).
    pub fn text(&self, column: KernelColumn) -> String {
        let pct = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.2}"));
        match column {
            KernelColumn::Id => self.id.to_string(),
            KernelColumn::Name => self.name.clone(),
            KernelColumn::Grid => shape(self.grid),
            KernelColumn::Block => shape(self.block),
            KernelColumn::Duration => self.duration_ns.map_or_else(String::new, |ns| {
                let (v, unit) = units::scale(ns, "ns");
                format!("{} {unit}", units::format_number(v))
            }),
            KernelColumn::Registers => self
                .registers
                .map_or_else(String::new, units::format_number),
            KernelColumn::TopRule => self
                .top_rule
                .as_ref()
                .map_or_else(String::new, |r| r.title.clone()),
            KernelColumn::Speedup => pct(self.number(column)),
            KernelColumn::Compute
            | KernelColumn::Memory
            | KernelColumn::Dram
            | KernelColumn::Occupancy => pct(self.number(column)),
        }
    }
}

/// `(64, 1, 1)`, as ncu prints a launch shape.
pub fn shape(s: [u64; 3]) -> String {
    format!("({}, {}, {})", s[0], s[1], s[2])
}

/// The order ncu-ui ranks rules in: by estimated speedup, every global one (a share of the whole
/// kernel's time, "Est. Speedup") before every local one ("Est. Local Speedup": a share of the
/// part of the kernel the rule looks at, which says little about the kernel's time — most of
/// moe's kernels have a 93–100 % local one), then rules without an estimate; larger first. The
/// one place rules are ordered: the kernel table's top rule, the timeline's ncu details and the
/// names worth optimising all rank by it.
pub fn speedup_order(a: Option<RuleSpeedup>, b: Option<RuleSpeedup>) -> Ordering {
    let key = |s: Option<RuleSpeedup>| match s.filter(|s| s.percent.is_finite()) {
        Some(s) if s.kind == 2 => (0u8, -s.percent),
        Some(s) => (1, -s.percent),
        None => (2, 0.0),
    };
    let (ka, kb) = (key(a), key(b));
    ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
}

/// The rule of `w` that ranks first by [`speedup_order`] among those with an estimate.
pub fn top_rule(w: &NcuWorkload) -> Option<TopRule> {
    w.rules
        .iter()
        .filter_map(|r| r.speedup.map(|s| (r, s)))
        .filter(|(_, s)| s.percent.is_finite())
        .min_by(|(_, a), (_, b)| speedup_order(Some(*a), Some(*b)))
        .map(|(r, s)| {
            let title = r
                .messages
                .iter()
                .map(|m| m.title.as_str())
                .find(|t| !t.is_empty())
                .or(Some(r.display_name.as_str()).filter(|n| !n.is_empty()))
                .unwrap_or(&r.identifier)
                .to_string();
            TopRule {
                title,
                section: r.section.clone(),
                speedup_pct: s.percent,
                kind: s.kind_label(),
            }
        })
}

/// Every workload's row, in report order.
pub fn kernel_rows(report: &NcuReport) -> Vec<KernelRow> {
    report
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| KernelRow::of(report, i, w))
        .collect()
}

/// A column's filter as typed: `>50`, `<=10`, `=80` compare a numeric column's value (rows
/// without one never pass); anything else is a case-insensitive part of the cell's text.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnFilter {
    Any,
    Compare(Ordering, bool, f64),
    Text(String),
}

impl ColumnFilter {
    pub fn parse(text: &str) -> ColumnFilter {
        let t = text.trim();
        if t.is_empty() {
            return ColumnFilter::Any;
        }
        for (op, ord, or_equal) in [
            (">=", Ordering::Greater, true),
            ("<=", Ordering::Less, true),
            (">", Ordering::Greater, false),
            ("<", Ordering::Less, false),
            ("=", Ordering::Equal, true),
        ] {
            if let Some(rest) = t.strip_prefix(op)
                && let Ok(v) = rest.trim().replace(',', "").parse::<f64>()
            {
                return ColumnFilter::Compare(ord, or_equal, v);
            }
        }
        ColumnFilter::Text(t.to_lowercase())
    }

    pub fn passes(&self, row: &KernelRow, column: KernelColumn) -> bool {
        match self {
            ColumnFilter::Any => true,
            ColumnFilter::Compare(ord, or_equal, v) => row.number(column).is_some_and(|x| {
                let c = x.total_cmp(v);
                c == *ord || (*or_equal && c == Ordering::Equal)
            }),
            ColumnFilter::Text(needle) => row.text(column).to_lowercase().contains(needle),
        }
    }
}

/// The order of rows shown: those passing every column's filter, sorted by `sort` (column,
/// descending) with ties and missing values last, in report order.
pub fn visible_rows(
    rows: &[KernelRow],
    filters: &[(KernelColumn, ColumnFilter)],
    sort: Option<(KernelColumn, bool)>,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len())
        .filter(|&i| filters.iter().all(|(c, f)| f.passes(&rows[i], *c)))
        .collect();
    if let Some((column, descending)) = sort {
        order.sort_by(|&a, &b| {
            let (ra, rb) = (&rows[a], &rows[b]);
            let by_value = if column.is_numeric() {
                match (ra.number(column), rb.number(column)) {
                    (Some(x), Some(y)) if descending => y.total_cmp(&x),
                    (Some(x), Some(y)) => x.total_cmp(&y),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
            } else {
                let (x, y) = (ra.text(column), rb.text(column));
                match (x.is_empty(), y.is_empty()) {
                    (false, true) => Ordering::Less,
                    (true, false) => Ordering::Greater,
                    _ if descending => y.cmp(&x),
                    _ => x.cmp(&y),
                }
            };
            by_value.then(a.cmp(&b))
        });
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ncu::{NcuRule, RuleMessage};

    fn row(id: u32, name: &str, duration: Option<f64>) -> KernelRow {
        KernelRow {
            workload: id as usize,
            id,
            name: name.to_string(),
            grid: [64, 1, 1],
            block: [128, 1, 1],
            duration_ns: duration,
            compute_pct: None,
            memory_pct: None,
            dram_pct: None,
            occupancy_pct: None,
            registers: None,
            top_rule: None,
        }
    }

    #[test]
    fn missing_values_are_empty_and_sort_last() {
        let rows = vec![
            row(0, "gemm", Some(20_160.0)),
            row(1, "reduce", None),
            row(2, "elementwise", Some(3_000.0)),
        ];
        assert_eq!(rows[0].text(KernelColumn::Duration), "20.16 us");
        assert_eq!(rows[1].text(KernelColumn::Duration), "");
        assert_eq!(rows[1].text(KernelColumn::Compute), "");
        let up = visible_rows(&rows, &[], Some((KernelColumn::Duration, false)));
        assert_eq!(up, vec![2, 0, 1]);
        let down = visible_rows(&rows, &[], Some((KernelColumn::Duration, true)));
        assert_eq!(down, vec![0, 2, 1]);
        let names = visible_rows(&rows, &[], Some((KernelColumn::Name, false)));
        assert_eq!(names, vec![2, 0, 1]);
    }

    #[test]
    fn filters_compare_numbers_or_find_text() {
        let rows = vec![
            row(0, "gemm", Some(20_160.0)),
            row(1, "reduce", None),
            row(2, "Elementwise", Some(3_000.0)),
        ];
        let f = |c, t: &str| vec![(c, ColumnFilter::parse(t))];
        assert_eq!(
            visible_rows(&rows, &f(KernelColumn::Duration, ">5000"), None),
            vec![0]
        );
        assert_eq!(
            visible_rows(&rows, &f(KernelColumn::Duration, "<= 3000"), None),
            vec![2]
        );
        assert_eq!(
            visible_rows(&rows, &f(KernelColumn::Name, "ELEM"), None),
            vec![2]
        );
        assert_eq!(
            visible_rows(&rows, &f(KernelColumn::Id, "=1"), None),
            vec![1]
        );
        assert_eq!(
            visible_rows(&rows, &f(KernelColumn::Grid, "64,"), None),
            vec![0, 1, 2]
        );
        assert_eq!(
            visible_rows(&rows, &f(KernelColumn::Name, "  "), None),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn the_top_rule_has_the_largest_speedup() {
        let rule = |id: &str, title: &str, pct: Option<(u32, f64)>| NcuRule {
            identifier: id.to_string(),
            display_name: String::new(),
            section: "S".to_string(),
            messages: vec![RuleMessage {
                text: "t".to_string(),
                kind: 4,
                title: title.to_string(),
                speedup: None,
            }],
            speedup: pct.map(|(kind, percent)| RuleSpeedup { kind, percent }),
            focus_metrics: Vec::new(),
        };
        let mut w = NcuWorkload {
            rules: vec![
                rule("A", "Small Grid", Some((2, 51.5))),
                rule("B", "", Some((2, 63.4))),
                rule("L", "Low Utilization", Some((1, 99.0))),
                rule("C", "No speedup", None),
            ],
            ..Default::default()
        };
        // A global speedup beats a larger local one.
        let top = top_rule(&w).unwrap_or_else(|| panic!("a top rule"));
        assert_eq!(top.title, "B");
        assert_eq!(top.speedup_pct, 63.4);
        assert_eq!(top.kind, "global");
        // With local speedups only, the largest of them.
        w.rules
            .retain(|r| r.identifier == "L" || r.identifier == "C");
        let top = top_rule(&w).unwrap_or_else(|| panic!("a top rule"));
        assert_eq!((top.title.as_str(), top.kind), ("Low Utilization", "local"));
        assert!(top_rule(&NcuWorkload::default()).is_none());
    }
}
