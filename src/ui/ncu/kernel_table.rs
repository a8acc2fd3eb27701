//! The kernel table of a report tab: one row per profiled kernel, a click on a header sorts by
//! its column (again: the other way), a box under each header filters by that column (`>50`,
//! `<=10` on numbers, any part of the text otherwise), a click on a row selects its kernel, and
//! its context menu sets it as the baseline or opens its Source view. Only the rows on screen are drawn (as the
//! statistics table draws its rows: `ScrollArea::show_rows`), so 956 kernels scroll smoothly.

use egui::{Button, Layout, RichText, Ui};

use crate::analysis::ncu::kernels::{ColumnFilter, KernelColumn, KernelRow, visible_rows};

/// The table's rows, computed once per report, with the filters and sort a person set.
pub struct KernelTable {
    pub rows: Vec<KernelRow>,
    /// Each column's filter as typed, in [`KernelColumn::ALL`] order.
    pub filters: [String; 12],
    pub sort: Option<(KernelColumn, bool)>,
    /// Indices into `rows` in the order shown (filtered and sorted), kept until a filter or the
    /// sort changes.
    pub order: Vec<usize>,
    /// A workload whose row the table scrolls to next frame (picked elsewhere: the roofline).
    pub scroll_to: Option<usize>,
    /// Each workload's full demangled name (by workload index), shown on hover.
    pub full_names: Vec<String>,
}

/// What a person did in the table this frame.
#[derive(Debug, Default, PartialEq)]
pub struct TableClick {
    /// The workload clicked.
    pub select: Option<usize>,
    /// The workload set as baseline from its context menu.
    pub baseline: Option<usize>,
    /// The workload whose Source view its context menu asked for.
    pub source: Option<usize>,
    /// The section (identifier) of the top rule clicked: its kernel is selected too.
    pub rule_section: Option<String>,
}

impl KernelTable {
    pub fn new(rows: Vec<KernelRow>) -> Self {
        let order = (0..rows.len()).collect();
        KernelTable {
            rows,
            filters: Default::default(),
            sort: None,
            order,
            scroll_to: None,
            full_names: Vec::new(),
        }
    }

    /// Recomputes the rows shown after a filter or the sort changed.
    pub fn refresh(&mut self) {
        let filters: Vec<(KernelColumn, ColumnFilter)> = KernelColumn::ALL
            .iter()
            .zip(&self.filters)
            .map(|(&c, t)| (c, ColumnFilter::parse(t)))
            .filter(|(_, f)| *f != ColumnFilter::Any)
            .collect();
        self.order = visible_rows(&self.rows, &filters, self.sort);
    }

    /// Sorts by `column`; a second click sorts the other way. Numbers sort largest first.
    pub fn sort_by(&mut self, column: KernelColumn) {
        self.sort = match self.sort {
            Some((c, d)) if c == column => Some((c, !d)),
            _ => Some((column, column.is_numeric() && column != KernelColumn::Id)),
        };
        self.refresh();
    }

    /// Sets the filter of `column` (as typed).
    pub fn set_filter(&mut self, column: KernelColumn, text: &str) {
        if let Some(i) = KernelColumn::ALL.iter().position(|&c| c == column) {
            self.filters[i] = text.to_string();
            self.refresh();
        }
    }

