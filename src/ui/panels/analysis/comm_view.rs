//! Communication/compute overlap in the Overlap tab, and the whole-trace communication the
//! timeline draws (communication-kernel colours, exposed-communication rows).
//!
//! The pattern that names communication kernels (default `nccl`, any case) is edited here; an
//! invalid one is reported and the last valid one stays in force. Two jobs run on worker threads:
//! the overlap of the selection (the tab's table, same filter as every section) and the whole
//! trace's [`CommTimeline`] for the timeline, keyed by trace and pattern only, announced to the app
//! with [`PanelAction::CommChanged`] when it lands.

use std::sync::Arc;

use egui::{RichText, Ui};

use super::{AnalysisPanel, ERROR_COLOR, InputsKey, PanelAction, Worker, filter_of};
use crate::analysis::TimeRange;
use crate::analysis::comm_overlap::{self, CommComputeOverlap, CommTimeline, DEFAULT_COMM_PATTERN};
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

/// The pattern being edited, the one in force, and the communication jobs.
pub struct CommState {
    /// What the text box holds.
    pub draft: String,
    /// The last valid pattern: what every result is computed for.
    applied: String,
    /// Why `draft` is not in force, when it is not.
    problem: Option<String>,
    /// The selection's communication/compute overlap, per (inputs, pattern).
    overlap: Worker<(InputsKey, String), Arc<Vec<CommComputeOverlap>>>,
    /// The whole trace's communication, per (trace generation, pattern).
    timeline: Worker<(u64, String), Arc<CommTimeline>>,
    /// The timeline result the app was last told about.
    announced: Option<(u64, String)>,
}

impl Default for CommState {
    fn default() -> Self {
        Self {
            draft: DEFAULT_COMM_PATTERN.to_string(),
            applied: DEFAULT_COMM_PATTERN.to_string(),
            problem: None,
            overlap: Worker::default(),
            timeline: Worker::default(),
            announced: None,
        }
    }
}

impl CommState {
    /// Jobs started (for [`AnalysisPanel::computations`]).
    pub(super) fn started(&self) -> usize {
        self.overlap.started() + self.timeline.started()
    }

    pub(super) fn busy(&self) -> bool {
        self.overlap.busy() || self.timeline.busy()
    }

    pub(super) fn wait(&mut self) {
        self.overlap.wait();
        self.timeline.wait();
    }

    pub(super) fn poll(&mut self) {
        self.overlap.poll();
        self.timeline.poll();
    }

    /// Puts `draft` in force when it is a valid, non-empty regex; otherwise says why and keeps
    /// the last valid pattern.
    fn check_draft(&mut self) {
        if self.draft == self.applied {
            self.problem = None;
            return;
        }
        if self.draft.trim().is_empty() {
            self.problem = Some(format!("give a pattern; '{}' stays in force", self.applied));
            return;
        }
        match comm_overlap::comm_regex(&self.draft) {
            Ok(_) => {
                self.applied = self.draft.clone();
                self.problem = None;
            }
            Err(e) => {
                // The regex crate's message spans lines (the pattern, a caret, the error): its
                // last line says what is wrong.
                let why = e.to_string();
                let why = why.lines().last().unwrap_or_default().trim().to_string();
                self.problem = Some(format!(
                    "'{}' is not a valid regex ({why}); '{}' stays in force",
                    self.draft, self.applied
                ));
            }
        }
    }
}

/// `pattern` compiled; an empty result if it does not compile (it always does: only valid
/// patterns are put in force).
fn timeline_of(trace: &Trace, pattern: &str) -> CommTimeline {
    match comm_overlap::comm_regex(pattern) {
        Ok(regex) => CommTimeline::new(trace, pattern, &regex),
        Err(_) => CommTimeline::default(),
    }
}

impl AnalysisPanel {
    /// The pattern naming communication kernels that is in force.
    pub fn comm_pattern(&self) -> &str {
        &self.comm.applied
    }

    /// Types `pattern` into the Overlap tab's box, as a person would: in force if valid.
    pub fn set_comm_pattern(&mut self, pattern: &str) {
        self.comm.draft = pattern.to_string();
        self.comm.check_draft();
    }

    /// Why the typed pattern is not in force, if it is not.
    pub fn comm_problem(&self) -> Option<&str> {
        self.comm.problem.as_deref()
    }

