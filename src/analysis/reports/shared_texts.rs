//! The texts a report's rows print, each held once however many rows print it: the trace's own
//! interned string where it has that text, else one copy per distinct text. Reports whose rows
//! repeat a name (a kernel under several launch configurations, an API call name on every row of
//! a trace) take their cells from here, so that no table holds rows × its longest string.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::analysis::stats::strip_version_suffix;
use crate::trace::{StrId, Trace};

/// Shared texts for the rows of one report.
pub struct SharedTexts<'t> {
    trace: &'t Trace,
    made: HashSet<Arc<str>>,
    api_names: HashMap<StrId, Arc<str>>,
}

impl<'t> SharedTexts<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        Self {
            trace,
            made: HashSet::new(),
            api_names: HashMap::new(),
        }
    }

    /// `text`, shared: the trace's string when it has this text, else the copy made the first
    /// time it was asked for.
    pub fn text(&mut self, text: &str) -> Arc<str> {
        if let Some(made) = self.made.get(text) {
            return Arc::clone(made);
        }
        let shared = match self.trace.strings.find(text) {
            Some(id) => self.trace.shared_str(id),
            None => Arc::from(text),
        };
        self.made.insert(Arc::clone(&shared));
        shared
    }

    /// API call name `id` as the CUDA API reports print it, its version suffix dropped
    /// ([`strip_version_suffix`]): the trace's string itself when nothing is dropped.
    pub fn api_name(&mut self, id: StrId) -> Arc<str> {
        let trace = self.trace;
        Arc::clone(self.api_names.entry(id).or_insert_with(|| {
            let name = trace.str(id);
            let printed = strip_version_suffix(name);
            if printed.len() == name.len() {
                trace.shared_str(id)
            } else {
                Arc::from(printed)
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_the_traces_own_or_made_once() {
        let mut trace = Trace::default();
        let launch = trace.strings.intern("cudaLaunchKernel_v7000");
        let gemm = trace.strings.intern("gemm");
        let mut texts = SharedTexts::new(&trace);
        assert!(Arc::ptr_eq(&texts.text("gemm"), &trace.shared_str(gemm)));
        let made = texts.text("range/gemm");
        assert!(Arc::ptr_eq(&made, &texts.text("range/gemm")));
        assert_eq!(&*texts.api_name(launch), "cudaLaunchKernel");
        assert!(Arc::ptr_eq(
            &texts.api_name(launch),
            &texts.api_name(launch)
        ));
        assert!(Arc::ptr_eq(&texts.api_name(gemm), &trace.shared_str(gemm)));
    }
}