    /// The workloads shown, in order.
    pub fn shown_workloads(&self) -> impl Iterator<Item = usize> + '_ {
        self.order
            .iter()
            .filter_map(|&i| self.rows.get(i))
            .map(|r| r.workload)
    }

    /// Draws the table; `selected` and `baseline` are workload indices.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        selected: Option<usize>,
        baseline: Option<usize>,
    ) -> TableClick {
        let mut click = TableClick::default();
        let height = ui.spacing().interact_size.y;
        ui.label(format!(
            "{} of {} kernels shown",
            self.order.len(),
            self.rows.len()
        ));
        let mut sort_clicked = None;
        let filters_before = self.filters.clone();
        egui::ScrollArea::horizontal()
            .id_salt("ncu_kernel_table_h")
            .auto_shrink([false, true])
            .show(ui, |ui| {
                ui.spacing_mut().item_spacing.x = CELL_SPACING_PX;
                ui.horizontal(|ui| {
                    for column in KernelColumn::ALL {
                        // The arrow in the monospace font: the proportional one has none.
                        let arrow = match self.sort {
                            Some((c, true)) if c == column => "▼",
                            Some((c, false)) if c == column => "▲",
                            _ => "",
                        };
                        let r = cell(ui, width(column), height, column.is_numeric(), |ui| {
                            let add_arrow = |ui: &mut Ui| {
                                if !arrow.is_empty() {
                                    ui.label(RichText::new(arrow).monospace());
                                }
                            };
                            let title = Button::new(RichText::new(column.title()).strong())
                                .frame(false)
                                .truncate();
                            if column.is_numeric() {
                                add_arrow(ui);
                                ui.add(title)
                            } else {
                                let r = ui.add(title);
                                add_arrow(ui);
                                r
                            }
                        });
                        let tip = match column.metric() {
                            Some(m) => format!("{m}: click to sort"),
                            None => "Click to sort".to_string(),
                        };
                        if r.on_hover_text(tip).clicked() {
                            sort_clicked = Some(column);
                        }
                    }
                });
                ui.horizontal(|ui| {
                    for (k, column) in KernelColumn::ALL.into_iter().enumerate() {
                        let edit = egui::TextEdit::singleline(&mut self.filters[k])
                            .hint_text("filter")
                            .desired_width(width(column) - 4.0);
                        let r = cell(ui, width(column), height, false, |ui| ui.add(edit));
                        r.widget_info(|| {
                            egui::WidgetInfo::labeled(
                                egui::Role::TextInput,
                                true,
                                format!("Filter {}", column.title()),
                            )
                        });
                        r.on_hover_text(FILTER_HELP);
                    }
                });
                ui.separator();
                let mut rows_area = egui::ScrollArea::vertical()
                    .id_salt("ncu_kernel_rows")
                    .auto_shrink([false, false]);
                // A kernel picked elsewhere: its row at the top of the table.
                if let Some(w) = self.scroll_to.take()
                    && let Some(pos) = self
                        .order
                        .iter()
                        .position(|&i| self.rows.get(i).is_some_and(|r| r.workload == w))
                {
                    let row_height = height + ui.spacing().item_spacing.y;
                    rows_area = rows_area.vertical_scroll_offset(pos as f32 * row_height);
                }
                rows_area.show_rows(ui, height, self.order.len(), |ui, range| {
                    for &i in &self.order[range] {
                        let Some(row) = self.rows.get(i) else {
                            continue;
                        };
                        self.row_ui(ui, row, height, selected, baseline, &mut click);
                    }
                });
            });
        if let Some(c) = sort_clicked {
            self.sort_by(c);
        } else if self.filters != filters_before {
            self.refresh();
        }
        click
    }

    fn row_ui(
        &self,
        ui: &mut Ui,
        row: &KernelRow,
        height: f32,
        selected: Option<usize>,
        baseline: Option<usize>,
        click: &mut TableClick,
    ) {
        let on = selected == Some(row.workload);
        ui.horizontal(|ui| {
            for column in KernelColumn::ALL {
                let text = row.text(column);
                let w = width(column);
                if column == KernelColumn::Name {
                    let mut name = text.clone();
                    if baseline == Some(row.workload) {
                        name = format!("[baseline] {name}");
                    }
                    let r = cell(ui, w, height, false, |ui| {
                        ui.add(Button::selectable(on, name.as_str()).truncate())
                    });
                    // The name as ncu prints it in the cell, the full demangled one on hover.
                    let full = self
                        .full_names
                        .get(row.workload)
                        .map_or(text.as_str(), String::as_str);
                    let r = r.on_hover_text(full);
                    if r.clicked() {
                        click.select = Some(row.workload);
                    }
                    r.context_menu(|ui| {
                        if ui.button("Set as baseline").clicked() {
                            click.baseline = Some(row.workload);
                            ui.close();
                        }
                        if ui.button("Source").clicked() {
                            click.source = Some(row.workload);
                            ui.close();
                        }
                    });
                    continue;
                }
                let tip = match (column, &row.top_rule) {
                    (KernelColumn::TopRule | KernelColumn::Speedup, Some(rule)) => format!(
                        "{} ({} section): estimated {} speedup {:.2}%",
                        rule.title, rule.section, rule.kind, rule.speedup_pct
                    ),
                    _ => text.clone(),
                };
                let rule = (column == KernelColumn::TopRule)
                    .then_some(row.top_rule.as_ref())
                    .flatten();
                let r = cell(ui, w, height, column.is_numeric(), |ui| {
                    let label = egui::Label::new(text).truncate();
                    if rule.is_some() {
                        ui.add(label.sense(egui::Sense::click()))
                    } else {
                        ui.add(label)
                    }
                });
                // The top rule opens the kernel's details at the rule's section.
                if let Some(rule) = rule
                    && r.clicked()
                {
                    click.select = Some(row.workload);
                    click.rule_section = Some(rule.section.clone());
                }
                if !tip.is_empty() {
                    let tip = if rule.is_some() {
                        format!("{tip}\nClick to show the rule in the details")
                    } else {
                        tip
                    };
                    r.on_hover_text(tip);
                }
            }
        });
    }
}

const FILTER_HELP: &str =
    "Filter: >50, <=10 or =80 compare numbers; other text finds rows whose cell contains it";

/// Room between two cells.
const CELL_SPACING_PX: f32 = 8.0;

/// A column's width in points.
fn width(column: KernelColumn) -> f32 {
    match column {
        KernelColumn::Id => 44.0,
        KernelColumn::Name => 380.0,
        KernelColumn::Grid | KernelColumn::Block => 96.0,
        KernelColumn::Duration => 80.0,
        KernelColumn::TopRule => 190.0,
        KernelColumn::Occupancy => 84.0,
        KernelColumn::Registers => 70.0,
        _ => 76.0,
    }
}

/// A cell of fixed size, numbers on the right.
fn cell<R>(
    ui: &mut Ui,
    width: f32,
    height: f32,
    numeric: bool,
    add: impl FnOnce(&mut Ui) -> R,
) -> R {
    let layout = if numeric {
        Layout::right_to_left(egui::Align::Center)
    } else {
        Layout::left_to_right(egui::Align::Center)
    };
    ui.allocate_ui_with_layout(egui::vec2(width, height), layout, |ui| {
        ui.set_min_size(egui::vec2(width, height));
        ui.set_max_width(width);
        add(ui)
    })
    .inner
}
