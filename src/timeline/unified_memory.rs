//! Unified memory in the timeline: a "Unified memory" row under each process with CPU page faults
//! (`CUDA_UM_CPU_PAGE_FAULT_EVENTS`, one mark per fault) and under each GPU with GPU page faults
//! (`CUDA_UM_GPU_PAGE_FAULT_EVENTS`, one range per fault group), the hit test that makes a fault
//! hoverable and selectable like any event, and the names of the migrations (memcpy copyKind
//! 11–13) that the window shows.
//!
//! The fault tables are in file order, not grouped by process or device, so each row keeps its
//! faults' indices sorted by start with a [`SpanIndex`] over them: drawing and hit testing walk
//! only what is in view, and faults closer than a pixel come out merged, as on every other row.

use std::collections::BTreeMap;

use egui::{Rect, Shape};

use super::navigation::TimeToX;
use super::rows::{EventKind, EventRef, GroupId, Row, RowKind};
use crate::index::{LodItem, SpanIndex};
use crate::timeline::palette::Palette;
use crate::trace::{CopyKind, Spans, Trace, pid_of};

/// Title of the unified-memory rows, as nsys-ui names them.
pub const ROW_TITLE: &str = "Unified memory";
/// Width of a CPU page fault's mark (an instant).
const INSTANT_MARK_PX: f32 = 2.0;
/// Marks narrower than this that touch their neighbour are drawn as one.
const NARROW_PX: f32 = 3.0;

/// The faults of one row, sorted by start: their indices in the fault table, with copies of
/// their times for the index.
#[derive(Debug, Clone, Default)]
pub struct FaultLane {
    /// Indices into the fault table (CPU or GPU), by (start, index).
    pub faults: Vec<u32>,
    start_ns: Vec<i64>,
    end_ns: Vec<i64>,
    index: SpanIndex,
}

impl FaultLane {
    fn new(spans: &Spans, mut faults: Vec<u32>) -> Self {
        faults.sort_unstable_by_key(|&i| (spans.start_ns[i as usize], i));
        let start_ns: Vec<i64> = faults.iter().map(|&i| spans.start_ns[i as usize]).collect();
        let end_ns: Vec<i64> = faults.iter().map(|&i| spans.end_ns[i as usize]).collect();
        let index = SpanIndex::build(&start_ns, &end_ns);
        Self {
            faults,
            start_ns,
            end_ns,
            index,
        }
    }

    pub fn len(&self) -> usize {
        self.faults.len()
    }

    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }
}

/// The unified-memory rows of a trace: CPU faults per process, GPU faults per device.
#[derive(Debug, Clone, Default)]
pub struct UnifiedMemoryLanes {
    /// (pid, its CPU page faults), by pid.
    cpu: Vec<(u32, FaultLane)>,
    /// (device, its GPU page faults), by device.
    gpu: Vec<(u32, FaultLane)>,
}

impl UnifiedMemoryLanes {
    pub fn new(trace: &Trace) -> Self {
        let um = &trace.unified_memory;
        let mut cpu: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (i, &g) in um.cpu_page_faults.global_pid.iter().enumerate() {
            cpu.entry(pid_of(g)).or_default().push(i as u32);
        }
        let mut gpu: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (i, &d) in um.gpu_page_faults.device.iter().enumerate() {
            gpu.entry(u32::from(d)).or_default().push(i as u32);
        }
        Self {
            cpu: cpu
                .into_iter()
                .map(|(pid, f)| (pid, FaultLane::new(&um.cpu_page_faults.spans, f)))
                .collect(),
            gpu: gpu
                .into_iter()
                .map(|(device, f)| (device, FaultLane::new(&um.gpu_page_faults.spans, f)))
                .collect(),
        }
    }

