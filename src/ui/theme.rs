//! The window's colours: the timeline layer's palette ([`crate::timeline::palette`]), which
//! `sightline render` and the report draw with too; named here for the window's own modules.

pub use crate::timeline::palette::*;
