//! Which Nsight Systems release's output the reports and rules copy. nsys 2023.4 and 2025.3
//! print some reports differently (their `reports/*.py` scripts and bundled SQLite differ); a
//! trace is printed as the nsys that wrote it would print it, unless the user picks a format.
//!
//! What differs, from comparing the two releases' report scripts (2023.4.4 and 2025.3.1):
//! - the seven NVTX reports (`nvtx_sum`, `nvtx_pushpop_sum`/`_trace`, `nvtx_startend_sum`,
//!   `nvtx_gpu_proj_sum`/`_trace`, `nvtx_kern_sum`) name a range
//!   `coalesce(domain, '') || ':' || coalesce(text, '')`, where 2023.4 printed the bare text in
//!   the default domain and NULL for a range without text; `nvtx_gpu_proj_trace` drops the row of
//!   GPU operations outside every range (`WHERE name IS NOT NULL`);
//! - `cuda_gpu_trace` prints `NULLIF(context, 0)` and `NULLIF(stream, 0)`;
//! - `um_cpu_page_faults_sum` adds `Source File` and `Source Line` and groups by them;
//! - the older report and rule names (`gputrace`, `gpu-starv`, …) are gone;
//! - the bundled SQLite (3.46.0, 2023.4: 3.42.0) rounds a half by the double's binary value
//!   ([`crate::analysis::rounding::sqlite_round_3_46`]).
//!
//! The six rules' scripts did not change.

use crate::trace::Trace;

/// The Nsight Systems release whose `nsys stats` / `nsys analyze` output is copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum NsysFormat {
    /// Nsight Systems 2023.4 (its 2023.4.4 scripts, SQLite 3.42).
    #[default]
    V2023_4,
    /// Nsight Systems 2025.3 (its 2025.3.1 scripts, SQLite 3.46).
    V2025_3,
}

impl NsysFormat {
    /// Every format, oldest first.
    pub const ALL: [NsysFormat; 2] = [NsysFormat::V2023_4, NsysFormat::V2025_3];

    /// The release as users write it: `2023.4`.
    pub fn label(self) -> &'static str {
        match self {
            NsysFormat::V2023_4 => "2023.4",
            NsysFormat::V2025_3 => "2025.3",
        }
    }

    /// `2023.4` or `2025.3` (as `--nsys-format` takes them).
    pub fn parse(text: &str) -> Result<NsysFormat, String> {
        let text = text.trim();
        Self::ALL
            .into_iter()
            .find(|f| f.label() == text)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|f| f.label()).collect();
                format!(
                    "unknown Nsight Systems format '{text}' (known: {})",
                    known.join(", ")
                )
            })
    }

    /// The newest format not newer than the nsys that wrote the export (`2025.3.2.0`): 2023.4
    /// up to 2025.2, 2025.3 from 2025.3 on; 2023.4 when the version is unknown.
    pub fn for_writer(version: Option<&str>) -> NsysFormat {
        let Some((year, release)) = version.and_then(year_and_release) else {
            return NsysFormat::V2023_4;
        };
        if (year, release) >= (2025, 3) {
            NsysFormat::V2025_3
        } else {
            NsysFormat::V2023_4
        }
    }

    /// The default for a trace: [`NsysFormat::for_writer`] of its exporter's version.
    pub fn of_trace(trace: &Trace) -> NsysFormat {
        Self::for_writer(trace.exporter_version.as_deref())
    }

    /// The default for comparing traces: the newest of their defaults, so that both runs name
    /// their NVTX ranges alike and print as the newer nsys the user has.
    pub fn of_traces(traces: &[&Trace]) -> NsysFormat {
        traces
            .iter()
            .map(|t| Self::of_trace(t))
            .max()
            .unwrap_or_default()
    }

    /// SQLite's `round(x, digits)` as this release's bundled SQLite computes it.
    pub fn round(self, x: f64, digits: i32) -> f64 {
        match self {
            NsysFormat::V2023_4 => super::rounding::sqlite_round(x, digits),
            NsysFormat::V2025_3 => super::rounding::sqlite_round_3_46(x, digits),
        }
    }

    /// Does this release still take the older report and rule names (`gputrace`, `gpu-starv`)?
    pub fn knows_older_names(self) -> bool {
        self == NsysFormat::V2023_4
    }
}

impl std::fmt::Display for NsysFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl std::str::FromStr for NsysFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// `2025.3.2.0` → (2025, 3); `None` for anything else.
fn year_and_release(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.trim().split('.');
    let year = parts.next()?.trim().parse().ok()?;
    let release = parts.next()?.trim().parse().ok()?;
    Some((year, release))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_newest_format_not_newer_than_the_writer() {
        let f = |v: &str| NsysFormat::for_writer(Some(v));
        assert_eq!(f("2022.4.2.1"), NsysFormat::V2023_4);
        assert_eq!(f("2023.4.4.54"), NsysFormat::V2023_4);
        assert_eq!(f("2025.1.1.110"), NsysFormat::V2023_4);
        assert_eq!(f("2025.2.9"), NsysFormat::V2023_4);
        assert_eq!(f("2025.3.2.0"), NsysFormat::V2025_3);
        assert_eq!(f("2025.5.1"), NsysFormat::V2025_3);
        assert_eq!(f("2026.2.1.210"), NsysFormat::V2025_3);
        assert_eq!(f("unknown"), NsysFormat::V2023_4);
        assert_eq!(NsysFormat::for_writer(None), NsysFormat::V2023_4);
    }

    #[test]
    fn parses_the_labels_it_prints() {
        for f in NsysFormat::ALL {
            assert_eq!(NsysFormat::parse(f.label()), Ok(f));
        }
        assert!(NsysFormat::parse("2024.1").is_err());
    }
}
