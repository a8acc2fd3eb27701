//! GPU metric counter rows driven through `egui_kittest`: the Metrics group starts collapsed under
//! its GPU, expanding it shows one row per metric, and hovering the SM Active row shows the value
//! and time of the sample nearest the pointer, as the file itself says (read here with SQL).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::opened;

use egui::Pos2;
use egui_kittest::kittest::Queryable;
use rusqlite::{Connection, OpenFlags};
use sightline::ui::timeline::{GroupId, RowKind, TimeToX, format_duration};

#[test]
fn hovering_a_counter_row_shows_the_sample_its_pixel_is_drawn_from() {
    let mut h = opened("gpu_metrics");
    h.ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
    let (metric_rows, sm_active) = {
        let app = h.state();
        let trace = app.trace().expect("trace");
        let model = &app.tab().document.as_ref().expect("document").model;
        assert!(
            app.tab()
                .timeline
                .view
                .collapsed
                .contains(&GroupId::GpuMetrics(0))
        );
        let sm_active = trace
            .gpu_metrics
            .series
            .iter()
            .position(|s| s.name == "SM Active")
            .expect("SM Active series");
        let rows = model
            .rows
            .iter()
            .filter(|r| matches!(r.kind, RowKind::GpuMetric { .. }))
            .count();
        (rows, sm_active)
    };
    // 11 metrics in the file, one row each.
    assert_eq!(metric_rows, 11);
    let row_kind = RowKind::GpuMetric { series: sm_active };
    let shown = |h: &egui_kittest::Harness<'static, sightline::ui::SightlineApp>| {
        let app = h.state();
        let model = &app.tab().document.as_ref().expect("document").model;
        let row = model.row_index(row_kind).expect("row");
        app.tab()
            .timeline
            .last_rows
            .iter()
            .find(|p| p.row == row)
            .copied()
    };
    assert!(shown(&h).is_none(), "collapsed at first");

    h.state_mut()
        .tab_mut()
        .timeline
        .view
        .collapsed
        .remove(&GroupId::GpuMetrics(0));
    h.step();
    h.step();
    let placement = shown(&h).expect("SM Active row shown once expanded");
    assert!(h.query_by_label("Value").is_none(), "no tooltip yet");

    // The pointer over the middle of the kernels' stretch (523–665 ms), in the row.
    let app = h.state();
    let area = app.tab().timeline.last_event_area;
    let map = TimeToX::new(&app.tab().timeline.view, area.left(), area.width());
    let x = map.x(600_000_000).round();
    let pos = Pos2::new(x, placement.top + placement.height / 2.0);
    let t_ns = map.t(x).round() as i64;
    h.hover_at(pos);
    h.step();
    h.step();

    // The sample the pixel column under the pointer is drawn from, from the file: the nearest
    // to the pointer's time among the column's samples, else the next sample after it.
    let conn = Connection::open_with_flags(
        common::fixture("gpu_metrics"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open");
    let (c0, c1) = (
        map.t(x.floor()).ceil() as i64,
        map.t(x.floor() + 1.0).ceil() as i64,
    );
    let sm_active = "SELECT rawTimestamp t, CAST(json_extract(data, '$.\"SM Active\"') AS \
                     INTEGER) v FROM GENERIC_EVENTS WHERE v IS NOT NULL";
    let (sample_ns, value): (i64, i64) = conn
        .query_row(
            &format!(
                "SELECT t, v FROM ({sm_active}) WHERE t >= ?2 AND t < ?3 \
                 ORDER BY abs(t - ?1), t LIMIT 1"
            ),
            [t_ns, c0, c1],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .or_else(|_| {
            conn.query_row(
                &format!("SELECT t, v FROM ({sm_active}) WHERE t >= ?1 ORDER BY t LIMIT 1"),
                [c1],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })
        .expect("the column's sample");
    h.get_by_label("Value");
    h.get_by_label("SM Active");
    h.get_by_label(&format!("{value} %"));
    h.get_by_label(&format_duration(sample_ns as f64));
    // The value lies in the band the pixel column under the pointer is drawn with: the min and
    // max of the samples in that column, from the file.
    let (n, lo, hi): (i64, Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT count(*), min(v), max(v) FROM (SELECT              CAST(json_extract(data, '$.\"SM Active\"') AS INTEGER) v FROM GENERIC_EVENTS              WHERE rawTimestamp >= ?1 AND rawTimestamp < ?2 AND v IS NOT NULL)",
            [c0, c1],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("column band");
    if n > 0 {
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(
            (lo..=hi).contains(&value),
            "value {value} outside the pixel's {lo}..{hi} ({n} samples)"
        );
    }
}
