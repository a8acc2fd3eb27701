//! Pure computations over an Nsight Compute report ([`crate::trace::ncu::NcuReport`]): the
//! kernel table's rows with their filters and sort ([`kernels`]), the FP32/FP64 roofline as
//! ncu's `SpeedOfLight_RooflineChart` section computes it ([`roofline`]), and metric values
//! with the units ncu-ui prints them in ([`units`]). Nothing here knows about drawing.

pub mod kernels;
pub mod roofline;
pub mod rule_text;
pub mod units;
