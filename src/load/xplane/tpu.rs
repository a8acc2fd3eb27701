//! A TPU's plane (`/device:TPU:N`): its lines are the device's own timeline — `XLA Modules`,
//! `XLA Ops`, `XLA TraceMe`, `Host Offload Ops row N`, … as XProf's trace viewer lists them —
//! and become range rows of the device (GPU-annotation ranges of its lane, one row per line,
//! titled by the line), under a device header named by the plane's `device_type_string`
//! (`TPU v6 Lite`). A TPU runs no CUDA kernels: its ops are these ranges.

use super::build::{ps_to_ns, times_ps};
use super::proto::XPlane;
use super::stats::StatNames;
use crate::trace::{DeviceKind, GpuInfo, NvtxRanges, NvtxStyle, RangeKind, StringTable};

/// Reads TPU `device`'s plane into `ranges` on lane `lane_tid`; returns the events read and
/// the device.
pub fn read_tpu_plane(
    plane: &XPlane,
    device: u32,
    lane_tid: i64,
    strings: &mut StringTable,
    ranges: &mut NvtxRanges,
) -> (u64, GpuInfo) {
    let names = StatNames::new(plane);
    let device_type = names.id("device_type_string").and_then(|id| {
        plane
            .stats
            .iter()
            .find(|s| s.metadata_id == id)
            .map(|s| names.text(s).to_string())
    });
    let mut events = 0u64;
    let mut level = 0u16;
    for line in &plane.lines {
        let title = if line.display_name.is_empty() {
            &line.name
        } else {
            &line.display_name
        };
        let domain = strings.intern(title);
        let mut any = false;
        for event in &line.events {
            events += 1;
            let Some((start_ps, end_ps)) = times_ps(line, event) else {
                continue;
            };
            let name = plane
                .event_metadata
                .get(&event.metadata_id)
                .map_or("", |m| {
                    if m.display_name.is_empty() {
                        m.name.as_str()
                    } else {
                        m.display_name.as_str()
                    }
                });
            ranges
                .spans
                .push(ps_to_ns(start_ps), ps_to_ns(end_ps), strings.intern(name));
            ranges.domain.push(domain);
            ranges.color_argb.push(0);
            ranges.style.push(NvtxStyle::PushPop);
            ranges.depth.push(level);
            ranges.global_tid.push(lane_tid);
            ranges.unclosed.push(false);
            ranges.ended_on_other_thread.push(false);
            ranges.kind.push(RangeKind::GpuAnnotation);
            ranges.external_id.push(0);
            ranges.input_shapes.push(StringTable::EMPTY);
            any = true;
        }
        if any {
            level = level.saturating_add(1);
        }
    }
    let gpu = GpuInfo {
        device,
        name: device_type.unwrap_or_else(|| plane.name.clone()),
        kind: DeviceKind::Tpu,
        ..Default::default()
    };
    (events, gpu)
}
