//! Driving the real app with `egui_kittest`: a harness around [`SightlineApp`], waiting for the
//! background load and for the analysis panel's background jobs, pointer gestures with or without
//! modifier keys, and a harness around the analysis panel alone.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{Event, Modifiers, PointerButton, Pos2, Vec2};
use egui_kittest::Harness;
use sightline::analysis::TimeRange;
use sightline::trace::Trace;
use sightline::ui::SightlineApp;
use sightline::ui::panels::analysis::{AnalysisPanel, PanelAction};

/// A file as the window receives it when dropped.
#[derive(Debug)]
pub struct DroppedPath(pub PathBuf);

impl egui::DroppedFile for DroppedPath {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

pub fn harness(path: Option<PathBuf>) -> Harness<'static, SightlineApp> {
    Harness::builder()
        .with_size(Vec2::new(1400.0, 900.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::new(path),
        )
}

/// Steps the harness until the background load is over (or fails the test after 60 s).
pub fn wait_for_load(h: &mut Harness<'static, SightlineApp>) {
    let started = Instant::now();
    h.step();
    while h.state().is_loading() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "load did not finish"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    // One frame to lay the new trace out, one to draw with that layout.
    h.step();
    h.step();
    settle(h);
}

/// Steps until the analysis panel has no job running and its results are on screen (the panel
/// computes on worker threads: what a frame asks for shows on a later frame).
pub fn settle(h: &mut Harness<'static, SightlineApp>) {
    settle_with(h, |app| app.tab().analysis.busy());
}

/// Steps `h` until `busy` has been false for two frames in a row (a finished job may start a
/// follow-up, e.g. the chosen row's events once its table is in), sleeping between frames as a
/// window would wait for the worker's repaint; fails the test after 60 s.
pub fn settle_with<S>(h: &mut Harness<'static, S>, busy: impl Fn(&S) -> bool) {
    let started = Instant::now();
    let mut idle_frames = 0;
    while idle_frames < 2 {
        h.step();
        if busy(h.state()) {
            idle_frames = 0;
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the analysis panel's jobs did not finish"
            );
            std::thread::sleep(Duration::from_millis(1));
        } else {
            idle_frames += 1;
        }
    }
}

pub fn opened(name: &str) -> Harness<'static, SightlineApp> {
    let mut h = harness(Some(super::fixture(name)));
    wait_for_load(&mut h);
    assert!(
        h.state().tab().error.is_none(),
        "{:?}",
        h.state().tab().error
    );
    h
}

pub fn click_at(h: &mut Harness<'static, SightlineApp>, pos: Pos2) {
    click_with(h, pos, Modifiers::NONE);
}

/// A click with modifier keys held (e.g. Alt on an NVTX range to select its time).
pub fn click_with(h: &mut Harness<'static, SightlineApp>, pos: Pos2, modifiers: Modifiers) {
    if modifiers != Modifiers::NONE {
        h.event(Event::ModifiersChanged(modifiers));
    }
    h.event(Event::PointerMoved(pos));
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers,
        });
    }
    h.step();
    h.step();
    if modifiers != Modifiers::NONE {
        h.event(Event::ModifiersChanged(Modifiers::NONE));
        h.step();
    }
}

pub fn drag(h: &mut Harness<'static, SightlineApp>, from: Pos2, to: Pos2) {
    drag_with(h, from, to, Modifiers::NONE);
}

/// A drag with modifier keys held (e.g. Shift to select a range).
pub fn drag_with(
    h: &mut Harness<'static, SightlineApp>,
    from: Pos2,
    to: Pos2,
    modifiers: Modifiers,
) {
    h.event(Event::ModifiersChanged(modifiers));
    h.event(Event::PointerMoved(from));
    h.event(Event::PointerButton {
        pos: from,
        button: PointerButton::Primary,
        pressed: true,
        modifiers,
    });
    for k in 1..=4 {
        h.event(Event::PointerMoved(from + (to - from) * (k as f32 / 4.0)));
    }
    h.event(Event::PointerButton {
        pos: to,
        button: PointerButton::Primary,
        pressed: false,
        modifiers,
    });
    h.step();
    h.step();
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.step();
}