    /// The whole trace's communication under the pattern in force, once computed (for the
    /// timeline: see [`crate::ui::timeline::TimelineModel::set_comm`]).
    pub fn comm_timeline(&self) -> Option<Arc<CommTimeline>> {
        let key = (self.trace_generation, self.comm.applied.clone());
        self.comm.timeline.status(&key).ready().cloned()
    }

    /// Communication/compute overlap of the last selection per GPU (every GPU that ran anything),
    /// once the Overlap tab has been shown.
    pub fn comm_overlap(&self) -> &[CommComputeOverlap] {
        let Some(inputs) = self.inputs else {
            return &[];
        };
        let key = (inputs, self.comm.applied.clone());
        self.comm
            .overlap
            .status(&key)
            .ready()
            .map_or(&[], |v| v.as_slice())
    }

    /// Keeps the whole trace's communication computed for the pattern in force and tells the app
    /// when a new one is ready. Costs the UI thread a key comparison.
    pub(super) fn sync_comm(&mut self, trace: &Arc<Trace>, actions: &mut Vec<PanelAction>) {
        let key = (self.trace_generation, self.comm.applied.clone());
        let (t, pattern) = (trace.clone(), key.1.clone());
        let repaint = self.repaint_fn();
        let ready = self
            .comm
            .timeline
            .request(&key, move || Arc::new(timeline_of(&t, &pattern)), repaint)
            .ready()
            .is_some();
        if ready && self.comm.announced.as_ref() != Some(&key) {
            self.comm.announced = Some(key);
            actions.push(PanelAction::CommChanged);
        }
    }

    /// The communication half of the Overlap tab: the pattern box and, per GPU that
    /// communicates, communication, compute, overlap, exposed time and the share hidden.
    pub(super) fn comm_overlap_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
    ) {
        ui.add_space(10.0);
        ui.label(RichText::new("Communication / compute").strong());
        ui.horizontal(|ui| {
            let label = ui.label("Communication kernels (regex)");
            let edit = ui
                .add(
                    egui::TextEdit::singleline(&mut self.comm.draft)
                        .hint_text("e.g. nccl|AllReduce")
                        .desired_width(180.0),
                )
                .labelled_by(label.id);
            if edit.changed() {
                self.comm.check_draft();
            }
        });
        if let Some(problem) = &self.comm.problem {
            ui.colored_label(ERROR_COLOR, problem);
        }
        let Some(inputs) = self.inputs else {
            return;
        };
        let key = (inputs, self.comm.applied.clone());
        let (t, ex, pattern) = (trace.clone(), self.exclusion.result.clone(), key.1.clone());
        let repaint = self.repaint_fn();
        let status = self.comm.overlap.request(
            &key,
            move || {
                let filter = filter_of(selection, ex.as_deref());
                Arc::new(match comm_overlap::comm_regex(&pattern) {
                    Ok(regex) => comm_overlap::comm_compute_overlap(&t, &filter, &regex),
                    Err(_) => Vec::new(),
                })
            },
            repaint,
        );
        let Some(per_gpu) = status.latest().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        ui.label(format!(
            "Kernels matching '{}' (any case) and peer-to-peer copies are communication; every \
             other kernel is compute. Exposed: communication with no compute running (the red \
             row under each GPU).",
            self.comm.applied
        ));
        let communicating: Vec<&CommComputeOverlap> =
            per_gpu.iter().filter(|d| d.comm_ns > 0).collect();
        if communicating.is_empty() {
            ui.label("No communication in the selection.");
            return;
        }
        egui::Grid::new("analysis_comm_overlap")
            .striped(true)
            .show(ui, |ui| {
                for title in ["GPU", "Comm", "Compute", "Overlap", "Exposed", "Hidden %"] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for d in communicating {
                    ui.label(d.device.to_string())
                        .on_hover_text(trace.gpu_title(d.device));
                    ui.label(format_duration(d.comm_ns as f64));
                    ui.label(format_duration(d.compute_ns as f64));
                    ui.label(format_duration(d.overlap_ns as f64));
                    ui.label(format_duration(d.exposed_ns() as f64));
                    ui.label(
                        d.hidden_percent()
                            .map_or("–".into(), |p| format!("{p:.1} %")),
                    );
                    ui.end_row();
                }
            });
    }
}
