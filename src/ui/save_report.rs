//! File → Save report…: the HTML report ([`crate::report`], as `sightline report` writes it) of
//! the active tab's trace over its range selection (the whole trace without one), with the
//! warm-up exclusion the analysis panel has in force. Written on a worker thread (drawing the
//! timeline pictures takes a moment); the tab's status line says when it is done or what failed.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};

use egui::Ui;

use super::file_dialog::{self, FilePurpose};
use super::workspace::TraceTab;
use crate::analysis::TimeRange;
use crate::report::{self, RunInput};

/// Reports being written, each for the tab it was asked in.
#[derive(Default)]
pub struct SaveReport {
    /// (tab id, the answer: the file written or why not).
    running: Vec<(u64, Receiver<Result<PathBuf, String>>)>,
}

impl SaveReport {
    /// The menu entry; asks where to save when clicked.
    pub fn menu_item(&mut self, ui: &mut Ui, tab: &TraceTab) {
        let ready = tab.document.is_some();
        let clicked = ui
            .add_enabled(ready, egui::Button::new("Save report…"))
            .on_hover_text(
                "One HTML page of this trace's performance over the range selection: metrics \
                 against targets, findings, top tables, pictures",
            )
            .clicked();
        if clicked {
            ui.close();
            let name = tab
                .path
                .as_ref()
                .and_then(|p| p.file_stem())
                .map_or("report".into(), |s| s.to_string_lossy().into_owned());
            file_dialog::csv_path(
                ui.ctx(),
                true,
                FilePurpose::SaveReportHtml,
                &format!("{name}.report.html"),
            );
        }
    }

    /// Call once a frame: starts the report when a path was chosen, and puts finished reports'
    /// outcomes in their tabs' status lines.
    pub fn poll(&mut self, ctx: &egui::Context, tabs: &mut [TraceTab], active: usize) {
        if let Some(path) = file_dialog::take(ctx, &FilePurpose::SaveReportHtml)
            && let Some(tab) = tabs.get_mut(active)
        {
            self.start(ctx, tab, path);
        }
        self.running.retain(|(id, rx)| {
            let Ok(outcome) = rx.try_recv() else {
                return true;
            };
            if let Some(tab) = tabs.iter_mut().find(|t| t.id == *id) {
                tab.status = Some(match outcome {
                    Ok(path) => format!("Report written to {}", path.display()),
                    Err(e) => format!("Report not written: {e}"),
                });
            }
            false
        });
    }

    fn start(&mut self, ctx: &egui::Context, tab: &mut TraceTab, path: PathBuf) {
        let Some(doc) = &tab.document else {
            return;
        };
        let trace = doc.trace.clone();
        let exclusion = tab.analysis.exclusion_arc();
        let range = match tab.timeline.range_selection {
            Some((a, b)) => TimeRange::new(a.min(b), a.max(b)),
            None => TimeRange::ALL,
        };
        let (tx, rx) = channel();
        let repaint = ctx.clone();
        tab.status = Some(format!("Writing the report to {}…", path.display()));
        std::thread::spawn(move || {
            let built = report::build(
                RunInput {
                    trace: &trace,
                    range,
                    exclusion: exclusion.as_deref(),
                    pictures: true,
                },
                None,
            );
            let page = report::html::page(&built);
            let outcome = std::fs::write(&path, page)
                .map(|()| path.clone())
                .map_err(|e| format!("cannot write {}: {e}", path.display()));
            let _ = tx.send(outcome);
            repaint.request_repaint();
        });
        self.running.push((tab.id, rx));
    }
}
