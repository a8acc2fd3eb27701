//! The Warm-up section drawn: the advanced form (warm-up names, exclude regex, skip the first N
//! iterations, attribution scope) with its validation messages, and what the exclusion removed.

use egui::{Button, RichText, Ui};

use super::{AnalysisPanel, ERROR_COLOR, PanelAction, WarmupSettings};
use crate::analysis::{AttributionScope, TimeRange, WarmupExclusion};
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

impl AnalysisPanel {
    pub(super) fn warmup_ui(
        &mut self,
        ui: &mut Ui,
        trace: &std::sync::Arc<Trace>,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        ui.label(
            "GPU work is attributed by the CPU time of the call that launched it, CPU events by \
             their own start.",
        );
        ui.add_space(4.0);
        ui.checkbox(
            &mut self.draft.warmup_names,
            "Ranges named warmup / warm-up / warm_up",
        );
        ui.horizontal(|ui| {
            let label = ui.label("Exclude ranges matching");
            ui.add(
                egui::TextEdit::singleline(&mut self.draft.exclude_regex)
                    .hint_text("regex, e.g. ^profile_init$")
                    .desired_width(160.0),
            )
            .labelled_by(label.id);
        });
        ui.horizontal(|ui| {
            let label = ui.label("Skip the first");
            ui.add(egui::DragValue::new(&mut self.draft.skip_first).range(0..=100_000))
                .labelled_by(label.id);
            let label = ui.label("of ranges matching");
            ui.add(
                egui::TextEdit::singleline(&mut self.draft.iteration_regex)
                    .hint_text("e.g. step_.*")
                    .desired_width(120.0),
            )
            .labelled_by(label.id);
        });
        ui.horizontal(|ui| {
            ui.label("Attribute to ranges of the same");
            ui.radio_value(&mut self.draft.scope, AttributionScope::Process, "process");
            ui.radio_value(&mut self.draft.scope, AttributionScope::Thread, "thread");
        });

        if self
            .draft_check
            .as_ref()
            .is_none_or(|(s, _)| *s != self.draft)
        {
            let problems = self.draft.rules().err().unwrap_or_default();
            self.draft_check = Some((self.draft.clone(), problems));
        }
        let problems = self
            .draft_check
            .as_ref()
            .map(|(_, p)| p.clone())
            .unwrap_or_default();
        for text in [
            &problems.exclude_regex,
            &problems.iteration_regex,
            &problems.form,
        ]
        .into_iter()
        .flatten()
        {
            ui.colored_label(ERROR_COLOR, text);
        }
        let pending = !self.exclude_warmup || self.draft != self.applied;
        ui.horizontal(|ui| {
            if ui
                .add_enabled(problems.is_empty() && pending, Button::new("Apply"))
                .clicked()
            {
                self.applied = self.draft.clone();
                self.exclude_warmup = true;
                self.sync(trace, selection, actions);
            }
            if ui
                .add_enabled(self.draft != self.applied, Button::new("Revert"))
                .clicked()
            {
                self.draft = self.applied.clone();
            }
        });
        ui.separator();

        if self.exclusion().is_none() {
            ui.label("Warm-up exclusion is off.");
            return;
        }
        ui.label(RichText::new("Excluding").strong());
        for line in &self.exclusion.summary {
            ui.label(line);
        }
    }
}

/// What the exclusion removed from the whole trace, in one line.
pub fn excluded_text(ex: &WarmupExclusion) -> String {
    let [kernels, memcpys, memsets, api, nvtx, osrt] = ex.counts();
    format!(
        "{} NVTX ranges chosen; excluded {kernels} kernels, {memcpys} memcpys, {memsets} \
         memsets, {api} API calls, {nvtx} NVTX events, {osrt} OS runtime calls",
        ex.ranges.len()
    )
}

/// The lines the Warm-up section shows under "Excluding": the rules, then what they removed.
/// Built once per exclusion (counting walks every event).
pub(super) fn exclusion_summary(settings: &WarmupSettings, ex: &WarmupExclusion) -> Vec<String> {
    let mut lines: Vec<String> = settings
        .describe()
        .into_iter()
        .map(|rule| format!("• {rule}"))
        .collect();
    if ex.ranges.is_empty() {
        lines.push("No NVTX range matches these rules: nothing is excluded.".into());
        return lines;
    }
    lines.push(excluded_text(ex));
    let time: i64 = ex.intervals.iter().map(|i| i.end_ns - i.start_ns).sum();
    let mut pids: Vec<u32> = ex.intervals.iter().map(|i| i.pid).collect();
    pids.dedup();
    lines.push(format!(
        "Excluded time: {} in {} process{}",
        format_duration(time as f64),
        pids.len(),
        if pids.len() == 1 { "" } else { "es" }
    ));
    lines
}
