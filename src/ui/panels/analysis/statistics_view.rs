//! The Statistics section drawn: the report selector (every `nsys stats` report the trace has
//! data for), the name filter, the sortable table (only the rows on screen are laid out, so a
//! row dump of millions costs what fits), CSV export, and the duration histogram of the chosen
//! row. Tables are computed on a worker thread; while one is computed the last one stays, dimmed.

mod table_view;

use std::sync::Arc;

use egui::{RichText, Ui};
use egui_plot::{AxisHints, Bar, BarChart, GridMark, Plot};

pub(super) use table_view::cell;
use table_view::draw_table;

use super::{
    AnalysisPanel, ChosenRow, Message, PanelAction, RowKey, Sort, TableLayout, export_table,
    save_dialog, table_summary,
};
use crate::analysis::{EventTable, NsysFormat, Table, TimeRange, reports, unreadable};
use crate::trace::Trace;
use crate::ui::file_dialog::FilePurpose;

impl AnalysisPanel {
    pub(super) fn statistics_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        _selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        let current = self.report;
        let title = reports::find(current).map_or(current, |r| r.title());
        let mut chosen_report = current;
        if self.operators.showing {
            // The Operators tab: one report, named, no selector.
            ui.label(RichText::new(title).strong());
        } else {
            self.report_selector_ui(ui, trace, &mut chosen_report);
        }
        if chosen_report != current {
            self.report = chosen_report;
            self.sort = None;
        }
        let mut export_clicked = false;
        ui.horizontal(|ui| {
            let label = ui.label("Filter names");
            ui.add(
                egui::TextEdit::singleline(&mut self.name_filter)
                    .hint_text("part of a name")
                    .desired_width(180.0),
            )
            .labelled_by(label.id);
            export_clicked = ui
                .button("Export table as CSV…")
                .on_hover_text("The rows shown, in their order, in the columns nsys stats prints")
                .clicked();
        });

        let fresh = self.ensure_report(trace, self.report);
        let Some(inputs) = self.inputs else {
            return;
        };
        // While the fresh table is computed, the last one of the same report stays, dimmed.
        let shown = fresh.clone().or_else(|| {
            let status = self
                .jobs
                .report
                .status(&self.report_key(inputs, self.report));
            let same_report = self
                .jobs
                .report
                .done_key()
                .is_some_and(|k| k.1 == self.report);
            status.latest().filter(|_| same_report).cloned()
        });
        let Some(table) = shown else {
            if self
                .jobs
                .report
                .failed(&self.report_key(inputs, self.report))
            {
                ui.colored_label(
                    super::ERROR_COLOR,
                    "Computing this report failed: a bug in Sightline (the message is on stderr).",
                );
            } else {
                spinner(ui);
            }
            return;
        };
        // The table's columns change when a report is attached: so does the layout's key.
        let layout_key = (
            inputs,
            self.report,
            self.name_filter.clone(),
            self.sort,
            self.report_key(inputs, self.report).2,
        );
        if let Some(fresh) = &fresh {
            let (t, filter, sort) = (fresh.clone(), self.name_filter.clone(), self.sort);
            let repaint = self.repaint_fn();
            self.jobs.layout.request(
                &layout_key,
                move || Arc::new(TableLayout::of(&t, &filter, sort)),
                repaint,
            );
        }
        let layout_status = self.jobs.layout.status(&layout_key);
        let stale = fresh.is_none() || layout_status.is_pending();
        // A layout made for another report's columns is no use meanwhile.
        let fits = |l: &&Arc<TableLayout>| l.numeric.len() == table.columns.len();
        let Some(layout) = layout_status.latest().filter(fits).cloned() else {
            spinner(ui);
            return;
        };
        let rows = &layout.order;
        if table.rows.is_empty() {
            let missing = reports::find(self.report).map_or("data", |r| r.missing_data());
            match unreadable::none_readable(trace, missing) {
                Some(why) => ui.label(format!("The trace {why}.")),
                None => ui.label(format!("No {missing} in the selection.")),
            };
        }
        let chosen = self.chosen.as_ref().filter(|k| k.report == self.report);
        let click = ui
            .add_enabled_ui(!stale, |ui| {
                draw_table(ui, &table, &layout, self.sort, self.report, chosen)
            })
            .inner;
        ui.label(table_summary(&table, rows));
        if table.omitted > 0 {
            ui.label(format!(
                "Only the first {} of {} rows are kept here; `sightline summary TRACE --report {}` \
                 prints them all.",
                table.rows.len(),
                table.rows.len() + table.omitted,
                self.report
            ));
        }

