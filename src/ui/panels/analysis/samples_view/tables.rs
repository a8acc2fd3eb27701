//! The CPU samples tab's three drawings of one profile: the bottom-up table (sortable by
//! column), the top-down tree and the flame graph; each returns the function clicked.

use super::*;

impl AnalysisPanel {
    /// The bottom-up table; returns the function clicked.
    pub(super) fn bottom_up_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Trace,
        key: &SamplesKey,
        profile: &Profile,
    ) -> Option<ChosenFunction> {
        let sort = self.samples.sort;
        let fresh =
            self.samples.order.as_ref().is_some_and(|(k, s, o)| {
                k == key && *s == sort && o.len() == profile.bottom_up.len()
            });
        if !fresh {
            // Once per result and sort: a sort of the distinct functions, not of the samples.
            let order = bottom_up_order(trace, profile, sort);
            self.samples.order = Some((key.clone(), sort, order));
        }
        let order = self
            .samples
            .order
            .as_ref()
            .map_or(&[][..], |(_, _, o)| o.as_slice());
        let chosen = match &self.samples.chosen {
            Some(ChosenFunction::Function(f)) => Some(*f),
            _ => None,
        };
        let (header, row) = draw_bottom_up(ui, trace, profile, order, sort, chosen);
        if let Some(column) = header {
            let numeric = matches!(column, Column::SelfSamples | Column::TotalSamples);
            self.samples.sort = Some(match sort {
                Some((c, descending)) if c == column => (column, !descending),
                _ => (column, numeric),
            });
        }
        row.map(ChosenFunction::Function)
    }

    /// The flame graph with its zoom line; returns the node clicked, or (on a click outside
    /// every node) the current choice, to clear it.
    pub(super) fn flame_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Trace,
        profile: &Profile,
    ) -> Option<ChosenFunction> {
        let zoom = match profile.node_at(&self.samples.zoom) {
            Some(n) => n,
            None => {
                self.samples.zoom.clear();
                0
            }
        };
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(zoom != 0, Button::new("Reset zoom"))
                .clicked()
            {
                self.samples.zoom.clear();
            }
            match self.samples.zoom.last() {
                Some(f) => ui.label(format!("Zoomed into {}", trace.str(f.function))),
                None => ui.weak("Click a box to zoom into it and outline its samples"),
            };
        });
        let chosen_path = match &self.samples.chosen {
            Some(ChosenFunction::Node(p)) => Some(p.as_slice()),
            _ => None,
        };
        let chosen = chosen_path.and_then(|p| profile.node_at(p));
        let drawn = &mut self.samples.flame_boxes;
        match flame_graph::show(ui, trace, profile, zoom, chosen, drawn)? {
            FlameClick::Node(0) => {
                // "all": zoom out; the root stands for every sample, nothing to outline.
                self.samples.zoom.clear();
                self.samples
                    .chosen
                    .clone()
                    .filter(|c| matches!(c, ChosenFunction::Node(_)))
            }
            FlameClick::Node(n) => {
                let path = profile.node_path(n);
                if chosen != Some(n) {
                    self.samples.zoom = path.clone();
                }
                Some(ChosenFunction::Node(path))
            }
            FlameClick::Background => self.samples.chosen.clone(),
        }
    }
}

/// The bottom-up rows (indices into `profile.bottom_up`) in the order of `sort`; ties keep the
/// profile's order (self desc, total desc, function, module).
fn bottom_up_order(trace: &Trace, profile: &Profile, sort: BottomUpSort) -> Vec<u32> {
    let mut order: Vec<u32> = (0..profile.bottom_up.len() as u32).collect();
    let Some((column, descending)) = sort else {
        return order;
    };
    let rows = &profile.bottom_up;
    order.sort_by(|&a, &b| {
        let (x, y) = (&rows[a as usize], &rows[b as usize]);
        let o = match column {
            Column::Function => trace.str(x.frame.function).cmp(trace.str(y.frame.function)),
            Column::Module => trace.str(x.frame.module).cmp(trace.str(y.frame.module)),
            Column::SelfSamples => x.self_samples.cmp(&y.self_samples),
            Column::TotalSamples => x.total_samples.cmp(&y.total_samples),
        };
        if descending { o.reverse() } else { o }.then(a.cmp(&b))
    });
    order
}

