//! GPU metric counters (`nsys profile --gpu-metrics-device=…`): periodic samples of hardware
//! counters per GPU (SM Active, DRAM bandwidth, clocks, …). One [`GpuMetricSeries`] per (GPU,
//! metric), times ascending, values as plain numbers; no per-sample strings. Each series keeps
//! prefix sums (an average over any time range in O(log n)) and a min/max pyramid (min and max
//! over any sample range in O(log n)), so the timeline and the panel never walk the raw samples.

use std::ops::Range;

/// How many entries of one pyramid level make one entry of the next.
const FAN_OUT: usize = 16;

/// Count, sum, min and max of the samples of one series in a time range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricStats {
    pub samples: usize,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl MetricStats {
    pub fn average(&self) -> f64 {
        self.sum / self.samples.max(1) as f64
    }
}

/// The samples of one metric on one GPU.
#[derive(Debug, Clone, Default)]
pub struct GpuMetricSeries {
    /// CUDA device id of the GPU (as [`super::GpuInfo::device`]).
    pub device: u32,
    /// The metric's name as the export writes it ("SM Active [Throughput %]" from 2023.4,
    /// "SM Active" in the 2022.x JSON form).
    pub name: String,
    /// The name without its bracketed unit ("SM Active").
    pub title: String,
    /// The unit of the stored values when known ("%", "Hz", "warps/cycle").
    pub unit: Option<String>,
    /// Sample times, ns from the session start, ascending.
    pub time_ns: Vec<i64>,
    pub value: Vec<f64>,
    /// `prefix_sum[i]` = sum of `value[..i]`; one longer than `value`.
    prefix_sum: Vec<f64>,
    /// Level `l` holds (min, max) of blocks of `FAN_OUT^(l+1)` samples.
    pyramid: Vec<Vec<(f64, f64)>>,
}

impl GpuMetricSeries {
    /// A series from samples in any order (sorted here by time, stably); the unit is read from
    /// the name ([`split_unit`]).
    pub fn new(device: u32, name: String, samples: Vec<(i64, f64)>) -> Self {
        let (title, unit) = split_unit(&name);
        let mut samples = samples;
        if !samples.is_sorted_by_key(|s| s.0) {
            samples.sort_by_key(|s| s.0);
        }
        let (time_ns, value): (Vec<i64>, Vec<f64>) = samples.into_iter().unzip();
        let mut prefix_sum = Vec::with_capacity(value.len() + 1);
        let mut sum = 0.0;
        prefix_sum.push(sum);
        for v in &value {
            sum += v;
            prefix_sum.push(sum);
        }
        let mut pyramid: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut below: Vec<(f64, f64)> = value.iter().map(|&v| (v, v)).collect();
        while below.len() > FAN_OUT {
            let level: Vec<(f64, f64)> = below
                .chunks(FAN_OUT)
                .map(|c| {
                    c.iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(a, b)| {
                            (lo.min(a), hi.max(b))
                        })
                })
                .collect();
            pyramid.push(level.clone());
            below = level;
        }
        Self {
            device,
            name,
            title,
            unit,
            time_ns,
            value,
            prefix_sum,
            pyramid,
        }
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// A value with its unit: "42 %", "1.41 GHz", "8.5 warps/cycle".
    pub fn format_value(&self, value: f64) -> String {
        match self.unit.as_deref() {
            Some("Hz") => {
                let (scaled, prefix) = if value.abs() >= 1e9 {
                    (value / 1e9, "G")
                } else if value.abs() >= 1e6 {
                    (value / 1e6, "M")
                } else if value.abs() >= 1e3 {
                    (value / 1e3, "k")
                } else {
                    (value, "")
                };
                format!("{} {prefix}Hz", trim_number(scaled))
            }
            Some(unit) => format!("{} {unit}", trim_number(value)),
            None => trim_number(value),
        }
    }

    /// The samples whose time lies in `[start_ns, end_ns)`.
    pub fn samples_in(&self, start_ns: i64, end_ns: i64) -> Range<usize> {
        let a = self.time_ns.partition_point(|&t| t < start_ns);
        let b = self.time_ns.partition_point(|&t| t < end_ns).max(a);
        a..b
    }

    /// Sum of the values of a sample range, from the prefix sums.
    pub fn sum_of(&self, samples: Range<usize>) -> f64 {
        let (a, b) = (samples.start.min(self.len()), samples.end.min(self.len()));
        if a >= b {
            return 0.0;
        }
        self.prefix_sum[b] - self.prefix_sum[a]
    }

    /// Min and max of the values of a sample range, from the pyramid; `None` when empty.
    pub fn min_max_of(&self, samples: Range<usize>) -> Option<(f64, f64)> {
        let (mut a, b) = (samples.start, samples.end.min(self.len()));
        if a >= b {
            return None;
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        while a < b {
            // The highest level whose block starts at `a` and ends by `b`.
            let mut step = 1;
            let mut block = (self.value[a], self.value[a]);
            let mut size = FAN_OUT;
            for level in &self.pyramid {
                if a % size != 0 || a + size > b {
                    break;
                }
                block = level[a / size];
                step = size;
                size *= FAN_OUT;
            }
            lo = lo.min(block.0);
            hi = hi.max(block.1);
            a += step;
        }
        Some((lo, hi))
    }

    /// Count, sum, min and max of the samples in `[start_ns, end_ns)`; `None` when there are none.
    pub fn stats(&self, start_ns: i64, end_ns: i64) -> Option<MetricStats> {
        let r = self.samples_in(start_ns, end_ns);
        let (min, max) = self.min_max_of(r.clone())?;
        Some(MetricStats {
            samples: r.len(),
            sum: self.sum_of(r),
            min,
            max,
        })
    }

    /// The sample nearest to `t_ns`, as its index.
    pub fn nearest(&self, t_ns: i64) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        let i = self.time_ns.partition_point(|&t| t < t_ns);
        if i == 0 {
            return Some(0);
        }
        if i == self.len() {
            return Some(i - 1);
        }
        Some(if t_ns - self.time_ns[i - 1] <= self.time_ns[i] - t_ns {
            i - 1
        } else {
            i
        })
    }
}