        let file_name = format!("{}.csv", self.report);
        if let Some(path) = save_dialog(ui, export_clicked, FilePurpose::SaveStatsCsv, &file_name) {
            // The rows as shown when the path comes back (the browser answers on a later frame).
            let shown = Table::from_parts(
                table.columns.clone(),
                rows.slice(0..rows.len())
                    .filter_map(|i| table.rows.get(i).cloned())
                    .collect(),
            );
            self.message = Some(match export_table(&path, &shown) {
                Ok(n) => Message {
                    text: format!("Wrote {n} rows to {}", path.display()),
                    error: false,
                },
                Err(e) => Message {
                    text: e.to_string(),
                    error: true,
                },
            });
        }
        // The op_efficiency report's roofline: a click on a point chooses its row.
        let mut point_row = None;
        if self.report == "op_efficiency" {
            let chosen_index = chosen.and_then(|k| {
                table
                    .rows
                    .iter()
                    .enumerate()
                    .position(|(i, r)| RowKey::of(self.report, r, i) == *k)
            });
            point_row = super::op_roofline_view::op_roofline_ui(ui, trace, &table, chosen_index);
        }
        let clicked_row = click
            .row
            .or(point_row)
            .and_then(|i| Some(RowKey::of(self.report, table.rows.get(i)?, i)));
        if let Some(column) = click.header {
            let numeric = layout.numeric.get(column).copied().unwrap_or(false);
            self.sort = Some(match self.sort {
                Some(s) if s.column == column => Sort {
                    column,
                    descending: !s.descending,
                },
                _ => Sort {
                    column,
                    descending: numeric,
                },
            });
        }
        if let Some(key) = clicked_row {
            let next = (self.chosen.as_ref() != Some(&key)).then_some(key);
            self.choose_row(next, trace, actions);
        }
        self.message_ui(ui);
        // The chosen row's name: its cell in the table's name column.
        let chosen_name = self.chosen.as_ref().and_then(|k| {
            let row = table.rows.get(k.index)?;
            Some(row.cells.get(layout.name_column?)?.csv_text())
        });
        self.chosen_ui(ui, chosen_name, actions);
    }

    /// The histogram of the chosen row, with ways to jump to its longest event.
    /// `name`: the row's name cell, where the table has one (else its longest text).
    pub(super) fn chosen_ui(
        &self,
        ui: &mut Ui,
        name: Option<String>,
        actions: &mut Vec<PanelAction>,
    ) {
        let Some(ChosenRow {
            key,
            events,
            histogram,
            longest,
        }) = self.chosen_row()
        else {
            return;
        };
        if key.report != self.report {
            return;
        }
        ui.separator();
        let name = name.unwrap_or_else(|| {
            key.text
                .iter()
                .max_by_key(|t| t.chars().count())
                .cloned()
                .unwrap_or_default()
        });
        ui.label(RichText::new(format!("{name} · {} events", events.len())).strong());
        if !events.is_empty() {
            let max = histogram.start as f64 + histogram.bin_width * histogram.counts.len() as f64;
            let (unit, scale) = time_unit(max);
            let bars: Vec<Bar> = histogram
                .counts
                .iter()
                .enumerate()
                .map(|(b, &n)| Bar::new(histogram.centre(b) / scale, n as f64))
                .collect();
            let chart = BarChart::new("events", bars).width(histogram.bin_width / scale * 0.95);
            // Ticks at round steps, about five across and four up: egui_plot's default
            // powers of ten gave one x tick and a y axis reading only "0" at 150 px.
            let x_axis = AxisHints::new_x()
                .label(format!("duration ({unit})"))
                .label_spacing(30.0..=40.0);
            let y_axis = AxisHints::new_y()
                .label("events")
                .label_spacing(12.0..=16.0);
            Plot::new("analysis_row_histogram")
                .height(150.0)
                .allow_zoom(false)
                .allow_drag(false)
                .allow_scroll(false)
                .custom_x_axes(vec![x_axis])
                .custom_y_axes(vec![y_axis])
                .x_grid_spacer(|g| round_marks(g.bounds, 5.0, 0.0))
                .y_grid_spacer(|g| round_marks(g.bounds, 4.0, 1.0))
                .show(ui, |plot| plot.bar_chart(chart));
        }
        if let Some((table, start_ns, end_ns)) = *longest {
            ui.horizontal(|ui| {
                let what = if events.is_empty() {
                    "Zoom to it"
                } else {
                    "Zoom to the longest"
                };
                if ui.button(what).clicked() {
                    actions.push(PanelAction::ZoomTo { start_ns, end_ns });
                }
                if table == EventTable::Nvtx && ui.button("Select the longest").clicked() {
                    actions.push(PanelAction::SetSelection { start_ns, end_ns });
                }
            });
        } else if events.is_empty() {
            ui.label("None of its events is in the selection.");
        }
    }
}

/// A round step (1, 2 or 5 × a power of ten, the nearest; at least `min_step`) dividing `span`
/// into about `count` parts.
pub fn round_step(span: f64, count: f64, min_step: f64) -> f64 {
    let raw = (span / count).max(f64::MIN_POSITIVE);
    let power = 10f64.powf(raw.log10().floor());
    let step = match raw / power {
        r if r < 1.5 => power,
        r if r < 3.5 => 2.0 * power,
        r if r < 7.5 => 5.0 * power,
        _ => 10.0 * power,
    };
    step.max(min_step)
}