/// One cell `width` wide and a row high, numbers right-aligned.
fn cell<R>(ui: &mut Ui, width: f32, right: bool, add: impl FnOnce(&mut Ui) -> R) -> R {
    let height = ui.spacing().interact_size.y;
    super::super::statistics_view::cell(ui, width, height, right, add)
}

/// Draws the bottom-up table (only the rows on screen); returns the header and the function
/// clicked.
fn draw_bottom_up(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    order: &[u32],
    sort: BottomUpSort,
    chosen: Option<Frame>,
) -> (Option<Column>, Option<Frame>) {
    let gap = ui.spacing().item_spacing.x;
    let fixed = 4.0 * NUMBER_WIDTH_PX + 5.0 * gap;
    let avail = ui.available_width();
    let module_w = ((avail - fixed) * 0.3).clamp(70.0, 160.0);
    let function_w = (avail - fixed - module_w).max(140.0);
    let columns = [
        ("Function", Some(Column::Function), function_w, false),
        ("Module", Some(Column::Module), module_w, false),
        ("Self", Some(Column::SelfSamples), NUMBER_WIDTH_PX, true),
        ("Self %", None, NUMBER_WIDTH_PX, true),
        ("Total", Some(Column::TotalSamples), NUMBER_WIDTH_PX, true),
        ("Total %", None, NUMBER_WIDTH_PX, true),
    ];
    let mut header = None;
    ui.horizontal(|ui| {
        for (title, column, width, right) in columns {
            let arrow = match (sort, column) {
                (Some((c, true)), Some(col)) if c == col => "▼",
                (Some((c, false)), Some(col)) if c == col => "▲",
                _ => "",
            };
            let r = cell(ui, width, right, |ui| {
                let button = ui.add(
                    Button::new(RichText::new(title).strong())
                        .frame(false)
                        .truncate(),
                );
                if !arrow.is_empty() {
                    ui.label(RichText::new(arrow).monospace());
                }
                button
            });
            if let Some(c) = column
                && r.on_hover_text(format!("{title}: click to sort")).clicked()
            {
                header = Some(c);
            }
        }
    });
    let mut clicked = None;
    let height = ui.spacing().interact_size.y;
    egui::ScrollArea::vertical()
        .id_salt("samples_bottom_up")
        .max_height(440.0)
        .auto_shrink([false, true])
        .show_rows(ui, height, order.len(), |ui, range| {
            for &i in order.get(range).unwrap_or(&[]) {
                let Some(f) = profile.bottom_up.get(i as usize) else {
                    continue;
                };
                let function = trace.str(f.frame.function);
                let module = trace.str(f.frame.module);
                ui.horizontal(|ui| {
                    // The file name says which library; the path is in the tooltip.
                    let module_name = module.rsplit('/').next().unwrap_or(module);
                    let on = chosen == Some(f.frame);
                    let name = cell(ui, function_w, false, |ui| {
                        ui.add(Button::selectable(on, function).truncate())
                    });
                    if name
                        .on_hover_text(format!(
                            "{function}\nModule: {module}\nclick to outline its samples"
                        ))
                        .clicked()
                    {
                        clicked = Some(f.frame);
                    }
                    cell(ui, module_w, false, |ui| {
                        ui.add(egui::Label::new(module_name).truncate())
                    })
                    .on_hover_text(module);
                    for (n, percent) in [(f.self_samples, false), (f.self_samples, true)]
                        .into_iter()
                        .chain([(f.total_samples, false), (f.total_samples, true)])
                    {
                        let text = if percent {
                            format!("{:.1}", profile.percent(n))
                        } else {
                            n.to_string()
                        };
                        cell(ui, NUMBER_WIDTH_PX, true, |ui| ui.label(text));
                    }
                });
            }
        });
    (header, clicked)
}

