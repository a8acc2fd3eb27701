//! ncu's own CSV pages of an Nsight Compute report, byte for byte as
//! `ncu --import REPORT --csv` prints them: the raw page (`--page raw`), the details page
//! (`--page details --print-details all`) and the per-kernel summary (`--print-summary
//! per-kernel`), in auto or base units (`--print-units base`). `sightline summary REPORT
//! --report ncu_raw --format csv` prints them. The details page also prints as ncu prints it
//! for a terminal ([`details_text`]).

use std::io::{self, Write};

use crate::trace::ncu::NcuReport;

pub mod details;
pub mod details_text;
pub mod format;
pub mod names;
pub mod nvtx;
pub mod raw;
pub mod source;
pub mod source_cuda;
pub mod summary;

/// `--print-units`: ncu scales units by default (`auto`); `base` prints every value in its
/// metric's base unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum UnitMode {
    #[default]
    Auto,
    Base,
}

impl UnitMode {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(UnitMode::Auto),
            "base" => Ok(UnitMode::Base),
            other => Err(format!("--print-units: '{other}' is not auto or base")),
        }
    }
}

/// One of ncu's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcuPage {
    Raw,
    Details,
    Summary,
}

impl NcuPage {
    /// The page a `--report` name asks for (`ncu_raw`, `ncu_details`, `ncu_summary`).
    pub fn from_report_name(name: &str) -> Option<Self> {
        match name {
            "ncu_raw" => Some(NcuPage::Raw),
            "ncu_details" => Some(NcuPage::Details),
            "ncu_summary" => Some(NcuPage::Summary),
            _ => None,
        }
    }

    pub const NAMES: [&'static str; 3] = ["ncu_raw", "ncu_details", "ncu_summary"];
}

/// Writes one page of a report, as CSV; the details page only for the workloads `ids` names
/// (all when `None`).
pub fn write_page(
    report: &NcuReport,
    page: NcuPage,
    mode: UnitMode,
    ids: Option<&[u32]>,
    out: &mut dyn Write,
) -> io::Result<()> {
    match page {
        NcuPage::Raw => raw::write(report, mode, out),
        NcuPage::Details => details::write(report, mode, ids, out),
        NcuPage::Summary => summary::write(report, mode, out),
    }
}

/// One CSV row as ncu writes it: every field quoted, quotes doubled, `\n` at the end.
pub fn write_row<S: AsRef<str>>(out: &mut dyn Write, cells: &[S]) -> io::Result<()> {
    let mut line = String::with_capacity(cells.len() * 12);
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push('"');
        line.push_str(&c.as_ref().replace('"', "\"\""));
        line.push('"');
    }
    line.push('\n');
    out.write_all(line.as_bytes())
}
