//! What an attached Nsight Compute report adds to the analysis panel: the **Nsight Compute** tab
//! (shown only with a report attached) ranking kernel names worth optimising — time share on the
//! timeline × headroom in ncu (100 % less the larger of Compute and Memory throughput), with each
//! name's Compute %, Memory % and occupancy averaged over its matched kernels, and its top rule.
//! A click on a name outlines its kernels on the timeline and zooms to the longest (as a
//! Statistics row does), where the timeline's details of that kernel show its ncu page; the
//! table scrolls sideways in a narrow panel.

use super::*;

impl AnalysisPanel {
    /// The Nsight Compute tab: the kernel names worth optimising.
    pub(super) fn ncu_ui(&mut self, ui: &mut Ui, trace: &Trace, actions: &mut Vec<PanelAction>) {
        let Some(ncu) = self.ncu.clone() else {
            ui.label(
                "Attach an Nsight Compute report of the same program (File > Attach Nsight \
                 Compute report…, or drop the .ncu-rep on this tab) to see it here.",
            );
            return;
        };
        ui.label(ncu.summary());
        if let Some(dram) =
            crate::analysis::ncu::facts::weighted_dram(trace, &ncu.report, &ncu.join)
        {
            ui.label(format!(
                "DRAM throughput, weighted by timeline time: {:.1} % of peak ({} kernels)",
                dram.pct_of_peak, dram.kernels
            ));
        }
        ui.add_space(4.0);
        ui.strong("Worth optimising").on_hover_text(
            "Kernel names by their share of all kernel time on the timeline × their headroom in \
             ncu (100 % less the larger of Compute and Memory throughput, averaged over the \
             profiled launches), with the rule that estimates the largest speedup",
        );
        if ncu.worth.is_empty() {
            ui.weak("No matched kernel has ncu's throughput metrics.");
            return;
        }
        let mut chosen = None;
        egui::ScrollArea::horizontal()
            .id_salt("sightline_ncu_worth_scroll")
            .show(ui, |ui| {
                egui::Grid::new("sightline_ncu_worth")
                    .striped(true)
                    .num_columns(9)
                    .spacing([10.0, 3.0])
                    .show(ui, |ui| {
                        for h in [
                            "Kernel",
                            "Time (%)",
                            "Compute (%)",
                            "Memory (%)",
                            "Occupancy (%)",
                            "Headroom (%)",
                            "Score",
                            "Top rule",
                            "Speedup",
                        ] {
                            ui.strong(h);
                        }
                        ui.end_row();
                        for row in ncu.worth.iter().take(50) {
                            let name = trace.str(row.name);
                            let short: String = name.chars().take(48).collect();
                            let short = if short.len() < name.len() {
                                format!("{short}…")
                            } else {
                                short
                            };
                            let on = self.ncu_chosen == Some(row.name);
                            let r = ui.selectable_label(on, short).on_hover_text(format!(
                                "{name}\nClick to outline its kernels on the timeline"
                            ));
                            if r.clicked() {
                                chosen = Some(row.name);
                            }
                            ui.label(format!("{:.1}", row.time_share * 100.0));
                            let avg = &row.averages;
                            for v in [avg.compute_pct, avg.memory_pct, avg.occupancy_pct] {
                                ui.label(v.get().map_or_else(String::new, |v| format!("{v:.1}")));
                            }
                            ui.label(format!("{:.1}", row.headroom_pct));
                            ui.label(format!("{:.1}", row.score));
                            match &row.averages.top_rule {
                                Some(rule) => {
                                    ui.label(&rule.title).on_hover_text(&rule.message);
                                    ui.label(rule.speedup_pct.map_or_else(String::new, |s| {
                                        format!("{s:.1} % {}", rule.speedup_kind())
                                    }));
                                }
                                None => {
                                    ui.label("");
                                    ui.label("");
                                }
                            }
                            ui.end_row();
                        }
                    });
            });
        if let Some(name) = chosen {
            self.ncu_chosen = Some(name);
            let k = &trace.kernels.spans;
            let events: Vec<(EventTable, usize)> = (0..k.len())
                .filter(|&i| k.name[i] == name)
                .map(|i| (EventTable::Kernels, i))
                .collect();
            if let Some(&(_, i)) = events.iter().max_by_key(|(_, i)| k.duration_ns(*i)) {
                actions.push(PanelAction::ZoomTo {
                    start_ns: k.start_ns[i],
                    end_ns: k.end_ns[i],
                });
            }
            actions.push(PanelAction::Highlight(events));
        }
    }
}
