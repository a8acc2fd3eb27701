//! The architectures a section's entry is meant for, as its filter names them (SM versions:
//! 90 for compute capability 9.0), read as ncu 2025.3 reads them.

use super::messages as msg;

/// The architectures a section filter can name: the values of Nsight Compute's `GpuArch` enum
/// (`CC_53` … `CC_121`, as NVIDIA's reader 2026.3.1 holds it). Compute capability 10.1 is not
/// one: CUDA 13 renamed it 11.0, and ncu 2025.3 reads a stored `101` as protobuf 2 reads an enum
/// value it does not know, as no bound at all. So ncu 2025.1's `mcc__` metrics, filtered to 8.7
/// and 10.1, are shown by ncu 2025.3.1 on every GPU (`n/a` where the report lacks them).
const GPU_ARCHS: [u32; 19] = [
    53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121,
];

/// A filter's ranges of architectures (an open end: 0 or `u32::MAX`); a bound that names no
/// architecture ncu knows is open, and a listed range with neither bound takes in every one.
pub fn arch_ranges(filter: &Option<msg::ArchFilter>) -> Vec<(u32, u32)> {
    let Some(f) = filter else {
        return Vec::new();
    };
    let known = |a: Option<u32>| a.filter(|a| GPU_ARCHS.contains(a));
    let range = |lo: Option<u32>, hi: Option<u32>| {
        let (lo, hi) = (known(lo), known(hi));
        (lo.is_some() || hi.is_some()).then(|| (lo.unwrap_or(0), hi.unwrap_or(u32::MAX)))
    };
    range(f.min_arch, f.max_arch)
        .into_iter()
        .chain(
            f.ranges
                .iter()
                .map(|r| range(r.min_arch, r.max_arch).unwrap_or((0, u32::MAX))),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(top: (Option<u32>, Option<u32>), ranges: &[(u32, u32)]) -> Option<msg::ArchFilter> {
        Some(msg::ArchFilter {
            min_arch: top.0,
            max_arch: top.1,
            ranges: ranges
                .iter()
                .map(|&(lo, hi)| msg::ArchRange {
                    min_arch: Some(lo),
                    max_arch: Some(hi),
                })
                .collect(),
            scopes: None,
        })
    }

    #[test]
    fn a_bound_ncu_does_not_know_is_open() {
        // ncu 2025.1's `mcc__` cycles: Orin and Thor, Thor as 10.1.
        assert_eq!(
            arch_ranges(&filter((None, None), &[(87, 87), (101, 101)])),
            [(87, 87), (0, u32::MAX)]
        );
        // ncu 2025.3's: Thor as 11.0.
        assert_eq!(
            arch_ranges(&filter((None, None), &[(87, 87), (110, 110)])),
            [(87, 87), (110, 110)]
        );
        assert_eq!(
            arch_ranges(&filter((Some(75), None), &[])),
            [(75, u32::MAX)]
        );
        assert_eq!(arch_ranges(&filter((Some(101), None), &[])), []);
        assert_eq!(arch_ranges(&None), []);
    }

    /// A body item's own filter (field 200), as ncu 2025's Occupancy section gives its "Impact
    /// of Varying Block Barriers" chart (`Filter { MinArch: CC_90 }`): the chart is for SM 9.0
    /// and later, and ncu leaves it out of an older GPU's page.
    #[test]
    fn a_body_items_filter_is_read() {
        use prost::Message;
        let chart = msg::SectionBodyItem {
            line_chart: Some(msg::SectionLineChart {
                label: Some("Impact of Varying Block Barriers".into()),
                ..Default::default()
            }),
            filter: filter((Some(90), None), &[]),
            ..Default::default()
        };
        let read = msg::SectionBodyItem::decode(chart.encode_to_vec().as_slice()).unwrap();
        let items = super::super::convert::body_items(&read);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].archs, [(90, u32::MAX)]);
        assert!(!items[0].is_for(Some(75)));
        assert!(items[0].is_for(Some(90)) && items[0].is_for(Some(120)) && items[0].is_for(None));
    }
}
