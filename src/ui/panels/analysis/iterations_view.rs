//! The Iterations tab: a heatmap of the iterations of a family of repeated ranges (rows) by
//! what each holds (columns: nested ranges, or the top kernels), a cell's colour its duration
//! against the column's median, outliers outlined, warm-up iterations in a block of their own,
//! a chooser of the trace's families. A click on a cell zooms the timeline to it; a click on an
//! iteration's name or its own cell zooms to the iteration.
//!
//! Both computations run on worker threads: the trace's families (per trace) and the iterations
//! of the chosen family ([`crate::analysis::iterations::iterations`], per inputs and family), the
//! latter only once the tab is shown.

use std::sync::Arc;

use egui::{Color32, CornerRadius, RichText, Sense, Stroke, StrokeKind, Ui, Vec2, pos2, vec2};

use super::{AnalysisPanel, InputsKey, PanelAction, Worker};
use crate::analysis::TimeRange;
use crate::analysis::critical_path::CriticalPath;
use crate::analysis::iterations::{self, ChildKind, FamilyChoice, Iterations};
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

/// The family chosen and the two jobs.
#[derive(Default)]
pub struct IterationsState {
    /// The family chosen in the tab; `None`: the trace's default.
    family: Option<String>,
    /// The trace's families, per trace generation.
    families: Worker<u64, Arc<Vec<(String, usize)>>>,
    /// The iterations, per (inputs, family chosen).
    result: Worker<(InputsKey, Option<String>), Arc<Iterations>>,
    /// Their critical paths, per (inputs, family chosen).
    pub(super) paths: Worker<(InputsKey, Option<String>), Arc<Vec<CriticalPath>>>,
    /// The iteration whose critical path was asked for, shown once the paths are ready.
    pub(super) asked: Option<usize>,
    /// The critical path of the range selection, once asked for.
    pub(super) selection_path: Worker<InputsKey, Arc<CriticalPath>>,
    /// The selection whose path was asked for, shown once computed.
    pub(super) selection_asked: Option<InputsKey>,
}

impl IterationsState {
    pub(super) fn started(&self) -> usize {
        self.families.started()
            + self.result.started()
            + self.paths.started()
            + self.selection_path.started()
    }

    pub(super) fn busy(&self) -> bool {
        self.families.busy()
            || self.result.busy()
            || self.paths.busy()
            || self.selection_path.busy()
    }

    pub(super) fn wait(&mut self) {
        self.families.wait();
        self.result.wait();
        self.paths.wait();
        self.selection_path.wait();
    }

    pub(super) fn poll(&mut self) {
        self.families.poll();
        self.result.poll();
        self.paths.poll();
        self.selection_path.poll();
    }
}

const NAME_WIDTH: f32 = 130.0;
const CELL_HEIGHT: f32 = 16.0;
const MIN_CELL_WIDTH: f32 = 14.0;
const MAX_CELL_WIDTH: f32 = 56.0;
const HEADER_CHARS: usize = 26;
const OUTLIER: Color32 = Color32::from_rgb(0xff, 0x3b, 0x30);
/// Duration against the column's median: at or below `LOW`× the coolest colour, at or above
/// `HIGH`× the hottest.
const LOW: f64 = 0.9;
const HIGH: f64 = 1.5;