/// The top-down tree, the hot path (nodes with half the samples or more) and single-callee
/// chains open at first; returns the node clicked, by its path.
pub(super) fn tree_ui(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    chosen: Option<&[Frame]>,
) -> Option<Vec<Frame>> {
    let mut clicked = None;
    let mut path = Vec::new();
    ui.horizontal(|ui| {
        let name_w = (ui.available_width() - tree_numbers_width(ui)).max(100.0);
        cell(ui, name_w, false, |ui| ui.strong("Function"));
        for title in ["Total", "Total %", "Self"] {
            cell(ui, NUMBER_WIDTH_PX, true, |ui| ui.strong(title));
        }
    });
    ui.scope(|ui| {
        ui.spacing_mut().indent = 12.0;
        let id = ui.make_persistent_id("samples_top_down");
        children_ui(ui, trace, profile, 0, id, &mut path, chosen, &mut clicked);
    });
    clicked
}

/// The children of `node` and, for those that are open, theirs.
#[allow(clippy::too_many_arguments)]
fn children_ui(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    node: u32,
    id: Id,
    path: &mut Vec<Frame>,
    chosen: Option<&[Frame]>,
    clicked: &mut Option<Vec<Frame>>,
) {
    let Some(n) = profile.tree.get(node as usize) else {
        return;
    };
    for &child in n.children.iter().take(TREE_CHILDREN) {
        let Some(c) = profile.tree.get(child as usize) else {
            continue;
        };
        let Some(frame) = c.frame else {
            continue;
        };
        path.push(frame);
        let child_id = id.with((frame.function, frame.module));
        let on = chosen == Some(path.as_slice());
        let row = |ui: &mut Ui| node_row(ui, trace, profile, c, on);
        let hit = if c.children.is_empty() {
            ui.horizontal(|ui| {
                ui.add_space(ui.spacing().indent);
                row(ui)
            })
            .inner
        } else {
            // The hot path and chains of single callees start open: opening them costs a row.
            let open = c.total_samples * 2 >= profile.samples || c.children.len() == 1;
            let (_, header, _) = CollapsingState::load_with_default_open(ui.ctx(), child_id, open)
                .show_header(ui, row)
                .body(|ui| {
                    children_ui(ui, trace, profile, child, child_id, path, chosen, clicked);
                });
            header.inner
        };
        if hit {
            *clicked = Some(path.clone());
        }
        path.pop();
    }
    if n.children.len() > TREE_CHILDREN {
        let rest: u64 = n
            .children
            .iter()
            .skip(TREE_CHILDREN)
            .filter_map(|&c| profile.tree.get(c as usize))
            .map(|c| c.total_samples)
            .sum();
        ui.weak(format!(
            "… {} more callees with {rest} samples",
            n.children.len() - TREE_CHILDREN
        ));
    }
}

/// A node's row: its function (clickable) and its total and self samples. Returns whether the
/// function was clicked.
fn node_row(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    c: &cpu_samples::CallNode,
    on: bool,
) -> bool {
    let Some(frame) = c.frame else {
        return false;
    };
    let function = trace.str(frame.function);
    let name_w = (ui.available_width() - tree_numbers_width(ui)).max(100.0);
    let name = cell(ui, name_w, false, |ui| {
        ui.add(Button::selectable(on, function).truncate())
    });
    let hit = name
        .on_hover_text(format!(
            "{function}\nModule: {}\ntotal {} samples ({:.1} %), self {} ({:.1} %)\nclick to \
             outline its samples",
            trace.str(frame.module),
            c.total_samples,
            profile.percent(c.total_samples),
            c.self_samples,
            profile.percent(c.self_samples)
        ))
        .clicked();
    let numbers = [
        c.total_samples.to_string(),
        format!("{:.1}", profile.percent(c.total_samples)),
        c.self_samples.to_string(),
    ];
    for text in numbers {
        cell(ui, NUMBER_WIDTH_PX, true, |ui| ui.label(text));
    }
    hit
}

/// Width of the tree's number columns (total, total %, self) with their spacing.
fn tree_numbers_width(ui: &Ui) -> f32 {
    3.0 * (NUMBER_WIDTH_PX + ui.spacing().item_spacing.x)
}