/// The analysis panel alone, as the app drives it: the trace and selection the app hands it, and
/// every action it returned.
pub struct PanelBench {
    pub panel: AnalysisPanel,
    pub trace: Arc<Trace>,
    pub selection: TimeRange,
    pub actions: Vec<PanelAction>,
}

pub fn panel_harness(trace: Trace, selection: TimeRange) -> Harness<'static, PanelBench> {
    let mut h = Harness::builder()
        .with_size(Vec2::new(1300.0, 1400.0))
        .with_step_dt(0.01)
        .with_max_steps(40)
        .build_ui_state(
            |ui, bench: &mut PanelBench| {
                let actions = bench.panel.ui(ui, &bench.trace, bench.selection);
                bench.actions.extend(actions);
            },
            PanelBench {
                panel: AnalysisPanel::new(),
                trace: Arc::new(trace),
                selection,
                actions: Vec::new(),
            },
        );
    settle_panel(&mut h);
    h
}

/// Steps until the panel's background jobs are done and their results drawn.
pub fn settle_panel(h: &mut Harness<'static, PanelBench>) {
    settle_with(h, |bench| bench.panel.busy());
}

/// The app with `paths` open, one tab each, in a window of `size`, once every load and every
/// background job of the panels is over.
pub fn app_with_size(paths: Vec<PathBuf>, size: Vec2) -> Harness<'static, SightlineApp> {
    app_of(paths, size, false)
}

/// [`app_with_size`], opening the first two of `paths` in the compare view when `compare`.
pub fn app_of(paths: Vec<PathBuf>, size: Vec2, compare: bool) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(size)
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_files(paths, compare),
        );
    settle_all(&mut h);
    h
}

/// Steps until no tab is loading and no panel job (analysis, compare diff) runs.
pub fn settle_all(h: &mut Harness<'static, SightlineApp>) {
    settle_with(h, |app| {
        app.is_loading()
            || app.tabs.iter().any(|t| t.analysis.busy())
            || app.compare.as_ref().is_some_and(|c| c.diff.busy())
    });
}

/// Lets more than egui's double-click interval pass, so the next click starts a new gesture.
pub fn pause(h: &mut Harness<'static, SightlineApp>) {
    h.run_steps(60);
}

/// A right click at `pos` (opens a context menu there).
pub fn right_click(h: &mut Harness<'static, SightlineApp>, pos: Pos2) {
    h.event(Event::PointerMoved(pos));
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.step();
    h.step();
}

/// Two clicks at `pos` within the double-click interval, after a pause.
pub fn double_click(h: &mut Harness<'static, SightlineApp>, pos: Pos2) {
    pause(h);
    click_at(h, pos);
    click_at(h, pos);
}

/// A key pressed and released with `modifiers` held, and two frames.
pub fn press(h: &mut Harness<'static, SightlineApp>, modifiers: Modifiers, key: egui::Key) {
    h.key_press_modifiers(modifiers, key);
    h.step();
    h.step();
}

/// A drag egui sees frame by frame (press, moves and release each in a frame of their own),
/// as a splitter or a drag that must be recognised as one needs.
pub fn slow_drag(h: &mut Harness<'static, SightlineApp>, from: Pos2, to: Pos2) {
    h.event(Event::PointerMoved(from));
    h.step();
    h.event(Event::PointerButton {
        pos: from,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    for k in 1..=8 {
        h.event(Event::PointerMoved(from + (to - from) * (k as f32 / 8.0)));
        h.step();
    }
    h.event(Event::PointerButton {
        pos: to,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    h.step();
}

/// Whether the app is still loading, or a report tab's Source view is still gathering its data.
pub fn loading_or_gathering_source(app: &SightlineApp) -> bool {
    app.is_loading()
        || app
            .tab()
            .ncu
            .as_ref()
            .and_then(|v| v.source.as_ref())
            .is_some_and(sightline::ui::ncu::source::SourceView::is_loading)
}