    /// Processes with CPU page faults, ascending.
    pub fn cpu_pids(&self) -> impl Iterator<Item = u32> + '_ {
        self.cpu.iter().map(|(pid, _)| *pid)
    }

    /// The faults a row draws and their table, for the two unified-memory row kinds.
    pub fn lane(&self, kind: RowKind) -> Option<(&FaultLane, EventKind)> {
        fn find(lanes: &[(u32, FaultLane)], key: u32) -> Option<&FaultLane> {
            lanes
                .binary_search_by_key(&key, |(k, _)| *k)
                .ok()
                .map(|i| &lanes[i].1)
        }
        match kind {
            RowKind::UnifiedMemoryCpu { pid } => {
                find(&self.cpu, pid).map(|l| (l, EventKind::CpuPageFault))
            }
            RowKind::UnifiedMemoryGpu { device } => {
                find(&self.gpu, device).map(|l| (l, EventKind::GpuPageFault))
            }
            _ => None,
        }
    }

    /// The "Unified memory" row of a process, when it has CPU page faults.
    pub fn process_row(&self, pid: u32) -> Option<Row> {
        self.lane(RowKind::UnifiedMemoryCpu { pid }).map(|_| Row {
            kind: RowKind::UnifiedMemoryCpu { pid },
            title: ROW_TITLE.to_string(),
            indent: 1,
            toggles: None,
            hidden_by: vec![GroupId::Process(pid)],
            height_px: super::rows::EVENT_ROW_HEIGHT,
        })
    }

    /// The "Unified memory" row of a GPU, when it has GPU page faults.
    pub fn gpu_row(&self, device: u32) -> Option<Row> {
        self.lane(RowKind::UnifiedMemoryGpu { device })
            .map(|_| Row {
                kind: RowKind::UnifiedMemoryGpu { device },
                title: ROW_TITLE.to_string(),
                indent: 1,
                toggles: None,
                hidden_by: vec![GroupId::Gpu(device)],
                height_px: super::rows::EVENT_ROW_HEIGHT,
            })
    }
}

/// The row a fault is drawn in.
pub fn row_kind_of(trace: &Trace, event: EventRef) -> Option<RowKind> {
    let i = event.index as usize;
    let um = &trace.unified_memory;
    match event.kind {
        EventKind::CpuPageFault => Some(RowKind::UnifiedMemoryCpu {
            pid: pid_of(*um.cpu_page_faults.global_pid.get(i)?),
        }),
        EventKind::GpuPageFault => Some(RowKind::UnifiedMemoryGpu {
            device: u32::from(*um.gpu_page_faults.device.get(i)?),
        }),
        _ => None,
    }
}

/// One mark of a unified-memory row: a fault, or several too close to tell apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultMark {
    pub x0: f32,
    pub x1: f32,
    /// How many faults (rows of the fault table) the mark stands for.
    pub faults: usize,
    /// The fault, when the mark is a single one.
    pub fault: Option<EventRef>,
}

/// The marks of a unified-memory row for the window `[t0, t1)` drawn between `x_range`: one per
/// fault, blocks shorter than `merge_below_ns` merged (their count kept), and marks narrower than
/// a few pixels that touch drawn as one. Empty for any other row.
pub fn fault_marks(
    lanes: &UnifiedMemoryLanes,
    kind: RowKind,
    map: &TimeToX,
    (t0, t1): (i64, i64),
    merge_below_ns: i64,
    (left, right): (f32, f32),
) -> Vec<FaultMark> {
    let Some((lane, event_kind)) = lanes.lane(kind) else {
        return Vec::new();
    };
    let mut marks: Vec<FaultMark> = Vec::new();
    let x_span = |s: i64, e: i64| {
        if s == e {
            let x = map.x(s);
            (
                (x - INSTANT_MARK_PX / 2.0).max(left),
                (x + INSTANT_MARK_PX / 2.0).min(right),
            )
        } else {
            let x0 = map.x(s).max(left);
            (x0, map.x(e).min(right).max(x0 + 1.0))
        }
    };
    lane.index.walk(
        &lane.start_ns,
        &lane.end_ns,
        t0,
        t1,
        merge_below_ns,
        &mut |item| {
            let (x0, x1, faults, fault) = match item {
                LodItem::Event(i) => {
                    let (x0, x1) = x_span(lane.start_ns[i], lane.end_ns[i]);
                    let fault = EventRef::new(event_kind, lane.faults[i] as usize);
                    (x0, x1, 1, Some(fault))
                }
                LodItem::Merged(b) => {
                    let (x0, x1) = x_span(b.start_ns, b.max_end_ns);
                    (x0, x1.max(x0 + INSTANT_MARK_PX), b.count as usize, None)
                }
            };
            if let Some(last) = marks.last_mut()
                && x1 - x0 < NARROW_PX
                && last.x1 - last.x0 < NARROW_PX
                && x0 <= last.x1 + 0.5
            {
                last.x1 = last.x1.max(x1);
                last.faults += faults;
                last.fault = None;
                return;
            }
            marks.push(FaultMark {
                x0,
                x1,
                faults,
                fault,
            });
        },
    );
    marks
}

