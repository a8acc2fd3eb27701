//! Panels beside the timeline: the details of the selected event and the search box. (The
//! analysis side panel of issue 4 belongs here too, as `panels::analysis`.)

pub mod analysis;
pub mod details;
pub mod graph_launch;
pub mod ncu_facts;
pub mod search;
pub mod warnings;
