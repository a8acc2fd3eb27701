//! The Gaps and Overlap sections drawn: GPU busy % and idle time of the selection, the idle gaps
//! longest first with their cause and, for a late launch, the launching thread's host-time split
//! (a bar and its largest parts; the whole split for the chosen gap), a click zooming to one,
//! and copy/compute overlap per GPU and per copy kind.

use std::sync::Arc;

use egui::{Button, RichText, Ui};

use super::{AnalysisPanel, OverlapResult, PanelAction, filter_of};
use crate::analysis::gap_causes::{CauseTotal, GapCause};
use crate::analysis::{self, IdleGap, TimeRange};
use crate::export::elide::keeps_end_each;
use crate::trace::Trace;
use crate::ui::columns::elide_to_width;
use crate::ui::gap_tooltip::{cause_text, host_bar, host_legend, host_line};
use crate::ui::theme::Palette;
use crate::ui::timeline::format_duration;

/// Width of a gap row's host-time bar.
const HOST_BAR_PX: f32 = 48.0;
/// Room a gap row needs to name what ran before and after it (else only its tooltip does).
const MIN_NAMES_PX: f32 = 200.0;

impl AnalysisPanel {
    pub(super) fn gaps_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        let slider = ui.add(
            egui::Slider::new(&mut self.min_gap_us, 1.0..=100_000.0)
                .logarithmic(true)
                .suffix(" µs")
                .text("Shortest gap"),
        );
        let per_stream = ui.checkbox(&mut self.per_stream, "Per stream");
        if slider.changed() || per_stream.changed() {
            self.sync(trace, selection, actions);
        }
        metric_averages_ui(ui, trace, selection);

        let Some(result) = self.gaps_result_arc() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        if result.activity.is_empty() {
            ui.label("No GPU work in the selection.");
            return;
        }
        egui::Grid::new("analysis_gpu_activity")
            .striped(true)
            .show(ui, |ui| {
                for title in ["GPU", "Busy", "Idle", "Measured"] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for a in &result.activity {
                    ui.label(a.device.to_string())
                        .on_hover_text(trace.gpu_title(a.device));
                    ui.label(percent_text(a.busy_percent()));
                    ui.label(format_duration(a.idle_ns as f64));
                    ui.label(format_duration(a.measured_ns as f64));
                    ui.end_row();
                }
            });
        let idle: i64 = result.activity.iter().map(|a| a.idle_ns).sum();
        ui.label(format!("Total idle: {}", format_duration(idle as f64)));
        let palette = Palette::for_ui(ui);
        causes_ui(ui, &palette, &result.cause_totals);

