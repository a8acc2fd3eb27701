//! The CPU side of a chosen GPU gap, under the Gaps tab's list: the functions the thread that
//! launched the next work spent its samples in during the gap.

use super::*;

impl AnalysisPanel {
    /// Under the gap list: where the launching thread's samples went during the chosen gap.
    pub(in super::super) fn gap_functions_ui(&mut self, ui: &mut Ui, trace: &Arc<Trace>) {
        let Some(g) = self.samples.gap else {
            return;
        };
        ui.add_space(6.0);
        ui.label(
            RichText::new(format!(
                "Gap #{} ({}): the launching thread's CPU samples",
                g.rank + 1,
                format_duration(g.gap.duration_ns() as f64)
            ))
            .strong(),
        );
        let Some(call) = g.cause.launch_call else {
            ui.label("No call launched the work that ended this gap: no thread to look at.");
            return;
        };
        let call_name = trace
            .api_calls
            .spans
            .name
            .get(call)
            .map_or("the launching call", |&n| trace.str(n));
        let Some(thread) = g.thread else {
            ui.label(format!(
                "{call_name}'s thread is not among the trace's threads."
            ));
            return;
        };
        if trace.cpu_samples.is_empty() {
            ui.label("The trace has no CPU samples (nsys profile --sample=process-tree).");
            return;
        }
        let key = (self.trace_generation, thread, g.gap.start_ns, g.gap.end_ns);
        let t = trace.clone();
        let repaint = self.repaint_fn();
        let status = self.samples.gap_functions.request(
            &key,
            move || {
                let (top, samples) =
                    cpu_samples::top_functions(&t, thread, key.2, key.3, GAP_TOP_FUNCTIONS);
                Arc::new(GapFunctions {
                    thread,
                    samples,
                    top,
                })
            },
            repaint,
        );
        let Some(found) = status.ready().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        let who = format!("{call_name}'s thread ({})", thread_label(trace, thread));
        if found.samples == 0 {
            ui.label(format!("{who}: no CPU samples on that thread in the gap"));
            return;
        }
        if found.top.is_empty() {
            ui.label(format!(
                "{who}: {} samples in the gap, none with a call stack",
                found.samples
            ));
            return;
        }
        ui.label(format!(
            "{who} was in ({} samples in the gap, by self samples):",
            found.samples
        ));
        for (frame, n) in &found.top {
            let function = trace.str(frame.function);
            ui.horizontal(|ui| {
                ui.add_space(12.0);
                ui.label(gap_function_line(function, *n, found.samples))
                    .on_hover_text(format!("{function}\nModule: {}", trace.str(frame.module)));
            });
        }
    }
}

/// A line of a gap's top functions, e.g. `tokenize_batch(int) — 41 samples (82.0 %)`.
pub fn gap_function_line(function: &str, samples: u64, of: u64) -> String {
    format!(
        "{function} — {samples} samples ({:.1} %)",
        100.0 * samples as f64 / of.max(1) as f64
    )
}
