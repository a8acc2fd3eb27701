//! The compare view's diff panel: the headline (GPU work first — busy time, idle in gaps,
//! overlap, the iteration time of the alignment's range — and the trace span last, in a neutral
//! colour; values with units) and, for a chosen report, every name's base and new figures with
//! the deltas — the same pure computation as `sightline diff` ([`crate::analysis::diff`],
//! [`crate::analysis::headline`]), run on a worker thread. Warm-up exclusion and the range
//! selection apply to both runs; "per iteration" divides by each run's number of
//! alignment-range instances. A click on a name outlines its events in both timelines; the table
//! exports as CSV. The drawing of the two tables is [`diff_table`].

use std::collections::HashMap;
use std::sync::Arc;

use egui::Ui;

use super::CompareView;
use super::diff_table;
use crate::analysis::align::{self, Alignment};
use crate::analysis::diff::{self, DiffRow, HeadlineRow};
use crate::analysis::headline::{self, Iteration};
use crate::analysis::{
    AttributionScope, ExclusionRule, Filter, NsysFormat, REPORTS, ReportInput, ReportOptions,
    Table, TimeRange, exclude_warmup,
};
use crate::trace::Trace;
use crate::ui::file_dialog::{self, FilePurpose};
use crate::ui::panels::analysis::{Worker, export_table, row_events};
use crate::ui::timeline::{self, EventRef};
use crate::ui::workspace::event_kind;

/// The reports the panel compares, by nsys name, with a short label.
pub const COMPARE_REPORTS: &[(&str, &str)] = &[
    ("cuda_gpu_kern_sum", "Kernels"),
    ("cuda_api_sum", "CUDA API"),
    ("cuda_gpu_mem_time_sum", "Memory time"),
    ("cuda_gpu_mem_size_sum", "Memory size"),
    ("nvtx_sum", "NVTX ranges"),
    ("nvtx_gpu_proj_sum", "NVTX GPU projection"),
];

/// What a diff depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffKey {
    pub report: usize,
    pub exclude_warmup: bool,
    pub per_iteration: bool,
    /// Each run's range (its own times).
    pub ranges: [TimeRange; 2],
    /// The step range's name (the alignment's NVTX range), for steps and "per iteration".
    pub step: Option<String>,
    /// The traces, by address (a reloaded trace is a new one).
    traces: [usize; 2],
}

/// A finished diff.
#[derive(Debug, Default)]
pub struct DiffResult {
    pub rows: Vec<DiffRow>,
    pub unit: &'static str,
    /// The diff as `sightline diff --format csv` prints it.
    pub table: Table,
    pub headline: Vec<HeadlineRow>,
    /// Each run's events by name, for outlining.
    pub events: [HashMap<String, Vec<EventRef>>; 2],
    /// Step-range instances in each run (when a step range is known).
    pub steps: Option<(usize, usize)>,
    /// Why the report could not be compared, or why "per iteration" was not applied.
    pub note: Option<String>,
}

/// The panel's settings and its background job.
#[derive(Default)]
pub struct DiffPanel {
    pub report: usize,
    pub filter: String,
    pub per_iteration: bool,
    pub exclude_warmup: bool,
    /// The name clicked last (outlined in both timelines).
    pub selected: Option<String>,
    pub worker: Worker<DiffKey, DiffResult>,
    message: Option<String>,
}

impl DiffPanel {
    /// Whether a diff is being computed.
    pub fn busy(&self) -> bool {
        self.worker.busy()
    }

    /// The last diff computed (it may be for earlier settings while a new one runs).
    pub fn result(&self) -> Option<&DiffResult> {
        self.worker.done()
    }
}