/// The colour of a cell `ratio` times its column's median.
fn heat(ratio: f64) -> Color32 {
    let t = ((ratio - LOW) / (HIGH - LOW)).clamp(0.0, 1.0) as f32;
    // Dark blue → teal → yellow.
    let stops = [(0x23, 0x3a, 0x6e), (0x2a, 0x9d, 0x8f), (0xf4, 0xd0, 0x3f)];
    let (a, b, u) = if t < 0.5 {
        (stops[0], stops[1], t * 2.0)
    } else {
        (stops[1], stops[2], t * 2.0 - 1.0)
    };
    let mix = |x: u8, y: u8| (f32::from(x) + (f32::from(y) - f32::from(x)) * u).round() as u8;
    Color32::from_rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The median of the values of one column (`None` values skipped).
fn column_median(values: impl Iterator<Item = i64>) -> Option<i64> {
    let mut v: Vec<i64> = values.collect();
    iterations::outliers::median(&mut v)
}

/// A name cut to `chars` characters, with an ellipsis.
fn cut(name: &str, chars: usize) -> String {
    if name.chars().count() <= chars {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(chars.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

impl AnalysisPanel {
    /// The family the Iterations tab shows (`None`: the trace's default).
    pub fn iteration_family(&self) -> Option<&str> {
        self.iterations.family.as_deref()
    }

    /// Chooses the family the Iterations tab shows, as its chooser does.
    pub fn set_iteration_family(&mut self, family: Option<String>) {
        self.iterations.family = family;
    }

    /// The trace's repeated families, once computed (the Iterations tab asks for them).
    pub fn iteration_families(&self) -> Option<&[(String, usize)]> {
        let generation = self.trace_generation;
        self.iterations
            .families
            .status(&generation)
            .ready()
            .map(|v| v.as_slice())
    }

    /// The iterations the Iterations tab shows, once computed for the last inputs.
    pub fn iterations(&self) -> Option<&Iterations> {
        let key = (self.inputs?, self.iterations.family.clone());
        self.iterations.result.status(&key).ready().map(Arc::as_ref)
    }

    pub(super) fn iterations_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        _selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        let Some(inputs) = self.inputs else {
            return;
        };
        let repaint = self.repaint_fn();
        let generation = self.trace_generation;
        let t = trace.clone();
        let families = self
            .iterations
            .families
            .request(
                &generation,
                move || Arc::new(iterations::families(&t)),
                repaint.clone(),
            )
            .ready()
            .cloned();
        // A family of another trace means nothing here.
        if let (Some(list), Some(f)) = (&families, &self.iterations.family)
            && !list.iter().any(|(name, _)| name == f)
        {
            self.iterations.family = None;
        }
        let key = (inputs, self.iterations.family.clone());
        let (t, ex) = (trace.clone(), self.exclusion.result.clone());
        let family = key.1.clone();
        let status = self.iterations.result.request(
            &key,
            move || {
                let choice = family.map_or(FamilyChoice::Default, FamilyChoice::Named);
                let warmup = ex.as_deref().map(|e| &e.excluded);
                Arc::new(iterations::iterations(
                    &t,
                    inputs.selection,
                    &choice,
                    warmup,
                ))
            },
            repaint,
        );
        let shown = status.latest().cloned();

        let mut chosen = self.iterations.family.clone();
        ui.horizontal(|ui| {
            let label = ui.label("Family");
            let current = chosen
                .clone()
                .or_else(|| shown.as_ref().map(|s| s.family.clone()))
                .unwrap_or_default();
            egui::ComboBox::from_id_salt("iterations_family")
                .selected_text(current)
                .width(220.0)
                .height(500.0)
                .show_ui(ui, |ui| {
                    for (k, (name, count)) in families.iter().flat_map(|f| f.iter()).enumerate() {
                        let value = if k == 0 { None } else { Some(name.clone()) };
                        let text = format!("{name} ({count})");
                        if ui
                            .selectable_label(
                                chosen.as_deref() == Some(name.as_str())
                                    || (chosen.is_none() && k == 0),
                                text,
                            )
                            .clicked()
                        {
                            chosen = value;
                        }
                    }
                })
                .response
                .labelled_by(label.id);
        });
        if chosen != self.iterations.family {
            self.iterations.family = chosen;
            return; // computed on the next frame
        }
        let Some(found) = shown else {
            ui.label("Finding the iterations…");
            return;
        };
        if found.iterations.is_empty() {
            ui.label(
                "No repeated ranges here: name the iterations with NVTX ranges (step_0, step_1, \
                 …) or PyTorch's profiler schedule (ProfilerStep#N).",
            );
            return;
        }
        summary_ui(ui, &found);
        let mut asked = None;
        heatmap_ui(ui, &found, actions, &mut asked);
        if asked.is_some() {
            self.iterations.asked = asked;
        }
        self.critical_path_ui(ui, trace, &found, actions);
        self.selection_path_ui(ui, trace, actions);
    }
}

/// The line above the heatmap: counts, median, the outlier rule.
fn summary_ui(ui: &mut Ui, found: &Iterations) {
    let warm = found.iterations.iter().filter(|i| i.warmup).count();
    let median = column_median(found.steady().map(|(_, i)| i.duration_ns()));
    let outliers = found.iterations.iter().filter(|i| i.outlier).count();
    let mut text = format!(
        "{} iterations of {} ({} warm-up)",
        found.iterations.len(),
        found.family,
        warm
    );
    if let Some(m) = median {
        text += &format!(", median {}", format_duration(m as f64));
    }
    if let Some(t) = found.outlier_threshold_ns {
        text += &format!(
            "; {outliers} outlier{} above {} (median + 3×MAD, MAD ≥ 5 % of the median)",
            if outliers == 1 { "" } else { "s" },
            format_duration(t as f64)
        );
    }
    ui.label(text);
    let columns = match found.children.kind {
        ChildKind::Ranges => "Columns: the ranges inside each iteration",
        ChildKind::Kernels => "Columns: the kernels each iteration launched (GPU time)",
    };
    ui.label(
        RichText::new(format!(
            "{columns}. Colour: duration against the column's median ({LOW}× … {HIGH}×); red \
             outline: outlier. Click a cell to zoom to it."
        ))
        .weak(),
    );
}

/// The heatmap: a header of rotated column names, then the warm-up block and the steady block.
fn heatmap_ui(
    ui: &mut Ui,
    found: &Iterations,
    actions: &mut Vec<PanelAction>,
    asked: &mut Option<usize>,
) {
    let children = &found.children;
    let columns = children.columns.len() + 1;
    let avail = ui.available_width() - NAME_WIDTH;
    let cell_w = (avail / columns as f32).clamp(MIN_CELL_WIDTH, MAX_CELL_WIDTH);
    let font = egui::FontId::proportional(11.0);
    let text_color = ui.visuals().text_color();
    // Medians per column, of the steady iterations: the iteration itself, then each child.
    let steady = || {
        found
            .iterations
            .iter()
            .zip(&children.cells)
            .filter(|(i, _)| !i.warmup)
    };
    let mut medians = vec![column_median(steady().map(|(i, _)| i.duration_ns()))];
    medians.extend((0..children.columns.len()).map(|c| {
        column_median(steady().filter_map(|(_, row)| row[c].map(|cell| cell.duration_ns)))
    }));

    egui::ScrollArea::horizontal()
        .id_salt("iterations_heatmap")
        .show(ui, |ui| {
            // Column names, rotated a quarter turn, bottom-aligned on their column.
            let names: Vec<String> = std::iter::once("Iteration".to_string())
                .chain(children.columns.iter().map(|c| cut(c, HEADER_CHARS)))
                .collect();
            let galleys: Vec<_> = names
                .iter()
                .map(|n| {
                    ui.painter()
                        .layout_no_wrap(n.clone(), font.clone(), text_color)
                })
                .collect();
            let header_h = galleys.iter().map(|g| g.size().x).fold(0.0, f32::max) + 6.0;
            let width = NAME_WIDTH + cell_w * columns as f32;
            let (header, _) = ui.allocate_exact_size(vec2(width, header_h), Sense::hover());
            for (c, galley) in galleys.into_iter().enumerate() {
                let x = header.left() + NAME_WIDTH + cell_w * c as f32;
                let h = galley.size().y;
                let pos = pos2(x + (cell_w - h) / 2.0, header.bottom() - 3.0);
                ui.painter().add(
                    egui::epaint::TextShape::new(pos, galley, text_color)
                        .with_angle(-std::f32::consts::FRAC_PI_2),
                );
            }
            for warmup in [true, false] {
                let rows: Vec<usize> = (0..found.iterations.len())
                    .filter(|&n| found.iterations[n].warmup == warmup)
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                let title = if warmup { "Warm-up" } else { "Iterations" };
                ui.label(RichText::new(format!("{title} ({})", rows.len())).strong());
                for n in rows {
                    row_ui(ui, found, n, cell_w, &medians, actions, asked);
                }
            }
        });
}

/// One iteration: its name, its own cell, then its children's cells.
fn row_ui(
    ui: &mut Ui,
    found: &Iterations,
    n: usize,
    cell_w: f32,
    medians: &[Option<i64>],
    actions: &mut Vec<PanelAction>,
    asked: &mut Option<usize>,
) {
    let it = &found.iterations[n];
    let columns = found.children.columns.len() + 1;
    let size = Vec2::new(NAME_WIDTH + cell_w * columns as f32, CELL_HEIGHT);
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    if !ui.is_rect_visible(rect) {
        return;
    }
    let row_label = format!("#{n} {}", it.name);
    let name_rect = egui::Rect::from_min_size(rect.min, vec2(NAME_WIDTH - 4.0, CELL_HEIGHT));
    let name_response = ui.interact(
        name_rect,
        ui.scope_id().with(("iterations_row", n)),
        Sense::click(),
    );
    ui.painter().text(
        name_rect.left_center(),
        egui::Align2::LEFT_CENTER,
        cut(&row_label, 20),
        egui::FontId::proportional(12.0),
        ui.visuals().text_color(),
    );
    name_response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &row_label));
    if name_response.clicked() {
        actions.push(PanelAction::ZoomTo {
            start_ns: it.start_ns,
            end_ns: it.end_ns,
        });
    }
    name_response.context_menu(|ui| {
        // Every tab then measures this iteration alone (Statistics, Operators, Gaps, …).
        if ui.button("Select this iteration").clicked() {
            actions.push(PanelAction::SetSelection {
                start_ns: it.start_ns,
                end_ns: it.end_ns,
            });
            ui.close();
        }
        if ui.button("Critical path").clicked() {
            *asked = Some(n);
            actions.push(PanelAction::ZoomTo {
                start_ns: it.start_ns,
                end_ns: it.end_ns,
            });
            ui.close();
        }
    });
    // (label, duration, start, end, count, outlier) of each cell.
    let own = Some((it.duration_ns(), it.start_ns, it.end_ns, 1, it.outlier));
    let cells = std::iter::once(own).chain(
        found.children.cells[n]
            .iter()
            .map(|c| c.map(|c| (c.duration_ns, c.start_ns, c.end_ns, c.count, c.outlier))),
    );
    for (c, cell) in cells.enumerate() {
        let Some((duration, start, end, count, outlier)) = cell else {
            continue;
        };
        let x = rect.left() + NAME_WIDTH + cell_w * c as f32;
        let cell_rect =
            egui::Rect::from_min_size(pos2(x, rect.top()), vec2(cell_w - 1.0, CELL_HEIGHT - 1.0));
        let ratio = medians[c]
            .filter(|&m| m > 0)
            .map_or(1.0, |m| duration as f64 / m as f64);
        let painter = ui.painter();
        painter.rect_filled(cell_rect, CornerRadius::same(1), heat(ratio));
        if outlier {
            painter.rect_stroke(
                cell_rect.shrink(1.0),
                CornerRadius::same(1),
                Stroke::new(2.0, OUTLIER),
                StrokeKind::Inside,
            );
        }
        let column = if c == 0 {
            None
        } else {
            found.children.columns.get(c - 1).map(String::as_str)
        };
        let label = match column {
            Some(col) => format!("{row_label} · {col}"),
            None => row_label.clone(),
        };
        let response = ui.interact(
            cell_rect,
            ui.scope_id().with(("iterations_cell", n, c)),
            Sense::click(),
        );
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
        let response = response.on_hover_ui(|ui| {
            ui.label(RichText::new(&label).strong());
            ui.label(format!(
                "{}{}",
                format_duration(duration as f64),
                if count > 1 {
                    format!(" ({count}×)")
                } else {
                    String::new()
                }
            ));
            if let Some(m) = medians[c] {
                ui.label(format!(
                    "{ratio:.2}× the median {}",
                    format_duration(m as f64)
                ));
            }
            if c == 0 {
                ui.label(format!(
                    "GPU {} in {} kernels (every thread of the process)",
                    format_duration(it.gpu_time_ns as f64),
                    it.kernels
                ));
            }
            if outlier {
                ui.colored_label(OUTLIER, "outlier: above median + 3×MAD");
            }
        });
        if response.clicked() {
            actions.push(PanelAction::ZoomTo {
                start_ns: start,
                end_ns: end,
            });
        }
    }
}
