//! Driving the real app with `egui_kittest`: a harness around [`SightlineApp`], waiting for the
//! background load, and pointer gestures with or without modifier keys.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui::{Event, Modifiers, PointerButton, Pos2, Vec2};
use egui_kittest::Harness;
use sightline::ui::SightlineApp;

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
}

pub fn opened(name: &str) -> Harness<'static, SightlineApp> {
    let mut h = harness(Some(super::fixture(name)));
    wait_for_load(&mut h);
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
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
