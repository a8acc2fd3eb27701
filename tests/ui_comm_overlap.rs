//! Communication/compute overlap in the window, driven through `egui_kittest`: the
//! exposed-communication row under each GPU that communicates (p2p_2gpu) and none on a one-GPU
//! trace without communication (transformer); the Overlap tab's regex box, typed into as a person
//! does, changes the numbers shown, the rows and the kernel colours, and an invalid regex is
//! reported while the last valid one stays in force. Expected values come from the export read
//! with rusqlite here, apart from Sightline.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::ui::{opened, settle};
use egui::{Pos2, Rect, Shape};
use egui_kittest::kittest::Queryable;
use regex::RegexBuilder;
use rusqlite::Connection;
use sightline::analysis::comm_overlap::DEFAULT_COMM_PATTERN;
use sightline::ui::panels::analysis::AnalysisTab;
use sightline::ui::theme::{self, Palette};
use sightline::ui::timeline::{RowKind, ViewState, build_shapes, format_duration};

/// Per device: (comm ns, compute ns, exposed intervals).
type Expected = BTreeMap<u32, (i64, i64, Vec<(i64, i64)>)>;

/// What the whole export holds, kernels named by
/// `pattern` (any case) and peer-to-peer copies being communication, by a sweep over the start
/// and end points of every op.
fn expected(trace: &Path, pattern: &str) -> Expected {
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .unwrap();
    let db = Connection::open(trace).unwrap();
    // (device, time, Δcomm, Δcompute)
    let mut points: BTreeMap<u32, Vec<(i64, i32, i32)>> = BTreeMap::new();
    let mut add = |device: u32, start: i64, end: i64, comm: bool| {
        let (dc, dk) = if comm { (1, 0) } else { (0, 1) };
        let p = points.entry(device).or_default();
        p.push((start, dc, dk));
        p.push((end, -dc, -dk));
    };
    let mut q = db
        .prepare(
            "SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        )
        .unwrap();
    let rows = q
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, String>(3)?))
        })
        .unwrap();
    for row in rows {
        let (device, start, end, name) = row.unwrap();
        add(device, start, end, regex.is_match(&name));
    }
    let mut q = db
        .prepare("SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 10")
        .unwrap();
    let rows = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    for row in rows {
        let (device, start, end) = row.unwrap();
        add(device, start, end, true);
    }
    let mut out = BTreeMap::new();
    for (device, mut p) in points {
        p.sort_unstable();
        let (mut comm, mut compute, mut exposed) = (0, 0, Vec::<(i64, i64)>::new());
        let (mut n_comm, mut n_compute) = (0, 0);
        for w in 0..p.len() {
            n_comm += p[w].1;
            n_compute += p[w].2;
            let Some(next) = p.get(w + 1).map(|n| n.0) else {
                break;
            };
            let (t, span) = (p[w].0, next - p[w].0);
            if n_comm > 0 {
                comm += span;
            }
            if n_compute > 0 {
                compute += span;
            }
            if n_comm > 0 && n_compute == 0 && span > 0 {
                match exposed.last_mut() {
                    Some(last) if last.1 == t => last.1 = next,
                    _ => exposed.push((t, next)),
                }
            }
        }
        out.insert(device, (comm, compute, exposed));
    }
    out
}

fn exposed_rows(h: &egui_kittest::Harness<'static, sightline::ui::SightlineApp>) -> Vec<u32> {
    let model = &h.state().tab().document.as_ref().expect("a trace").model;
    model
        .rows
        .iter()
        .filter_map(|r| match r.kind {
            RowKind::ExposedComm { device } => Some(device),
            _ => None,
        })
        .collect()
}

