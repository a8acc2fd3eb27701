//! What the panel's analyses produce and keep: the warm-up exclusion cache, the gaps, overlap and
//! findings of the selection, and the chosen statistics row.

use super::*;

#[derive(Default)]
pub(super) struct ExclusionCache {
    /// (trace generation, the rules in force or `None` when the toggle is off).
    pub(super) key: Option<(u64, Option<WarmupSettings>)>,
    pub(super) result: Option<Arc<WarmupExclusion>>,
    /// Bumped whenever `result` is replaced.
    pub(super) generation: u64,
    /// The lines the Warm-up section shows for `result`.
    pub(super) summary: Vec<String>,
}

/// GPU idle gaps and busy time of the selection.
#[derive(Debug, Default)]
pub struct GapsResult {
    pub gaps: Vec<IdleGap>,
    /// Why each gap happened, in the order of `gaps`.
    pub causes: Vec<GapCauseInfo>,
    /// Gaps and idle time per device and cause.
    pub cause_totals: Vec<CauseTotal>,
    pub activity: Vec<DeviceActivity>,
}

/// Copy/compute overlap of the selection.
#[derive(Debug, Default)]
pub struct OverlapResult {
    pub per_gpu: Vec<CopyComputeOverlap>,
    pub per_kind: Vec<CopyKindOverlap>,
}

/// What one rule found over the selection.
pub struct RuleFindings {
    pub rule: &'static dyn Rule,
    /// The findings, or why the rule could not run.
    pub table: Result<Table, String>,
}

/// Every rule's findings over the selection.
#[derive(Default)]
pub struct Findings {
    pub rules: Vec<RuleFindings>,
}

impl Findings {
    /// Number of findings of all rules (the tab's badge).
    pub fn count(&self) -> usize {
        self.rules
            .iter()
            .map(|r| r.table.as_ref().map_or(0, |t| t.rows.len()))
            .sum()
    }
}

/// The chosen statistics row and what was computed for it.
#[derive(Debug, Clone)]
pub struct ChosenRow {
    pub key: RowKey,
    /// Its events under the panel's filter: what the panel asked to highlight.
    pub events: Vec<(EventTable, usize)>,
    /// Their durations.
    pub histogram: Histogram,
    /// The longest of them: its table and `[start, end)`, for "zoom to the longest".
    pub longest: Option<(EventTable, i64, i64)>,
}
