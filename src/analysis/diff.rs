//! Comparing two runs: the per-name deltas of one summary report computed on a baseline and on a
//! new run, and a headline of whole-run figures. Pure functions over report tables, shared by
//! `sightline diff` and the tests.
//!
//! A report is diffable when it has a name column (`Name`, `Operation` or `Range`), a count
//! (`Instances`, `Num Calls`, `Count`, `Range Instances`), a total and an average (`Total Time
//! (ns)` / `Avg (ns)`, `Total (MB)` / `Avg (MB)`, `Total Proj Time (ns)` / `Proj Avg (ns)`).
//! Rows of one name (an NVTX range of two styles) are added together.

use std::collections::BTreeMap;

use super::rounding::sqlite_round;
use super::table::{Cell, Table};

/// Where a diffable report keeps the figures a diff compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffColumns {
    pub name: usize,
    pub instances: usize,
    pub total: usize,
    pub avg: usize,
    /// `ns` or `MB`: the unit of total and average.
    pub unit: &'static str,
}

/// The columns of `table` a diff reads, `None` when the report has no name / count / total.
pub fn diff_columns(table: &Table) -> Option<DiffColumns> {
    let find = |names: &[&str]| names.iter().find_map(|n| table.column(n));
    let name = find(&["Name", "Operation", "Range"])?;
    let instances = find(&["Instances", "Num Calls", "Count", "Range Instances"])?;
    let (total, avg, unit) =
        if let (Some(t), Some(a)) = (table.column("Total Time (ns)"), table.column("Avg (ns)")) {
            (t, a, "ns")
        } else if let (Some(t), Some(a)) = (table.column("Total (MB)"), table.column("Avg (MB)")) {
            (t, a, "MB")
        } else {
            (
                table.column("Total Proj Time (ns)")?,
                table.column("Proj Avg (ns)")?,
                "ns",
            )
        };
    Some(DiffColumns {
        name,
        instances,
        total,
        avg,
        unit,
    })
}

/// One name's figures in one run (per step when the diff normalises).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Side {
    pub instances: f64,
    pub total: f64,
    /// The report's average when the name has one row (so the diff shows the report's own
    /// rounding); else total over instances.
    pub report_avg: Option<f64>,
    /// Rows of the report with this name.
    pub rows: u32,
}

impl Side {
    /// Average per instance (not divided by steps).
    pub fn avg(&self) -> Option<f64> {
        match (self.rows, self.report_avg) {
            (1, Some(a)) => Some(a),
            _ => (self.instances > 0.0).then(|| self.total / self.instances),
        }
    }
}

/// In which runs a name occurs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Both,
    /// Only in the new run.
    New,
    /// Only in the baseline.
    Gone,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Both => "both",
            Status::New => "new",
            Status::Gone => "gone",
        }
    }
}

/// One name of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    pub name: String,
    pub base: Option<Side>,
    pub new: Option<Side>,
}

impl DiffRow {
    pub fn status(&self) -> Status {
        match (self.base, self.new) {
            (Some(_), None) => Status::Gone,
            (None, Some(_)) => Status::New,
            _ => Status::Both,
        }
    }

    pub fn base_total(&self) -> f64 {
        self.base.map_or(0.0, |s| s.total)
    }

    pub fn new_total(&self) -> f64 {
        self.new.map_or(0.0, |s| s.total)
    }

    pub fn delta_total(&self) -> f64 {
        self.new_total() - self.base_total()
    }
}

/// 100·(new − base)/base rounded to 0.1 as nsys rounds (SQLite `round`); `None` when base is 0.
pub fn delta_percent(base: f64, new: f64) -> Option<f64> {
    // `+ 0.0` turns a rounded -0.0 into 0.0: "-0.0 %" reads as a change that is not there.
    (base != 0.0).then(|| sqlite_round(100.0 * (new - base) / base, 1) + 0.0)
}

/// Rewrites the kernel names of a report's name column in their canonical spelling
/// ([`super::demangled`]), so that runs demangled by different tools (a PyTorch trace against an
/// nsys export) meet row by row. Other reports are left as they are.
pub fn canonical_kernel_names(report: &str, table: &mut Table) {
    if !report.contains("kern") && report != "cuda_gpu_sum" {
        return;
    }
    let Some(c) = diff_columns(table) else {
        return;
    };
    for row in &mut table.rows {
        if let Some(Cell::Text(name)) = row.cells.get_mut(c.name) {
            *name = super::demangled::canonical_kernel_name(&name.as_str()).into();
        }
    }
}

/// Every name of either table with its figures in each, divided by `steps` (base, new) when
/// given, by |Δ total| descending then name. An error says why a table cannot be diffed.
pub fn diff(base: &Table, new: &Table, steps: Option<(f64, f64)>) -> Result<Vec<DiffRow>, String> {
    let side = |t: &Table, per: f64| -> Result<BTreeMap<String, Side>, String> {
        let c =
            diff_columns(t).ok_or("the report has no name, count and total columns to compare")?;
        let mut out: BTreeMap<String, Side> = BTreeMap::new();
        for row in &t.rows {
            let name = row
                .cells
                .get(c.name)
                .map(Cell::csv_text)
                .unwrap_or_default();
            let num = |i: usize| row.cells.get(i).and_then(Cell::number).unwrap_or(0.0);
            let s = out.entry(name).or_default();
            s.instances += num(c.instances) / per;
            s.total += num(c.total) / per;
            s.report_avg = row.cells.get(c.avg).and_then(Cell::number);
            s.rows += 1;
        }
        Ok(out)
    };
    let (bs, ns) = steps.unwrap_or((1.0, 1.0));
    let mut b = side(base, bs)?;
    let n = side(new, ns)?;
    let mut rows: Vec<DiffRow> = n
        .into_iter()
        .map(|(name, s)| DiffRow {
            base: b.remove(&name),
            new: Some(s),
            name,
        })
        .collect();
    rows.extend(b.into_iter().map(|(name, s)| DiffRow {
        name,
        base: Some(s),
        new: None,
    }));
    rows.sort_by(|x, y| {
        y.delta_total()
            .abs()
            .total_cmp(&x.delta_total().abs())
            .then_with(|| x.name.cmp(&y.name))
    });
    Ok(rows)
}

