//! The details panel: the facts of the selected event ([`crate::ui::timeline::event_facts`]),
//! selectable and copyable, with buttons that jump to its correlated partner, and a matched
//! kernel's Nsight Compute numbers ([`super::ncu_facts`]) when a report is attached.

use egui::Ui;

use crate::trace::Trace;
use crate::ui::columns::{elide_to_width, text_width};
use crate::ui::ncu_attach::AttachedNcu;
use crate::ui::timeline::event_facts::stack_text;
pub use crate::ui::timeline::event_facts::{
    TOOLTIP_FRAMES, as_text, bytes_text, call_stack, call_stack_ui, describe,
};
use crate::ui::timeline::{EventKind, EventRef, TimelineModel, format_duration};

/// What a click in the details panel asks for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DetailsClick {
    /// A correlated partner to select and reveal.
    pub go_to: Option<EventRef>,
    /// The attached report's workload whose Source window to open.
    pub source_of: Option<usize>,
}

/// The details panel of the selected event; says what a click in it asked for.
pub fn show(
    ui: &mut Ui,
    trace: &Trace,
    model: &TimelineModel,
    selected: Option<EventRef>,
    ncu: Option<&AttachedNcu>,
) -> DetailsClick {
    let mut click = DetailsClick::default();
    let Some(event) = selected else {
        ui.weak("Click an event to see its details. Double-click zooms to it. Press ? for keys.");
        return click;
    };
    let facts = describe(trace, model, event);
    let frames = call_stack(trace, event);
    ui.horizontal(|ui| {
        if ui
            .button("Copy")
            .on_hover_text("Copy these details as text")
            .clicked()
        {
            let mut text = as_text(&facts);
            if !frames.is_empty() {
                text.push_str(&stack_text(trace, frames));
            }
            ui.ctx().copy_text(text);
        }
        let kind = facts.first().map_or(event.kind.label(), |f| f.1.as_str());
        let title = match event.name(trace) {
            "" => kind.to_string(),
            name => format!("{kind} · {name}"),
        };
        // Cut to the panel: a long kernel name must not widen the columns below past the
        // splitter (the whole name is in the facts and the hover).
        ui.add(egui::Label::new(egui::RichText::new(&title).strong()).truncate())
            .on_hover_text(&title);
    });
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.columns(2, |cols| {
                egui::Grid::new("sightline_details")
                    .num_columns(2)
                    .spacing([12.0, 2.0])
                    .show(&mut cols[0], |ui| {
                        for (key, value) in &facts {
                            ui.weak(*key);
                            // Wrapped in its column: a long kernel name must not run under
                            // the partner links of the other column.
                            ui.add(egui::Label::new(value.as_str()).selectable(true).wrap());
                            ui.end_row();
                        }
                    });
                call_stack_ui(&mut cols[0], trace, frames, usize::MAX);
                let ui = &mut cols[1];
                if let Some(ncu) = ncu.filter(|_| event.kind == EventKind::Kernel) {
                    click.source_of =
                        super::ncu_facts::show_for_kernel(ui, ncu, event.index as usize);
                    ui.add_space(6.0);
                }
                let partners = model.partners(trace, event);
                if !partners.is_empty() {
                    ui.strong(if event.kind == EventKind::ApiCall {
                        "Launched on the GPU"
                    } else {
                        "Launched by"
                    });
                    for p in partners.iter().take(50) {
                        let (kind, name) = (p.kind.label(), p.name(trace));
                        // On the axis's clock, as Start reads (a PyTorch trace's epoch ns
                        // read 4738408.6 s here).
                        let at =
                            format_duration((p.start_ns(trace) - trace.time_origin_ns()) as f64);
                        // The name gives way to the column's width; the time stays.
                        let font = egui::TextStyle::Body.resolve(ui.style());
                        let fixed = text_width(ui, &format!("{kind} ·  @ {at}"), &font);
                        let room = ui.available_width() - fixed;
                        let shown = elide_to_width(ui, name, &font, room.max(20.0), false);
                        let link = ui.link(format!("{kind} · {shown} @ {at}"));
                        if link.on_hover_text(name).clicked() {
                            click.go_to = Some(*p);
                        }
                    }
                    if partners.len() > 50 {
                        ui.weak(format!("… and {} more", partners.len() - 50));
                    }
                }
            });
        });
    click
}