/// Grid marks at a [`round_step`] over `bounds`.
fn round_marks((lo, hi): (f64, f64), count: f64, min_step: f64) -> Vec<GridMark> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return Vec::new();
    }
    let step = round_step(hi - lo, count, min_step);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last.min(first + 1000))
        .map(|i| GridMark {
            value: i as f64 * step,
            step_size: step,
        })
        .collect()
}

/// A unit for durations up to `max_ns`, as (name, ns per unit).
fn time_unit(max_ns: f64) -> (&'static str, f64) {
    if max_ns >= 1e9 {
        ("s", 1e9)
    } else if max_ns >= 1e6 {
        ("ms", 1e6)
    } else if max_ns >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    }
}

impl AnalysisPanel {
    /// Which Nsight Systems release's output the reports and findings copy: by default the one
    /// that wrote the trace, else the one chosen here.
    /// The report selector (every report the trace has data for) and the nsys format.
    fn report_selector_ui(&mut self, ui: &mut Ui, trace: &Trace, chosen_report: &mut &'static str) {
        let current = self.report;
        let title = reports::find(current).map_or(current, |r| r.title());
        ui.horizontal(|ui| {
            let label = ui.label("Report");
            // A long title (`CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum)`) is cut
            // to leave room for the format selector: a row wider than the panel widens every
            // row below it, and the table's last columns ran past the panel's edge.
            let room = (ui.available_width() - self.nsys_format_width(ui, trace)).max(120.0);
            let available = &self.available;
            ui.scope(|ui| {
                ui.set_max_width(room);
                egui::ComboBox::from_id_salt("analysis_report")
                    .selected_text(format!("{title} ({current})"))
                    .width(room.min(300.0))
                    .truncate()
                    .height(600.0)
                    .show_ui(ui, |ui| {
                        for r in reports::REPORTS {
                            if !available.contains(&r.name()) {
                                continue;
                            }
                            ui.selectable_value(
                                chosen_report,
                                r.name(),
                                format!("{} ({})", r.title(), r.name()),
                            );
                        }
                    })
                    .response
                    .labelled_by(label.id);
            });
            self.nsys_format_ui(ui, trace);
        });
    }

    fn nsys_format_ui(&mut self, ui: &mut Ui, trace: &Trace) {
        egui::ComboBox::from_id_salt("analysis_nsys_format")
            .selected_text(self.nsys_format_text(trace))
            .show_ui(ui, |ui| {
                let writer = NsysFormat::of_trace(trace);
                ui.selectable_value(
                    &mut self.nsys_format,
                    None,
                    format!("as nsys {writer} (the trace's)"),
                );
                for f in NsysFormat::ALL {
                    ui.selectable_value(&mut self.nsys_format, Some(f), format!("as nsys {f}"));
                }
            })
            .response
            .on_hover_text(
                "Print reports and findings as this Nsight Systems release prints them \
                 (NVTX range names, rounding, empty context and stream)",
            );
    }

    fn nsys_format_text(&self, trace: &Trace) -> String {
        let shown = self
            .nsys_format
            .unwrap_or_else(|| NsysFormat::of_trace(trace));
        format!("as nsys {shown}")
    }

    /// The width the format selector takes in its row: its text, the arrow, the padding, the
    /// space before it, and room for the panel's vertical scroll bar.
    fn nsys_format_width(&self, ui: &Ui, trace: &Trace) -> f32 {
        let font = egui::TextStyle::Button.resolve(ui.style());
        let text = crate::ui::columns::text_width(ui, &self.nsys_format_text(trace), &font);
        let spacing = ui.spacing();
        let inner = text + spacing.icon_width + spacing.icon_spacing;
        inner.max(spacing.combo_width)
            + 2.0 * spacing.button_padding.x
            + spacing.item_spacing.x
            + spacing.scroll.bar_width
            + 12.0
    }
}

fn spinner(ui: &mut Ui) {
    ui.horizontal(|ui| {
        ui.spinner();
        ui.label("Computing…");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_has_several_round_ticks_on_each_axis() {
        // moe's gelu_kernel: 96 events of 1.3-10.9 µs, at most about 70 in one bin.
        assert_eq!(round_step(11.0, 5.0, 0.0), 2.0);
        assert_eq!(round_step(70.0, 4.0, 1.0), 20.0);
        assert_eq!(
            round_step(3.0, 4.0, 1.0),
            1.0,
            "counts step by whole events"
        );
        assert_eq!(round_step(0.004, 5.0, 0.0), 0.001);
        let x: Vec<f64> = round_marks((-0.3, 11.2), 5.0, 0.0)
            .iter()
            .map(|m| m.value)
            .collect();
        assert_eq!(x, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert!(round_marks((1.0, 1.0), 5.0, 0.0).is_empty());
    }
}
