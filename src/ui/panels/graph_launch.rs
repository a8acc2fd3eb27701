//! The buttons of a CUDA graph traced node by node (`trace.graph_launches`) in the details
//! panel: show a launch node by node or as one block again (its facts are
//! [`crate::ui::timeline::graph_facts`]).

use egui::Ui;

use crate::timeline::graph_brackets;
use crate::timeline::rows::stream_of;
use crate::trace::Trace;
use crate::ui::timeline::{EventKind, EventRef, ViewState};

/// Buttons that show the node-level CUDA graph launch of the selection (the launch, or one of
/// its nodes) node by node or as one block, and every launch on its stream.
pub fn launch_buttons(ui: &mut Ui, trace: &Trace, view: &mut ViewState, selected: EventRef) {
    let launch = match selected.kind {
        EventKind::GraphLaunch => Some(selected.index as usize),
        _ => graph_brackets::launch_of_node(trace, selected),
    };
    let Some(launch) = launch.filter(|&l| l < trace.graph_launches.len()) else {
        return;
    };
    let expanded = graph_brackets::is_expanded(view, launch);
    let nodes = trace.graph_launches.nodes(launch);
    ui.horizontal(|ui| {
        let (text, hint) = if expanded {
            (
                "Show as one block",
                "Draw this CUDA graph launch as one block again",
            )
        } else {
            (
                "Show its nodes",
                "Draw the kernels, copies and memsets of this launch",
            )
        };
        if ui
            .button(format!("{text} ({nodes} nodes)"))
            .on_hover_text(hint)
            .clicked()
        {
            graph_brackets::toggle(view, launch);
        }
        let stream = stream_of(trace, EventRef::new(EventKind::GraphLaunch, launch))
            .and_then(|s| trace.streams.get(s));
        if let Some(s) = stream {
            let all = s.graph_launches.range.clone();
            let all_open = all.clone().all(|l| graph_brackets::is_expanded(view, l));
            let text = if all_open {
                format!("Collapse all {} on this stream", all.len())
            } else {
                format!("Expand all {} on this stream", all.len())
            };
            if ui.button(text).clicked() {
                for l in all {
                    if graph_brackets::is_expanded(view, l) == all_open {
                        graph_brackets::toggle(view, l);
                    }
                }
            }
        }
    });
}