/// Every GPU metric series of a trace, ordered by (device, metric name).
#[derive(Debug, Clone, Default)]
pub struct GpuMetrics {
    pub series: Vec<GpuMetricSeries>,
}

impl GpuMetrics {
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(GpuMetricSeries::is_empty)
    }

    /// Total samples of all series.
    pub fn sample_count(&self) -> usize {
        self.series.iter().map(GpuMetricSeries::len).sum()
    }

    /// The series of one GPU, in name order.
    pub fn of_device(&self, device: u32) -> impl Iterator<Item = (usize, &GpuMetricSeries)> {
        self.series
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.device == device)
    }

    /// Devices that have metrics, ascending.
    pub fn devices(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.series.iter().map(|s| s.device).collect();
        d.dedup();
        d
    }
}

/// Up to three decimals, trailing zeros dropped: "42", "1.41", "8.517".
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Splits a metric name into its title and the unit of its stored values.
///
/// nsys 2023.4+ names carry the unit in brackets: "SM Active [Throughput %]" → "%";
/// "GPC Clock Frequency [MHz]" → "Hz", because the values stored under that name are in Hz
/// (825000250 for an H200's 825 MHz SYS clock in tests/fixtures/gpu_metrics_2023.sqlite);
/// "[Avg Warps per Cycle]" → "warps/cycle"; "[Avg]" (raw accumulations in the 1e8 range) has no
/// unit we can name. A name with no brackets (the 2022.x JSON form) gets the unit of its metric
/// set: clocks in Hz (2022.4 stores about 1.4e9 for `GPC Clock Frequency`), everything else a
/// percentage of peak (the 2022.4 user guide: "Values are integer percentages (0..100)").
pub fn split_unit(metric: &str) -> (String, Option<String>) {
    let metric = metric.trim();
    if let Some(open) = metric.rfind(" [")
        && let Some(inner) = metric[open + 2..].strip_suffix(']')
    {
        let unit = match inner.trim() {
            "Throughput %" | "%" => Some("%"),
            "MHz" | "Hz" => Some("Hz"),
            "Avg Warps per Cycle" => Some("warps/cycle"),
            _ => None,
        };
        return (metric[..open].to_string(), unit.map(str::to_string));
    }
    let unit = if metric.ends_with("Frequency") {
        "Hz"
    } else {
        "%"
    };
    (metric.to_string(), Some(unit.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> GpuMetricSeries {
        let samples = values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as i64 * 10, v))
            .collect();
        GpuMetricSeries::new(0, "m".into(), samples)
    }

    #[test]
    fn min_max_and_sums_match_brute_force() {
        // A deterministic jumble, long enough for three pyramid levels.
        let values: Vec<f64> = (0..5000u64)
            .map(|i| ((i * 7919 + 13) % 1009) as f64 - 300.0)
            .collect();
        let s = series(&values);
        for (a, b) in [
            (0, 5000),
            (1, 4999),
            (17, 18),
            (256, 4096),
            (255, 4097),
            (3, 3),
        ] {
            let brute = values[a..b]
                .iter()
                .fold(None, |acc: Option<(f64, f64)>, &v| {
                    Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
                });
            assert_eq!(s.min_max_of(a..b), brute, "{a}..{b}");
            let sum: f64 = values[a..b].iter().sum();
            assert!((s.sum_of(a..b) - sum).abs() < 1e-6);
        }
    }

    #[test]
    fn time_ranges_are_half_open_and_nearest_picks_closest() {
        let s = series(&[1.0, 2.0, 3.0, 4.0]); // at 0, 10, 20, 30 ns
        assert_eq!(s.samples_in(10, 30), 1..3);
        let st = s.stats(10, 30).map(|m| (m.samples, m.sum, m.min, m.max));
        assert_eq!(st, Some((2, 5.0, 2.0, 3.0)));
        assert_eq!(s.stats(31, 40), None);
        assert_eq!(s.nearest(14), Some(1));
        assert_eq!(s.nearest(16), Some(2));
        assert_eq!(s.nearest(-5), Some(0));
        assert_eq!(s.nearest(99), Some(3));
    }

    #[test]
    fn units_come_from_the_name_or_the_metric() {
        assert_eq!(
            split_unit("SM Active [Throughput %]"),
            ("SM Active".to_string(), Some("%".to_string()))
        );
        assert_eq!(
            split_unit("GPC Clock Frequency [MHz]"),
            ("GPC Clock Frequency".to_string(), Some("Hz".to_string()))
        );
        assert_eq!(split_unit("Compute Warps in Flight [Avg]").1, None);
        assert_eq!(split_unit("SYS Clock Frequency").1.as_deref(), Some("Hz"));
        assert_eq!(split_unit("Tensor Active").1.as_deref(), Some("%"));
    }

    #[test]
    fn values_print_with_their_unit() {
        let s = GpuMetricSeries::new(0, "SYS Clock Frequency [MHz]".into(), vec![]);
        assert_eq!(s.format_value(825_000_250.0), "825 MHz");
        assert_eq!(s.format_value(1_410_000_000.0), "1.41 GHz");
        let s = GpuMetricSeries::new(0, "SM Active [Throughput %]".into(), vec![]);
        assert_eq!(s.format_value(42.0), "42 %");
        assert_eq!(s.format_value(8.25), "8.25 %");
    }
}
