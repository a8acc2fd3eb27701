//! The NVTX columns of ncu's pages (reports made with `ncu --nvtx`): the push/pop ranges open
//! on the launching thread, and the start/end ranges open at the launch, each as
//! `"DOMAIN:RANGE:PL_TYPE:PL_VALUE:CLR_TYPE:COLOR:MSG_TYPE:MSG"`.
//!
//! The model keeps each range's name only: payload, colour and message attributes print as
//! `none` (as they do in the shared reports, whose ranges have none).

use crate::trace::ncu::{NcuNvtx, NvtxDomainStack};

pub const PUSH_POP_HEADER: &str =
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
pub const START_END_HEADER: &str =
    "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";

fn ranges(stacks: &[NvtxDomainStack]) -> String {
    let mut out = String::new();
    for stack in stacks {
        let domain = stack.domain.as_deref().unwrap_or("<default domain>");
        for range in &stack.ranges {
            out.push_str(&format!(
                "  \"{domain}:{range}:none:none:none:none:none:none\""
            ));
        }
    }
    out
}

/// `TID  "…"  "…" `: the thread, then each push/pop range, outermost first.
pub fn push_pop_cell(nvtx: &NcuNvtx) -> String {
    if nvtx.push_pop.iter().all(|s| s.ranges.is_empty()) {
        return String::new();
    }
    let tid = nvtx.thread.map(|t| t.to_string()).unwrap_or_default();
    format!("{tid}{} ", ranges(&nvtx.push_pop))
}

/// The start/end ranges open at the launch (none in the shared reports: the layout is a guess
/// after the push/pop column's).
pub fn start_end_cell(nvtx: &NcuNvtx) -> String {
    if nvtx.start_end.iter().all(|s| s.ranges.is_empty()) {
        return String::new();
    }
    format!("{} ", ranges(&nvtx.start_end).trim_start())
}
