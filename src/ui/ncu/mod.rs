//! A tab showing an Nsight Compute report as ncu-ui reads: the kernel table on top
//! ([`kernel_table`]), and below it the selected kernel's Details page ([`details`]), every raw
//! metric ([`raw`]), its Source view (SASS and CUDA source with per-instruction counters,
//! [`source`]) or the roofline of all kernels ([`roofline`]); a baseline kernel ([`baseline`])
//! adds its values and the changes to the details and raw metrics.
//!
//! [`NcuView`] is built once when the report is loaded (the table's rows and the roofline are
//! computed then, not per frame).

pub mod baseline;
pub mod details;
pub mod hierarchical;
pub mod kernel_table;
pub mod line_chart;
pub mod raw;
pub mod roofline;
pub mod source;
pub mod source_lines;
pub mod source_model;
pub mod source_table;

use std::sync::Arc;

use egui::Ui;

use crate::analysis::ncu::kernels::kernel_rows;
use crate::analysis::ncu::roofline::Roofline;
use crate::trace::ncu::NcuReport;
use baseline::{Baseline, OpenReport};
use kernel_table::KernelTable;

/// Which page is shown under the kernel table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Page {
    #[default]
    Details,
    Raw,
    Source,
    Roofline,
}

impl Page {
    pub const ALL: [Page; 4] = [Page::Details, Page::Raw, Page::Source, Page::Roofline];

    pub fn title(self) -> &'static str {
        match self {
            Page::Details => "Details",
            Page::Raw => "Raw",
            Page::Source => "Source",
            Page::Roofline => "Roofline",
        }
    }
}

/// The state of a report tab.
pub struct NcuView {
    pub report: Arc<NcuReport>,
    /// The tab's title (its file name), naming it as a baseline source.
    pub title: String,
    pub table: KernelTable,
    /// The selected kernel (index in the report's workloads).
    pub selected: Option<usize>,
    pub page: Page,
    pub baseline: Option<Baseline>,
    pub roofline: Roofline,
    /// The raw page's metric filter.
    pub raw_filter: String,
    /// The open report the baseline picker lists kernels of (0: this one).
    baseline_source: usize,
    /// What the details page is asked to do next frame (collapse all, show a rule's section).
    pub details_control: details::DetailsControl,
    /// The Source view of a kernel, once asked for (kept while another page is shown).
    pub source: Option<source::SourceView>,
}

impl NcuView {
    pub fn new(report: Arc<NcuReport>, title: String) -> Self {
        // Names as ncu and ncu-ui print them (`--rename-kernels`: one namespace of each run,
        // casts dropped); the full demangled name on hover.
        let names = crate::export::ncu_pages::names::KernelNames::of(&report);
        let mut rows = kernel_rows(&report);
        for row in &mut rows {
            if let Some(w) = report.workloads.get(row.workload) {
                row.name = names.get(w).to_string();
            }
        }
        let mut table = KernelTable::new(rows);
        table.full_names = report
            .workloads
            .iter()
            .map(|w| w.display_name().to_string())
            .collect();
        let roofline = Roofline::of(&report);
        let selected = (!report.workloads.is_empty()).then_some(0);
        NcuView {
            report,
            title,
            table,
            selected,
            page: Page::Details,
            baseline: None,
            roofline,
            raw_filter: String::new(),
            baseline_source: 0,
            details_control: details::DetailsControl::default(),
            source: None,
        }
    }

    /// Shows the Source page of kernel `workload`, sorted as `request` asks (hottest first
    /// without one); its data is gathered in the background unless already there.
    pub fn open_source(
        &mut self,
        workload: usize,
        request: Option<source_model::SortRequest>,
        ctx: Option<&egui::Context>,
    ) {
        self.selected = Some(workload);
        self.page = Page::Source;
        match &mut self.source {
            Some(view) if view.workload == workload && view.error.is_none() => view.apply(request),
            _ => {
                self.source = Some(source::SourceView::open(
                    self.report.clone(),
                    workload,
                    request,
                    ctx,
                ))
            }
        }
    }

    /// Sets kernel `workload` of this report as the baseline.
    pub fn set_baseline(&mut self, workload: usize) {
        self.baseline = Baseline::new(self.report.clone(), workload, &self.title);
    }