        let gaps = &result.gaps;
        let listed: i64 = gaps.iter().map(IdleGap::duration_ns).sum();
        ui.label(format!(
            "{} gaps of at least {} ({} in all), longest first:",
            gaps.len(),
            format_duration(self.gap_options().min_ns as f64),
            format_duration(listed as f64)
        ));
        let row_height = ui.spacing().interact_size.y;
        let font = egui::TextStyle::Body.resolve(ui.style());
        egui::ScrollArea::vertical()
            .id_salt("analysis_gap_list")
            .max_height(360.0)
            .auto_shrink([false, true])
            .show_rows(ui, row_height, gaps.len(), |ui, range| {
                // Names cut where the names on screen agree (copies keep their end).
                let names: Vec<&str> = range
                    .clone()
                    .filter_map(|r| gaps.get(r))
                    .flat_map(|g| [g.before_name(trace), g.after_name(trace)])
                    .collect();
                let ends = keeps_end_each(&names);
                for (k, rank) in range.enumerate() {
                    let Some(gap) = gaps.get(rank) else {
                        continue;
                    };
                    let before = gap.before_name(trace);
                    let after = gap.after_name(trace);
                    let cause = result.causes.get(rank).copied();
                    let chosen = self.samples.is_chosen_gap(rank, gap);
                    ui.horizontal(|ui| {
                        let row = ui
                            .add(Button::selectable(chosen, gap_label(rank + 1, gap)))
                            .on_hover_text(format!(
                                "{} – {}\n{}after: {before}\nbefore: {after}\n{}click to show \
                                 the gap and the call that launched the next work",
                                format_duration(gap.start_ns as f64),
                                format_duration(gap.end_ns as f64),
                                gap.edge.map_or(String::new(), |e| format!(
                                    "cut at the {}: the GPU may have been idle beyond it\n",
                                    e.label()
                                )),
                                cause.map_or(String::new(), |c| cause_text(trace, &c)),
                            ));
                        if row.clicked() {
                            match cause {
                                Some(cause) => {
                                    self.samples.choose_gap(trace, rank, *gap, cause);
                                    actions.push(PanelAction::ShowGap { gap: *gap, cause })
                                }
                                None => actions.push(PanelAction::ZoomTo {
                                    start_ns: gap.start_ns,
                                    end_ns: gap.end_ns,
                                }),
                            }
                        }
                        if let Some(c) = cause {
                            ui.label(
                                RichText::new(c.cause.label())
                                    .color(palette.gap_cause(Some(c.cause))),
                            )
                            .on_hover_text(c.cause.explanation());
                            match &c.host {
                                Some(h) => {
                                    host_bar(ui, &palette, h, HOST_BAR_PX);
                                    let line = host_line(h);
                                    let shown = line.trim_start_matches("host: ").to_string();
                                    ui.add(egui::Label::new(shown).truncate())
                                        .on_hover_text(line);
                                }
                                None => {
                                    ui.add_space(HOST_BAR_PX + ui.spacing().item_spacing.x);
                                }
                            }
                        }
                        // After and before, each cut to half the room left; where too little
                        // is left, only in the tooltip.
                        let room = ui.available_width() - 8.0;
                        if room >= MIN_NAMES_PX {
                            let half = room / 2.0 - 40.0;
                            let cut =
                                |name: &str, end: bool| elide_to_width(ui, name, &font, half, end);
                            let b = cut(before, ends.get(2 * k).copied().unwrap_or(false));
                            let a = cut(after, ends.get(2 * k + 1).copied().unwrap_or(false));
                            ui.add(egui::Label::new(format!("after {b} · before {a}")).truncate())
                                .on_hover_text(format!("after: {before}\nbefore: {after}"));
                        }
                    });
                }
            });
        // The chosen gap's host-time split in full.
        let chosen = (0..gaps.len()).find(|&r| self.samples.is_chosen_gap(r, &gaps[r]));
        if let Some(h) = chosen
            .and_then(|r| result.causes.get(r))
            .and_then(|c| c.host)
        {
            ui.add_space(4.0);
            host_legend(ui, &palette, &h);
        }
        // The chosen gap's samples while the list shows it: a range holding no gap (or other
        // gaps) has no such detail to keep showing.
        if chosen.is_some() {
            self.gap_functions_ui(ui, trace);
        }
    }

    /// The gaps result to show (fresh, or the last one while the fresh one is computed).
    fn gaps_result_arc(&self) -> Option<Arc<super::GapsResult>> {
        let key = (self.inputs?, self.gap_options());
        self.jobs.gaps.status(&key).latest().cloned()
    }

    pub(super) fn overlap_ui(&mut self, ui: &mut Ui, trace: &Arc<Trace>, selection: TimeRange) {
        let Some(inputs) = self.inputs else {
            return;
        };
        let (t, ex) = (trace.clone(), self.exclusion.result.clone());
        let repaint = self.repaint_fn();
        let status = self.jobs.overlap.request(
            &inputs,
            move || {
                let filter = filter_of(selection, ex.as_deref());
                Arc::new(OverlapResult {
                    per_gpu: analysis::copy_compute_overlap(&t, &filter),
                    per_kind: analysis::overlap_by_copy_kind(&t, &filter),
                })
            },
            repaint,
        );
        let Some(overlap) = status.latest().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        ui.label(
            "Share of memcpy + memset busy time hidden under kernel busy time (unions over all \
             streams); weight streaming aims above 60 %.",
        );
        if overlap.per_gpu.is_empty() {
            ui.label("No GPU work in the selection.");
            return;
        }
        egui::Grid::new("analysis_overlap")
            .striped(true)
            .show(ui, |ui| {
                for title in [
                    "GPU",
                    "Busy",
                    "Kernels",
                    "Memory ops",
                    "Overlap",
                    "Overlap %",
                ] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for o in &overlap.per_gpu {
                    ui.label(o.device.to_string())
                        .on_hover_text(trace.gpu_title(o.device));
                    ui.label(percent_text(o.busy_percent()));
                    ui.label(format_duration(o.kernel_ns as f64));
                    ui.label(format_duration(o.memory_ns as f64));
                    ui.label(format_duration(o.overlap_ns as f64));
                    ui.label(percent_text(o.overlap_percent()));
                    ui.end_row();
                }
            });
        if overlap.per_kind.is_empty() {
            return;
        }
        ui.add_space(6.0);
        ui.label(RichText::new("By copy kind").strong());
        egui::Grid::new("analysis_overlap_by_kind")
            .striped(true)
            .show(ui, |ui| {
                for title in ["GPU", "Kind", "Memory ops", "Overlap", "Overlap %"] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for k in &overlap.per_kind {
                    ui.label(k.device.to_string());
                    ui.label(k.label());
                    ui.label(format_duration(k.memory_ns as f64));
                    ui.label(format_duration(k.overlap_ns as f64));
                    ui.label(percent_text(k.overlap_percent()));
                    ui.end_row();
                }
            });
    }
}