/// The key for the current settings of `cv`.
pub fn key_of(cv: &CompareView, traces: [&Arc<Trace>; 2]) -> DiffKey {
    let range = |k| {
        cv.range_of(k)
            .map_or(TimeRange::ALL, |(a, b)| TimeRange::new(a, b))
    };
    DiffKey {
        report: cv.diff.report,
        exclude_warmup: cv.diff.exclude_warmup,
        per_iteration: cv.diff.per_iteration,
        ranges: [range(0), range(1)],
        step: match &cv.alignment {
            Some(Alignment::Nvtx { name, .. }) => Some(name.clone()),
            _ => None,
        },
        traces: [
            Arc::as_ptr(traces[0]) as usize,
            Arc::as_ptr(traces[1]) as usize,
        ],
    }
}

/// Computes the diff for `key` (on a worker thread).
pub fn compute(traces: [&Trace; 2], key: &DiffKey) -> DiffResult {
    let exclusions = traces.map(|t| {
        key.exclude_warmup
            .then(|| exclude_warmup(t, &[ExclusionRule::WarmupNames], AttributionScope::Process))
    });
    let filter = |k: usize| Filter {
        range: key.ranges[k],
        excluded: exclusions[k].as_ref().map(|e| &e.excluded),
    };
    // The alignment's range (or family: `token_*`) is the iteration.
    let iteration = key.step.as_ref().and_then(|n| {
        Some(Iteration {
            label: n.clone(),
            regex: align::instance_regex(n)?,
        })
    });
    let mut out = DiffResult::default();
    let heads: Vec<Vec<headline::Figure>> = (0..2)
        .map(|k| headline::headline(traces[k], &filter(k), iteration.as_ref()))
        .collect();
    out.headline = headline::headline_rows(&heads[0], &heads[1]);
    if let Some(it) = &iteration {
        let count = |k: usize| headline::step_durations(traces[k], &filter(k), &it.regex).len();
        out.steps = Some((count(0), count(1)));
    }
    let Some(report) = COMPARE_REPORTS
        .get(key.report)
        .and_then(|(name, _)| REPORTS.iter().find(|r| r.name() == *name))
    else {
        out.note = Some("unknown report".to_string());
        return out;
    };
    let options = ReportOptions::default();
    // One format for both runs, or their NVTX ranges could be named two ways.
    let nsys_format = NsysFormat::of_traces(&[traces[0], traces[1]]);
    let tables: Vec<Table> = (0..2)
        .map(|k| {
            report.compute(&ReportInput {
                trace: traces[k],
                filter: &filter(k),
                options: &options,
                with_events: true,
                row_limit: None,
                nsys_format,
                sink: None,
            })
        })
        .collect();
    let Some(columns) = diff::diff_columns(&tables[0]).or_else(|| diff::diff_columns(&tables[1]))
    else {
        out.note = Some(format!(
            "{} has nothing to compare in either run",
            report.title()
        ));
        return out;
    };
    out.unit = columns.unit;
    let per_step = match (key.per_iteration, out.steps) {
        (true, Some((b, n))) if b > 0 && n > 0 => Some((b as f64, n as f64)),
        (true, _) => {
            out.note = Some(
                "per iteration needs an NVTX alignment range present in both runs".to_string(),
            );
            None
        }
        (false, _) => None,
    };
    match diff::diff(&tables[0], &tables[1], per_step) {
        Ok(rows) => {
            out.table = diff::diff_table(&rows, columns.unit, per_step.is_some());
            out.rows = rows;
        }
        Err(e) => out.note = Some(e),
    }
    for (k, t) in tables.iter().enumerate() {
        for row in &t.rows {
            let name = row
                .cells
                .get(columns.name)
                .map(|c| c.csv_text())
                .unwrap_or_default();
            out.events[k].entry(name).or_default().extend(
                row_events(row)
                    .into_iter()
                    .map(|(table, i)| EventRef::new(event_kind(table), i)),
            );
        }
    }
    out
}