    /// Draws the view; `others` are the other open reports, offered as baseline sources.
    pub fn ui(&mut self, ui: &mut Ui, others: &[OpenReport]) {
        let report = self.report.clone();
        ui.horizontal(|ui| {
            ui.strong("Nsight Compute report");
            ui.label(format!(
                "{} · {} kernels",
                report.path.display(),
                report.workloads.len()
            ));
            if let Some((_, v)) = report
                .session
                .versions
                .iter()
                .find(|(p, _)| p.contains("Nsight Compute"))
            {
                ui.weak(format!("· ncu {v}"));
            }
        });
        let own_baseline = self
            .baseline
            .as_ref()
            .filter(|b| Arc::ptr_eq(&b.report, &self.report))
            .map(|b| b.workload);
        let click = egui::Panel::top("ncu_kernel_table")
            .resizable(true)
            .default_size(ui.available_height() * 0.42)
            .min_size(120.0)
            .show(ui, |ui| self.table.ui(ui, self.selected, own_baseline))
            .inner;
        if let Some(w) = click.select {
            self.selected = Some(w);
        }
        if let Some(w) = click.baseline {
            self.set_baseline(w);
        }
        if let Some(w) = click.source {
            self.open_source(w, None, Some(ui.ctx()));
        }
        if let Some(section) = click.rule_section {
            self.page = Page::Details;
            self.details_control.focus = Some(section);
        }
        ui.horizontal(|ui| {
            for page in Page::ALL {
                ui.selectable_value(&mut self.page, page, page.title());
            }
            ui.separator();
            if let Some(w) = self.selected
                && ui
                    .button("Set as baseline")
                    .on_hover_text("Compare every other kernel's metrics with this one")
                    .clicked()
            {
                self.set_baseline(w);
            }
            if let Some(w) = self.selected
                && ui
                    .button("Source")
                    .on_hover_text(
                        "The kernel's SASS with per-instruction counters, and its CUDA source \
                         when built with -lineinfo",
                    )
                    .clicked()
            {
                self.open_source(w, None, Some(ui.ctx()));
            }
        });
        let title = self.title.clone();
        if let Some(change) = baseline::baseline_bar(
            ui,
            self.baseline.as_ref(),
            (&title, &report),
            others,
            &mut self.baseline_source,
        ) {
            self.baseline = change;
        }
        ui.separator();
        let baseline = self.baseline.as_ref().and_then(Baseline::as_ref);
        match self.page {
            Page::Roofline => {
                if let Some(w) = roofline::roofline_ui(ui, &report, &self.roofline, self.selected) {
                    self.selected = Some(w);
                    self.table.scroll_to = Some(w);
                }
            }
            Page::Raw => match self.selected.and_then(|i| report.workloads.get(i)) {
                Some(w) => raw::raw_metrics(ui, &report, w, baseline, &mut self.raw_filter),
                None => {
                    ui.weak("Select a kernel in the table.");
                }
            },
            Page::Source => match self.selected {
                Some(w) if report.workloads.get(w).is_some() => {
                    if self.source.as_ref().is_none_or(|s| s.workload != w) {
                        self.open_source(w, None, Some(ui.ctx()));
                    }
                    if let Some(view) = &mut self.source {
                        view.ui(ui, &report);
                    }
                }
                _ => {
                    ui.weak("Select a kernel in the table.");
                }
            },
            Page::Details => match self.selected.and_then(|i| report.workloads.get(i)) {
                Some(w) => {
                    ui.horizontal(|ui| {
                        details::collapse_buttons(ui, &mut self.details_control);
                        ui.separator();
                        ui.strong(format!("ID {}", w.id));
                        ui.label(baseline::short(w.display_name(), 160))
                            .on_hover_text(w.display_name());
                    });
                    ui.weak(format!(
                        "Grid {} × Block {} · Context {} · Stream {}",
                        crate::analysis::ncu::kernels::shape(w.grid),
                        crate::analysis::ncu::kernels::shape(w.block),
                        w.context,
                        w.stream
                    ));
                    egui::ScrollArea::vertical()
                        .id_salt("ncu_details")
                        .auto_shrink([false, false])
                        .show(ui, |ui| {
                            details::workload_details(
                                ui,
                                &report,
                                w,
                                baseline,
                                &mut self.details_control,
                            )
                        });
                    if let Some(request) = self.details_control.open_source.take() {
                        let w = self.selected.unwrap_or_default();
                        self.open_source(w, Some(request), Some(ui.ctx()));
                    }
                }
                None => {
                    ui.weak("Select a kernel in the table.");
                }
            },
        }
    }
}