/// Draws a unified-memory row into `bar`; returns (single faults, merged marks) drawn.
#[allow(clippy::too_many_arguments)]
pub fn paint_row(
    lanes: &UnifiedMemoryLanes,
    kind: RowKind,
    map: &TimeToX,
    window: (i64, i64),
    merge_below_ns: i64,
    bar: Rect,
    palette: &Palette,
    shapes: &mut Vec<Shape>,
) -> (usize, usize) {
    let marks = fault_marks(
        lanes,
        kind,
        map,
        window,
        merge_below_ns,
        (bar.left(), bar.right()),
    );
    let mut single = 0;
    for m in &marks {
        if m.fault.is_some() {
            single += 1;
        }
        shapes.push(Shape::rect_filled(
            Rect::from_x_y_ranges(m.x0..=m.x1, bar.y_range()),
            0.0,
            palette.um_fault,
        ));
    }
    (single, marks.len() - single)
}

/// The fault of a unified-memory row nearest to time `t` within `tolerance_ns`: the shortest one
/// containing `t`, else the nearest (the rule of [`super::painter::event_at`]).
pub fn fault_near(
    lanes: &UnifiedMemoryLanes,
    kind: RowKind,
    t: f64,
    tolerance_ns: f64,
) -> Option<EventRef> {
    let (lane, event_kind) = lanes.lane(kind)?;
    let (t0, t1) = (
        (t - tolerance_ns).floor() as i64,
        (t + tolerance_ns).ceil() as i64 + 1,
    );
    let mut best: Option<(f64, i64, usize)> = None;
    lane.index
        .for_each_overlapping(&lane.start_ns, &lane.end_ns, t0, t1, |i| {
            let (s, e) = (lane.start_ns[i] as f64, lane.end_ns[i] as f64);
            let distance = if t >= s && t <= e {
                0.0
            } else {
                (s - t).abs().min((e - t).abs())
            };
            let duration = lane.end_ns[i] - lane.start_ns[i];
            let better = match best {
                None => true,
                Some((d, len, _)) => distance < d || (distance == d && duration < len),
            };
            if better {
                best = Some((distance, duration, i));
            }
        });
    best.map(|(_, _, i)| EventRef::new(event_kind, lane.faults[i] as usize))
}

/// What the window calls a unified-memory migration (memcpy copyKind 11–13, CUPTI's
/// `CUPTI_ACTIVITY_MEMCPY_KIND_` unified kinds), `None` for any other copy.
pub fn migration_label(kind: CopyKind) -> Option<&'static str> {
    match kind.0 {
        11 => Some("Unified memory migration (host to device)"),
        12 => Some("Unified memory migration (device to host)"),
        13 => Some("Unified memory migration (device to device)"),
        _ => None,
    }
}

/// The label of `ENUM_CUDA_UNIF_MEM_ACCESS_TYPE` (fixed since the table first appeared in
/// 2021.x exports; 2023.4.4 writes these five).
pub fn access_type_label(access_type: u8) -> String {
    match access_type {
        0 => "Unknown".to_string(),
        1 => "Read".to_string(),
        2 => "Write".to_string(),
        3 => "Atomic".to_string(),
        4 => "Prefetch".to_string(),
        other => format!("Unknown ({other})"),
    }
}

/// A page address as nsys-ui prints it: hex with the `0x` prefix.
pub fn address_text(address: u64) -> String {
    format!("{address:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_labels_cover_the_three_unified_kinds_only() {
        assert_eq!(
            migration_label(CopyKind(11)),
            Some("Unified memory migration (host to device)")
        );
        assert!(migration_label(CopyKind(12)).is_some());
        assert!(migration_label(CopyKind(13)).is_some());
        for k in [0, 1, 2, 8, 10, 14] {
            assert_eq!(migration_label(CopyKind(k)), None);
        }
        assert_eq!(address_text(0x7fa6_4000_0000), "0x7fa640000000");
        assert_eq!(access_type_label(2), "Write");
        assert_eq!(access_type_label(9), "Unknown (9)");
    }
}
