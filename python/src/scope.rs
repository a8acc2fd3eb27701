//! What part of a trace a report, rule or gap search covers, and as which nsys release it prints:
//! the command line's `--range`, `--exclude-warmup`, `--exclude-nvtx`, `--skip-first` /
//! `--iteration` and `--nsys-format`, parsed by the command line's own parsers
//! (`sightline::cli::parse_range_arg`, `ExclusionArgs::rules`, `NsysFormat::parse`) so that the
//! same words give the same numbers and the same messages.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use sightline::analysis::{
    AttributionScope, ExclusionRule, Filter, NsysFormat, TimeRange, WarmupExclusion, exclude_warmup,
};
use sightline::trace::Trace;

use crate::{arg, error};

/// The scope of one call, as its keyword arguments gave it.
pub struct Scope {
    pub range: TimeRange,
    rules: Vec<ExclusionRule>,
    nsys_format: Option<NsysFormat>,
}

impl Scope {
    /// From the six arguments at `first` on: `range`, `exclude_warmup`, `exclude_nvtx`,
    /// `skip_first`, `iteration`, `nsys_format` (each `None`/`False` when not given).
    pub fn from_args(args: &Bound<'_, PyTuple>, first: usize) -> PyResult<Scope> {
        let range: Option<String> = arg(args, first)?;
        let exclusion = sightline::cli::ExclusionArgs {
            exclude_warmup: arg(args, first + 1)?,
            exclude_nvtx: arg(args, first + 2)?,
            skip_first: arg(args, first + 3)?,
            iteration: arg(args, first + 4)?,
        };
        let nsys_format: Option<String> = arg(args, first + 5)?;
        // The command line's flags require each other (clap's `requires`); so do these.
        match (&exclusion.skip_first, &exclusion.iteration) {
            (Some(_), None) => return Err(error("skip_first needs iteration (a regex)")),
            (None, Some(_)) => return Err(error("iteration needs skip_first (a count)")),
            _ => {}
        }
        Ok(Scope {
            range: sightline::cli::parse_range_arg(range.as_deref()).map_err(error)?,
            rules: exclusion.rules().map_err(error)?,
            nsys_format: nsys_format
                .as_deref()
                .map(NsysFormat::parse)
                .transpose()
                .map_err(error)?,
        })
    }

    /// The events the exclusion rules drop, where there are rules.
    pub fn exclusion(&self, trace: &Trace) -> Option<WarmupExclusion> {
        (!self.rules.is_empty())
            .then(|| exclude_warmup(trace, &self.rules, AttributionScope::Process))
    }

    /// The filter of the range and `exclusion` (from [`Scope::exclusion`]).
    pub fn filter<'a>(&self, exclusion: Option<&'a WarmupExclusion>) -> Filter<'a> {
        Filter {
            range: self.range,
            excluded: exclusion.map(|e| &e.excluded),
        }
    }

    /// The release to print as: the one asked for, else the one that wrote the trace.
    pub fn nsys_format(&self, trace: &Trace) -> NsysFormat {
        self.nsys_format
            .unwrap_or_else(|| NsysFormat::of_trace(trace))
    }
}
