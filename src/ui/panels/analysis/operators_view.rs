//! The Operators tab: is each PyTorch operator fast? The `op_efficiency` table (FLOPs and bytes
//! from the recorded shapes, TFLOP/s and TB/s, % of the roofline) over the selection, and the
//! roofline chart of its rows under it — the Statistics view of that one report, with a sort and
//! a name filter of its own. Shown for traces whose operators have shapes (torch.profiler with
//! `record_shapes`, nsys exports with `emit_nvtx(record_shapes=True)`).

use std::sync::Arc;

use egui::Ui;

use super::{AnalysisPanel, PanelAction, Sort};
use crate::analysis::TimeRange;
use crate::trace::Trace;

/// The report the tab shows.
pub const REPORT: &str = "op_efficiency";

/// The tab's own choices, kept while another tab is shown.
#[derive(Debug, Default)]
pub struct OperatorsState {
    pub sort: Option<Sort>,
    pub name_filter: String,
    /// True while the Statistics view draws for this tab (it then shows no report selector).
    pub showing: bool,
}

impl AnalysisPanel {
    /// The tab is offered when the trace has operators with shapes and GPU work.
    pub(super) fn has_operators_tab(&self) -> bool {
        self.available_reports().contains(&REPORT)
    }

    pub(super) fn operators_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        // The Statistics view draws the one report with this tab's sort and filter; the
        // Statistics tab's own choices come back afterwards.
        let report = std::mem::replace(&mut self.report, REPORT);
        std::mem::swap(&mut self.sort, &mut self.operators.sort);
        std::mem::swap(&mut self.name_filter, &mut self.operators.name_filter);
        self.operators.showing = true;
        self.statistics_ui(ui, trace, selection, actions);
        self.operators.showing = false;
        std::mem::swap(&mut self.name_filter, &mut self.operators.name_filter);
        std::mem::swap(&mut self.sort, &mut self.operators.sort);
        self.report = report;
    }
}