/// Draws the panel; returns the events to outline in each run when a name was clicked.
pub fn show(
    ui: &mut Ui,
    cv: &mut CompareView,
    traces: [&Arc<Trace>; 2],
) -> Option<[Vec<EventRef>; 2]> {
    let key = key_of(cv, traces);
    let repaint = ui.ctx().clone();
    let job_traces = [traces[0].clone(), traces[1].clone()];
    let job_key = key.clone();
    let offset0 = cv.offsets[0];
    let DiffPanel {
        report: p_report,
        filter: p_filter,
        per_iteration,
        exclude_warmup: p_exclude,
        selected,
        worker,
        message,
    } = &mut cv.diff;
    let status = worker.request(
        &key,
        move || compute([&job_traces[0], &job_traces[1]], &job_key),
        move || repaint.request_repaint(),
    );
    let pending = status.is_pending();
    let result = status.latest();
    let mut outline = None;

    ui.horizontal_wrapped(|ui| {
        ui.heading("Compare");
        ui.checkbox(p_exclude, "Exclude warm-up").on_hover_text(
            "Drop warm-up work (NVTX ranges named warmup / warm-up / warm_up) in both runs",
        );
        ui.checkbox(per_iteration, "Per iteration").on_hover_text(
            "Divide counts and totals by the number of instances of the alignment's NVTX range \
             in each run, so runs of different length compare fairly",
        );
        if pending {
            ui.spinner();
        }
    });
    ui.label(match key.ranges[0] {
        TimeRange {
            start_ns: Some(a),
            end_ns: Some(b),
        } => format!(
            "Range: {} long, from {} after the alignment point (in both runs)",
            timeline::format_duration((b - a) as f64),
            timeline::format_duration((a - offset0) as f64)
        ),
        _ => "Range: whole runs (Shift+drag on either timeline selects one for both)".to_string(),
    });
    let Some(r) = result else {
        ui.weak("Computing…");
        return None;
    };
    if let (Some((b, n)), Some(name)) = (r.steps, &key.step) {
        ui.label(format!(
            "Iterations ({name}): {b} in the baseline, {n} in the new run"
        ));
    }
    ui.separator();
    ui.strong("Headline");
    diff_table::headline_grid(ui, &r.headline);
    ui.separator();
    ui.horizontal_wrapped(|ui| {
        for (i, (_, label)) in COMPARE_REPORTS.iter().enumerate() {
            ui.selectable_value(p_report, i, *label);
        }
    });
    ui.horizontal(|ui| {
        let label = ui.label("Name filter");
        ui.text_edit_singleline(p_filter).labelled_by(label.id);
        let asked = ui
            .button("Export CSV…")
            .on_hover_text("The diff as `sightline diff --format csv` prints it")
            .clicked();
        let file_name = format!(
            "diff_{}.csv",
            COMPARE_REPORTS[(*p_report).min(COMPARE_REPORTS.len() - 1)].0
        );
        if let Some(path) =
            file_dialog::csv_path(ui.ctx(), asked, FilePurpose::SaveDiffCsv, &file_name)
        {
            *message = Some(match export_table(&path, &r.table) {
                Ok(n) => format!("Wrote {n} rows to {}", path.display()),
                Err(e) => format!("Export failed: {e}"),
            });
        }
    });
    if let Some(m) = message.as_ref() {
        ui.weak(m);
    }
    if let Some(note) = &r.note {
        ui.colored_label(ui.visuals().warn_fg_color, note);
    }
    let filter = p_filter.to_lowercase();
    let rows: Vec<&DiffRow> = r
        .rows
        .iter()
        .filter(|row| filter.is_empty() || row.name.to_lowercase().contains(&filter))
        .collect();
    if let Some(name) = diff_table::rows_table(ui, &rows, r.unit, selected.as_deref()) {
        *selected = Some(name.clone());
        outline = Some([
            r.events[0].get(&name).cloned().unwrap_or_default(),
            r.events[1].get(&name).cloned().unwrap_or_default(),
        ]);
    }
    outline
}
