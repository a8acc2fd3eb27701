//! The GPU idle time the report's findings explain, each idle nanosecond counted once
//! ([`super::findings`] says which finding points where and in which order they take it).
//!
//! Idle time is every interval inside a GPU's active span where none of its operations ran —
//! [`analysis::gpu_idle_gaps`] with no minimum length, so their sum is the GPU figures'
//! `idle_ns` (active span less busy time). A finding's rows point at spans of time on some GPUs
//! ([`Pointer`]); the finding takes the idle time still unexplained inside them, and what it
//! took is no longer there for the findings after it. So the findings' lost time adds up to at
//! most the GPUs' idle time, whatever their rows overlap.

use std::collections::BTreeMap;

use crate::analysis::intervals::{self, Interval};
use crate::analysis::{self, Filter, GapOptions};
use crate::trace::Trace;

/// Where one row of a finding points: spans of time (a call and its operation, a gap, a
/// low-utilisation region) on these GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Pointer {
    pub devices: Vec<u32>,
    pub spans: Vec<Interval>,
}

/// The GPU idle time no finding has explained yet: per device, disjoint intervals in order.
#[derive(Debug, Clone, Default)]
pub struct IdleLeft {
    by_device: BTreeMap<u32, Vec<Interval>>,
}

impl IdleLeft {
    /// Every idle interval of every GPU in the filter's range (inside its active span, excluded
    /// time left out, as the GPU figures measure it).
    pub fn of(trace: &Trace, filter: &Filter) -> Self {
        let options = GapOptions {
            min_ns: 1,
            ..GapOptions::default()
        };
        let mut by_device: BTreeMap<u32, Vec<Interval>> = BTreeMap::new();
        for g in analysis::gpu_idle_gaps(trace, filter, &options) {
            by_device
                .entry(g.device)
                .or_default()
                .push((g.start_ns, g.end_ns));
        }
        Self::from_intervals(by_device)
    }

    /// From idle intervals per device (any order, overlaps merged).
    pub fn from_intervals(by_device: BTreeMap<u32, Vec<Interval>>) -> Self {
        IdleLeft {
            by_device: by_device
                .into_iter()
                .map(|(d, v)| (d, intervals::union(v)))
                .collect(),
        }
    }

    /// The devices with idle time (left or taken).
    pub fn devices(&self) -> Vec<u32> {
        self.by_device.keys().copied().collect()
    }

    /// Idle time not yet explained, all GPUs together.
    pub fn total_ns(&self) -> i64 {
        self.by_device
            .values()
            .map(|v| intervals::total_ns(v))
            .sum()
    }

    /// Idle time left inside `p`'s spans (each instant once per GPU), without taking it.
    pub fn inside(&self, p: &Pointer) -> i64 {
        let spans = intervals::union(p.spans.clone());
        p.devices
            .iter()
            .filter_map(|d| self.by_device.get(d))
            .map(|left| spans.iter().map(|&s| overlap_ns(left, s)).sum::<i64>())
            .sum()
    }

    /// Takes the idle time left inside the spans of every pointer, and says how much it was.
    pub fn take(&mut self, pointers: &[Pointer]) -> i64 {
        let mut taken = 0;
        for (device, left) in &mut self.by_device {
            let spans: Vec<Interval> = pointers
                .iter()
                .filter(|p| p.devices.contains(device))
                .flat_map(|p| p.spans.iter().copied())
                .collect();
            if spans.is_empty() {
                continue;
            }
            let spans = intervals::union(spans);
            taken += intervals::total_ns(&intervals::intersect(left, &spans));
            *left = intervals::subtract(left, &spans);
        }
        taken
    }
}

/// |`left` ∩ `span`| for disjoint, ordered `left`.
fn overlap_ns(left: &[Interval], span: Interval) -> i64 {
    let first = left.partition_point(|&(_, end)| end <= span.0);
    left[first..]
        .iter()
        .take_while(|&&(start, _)| start < span.1)
        .map(|&(start, end)| end.min(span.1) - start.max(span.0))
        .filter(|&d| d > 0)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(device_intervals: &[(u32, Interval)]) -> IdleLeft {
        let mut by_device: BTreeMap<u32, Vec<Interval>> = BTreeMap::new();
        for &(d, i) in device_intervals {
            by_device.entry(d).or_default().push(i);
        }
        IdleLeft::from_intervals(by_device)
    }

    fn on(devices: &[u32], spans: &[Interval]) -> Pointer {
        Pointer {
            devices: devices.to_vec(),
            spans: spans.to_vec(),
        }
    }

    #[test]
    fn each_idle_instant_is_taken_once() {
        // GPU 0 idle [10,20) and [30,40); GPU 1 idle [0,100).
        let mut left = idle(&[(0, (10, 20)), (0, (30, 40)), (1, (0, 100))]);
        assert_eq!(left.total_ns(), 120);
        // A region over both gaps of GPU 0 and busy time: only the idle part counts.
        let region = on(&[0], &[(0, 50)]);
        assert_eq!(left.inside(&region), 20);
        // Two rows overlapping each other count their common idle time once.
        let rows = [on(&[0], &[(12, 18)]), on(&[0], &[(15, 35)])];
        assert_eq!(left.take(&rows), 8 + 5);
        // What is taken is gone for the next finding.
        assert_eq!(left.take(&[region]), 20 - 13);
        assert_eq!(left.inside(&on(&[0], &[(0, 50)])), 0);
        // A call pointing at both GPUs, and a span given twice.
        assert_eq!(left.take(&[on(&[0, 1], &[(90, 110), (95, 105)])]), 10);
        assert_eq!(left.total_ns(), 90);
    }

    #[test]
    fn overlap_of_a_span_with_ordered_intervals() {
        let left = [(0, 10), (20, 30), (40, 50)];
        assert_eq!(overlap_ns(&left, (5, 45)), 5 + 10 + 5);
        assert_eq!(overlap_ns(&left, (10, 20)), 0);
        assert_eq!(overlap_ns(&left, (60, 70)), 0);
        assert_eq!(overlap_ns(&[], (0, 1)), 0);
    }
}
