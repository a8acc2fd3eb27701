//! How `sightline bench` prints its report: a table for people, JSON for scripts.

use super::{BenchReport, cpu_samples};

/// `412.0 ms (runs: 410.1, 412.0, 415.3)`.
fn runs_text(median_ms: f64, runs: &[f64]) -> String {
    let runs: Vec<String> = runs.iter().map(|v| format!("{v:.1}")).collect();
    format!("{median_ms:.1} ms (runs: {})", runs.join(", "))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

impl BenchReport {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// The report as aligned text tables.
    pub fn to_table(&self) -> String {
        use crate::export::text_table::render;
        let mut out = String::new();
        out.push_str(&format!(
            "\n {} ({}, {} events: {} kernels, {} memcpy, {} memset, {} CUDA API, {} NVTX, {} OS runtime)\n {} rayon threads, median of {} runs\n\n",
            self.trace,
            mib(self.file_bytes),
            self.events,
            self.kernels,
            self.memcpys,
            self.memsets,
            self.api_calls,
            self.nvtx_ranges,
            self.osrt_calls,
            self.threads,
            self.runs,
        ));
        let rows: Vec<Vec<String>> = self
            .phases
            .iter()
            .map(|p| {
                vec![
                    if p.parallel {
                        format!("  {}", p.phase)
                    } else {
                        p.phase.clone()
                    },
                    format!("{:.1}", p.from_ms),
                    format!("{:.1}", p.to_ms),
                    format!("{:.1}", p.ms),
                ]
            })
            .collect();
        out.push_str(&render(
            &["Load phase", "From (ms)", "To (ms)", "Time (ms)"],
            &rows,
        ));
        let per_event = |v: f64| format!("{v:.1} B/event");
        let mut rows = vec![vec![
            "load, total".into(),
            format!("{:.1} ms", self.load_ms),
        ]];
        if let (Some(floor), Some(sequential), Some(ratio), Some(scanned)) = (
            self.floor_ms,
            self.floor_sequential_ms,
            self.load_over_floor,
            self.floor_rows,
        ) {
            rows.extend([
                vec![
                    "floor: bare scan, parallel".into(),
                    format!("{floor:.1} ms"),
                ],
                vec![
                    "floor: bare scan, one thread".into(),
                    format!("{sequential:.1} ms"),
                ],
                vec!["load / floor".into(), format!("{ratio:.2}x")],
                vec!["rows scanned".into(), scanned.to_string()],
            ]);
        } else {
            let runs: Vec<String> = self
                .load_ms_runs
                .iter()
                .map(|r| format!("{r:.0}"))
                .collect();
            rows.push(vec!["load runs".into(), format!("{} ms", runs.join(", "))]);
        }
        rows.extend([
            vec!["RSS before load".into(), mib(self.rss_before_bytes)],
            vec!["RSS after load".into(), mib(self.rss_after_bytes)],
            vec!["RSS added by the trace".into(), mib(self.rss_added_bytes)],
            vec!["RSS peak".into(), mib(self.rss_peak_bytes)],
            vec![
                "bytes per event (added)".into(),
                per_event(self.bytes_per_event),
            ],
            vec![
                "budget 64 B/event + 30 MiB".into(),
                mib(self.rss_budget_bytes),
            ],
            vec![
                format!("{} nsys stats reports", self.reports),
                format!("{:.1} ms", self.reports_ms),
            ],
            vec![
                format!("{} nsys analyze rules", self.rules),
                format!("{:.1} ms", self.rules_ms),
            ],
            vec![
                "selection change, UI thread (median / max)".into(),
                format!(
                    "{:.3} / {:.3} ms",
                    self.selection_change_ui_ms, self.selection_change_ui_max_ms
                ),
            ],
            vec![
                "window: first interactive frame".into(),
                runs_text(
                    self.window_start.first_interactive_ms,
                    &self.window_start.first_interactive_ms_runs,
                ),
            ],
            vec![
                "window: panel settled".into(),
                runs_text(
                    self.window_start.settled_ms,
                    &self.window_start.settled_ms_runs,
                ),
            ],
        ]);
        out.push('\n');
        out.push_str(&render(&["Measure", "Value"], &rows));
        let rows: Vec<Vec<String>> = self
            .analysis_ms
            .iter()
            .map(|(name, ms)| vec![name.clone(), format!("{ms:.1}")])
            .collect();
        out.push_str("\n Each report and rule over the whole trace:\n\n");
        out.push_str(&render(&["Report or rule", "Time (ms)"], &rows));
        let rows: Vec<Vec<String>> = self
            .frames
            .iter()
            .map(|f| {
                vec![
                    format!("{}x", f.zoom),
                    format!("{:.3} ms", f.visible_ns as f64 / 1e6),
                    f.rows.to_string(),
                    f.events.to_string(),
                    f.shapes.to_string(),
                    format!("{:.3}", f.median_ms),
                    format!("{:.3}", f.p99_ms),
                ]
            })
            .collect();
        out.push_str(&format!(
            "\n Frame build, {}x{} px ({}):\n\n",
            self.width_px, self.height_px, self.frame_builder
        ));
        out.push_str(&render(
            &[
                "Zoom",
                "Visible",
                "Rows",
                "Events",
                "Shapes",
                "Median (ms)",
                "p99 (ms)",
            ],
            &rows,
        ));
        if let Some(cpu) = &self.cpu_samples {
            out.push_str(&format!(
                "\n CPU samples (median of {} runs; the selection is every sample, cut to {}):\n\n",
                cpu.runs,
                cpu_samples::SELECTION_SAMPLES
            ));
            out.push_str(&render(&["Measure", "Value"], &cpu.rows()));
        }
        out
    }
}