/// The diff as a table with the columns `sightline diff` prints; `unit` names the unit of
/// totals and averages (`ns`, `MB`); `per_step` prints counts and totals as fractions.
pub fn diff_table(rows: &[DiffRow], unit: &str, per_step: bool) -> Table {
    let columns = [
        "Name".to_string(),
        "Base Instances".to_string(),
        "New Instances".to_string(),
        format!("Base Total ({unit})"),
        format!("New Total ({unit})"),
        format!("Delta Total ({unit})"),
        "Delta Total (%)".to_string(),
        format!("Base Avg ({unit})"),
        format!("New Avg ({unit})"),
        "Delta Avg (%)".to_string(),
        "Status".to_string(),
    ];
    // Integers stay integers (ns totals, counts); fractions (per step, MB) keep what rounding leaves.
    let whole = !per_step && unit == "ns";
    let num = |v: f64, whole: bool| {
        if whole {
            Cell::Int(v.round() as i64)
        } else {
            Cell::Float(sqlite_round(v, 3))
        }
    };
    let opt = |v: Option<f64>| v.map_or(Cell::Null, |v| Cell::Float(sqlite_round(v, 1)));
    let mut t = Table::from_parts(columns.to_vec(), Vec::new());
    for r in rows {
        let (b, n) = (r.base.unwrap_or_default(), r.new.unwrap_or_default());
        let (ba, na) = (r.base.and_then(|s| s.avg()), r.new.and_then(|s| s.avg()));
        let avg_delta = match (ba, na) {
            (Some(x), Some(y)) => delta_percent(x, y),
            _ => None,
        };
        t.push(
            vec![
                Cell::text(r.name.clone()),
                num(b.instances, !per_step),
                num(n.instances, !per_step),
                num(b.total, whole),
                num(n.total, whole),
                num(r.delta_total(), whole),
                opt(delta_percent(r.base_total(), r.new_total())),
                opt(ba),
                opt(na),
                opt(avg_delta),
                Cell::text(r.status().label()),
            ],
            Default::default(),
        );
    }
    t
}

/// One line of the headline table.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineRow {
    pub metric: String,
    pub base: Option<f64>,
    pub new: Option<f64>,
    pub unit: super::headline::Unit,
    pub better: super::headline::Better,
}

/// The headline as a table `Metric,Base,New,Delta,Delta (%)`: percentages rounded to 0.1,
/// times and counts whole (the metric's name says its unit). What people read is
/// [`super::headline::headline_text`].
pub fn headline_table(rows: &[HeadlineRow]) -> Table {
    let mut t = Table::new(&["Metric", "Base", "New", "Delta", "Delta (%)"]);
    let pct = |v: Option<f64>| v.map_or(Cell::Null, |v| Cell::Float(sqlite_round(v, 1)));
    let whole = |v: Option<f64>| v.map_or(Cell::Null, |v| Cell::Int(v.round() as i64));
    for r in rows {
        let cell = if r.unit == super::headline::Unit::Percent {
            pct
        } else {
            whole
        };
        let delta = match (r.base, r.new) {
            (Some(b), Some(n)) => Some(n - b),
            _ => None,
        };
        let pct_delta = match (r.base, r.new) {
            (Some(b), Some(n)) => delta_percent(b, n),
            _ => None,
        };
        t.push(
            vec![
                Cell::text(r.metric.clone()),
                cell(r.base),
                cell(r.new),
                cell(delta),
                pct(pct_delta),
            ],
            Default::default(),
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::table::RowEvents;

    fn table(rows: &[(&str, i64, i64)]) -> Table {
        let mut t = Table::new(&["Total Time (ns)", "Instances", "Avg (ns)", "Name"]);
        for &(n, i, tot) in rows {
            t.push(
                vec![
                    Cell::Int(tot),
                    Cell::Int(i),
                    Cell::Float(tot as f64 / i as f64),
                    Cell::text(n),
                ],
                RowEvents::None,
            );
        }
        t
    }

    #[test]
    fn names_in_one_run_are_new_or_gone_and_rows_sort_by_delta() {
        let base = table(&[("a", 2, 100), ("b", 1, 50)]);
        let new = table(&[("a", 2, 40), ("c", 4, 400)]);
        let rows = diff(&base, &new, None).unwrap();
        let got: Vec<(&str, Status, f64)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.status(), r.delta_total()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("c", Status::New, 400.0),
                ("a", Status::Both, -60.0),
                ("b", Status::Gone, -50.0)
            ]
        );
        assert_eq!(delta_percent(100.0, 40.0), Some(-60.0));
        assert_eq!(delta_percent(0.0, 40.0), None);
        let t = diff_table(&rows, "ns", false);
        assert_eq!(t.rows[0].cells[6], Cell::Null, "Δ% of a new name is empty");
        assert_eq!(t.rows[1].cells[6], Cell::Float(-60.0));
    }
}
