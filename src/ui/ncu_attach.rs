//! An Nsight Compute report attached to a timeline tab (`sightline TRACE --ncu REPORT`, File →
//! Attach Nsight Compute report…, or an `.ncu-rep` dropped on the tab): the report is read and
//! joined to the tab's trace on a worker thread ([`crate::analysis::ncu::join`]), never on the UI
//! thread; the tab keeps the report, the join and what the panels derive from them.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::analysis::ncu::facts::{self, NameAverages, WorthOptimising};
use crate::analysis::ncu::{self, NcuJoin};
use crate::load;
use crate::trace::ncu::NcuReport;
use crate::trace::{StrId, Trace};
use crate::ui::loader::LoadJob;
use crate::ui::ncu::source::SourceView;

/// A report joined to a tab's trace.
pub struct AttachedNcu {
    pub report: Arc<NcuReport>,
    pub join: NcuJoin,
    /// Per timeline kernel name: the averages over its matched kernels.
    pub averages: HashMap<StrId, NameAverages>,
    /// Kernel names by time share × headroom.
    pub worth: Vec<WorthOptimising>,
}

impl AttachedNcu {
    /// Joins `report` to `trace` and derives the per-name numbers.
    pub fn new(trace: &Trace, report: Arc<NcuReport>) -> Self {
        let join = ncu::join(trace, &report);
        let averages = facts::averages_by_name(trace, &report, &join);
        let worth = facts::worth_optimising(trace, &report, &join);
        AttachedNcu {
            report,
            join,
            averages,
            worth,
        }
    }

    /// The workload that measured timeline kernel `kernel`.
    pub fn workload_of_kernel(&self, kernel: usize) -> Option<&crate::trace::ncu::NcuWorkload> {
        self.join
            .workload_of_kernel(kernel)
            .and_then(|w| self.report.workloads.get(w))
    }

    /// "113 of 113 profiled kernels matched", for the status line.
    pub fn summary(&self) -> String {
        let file = self
            .report
            .path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        format!(
            "Nsight Compute {file}: {} of {} profiled kernels matched to this timeline",
            self.join.matched_count(),
            self.report.workloads.len()
        )
    }
}

/// A report being read and joined, on a worker thread.
pub type NcuAttachJob = LoadJob<AttachedNcu>;

/// Reads `path` and joins it to `trace` on a new thread; `repaint` is asked for a frame when
/// done.
pub fn start_attach(
    path: PathBuf,
    trace: Arc<Trace>,
    repaint: Option<egui::Context>,
) -> NcuAttachJob {
    LoadJob::run(path, repaint, "sightline-ncu", move |path, control| {
        load::ncu_rep::load_report(path, control)
            .map(|report| AttachedNcu::new(&trace, Arc::new(report)))
            .map_err(|e| e.to_string())
    })
}

/// A tab's attached report: asked for, being read, read, or failed.
#[derive(Default)]
pub struct NcuAttachment {
    /// Asked for before the tab's trace was loaded (`--ncu`): attached once it is.
    pub pending: Option<PathBuf>,
    pub job: Option<NcuAttachJob>,
    pub attached: Option<Arc<AttachedNcu>>,
    pub error: Option<String>,
    /// The Source window of a kernel of the attached report, while open.
    pub source: Option<SourceView>,
}

impl NcuAttachment {
    /// Attaches `path` to `trace`: the read and join start now, off the UI thread.
    pub fn start(&mut self, path: PathBuf, trace: Arc<Trace>, ctx: Option<&egui::Context>) {
        self.pending = None;
        self.error = None;
        self.job = Some(start_attach(path, trace, ctx.cloned()));
    }

    /// Takes in a finished job; true when a report was just attached.
    pub fn poll(&mut self) -> bool {
        let Some(outcome) = self.job.as_ref().and_then(NcuAttachJob::poll) else {
            return false;
        };
        let path = self.job.take().map(|j| j.path.clone()).unwrap_or_default();
        match outcome {
            Ok(attached) => {
                self.attached = Some(Arc::new(attached));
                self.source = None;
                true
            }
            Err(e) => {
                self.error = Some(format!("{}: {e}", path.display()));
                false
            }
        }
    }

    pub fn is_loading(&self) -> bool {
        self.job.is_some()
    }

    /// Opens the Source window of workload `workload` of the attached report (gathered on a
    /// worker thread).
    pub fn open_source(&mut self, workload: usize, ctx: &egui::Context) {
        if let Some(a) = &self.attached {
            self.source = Some(SourceView::open(
                a.report.clone(),
                workload,
                None,
                Some(ctx),
            ));
        }
    }

    /// Draws the Source window, if one is open.
    pub fn source_window(&mut self, ctx: &egui::Context) {
        if let Some(a) = &self.attached {
            crate::ui::ncu::source::window(ctx, &mut self.source, &a.report);
        }
    }
}

/// Whether `path` is an Nsight Compute report (plain, gzipped or zstd), by its first bytes.
pub fn is_ncu_report(path: &Path) -> bool {
    let mut head = [0u8; 4];
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(n) = file.read(&mut head) else {
        return false;
    };
    load::ncu_rep::report_packing(path, &head[..n]).is_some()
}

/// The attachment's line under the menu bar: reading, failed (dismissable), or how many
/// kernels matched.
pub fn status_line(ui: &mut egui::Ui, ncu: &mut NcuAttachment) {
    if let Some(job) = &ncu.job {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.weak(format!(
                "Reading the Nsight Compute report {} and joining it to this timeline…",
                job.path.display()
            ));
        });
    }
    let mut dismiss = false;
    if let Some(error) = &ncu.error {
        ui.horizontal(|ui| {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Nsight Compute report: {error}"),
            );
            dismiss = ui.small_button("Dismiss").clicked();
        });
    }
    if dismiss {
        ncu.error = None;
    }
    if let Some(attached) = &ncu.attached {
        let line = ui.weak(attached.summary());
        if let Some(note) = attached.join.notes.first() {
            line.on_hover_text(note);
        }
    }
}