#[test]
fn each_gpu_that_communicates_gets_an_exposed_communication_row_drawn_under_its_header() {
    let path = common::fixture("p2p_2gpu");
    let h = opened("p2p_2gpu");
    let want = expected(&path, "nccl");
    assert_eq!(want.len(), 2);
    assert_eq!(exposed_rows(&h), vec![0, 1]);
    let d = h.state().tab().document.as_ref().unwrap();
    let (trace, model) = (&d.trace, &d.model);
    for (device, (comm, compute, exposed)) in &want {
        assert!(*comm > 0 && *compute > 0);
        let header = model
            .row_index(RowKind::GpuSummary { device: *device })
            .unwrap();
        assert_eq!(
            model.rows[header + 1].kind,
            RowKind::ExposedComm { device: *device },
            "first row under GPU {device}'s header"
        );
        assert_eq!(model.exposed_comm(*device), exposed.as_slice());
    }

    // Drawn: communication-coloured blocks inside each exposed row, nowhere else.
    let mut view = ViewState::new(trace.first_ns, trace.last_ns, model);
    view.collapsed.clear();
    let rect = Rect::from_min_size(Pos2::new(250.0, 26.0), egui::vec2(1350.0, 5_000.0));
    let palette = Palette::dark();
    let frame = build_shapes(trace, model, &view, rect, &palette);
    let blocks: Vec<Rect> = frame
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Rect(r) if r.fill == palette.comm => Some(r.rect),
            _ => None,
        })
        .collect();
    for device in [0, 1] {
        let row = model.row_index(RowKind::ExposedComm { device }).unwrap();
        let p = frame.rows.iter().find(|p| p.row == row).expect("row shown");
        let inside = blocks
            .iter()
            .filter(|b| b.top() >= p.top && b.bottom() <= p.top + p.height)
            .count();
        assert!(inside > 0, "GPU {device}: no exposed block drawn");
    }
    let in_rows = |b: &Rect| {
        frame.rows.iter().any(|p| {
            matches!(model.rows[p.row].kind, RowKind::ExposedComm { .. })
                && b.top() >= p.top
                && b.bottom() <= p.top + p.height
        })
    };
    assert!(blocks.iter().all(in_rows));
}

#[test]
fn a_one_gpu_trace_without_communication_has_no_exposed_row() {
    let path = common::fixture("transformer");
    assert!(
        expected(&path, "nccl")
            .values()
            .all(|(comm, _, _)| *comm == 0)
    );
    let h = opened("transformer");
    let model = &h.state().tab().document.as_ref().unwrap().model;
    let comm = model.comm.as_ref().expect("communication computed");
    assert!(comm.devices.iter().all(|d| d.comm_ns == 0));
    assert!(exposed_rows(&h).is_empty());
}

#[test]
fn typing_a_regex_in_the_overlap_tab_changes_the_numbers_rows_and_colours() {
    let path = common::fixture("p2p_2gpu");
    let mut h = opened("p2p_2gpu");
    h.get_by_label("Overlap").click();
    settle(&mut h);
    assert_eq!(h.state().tab().analysis.tab, AnalysisTab::Overlap);

    let before = expected(&path, "nccl");
    let typed = format!("{DEFAULT_COMM_PATTERN}|scale_add");
    let after = expected(&path, &typed);
    let shown = |h: &egui_kittest::Harness<'static, sightline::ui::SightlineApp>, ns: i64| {
        h.query_all_by_label(&format_duration(ns as f64)).count()
    };
    for (comm, compute, _) in before.values() {
        assert!(shown(&h, *comm) > 0, "comm {comm} shown");
        assert!(shown(&h, *compute) > 0, "compute {compute} shown");
    }
    // The new numbers are not on screen yet.
    for (comm, compute, _) in after.values() {
        assert_eq!(
            *compute, 0,
            "the fixture's only kernel is now communication"
        );
        assert_eq!(shown(&h, *comm), 0);
    }

    h.get_by_label("Communication kernels (regex)").click();
    h.run();
    // The default pattern is longer than the box: go to its end, as a person would.
    h.key_press(egui::Key::End);
    h.get_by_label("Communication kernels (regex)")
        .type_text("|scale_add");
    settle(&mut h);
    assert_eq!(h.state().tab().analysis.comm_pattern(), typed);
    for (comm, _, exposed) in after.values() {
        // Communication and exposed communication: the same now that nothing computes.
        assert!(shown(&h, *comm) >= 2, "comm {comm} shown");
        assert_eq!(exposed.iter().map(|(s, e)| e - s).sum::<i64>(), *comm);
    }
    let d = h.state().tab().document.as_ref().unwrap();
    for (device, (_, _, exposed)) in &after {
        assert_eq!(d.model.exposed_comm(*device), exposed.as_slice());
    }
    let kernel = d.trace.kernels.spans.name[0];
    assert_eq!(
        d.model.kernel_color(kernel),
        theme::comm_kernel_color(d.trace.str(kernel)),
        "communication kernels take the communication colours"
    );

    // An invalid regex is reported; the last valid one stays in force.
    h.get_by_label("Communication kernels (regex)")
        .type_text("(");
    settle(&mut h);
    h.get_by_label_contains(&format!("'{typed}(' is not a valid regex"));
    assert_eq!(h.state().tab().analysis.comm_pattern(), typed);
    for (comm, _, _) in after.values() {
        assert!(shown(&h, *comm) >= 2);
    }
}
