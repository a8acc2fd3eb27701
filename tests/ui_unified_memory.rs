//! Unified memory in the window, driven through `egui_kittest` on a real capture (cpu_side,
//! recorded with `--cuda-um-cpu-page-faults=true --cuda-um-gpu-page-faults=true`): a "Unified
//! memory" row under the process with CPU page faults and under the GPU with GPU page faults;
//! their marks stand for exactly the faults SQL finds in view; hovering a fault names it with the
//! file's address, function, count and access type; clicking selects it; migrations (memcpy
//! copyKind 11–13) are drawn in their own colour, listed in the legend and named as unified
//! memory in the details. Every expected value is read from the file with SQL here.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{click_at, opened};
use egui::{Pos2, Rect, Shape};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::{Connection, OpenFlags};
use sightline::timeline::painter::event_style;
use sightline::timeline::unified_memory::fault_marks;
use sightline::ui::SightlineApp;
use sightline::ui::theme::Palette;
use sightline::ui::timeline::{
    EventKind, EventRef, GroupId, RowKind, RowPlacement, TimeToX, ViewState, build_shapes,
    format_duration,
};

fn conn() -> Connection {
    Connection::open_with_flags(
        common::fixture("cpu_side"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open")
}

fn ints(c: &Connection, sql: &str) -> Vec<i64> {
    c.prepare(sql)
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Where a row was drawn in the last frame.
fn placed(h: &Harness<'static, SightlineApp>, kind: RowKind) -> Option<RowPlacement> {
    let app = h.state();
    let model = &app.tab().document.as_ref().expect("document").model;
    let row = model.row_index(kind)?;
    app.tab()
        .timeline
        .last_rows
        .iter()
        .find(|p| p.row == row)
        .copied()
}

/// The pid of the process with CPU page faults and the device with GPU page faults (one each in
/// this capture).
fn um_rows(c: &Connection) -> (RowKind, RowKind) {
    let pids = ints(
        c,
        "SELECT DISTINCT (globalPid >> 24) & 16777215 FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS",
    );
    let devices = ints(
        c,
        "SELECT DISTINCT deviceId FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS",
    );
    assert_eq!((pids.len(), devices.len()), (1, 1));
    (
        RowKind::UnifiedMemoryCpu {
            pid: pids[0] as u32,
        },
        RowKind::UnifiedMemoryGpu {
            device: devices[0] as u32,
        },
    )
}

#[test]
fn unified_memory_rows_sit_under_the_process_and_the_gpu() {
    let h = opened("cpu_side");
    let c = conn();
    let (cpu_row, gpu_row) = um_rows(&c);
    let app = h.state();
    let model = &app.tab().document.as_ref().unwrap().model;
    let um_kinds: Vec<RowKind> = model
        .rows
        .iter()
        .map(|r| r.kind)
        .filter(|k| {
            matches!(
                k,
                RowKind::UnifiedMemoryCpu { .. } | RowKind::UnifiedMemoryGpu { .. }
            )
        })
        .collect();
    assert_eq!(um_kinds, vec![gpu_row, cpu_row]);

    let RowKind::UnifiedMemoryCpu { pid } = cpu_row else {
        unreachable!()
    };
    let header = model.row_index(RowKind::ProcessHeader { pid }).unwrap();
    let row = model.row_index(cpu_row).unwrap();
    assert_eq!(row, header + 1, "first row of the process");
    assert_eq!(model.rows[row].title, "Unified memory");
    assert_eq!(model.rows[row].hidden_by, vec![GroupId::Process(pid)]);

    let RowKind::UnifiedMemoryGpu { device } = gpu_row else {
        unreachable!()
    };
    let gpu_header = model.row_index(RowKind::GpuSummary { device }).unwrap();
    let row = model.row_index(gpu_row).unwrap();
    assert!(row > gpu_header);
    assert!(
        model.rows[gpu_header + 1..row]
            .iter()
            .all(|r| r.hidden_by.contains(&GroupId::Gpu(device))),
        "inside the GPU's group"
    );
    assert_eq!(model.rows[row].title, "Unified memory");
    // Both on screen when the trace opens.
    assert!(placed(&h, cpu_row).is_some() && placed(&h, gpu_row).is_some());
}

/// The faults of a row overlapping `[t0, t1)`, by SQL (an instant overlaps when it lies inside).
fn sql_count_in(c: &Connection, kind: RowKind, t0: i64, t1: i64) -> usize {
    let (sql, key) = match kind {
        RowKind::UnifiedMemoryCpu { pid } => (
            "SELECT count(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS \
             WHERE (globalPid >> 24) & 16777215 = ?1 AND start >= ?2 AND start < ?3",
            i64::from(pid),
        ),
        RowKind::UnifiedMemoryGpu { device } => (
            "SELECT count(*) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS \
             WHERE deviceId = ?1 AND start < ?3 AND (end > ?2 OR (start = end AND start >= ?2))",
            i64::from(device),
        ),
        _ => unreachable!(),
    };
    c.query_row(sql, [key, t0, t1], |r| r.get::<_, i64>(0))
        .unwrap() as usize
}

/// Marks drawn in a row: the painter's rectangles in the fault colour inside the row, and the
/// marks [`fault_marks`] gives for the same view (the window and merge width the painter uses).
fn marks_in_view(
    h: &Harness<'static, SightlineApp>,
    kind: RowKind,
) -> (
    usize,
    Vec<sightline::timeline::unified_memory::FaultMark>,
    (i64, i64),
) {
    let app = h.state();
    let d = app.tab().document.as_ref().unwrap();
    let (trace, model) = (&d.trace, &d.model);
    let view: &ViewState = &app.tab().timeline.view;
    let area: Rect = app.tab().timeline.last_event_area;
    let palette = Palette::dark();
    let frame = build_shapes(trace, model, view, area, &palette);
    let row = model.row_index(kind).unwrap();
    let p = frame.rows.iter().find(|p| p.row == row).expect("row shown");
    let rects = frame
        .shapes
        .iter()
        .filter(|s| match s {
            Shape::Rect(r) => {
                r.fill == palette.um_fault
                    && r.rect.top() >= p.top
                    && r.rect.bottom() <= p.top + p.height
            }
            _ => false,
        })
        .count();
    let map = TimeToX::new(view, area.left(), area.width());
    let window = (view.start_ns.floor() as i64, view.end_ns.ceil() as i64 + 1);
    let merge_below = ((map.ns_per_px() * 2.0).floor() as i64).max(1);
    let marks = fault_marks(
        &model.unified_memory,
        kind,
        &map,
        window,
        merge_below,
        (area.left(), area.right()),
    );
    (rects, marks, window)
}

#[test]
fn fault_marks_stand_for_exactly_the_faults_in_view() {
    let mut h = opened("cpu_side");
    let c = conn();
    let (cpu_row, gpu_row) = um_rows(&c);
    for kind in [cpu_row, gpu_row] {
        // The whole trace: dense faults merge, and the marks still account for every one.
        h.state_mut().tab_mut().timeline.view.show_all();
        h.step();
        let (rects, marks, (t0, t1)) = marks_in_view(&h, kind);
        let want = sql_count_in(&c, kind, t0, t1);
        assert!(want > 0);
        assert_eq!(rects, marks.len(), "{kind:?}: one rectangle per mark");
        assert_eq!(
            marks.iter().map(|m| m.faults).sum::<usize>(),
            want,
            "{kind:?}: faults in the whole view"
        );
        assert!(marks.len() < want, "{kind:?}: dense faults merged");

        // Zoomed to the first three faults: one mark per fault, as many as SQL finds.
        let (table, end) = match kind {
            RowKind::UnifiedMemoryCpu { .. } => ("CUDA_UM_CPU_PAGE_FAULT_EVENTS", "start"),
            _ => ("CUDA_UM_GPU_PAGE_FAULT_EVENTS", "end"),
        };
        let first = ints(
            &c,
            &format!("SELECT start, {end} FROM {table} ORDER BY start LIMIT 3"),
        );
        let last_end: i64 = c
            .query_row(
                &format!(
                    "SELECT max({end}) FROM (SELECT {end} FROM {table} ORDER BY start LIMIT 3)"
                ),
                [],
                |r| r.get(0),
            )
            .unwrap();
        let margin = (last_end - first[0]) / 10;
        {
            let view = &mut h.state_mut().tab_mut().timeline.view;
            view.start_ns = (first[0] - margin) as f64;
            view.end_ns = (last_end + margin) as f64;
        }
        h.step();
        let (rects, marks, (t0, t1)) = marks_in_view(&h, kind);
        let want = sql_count_in(&c, kind, t0, t1);
        assert!(want >= 3, "{kind:?}: {want}");
        assert_eq!(marks.len(), want, "{kind:?}: one mark per fault");
        assert_eq!(rects, want, "{kind:?}: one rectangle per fault");
        assert!(marks.iter().all(|m| m.faults == 1 && m.fault.is_some()));
    }
}

/// Points the harness at `pos` with no tooltip delay and lets the tooltip appear.
fn hover(h: &mut Harness<'static, SightlineApp>, pos: Pos2) {
    h.ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
    h.hover_at(pos);
    h.step();
    h.step();
}

/// Zooms to `[from, to]` and returns the screen point of time `t` in the middle of row `kind`.
fn point_in_row(
    h: &mut Harness<'static, SightlineApp>,
    kind: RowKind,
    (from, to): (i64, i64),
    t: i64,
) -> Pos2 {
    {
        let view = &mut h.state_mut().tab_mut().timeline.view;
        view.start_ns = from as f64;
        view.end_ns = to as f64;
    }
    h.step();
    h.step();
    let p = placed(h, kind).expect("row shown");
    let app = h.state();
    let area = app.tab().timeline.last_event_area;
    let map = TimeToX::new(&app.tab().timeline.view, area.left(), area.width());
    Pos2::new(map.x(t), p.top + p.height / 2.0)
}

#[test]
fn hovering_and_clicking_a_cpu_page_fault_names_it() {
    let mut h = opened("cpu_side");
    let c = conn();
    let (cpu_row, _) = um_rows(&c);
    // The second fault by time, with its function and module names.
    let (start, address, function, module): (i64, i64, String, String) = c
        .query_row(
            "SELECT f.start, f.address, s.value, m.value FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS f \
             JOIN StringIds s ON s.id = f.CpuInstruction JOIN StringIds m ON m.id = f.module \
             ORDER BY f.start LIMIT 1 OFFSET 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let address_text = format!("{:#x}", address as u64);
    let pos = point_in_row(&mut h, cpu_row, (start - 20_000, start + 20_000), start);
    assert!(h.query_by_label(&address_text).is_none(), "no tooltip yet");
    hover(&mut h, pos);
    h.get_by_label("CPU page fault");
    h.get_by_label(&address_text);
    h.get_by_label(&function);
    h.get_by_label(&module);
    h.get_by_label(&format!("{} ({start} ns)", format_duration(start as f64)));

    click_at(&mut h, pos);
    let selected = h
        .state()
        .tab()
        .timeline
        .selection
        .expect("a fault selected");
    assert_eq!(selected.kind, EventKind::CpuPageFault);
    let trace = h.state().trace().unwrap();
    let i = selected.index as usize;
    assert_eq!(
        trace.unified_memory.cpu_page_faults.address[i],
        address as u64
    );
    assert_eq!(
        trace.unified_memory.cpu_page_faults.spans.start_ns[i],
        start
    );
    // The details panel says it too (the tooltip may still be up: at least one more label).
    assert!(h.query_all_by_label(&address_text).count() >= 1);
    assert!(h.query_all_by_label("CPU page fault").count() >= 1);
}

#[test]
fn hovering_a_gpu_page_fault_shows_its_address_count_and_access_type() {
    let mut h = opened("cpu_side");
    let c = conn();
    let (_, gpu_row) = um_rows(&c);
    // The group with the most faults, with the label of its access type from the export's enum.
    let (start, end, address, faults, access): (i64, i64, i64, i64, String) = c
        .query_row(
            "SELECT f.start, f.end, f.address, f.numberOfPageFaults, a.label \
             FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS f \
             JOIN ENUM_CUDA_UNIF_MEM_ACCESS_TYPE a ON a.id = f.faultAccessType \
             ORDER BY f.numberOfPageFaults DESC, f.start LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert!(faults > 1);
    let len = end - start;
    let mid = start + len / 2;
    let pos = point_in_row(&mut h, gpu_row, (start - len / 4, end + len / 4), mid);
    hover(&mut h, pos);
    h.get_by_label("GPU page fault");
    h.get_by_label(&format!("{:#x}", address as u64));
    assert!(h.query_all_by_label(&faults.to_string()).count() >= 1);
    h.get_by_label(&access);
    h.get_by_label(&format!("{} ({len} ns)", format_duration(len as f64)));

    click_at(&mut h, pos);
    let selected = h
        .state()
        .tab()
        .timeline
        .selection
        .expect("a fault selected");
    assert_eq!(selected.kind, EventKind::GpuPageFault);
    let trace = h.state().trace().unwrap();
    let f = &trace.unified_memory.gpu_page_faults;
    let i = selected.index as usize;
    assert_eq!(
        (f.spans.start_ns[i], f.address[i], i64::from(f.faults[i])),
        (start, address as u64, faults)
    );
}

#[test]
fn migrations_are_drawn_listed_and_named_as_unified_memory() {
    let mut h = opened("cpu_side");
    let c = conn();
    let migrations = ints(
        &c,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind BETWEEN 11 AND 13",
    )[0] as usize;
    let other_copies = ints(
        &c,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind NOT BETWEEN 11 AND 13",
    )[0];
    assert!(migrations > 0);

    // Every migration takes the unified-memory colour, in both palettes, and it is none of the
    // copy-direction colours.
    {
        let app = h.state();
        let d = app.tab().document.as_ref().unwrap();
        for palette in [Palette::dark(), Palette::light()] {
            for c in [
                palette.memcpy_htod,
                palette.memcpy_dtoh,
                palette.memcpy_dtod,
                palette.memcpy_ptop,
                palette.memcpy_other,
                palette.memset,
            ] {
                assert_ne!(c, palette.um_migration);
            }
            let coloured = (0..d.trace.memcpys.spans.len())
                .filter(|&i| {
                    event_style(
                        &d.trace,
                        &d.model,
                        &palette,
                        EventRef::new(EventKind::Memcpy, i),
                    )
                    .0 == palette.um_migration
                })
                .count();
            assert_eq!(coloured, migrations);
            assert!(
                palette
                    .legend()
                    .contains(&("Unified memory migration", palette.um_migration))
            );
        }
    }
    // In the top bar's legend: by its name, or by its short name where the bar is narrow.
    assert!(
        h.query_by_label("Unified memory migration").is_some()
            || h.query_by_label("UM migration").is_some(),
        "the legend names the migrations' colour"
    );

    // The first host-to-device migration, drawn in its stream row in that colour.
    let (start, end): (i64, i64) = c
        .query_row(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 11 \
             ORDER BY start LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let event = {
        let trace = h.state().trace().unwrap();
        let i = (0..trace.memcpys.spans.len())
            .find(|&i| {
                trace.memcpys.spans.start_ns[i] == start && trace.memcpys.spans.end_ns[i] == end
            })
            .expect("the migration in the trace");
        EventRef::new(EventKind::Memcpy, i)
    };
    {
        let app = h.state();
        let d = app.tab().document.as_ref().unwrap();
        let palette = Palette::dark();
        let mut view = ViewState::new(d.trace.first_ns, d.trace.last_ns, &d.model);
        let len = end - start;
        view.start_ns = (start - len) as f64;
        view.end_ns = (end + len) as f64;
        let rect = app.tab().timeline.last_event_area;
        let frame = build_shapes(&d.trace, &d.model, &view, rect, &palette);
        let row = d.model.row_of_event(&d.trace, event).expect("stream row");
        let p = frame
            .rows
            .iter()
            .find(|p| p.row == row)
            .expect("stream row shown");
        let fill_in_row = |color| {
            frame
                .shapes
                .iter()
                .filter(|s| match s {
                    Shape::Rect(r) => {
                        r.fill == color
                            && r.rect.top() >= p.top
                            && r.rect.bottom() <= p.top + p.height
                    }
                    _ => false,
                })
                .count()
        };
        assert!(fill_in_row(palette.um_migration) >= 1);
        if other_copies == 0 {
            assert_eq!(fill_in_row(palette.memcpy_htod), 0);
            assert_eq!(fill_in_row(palette.memcpy_dtoh), 0);
        }
    }

    // Selected: the details name it.
    let label = "Unified memory migration (host to device)";
    assert!(h.query_by_label(label).is_none());
    {
        let app = h.state_mut().tab_mut();
        let d = app.document.as_ref().unwrap();
        app.timeline.reveal(&d.trace, &d.model, event);
    }
    h.step();
    h.step();
    h.get_by_label(label);
}