/// Per GPU, a bar split by cause (widths proportional to idle time), then a legend: each
/// cause's colour, meaning, gaps and time.
fn causes_ui(ui: &mut Ui, palette: &Palette, totals: &[CauseTotal]) {
    if totals.is_empty() {
        return;
    }
    ui.add_space(4.0);
    ui.label(RichText::new("Why the GPU waited (gaps listed below)").strong());
    let mut devices: Vec<u32> = totals.iter().map(|t| t.device).collect();
    devices.dedup();
    for device in devices {
        let mine: Vec<&CauseTotal> = totals.iter().filter(|t| t.device == device).collect();
        let sum: i64 = mine.iter().map(|t| t.total_ns).sum();
        ui.horizontal(|ui| {
            ui.label(format!("GPU {device}"));
            let width = (ui.available_width() - 8.0).clamp(80.0, 420.0);
            let (rect, response) =
                ui.allocate_exact_size(egui::vec2(width, 14.0), egui::Sense::hover());
            let mut x = rect.left();
            for t in &mine {
                let w = if sum > 0 {
                    width * t.total_ns as f32 / sum as f32
                } else {
                    0.0
                };
                let r = egui::Rect::from_x_y_ranges(x..=x + w, rect.y_range());
                ui.painter()
                    .rect_filled(r, 0.0, palette.gap_cause(Some(t.cause)));
                x += w;
            }
            response.on_hover_text(
                mine.iter()
                    .map(|t| {
                        format!(
                            "{}: {} gaps, {} ({:.1} %)",
                            t.cause.label(),
                            t.gaps,
                            format_duration(t.total_ns as f64),
                            t.total_ns as f64 * 100.0 / sum.max(1) as f64
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        });
    }
    // The legend: one wrapped line per cause (its colour, name, gaps and time, meaning).
    for cause in GapCause::ALL {
        let of_cause = totals.iter().filter(|t| t.cause == cause);
        let (gaps, total) = of_cause.fold((0, 0), |(n, s), t| (n + t.gaps, s + t.total_ns));
        ui.horizontal_wrapped(|ui| {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
            ui.painter()
                .rect_filled(rect, 2.0, palette.gap_cause(Some(cause)));
            ui.label(RichText::new(cause.label()).strong());
            ui.label(format!(
                "{gaps} gap{} · {}",
                if gaps == 1 { "" } else { "s" },
                format_duration(total as f64)
            ));
            ui.label(RichText::new(cause.explanation()).weak());
        });
    }
}

/// The label of the gap list's row `rank` (1-based), e.g. `#1 GPU 0 · 2.345 ms`, or
/// `#1 GPU 0 · 2.878 ms · selection start` for a gap the selection's start cut.
pub fn gap_label(rank: usize, gap: &IdleGap) -> String {
    let stream = gap
        .stream
        .map_or(String::new(), |s| format!(" stream {}", s.stream));
    let edge = gap
        .edge
        .map_or(String::new(), |e| format!(" · {}", e.label()));
    format!(
        "#{rank} GPU {}{stream} · {}{edge}",
        gap.device,
        format_duration(gap.duration_ns() as f64)
    )
}

fn percent_text(p: Option<f64>) -> String {
    p.map_or("–".into(), |p| format!("{p:.1} %"))
}

/// The average (and range) of every GPU metric over the selection, per GPU. Cheap enough for
/// every frame on the UI thread: per series two binary searches, a prefix-sum difference and a
/// min/max pyramid query ([`crate::trace::GpuMetricSeries::stats`]), whatever the sample count.
fn metric_averages_ui(ui: &mut Ui, trace: &Trace, selection: TimeRange) {
    let metrics = &trace.gpu_metrics;
    if metrics.is_empty() {
        return;
    }
    let (start_ns, end_ns) = (
        selection.start_ns.unwrap_or(i64::MIN),
        selection.end_ns.unwrap_or(i64::MAX),
    );
    egui::CollapsingHeader::new("GPU metrics: average over the selection")
        .id_salt("analysis_gpu_metrics")
        .default_open(true)
        .show(ui, |ui| {
            for device in metrics.devices() {
                ui.label(RichText::new(trace.gpu_title(device)).strong());
                egui::Grid::new(("analysis_gpu_metrics_grid", device))
                    .striped(true)
                    .show(ui, |ui| {
                        for title in ["Metric", "Avg", "Min", "Max", "Samples"] {
                            ui.label(RichText::new(title).strong());
                        }
                        ui.end_row();
                        for (_, s) in metrics.of_device(device) {
                            ui.label(&s.name);
                            match s.stats(start_ns, end_ns) {
                                Some(st) => {
                                    ui.label(s.format_value(st.average()));
                                    ui.label(s.format_value(st.min));
                                    ui.label(s.format_value(st.max));
                                    ui.label(st.samples.to_string());
                                }
                                None => {
                                    ui.label("–");
                                    ui.label("");
                                    ui.label("");
                                    ui.label("0");
                                }
                            }
                            ui.end_row();
                        }
                    });
            }
        });
    ui.add_space(4.0);
}
