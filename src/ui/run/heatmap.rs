//! The rank × step heatmap of a run: one cell per rank and step (`ProfilerStep#N`, `step_N`, …),
//! coloured by the step's time or by the time the rank waited in its collectives during the
//! step; clicking a cell zooms the run to that rank's step and selects its span.

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, Ui, Vec2};

use super::RunTab;
use crate::analysis::ranks::steps::Step;
use crate::ui::timeline::format_duration;

/// Which value the cells show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeatMetric {
    StepTime,
    Wait,
}

impl HeatMetric {
    fn of(self, s: &Step) -> i64 {
        match self {
            HeatMetric::StepTime => s.duration_ns(),
            HeatMetric::Wait => s.wait_ns,
        }
    }
}

/// A cell drawn in the last frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeatCell {
    /// Rank index (into the run's ranks).
    pub rank: usize,
    pub step: u64,
    pub rect: Rect,
}

const CELL_H: f32 = 20.0;
const LABEL_W: f32 = 64.0;

/// Draws the heatmap; a clicked cell's step span (run clock) when one was clicked.
pub fn show(ui: &mut Ui, run: &mut RunTab) -> Option<(i64, i64)> {
    let Some(a) = &run.analysis else {
        return None;
    };
    let grid = &a.steps;
    if grid.numbers.is_empty() {
        ui.weak("No steps found (ProfilerStep#N, or NVTX / annotation ranges named step_N).");
        run.last_heat_cells.clear();
        return None;
    }
    let mut metric = run.heat_metric;
    ui.horizontal(|ui| {
        ui.label("Cells:");
        ui.selectable_value(&mut metric, HeatMetric::StepTime, "Step time");
        ui.selectable_value(&mut metric, HeatMetric::Wait, "Wait in collectives");
    });
    let values: Vec<i64> = grid
        .per_rank
        .iter()
        .flatten()
        .map(|s| metric.of(s))
        .collect();
    let lo = values.iter().copied().min().unwrap_or(0);
    let hi = values.iter().copied().max().unwrap_or(1);
    let cols = grid.numbers.len();
    // The visible width: the panel scrolls sideways for its wide table.
    let visible_w = (ui.clip_rect().right() - ui.cursor().left()).max(LABEL_W + 60.0);
    let cell_w = ((visible_w - LABEL_W - 8.0) / cols as f32).clamp(6.0, 48.0);
    let size = Vec2::new(
        LABEL_W + cell_w * cols as f32,
        CELL_H * (a.ranks.len() + 1) as f32,
    );
    let (rect, response) = ui.allocate_exact_size(size, Sense::click());
    let painter = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let mut cells = Vec::new();
    let mut hovered = None;
    let mut clicked = None;
    // Only the columns in view (a run of 1 M-event ranks has thousands of steps).
    let clip = ui.clip_rect();
    let col_at = |x: f32| ((x - rect.left() - LABEL_W) / cell_w).max(0.0) as usize;
    let shown = col_at(clip.left()).min(cols)..(col_at(clip.right()) + 1).min(cols);
    for (c, n) in grid
        .numbers
        .iter()
        .enumerate()
        .take(shown.end)
        .skip(shown.start)
    {
        let x = rect.left() + LABEL_W + cell_w * c as f32;
        if cell_w >= 22.0 || c % ((28.0 / cell_w).ceil() as usize).max(1) == 0 {
            painter.text(
                Pos2::new(x + cell_w / 2.0, rect.top() + CELL_H / 2.0),
                Align2::CENTER_CENTER,
                n.to_string(),
                FontId::proportional(10.0),
                text,
            );
        }
    }
    for (k, info) in a.ranks.iter().enumerate() {
        let y = rect.top() + CELL_H * (k + 1) as f32;
        painter.text(
            Pos2::new(rect.left() + 4.0, y + CELL_H / 2.0),
            Align2::LEFT_CENTER,
            format!("Rank {}", info.rank),
            FontId::proportional(11.0),
            text,
        );
        for (c, &n) in grid
            .numbers
            .iter()
            .enumerate()
            .take(shown.end)
            .skip(shown.start)
        {
            let x = rect.left() + LABEL_W + cell_w * c as f32;
            let cell = Rect::from_min_size(Pos2::new(x, y), Vec2::new(cell_w, CELL_H)).shrink(0.5);
            match grid.cell(k, n) {
                Some(s) => {
                    let v = metric.of(s);
                    let f = if hi > lo {
                        (v - lo) as f32 / (hi - lo) as f32
                    } else {
                        0.5
                    };
                    painter.rect_filled(cell, 1.0, heat_colour(f));
                    cells.push(HeatCell {
                        rank: k,
                        step: n,
                        rect: cell,
                    });
                    if let Some(p) = response.hover_pos()
                        && cell.contains(p)
                    {
                        hovered = Some((info.rank, *s));
                        if response.clicked() {
                            clicked = Some((s.start_ns, s.end_ns));
                        }
                    }
                }
                None => {
                    painter.rect_stroke(
                        cell,
                        1.0,
                        Stroke::new(1.0, ui.visuals().weak_text_color()),
                        egui::StrokeKind::Inside,
                    );
                }
            }
        }
    }
    ui.horizontal(|ui| {
        ui.weak(format!(
            "{} (low) to {} (high) · rows: ranks, columns: steps · click a cell to zoom to it",
            format_duration(lo as f64),
            format_duration(hi as f64)
        ));
    });
    if let Some((rank, s)) = hovered {
        response.on_hover_text(format!(
            "Rank {rank}, step {}\nstep time {}\nwait in collectives {}",
            s.number,
            format_duration(s.duration_ns() as f64),
            format_duration(s.wait_ns as f64)
        ));
    }
    run.heat_metric = metric;
    run.last_heat_cells = cells;
    clicked
}

/// Dark blue (low) → yellow → red (high).
fn heat_colour(f: f32) -> Color32 {
    let f = f.clamp(0.0, 1.0);
    let stops = [
        (40.0, 60.0, 140.0),
        (240.0, 200.0, 60.0),
        (220.0, 50.0, 40.0),
    ];
    let (a, b, t) = if f < 0.5 {
        (stops[0], stops[1], f * 2.0)
    } else {
        (stops[1], stops[2], (f - 0.5) * 2.0)
    };
    let mix = |x: f32, y: f32| (x + (y - x) * t) as u8;
    Color32::from_rgb(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}
