//! Keeping the panel's analyses computed: bringing the inputs up to date ([`AnalysisPanel::sync`]),
//! starting each analysis on its worker thread when its key changes, taking in finished jobs, and
//! the work those threads run (a report, the rules, a chosen row's events).

use super::*;

impl AnalysisPanel {
    /// How many analyses the panel has started since it was made: stays put while nothing the
    /// analyses depend on changes.
    pub fn computations(&self) -> usize {
        let j = &self.jobs;
        self.computations
            + j.report.started()
            + j.layout.started()
            + j.chosen.started()
            + j.findings.started()
            + j.gaps.started()
            + j.overlap.started()
            + self.comm.started()
            + self.samples.started()
            + self.iterations.started()
    }

    /// Is any background job still running?
    pub fn busy(&self) -> bool {
        let j = &self.jobs;
        j.report.busy()
            || j.layout.busy()
            || j.chosen.busy()
            || j.findings.busy()
            || j.gaps.busy()
            || j.overlap.busy()
            || self.comm.busy()
            || self.samples.busy()
            || self.iterations.busy()
    }

    /// Takes in every finished job, whether or not its tab is shown: a job started by one tab
    /// (a report's table, a histogram) that ends after the user moved to another would
    /// otherwise count as running for ever, and the spinner would never stop.
    pub(super) fn poll_jobs(&mut self) {
        let j = &mut self.jobs;
        j.report.poll();
        j.layout.poll();
        j.chosen.poll();
        j.findings.poll();
        j.gaps.poll();
        j.overlap.poll();
        self.comm.poll();
        self.samples.poll();
        self.iterations.poll();
        self.sql.poll();
    }

    /// Blocks until every running job is done and their follow-ups are started and done (tests
    /// and the bench; the window never waits).
    pub fn wait_for_jobs(&mut self) {
        let j = &mut self.jobs;
        j.report.wait();
        j.layout.wait();
        j.chosen.wait();
        j.findings.wait();
        j.gaps.wait();
        j.overlap.wait();
        self.comm.wait();
        self.samples.wait();
        self.iterations.wait();
    }

    /// Brings the inputs up to date and makes sure every analysis the app reads (gaps,
    /// findings, the shown report, the chosen row) is computed or being computed for them. Costs
    /// the UI thread key comparisons and thread starts, never work that grows with the trace —
    /// except the warm-up exclusion, recomputed here when its rules or the trace change (not when
    /// the selection does).
    pub fn sync(
        &mut self,
        trace: &Arc<Trace>,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        if !self.trace_key.as_ref().is_some_and(|k| k.matches(trace)) {
            // A new trace: indices into the old one mean nothing.
            self.trace_key = Some(TraceKey::of(trace));
            self.trace_generation += 1;
            self.chosen = None;
            self.chosen_finding = None;
            self.samples.forget_trace();
            self.available = reports::REPORTS
                .iter()
                .filter(|r| reports::has_data(**r, trace))
                .map(|r| r.name())
                .collect();
            if !self.available.contains(&self.report) {
                self.report = self
                    .available
                    .first()
                    .copied()
                    .unwrap_or("cuda_gpu_kern_sum");
            }
        }
        self.sync_exclusion(trace, actions);
        self.sync_comm(trace, actions);

        let inputs = InputsKey {
            trace_generation: self.trace_generation,
            selection,
            exclusion_generation: self.exclusion.generation,
            nsys_format: self
                .nsys_format
                .unwrap_or_else(|| NsysFormat::of_trace(trace)),
        };
        self.inputs = Some(inputs);
        let exclusion = self.exclusion.result.clone();
        let repaint = self.repaint_fn();

        let gap_key = (inputs, self.gap_options());
        {
            let (t, ex, options) = (trace.clone(), exclusion.clone(), gap_key.1);
            let status = self.jobs.gaps.request(
                &gap_key,
                move || {
                    let filter = filter_of(selection, ex.as_deref());
                    let gaps = analysis::gpu_idle_gaps(&t, &filter, &options);
                    let causes = gap_causes::gap_causes(&t, &gaps);
                    Arc::new(GapsResult {
                        cause_totals: gap_causes::totals_by_cause(&gaps, &causes),
                        causes,
                        gaps,
                        activity: analysis::gpu_activity_over(&t, &filter, options.over),
                    })
                },
                repaint.clone(),
            );
            if !status.is_pending() && self.jobs.gaps_announced != Some(gap_key) {
                self.jobs.gaps_announced = Some(gap_key);
                actions.push(PanelAction::GapsChanged);
            }
        }

        {
            let (t, ex) = (trace.clone(), exclusion.clone());
            self.jobs.findings.request(
                &inputs,
                move || Arc::new(run_rules(&t, selection, ex.as_deref(), inputs.nsys_format)),
                repaint.clone(),
            );
        }

        if self.jobs.tables_key != Some(inputs) {
            worker::drop_elsewhere(std::mem::take(&mut self.jobs.tables));
            self.jobs.tables_key = Some(inputs);
        }
        self.ensure_report(trace, self.report);
        self.refresh_chosen(trace, actions);
        self.sync_samples(trace, actions);
    }

    pub(super) fn sync_exclusion(&mut self, trace: &Trace, actions: &mut Vec<PanelAction>) {
        let wanted = self.exclude_warmup.then_some(&self.applied);
        let fresh = self
            .exclusion
            .key
            .as_ref()
            .is_some_and(|(generation, settings)| {
                *generation == self.trace_generation && settings.as_ref() == wanted
            });
        if fresh {
            return;
        }
        let settings = wanted.cloned();
        let result = settings.as_ref().and_then(|s| {
            let rules = s.rules().ok()?;
            self.computations += 1;
            Some(Arc::new(analysis::exclude_warmup(trace, &rules, s.scope)))
        });
        let was_shown = self.exclusion.result.is_some();
        let now_shown = result.is_some();
        self.exclusion.summary = match (&settings, &result) {
            (Some(settings), Some(ex)) => warmup_view::exclusion_summary(settings, ex),
            _ => Vec::new(),
        };
        self.exclusion.key = Some((self.trace_generation, settings));
        self.exclusion.result = result;
        self.exclusion.generation += 1;
        if was_shown || now_shown {
            actions.push(PanelAction::ExclusionChanged);
        }
    }

    pub(super) fn repaint_fn(&self) -> impl Fn() + Clone + Send + 'static {
        let ctx = self.repaint.clone();
        move || {
            if let Some(ctx) = &ctx {
                ctx.request_repaint();
            }
        }
    }

    /// Starts computing `report` over the inputs unless it is computed or being computed;
    /// collects it into the table cache when done. Returns what there is to show.
    pub(super) fn ensure_report(
        &mut self,
        trace: &Arc<Trace>,
        report: &'static str,
    ) -> Option<Arc<Table>> {
        let inputs = self.inputs?;
        if let Some(t) = self.jobs.tables.get(report) {
            return Some(t.clone());
        }
        let def = reports::find(report)?;
        let (t, ex) = (trace.clone(), self.exclusion.result.clone());
        let (selection, format) = (inputs.selection, inputs.nsys_format);
        let repaint = self.repaint_fn();
        // The kernel summary gains the attached Nsight Compute report's columns.
        let ncu = self.ncu.clone().filter(|_| report == KERNEL_SUMMARY);
        let key = self.report_key(inputs, report);
        let status = self.jobs.report.request(
            &key,
            move || {
                let mut table = compute_report(def, &t, selection, ex.as_deref(), format);
                if let Some(ncu) = ncu {
                    crate::analysis::ncu::facts::add_summary_columns(&t, &mut table, &ncu.averages);
                }
                Arc::new(table)
            },
            repaint,
        );
        let ready = status.ready().cloned();
        if let Some(table) = &ready {
            self.jobs.tables.insert(report, table.clone());
        }
        ready
    }

    /// Keeps the chosen row's events and histogram computed for the current table, and asks the
    /// app to outline them when they change.
    pub(super) fn refresh_chosen(&mut self, trace: &Arc<Trace>, actions: &mut Vec<PanelAction>) {
        let (Some(inputs), Some(key)) = (self.inputs, self.chosen.clone()) else {
            return;
        };
        let Some(table) = self.jobs.tables.get(key.report).cloned() else {
            return;
        };
        let job_key = (inputs, key.clone());
        let t = trace.clone();
        let repaint = self.repaint_fn();
        let status =
            self.jobs
                .chosen
                .request(&job_key, move || chosen_row(&t, &table, key), repaint);
        // Outline the row's events once per (inputs, row): when they first arrive, and again
        // when the row is chosen anew after something else was outlined.
        if let Some(chosen) = status.ready()
            && self.highlighted.as_ref() != Some(&job_key)
        {
            actions.push(PanelAction::Highlight(
                chosen.as_ref().map_or_else(Vec::new, |c| c.events.clone()),
            ));
            self.highlighted = Some(job_key);
        }
    }

    pub(super) fn choose_row(
        &mut self,
        key: Option<RowKey>,
        trace: &Arc<Trace>,
        actions: &mut Vec<PanelAction>,
    ) {
        self.chosen = key;
        self.chosen_finding = None;
        self.highlighted = None;
        if self.chosen.is_none() {
            actions.push(PanelAction::Highlight(Vec::new()));
        } else {
            self.refresh_chosen(trace, actions);
        }
    }
}

impl AnalysisPanel {
    /// The report job's key: the inputs, the report and, for the kernel summary, the attached
    /// Nsight Compute report (its address; 0 when none), whose columns it gains.
    pub(super) fn report_key(
        &self,
        inputs: InputsKey,
        report: &'static str,
    ) -> (InputsKey, &'static str, usize) {
        let ncu = match &self.ncu {
            Some(n) if report == KERNEL_SUMMARY => Arc::as_ptr(n) as usize,
            _ => 0,
        };
        (inputs, report, ncu)
    }

    /// Attaches (or detaches) an Nsight Compute report: the kernel summary is computed anew.
    pub fn set_ncu(&mut self, ncu: Option<Arc<crate::ui::ncu_attach::AttachedNcu>>) {
        self.ncu = ncu;
        if let Some(t) = self.jobs.tables.remove(KERNEL_SUMMARY) {
            worker::drop_elsewhere(t);
        }
    }
}

/// The kernel summary: the report that gains an attached ncu report's columns.
const KERNEL_SUMMARY: &str = "cuda_gpu_kern_sum";

/// A report over the selection, with the events behind each row.
fn compute_report(
    report: &dyn StatsReport,
    trace: &Trace,
    selection: TimeRange,
    exclusion: Option<&WarmupExclusion>,
    nsys_format: NsysFormat,
) -> Table {
    report.compute(&ReportInput {
        trace,
        filter: &filter_of(selection, exclusion),
        options: &ReportOptions::default(),
        with_events: true,
        row_limit: Some(PANEL_ROW_LIMIT),
        nsys_format,
        sink: None,
    })
}

/// Every rule over the selection, with nsys's default options but no row limit.
fn run_rules(
    trace: &Trace,
    selection: TimeRange,
    exclusion: Option<&WarmupExclusion>,
    nsys_format: NsysFormat,
) -> Findings {
    let filter = filter_of(selection, exclusion);
    let options = ReportOptions {
        values: vec![("rows".into(), "-1".into())],
    };
    Findings {
        rules: analysis::RULES
            .iter()
            .map(|&rule| RuleFindings {
                rule,
                table: rule.compute(&RuleInput {
                    trace,
                    filter: &filter,
                    options: &options,
                    nsys_format,
                }),
            })
            .collect(),
    }
}

/// The events of the row `key` names in `table`, their histogram and the longest of them.
fn chosen_row(trace: &Trace, table: &Table, key: RowKey) -> Option<ChosenRow> {
    let row = key.find(table)?;
    let events = row_events(row);
    let values: Vec<i64> = events.iter().map(|&e| event_duration(trace, e)).collect();
    let mut longest = events
        .iter()
        .filter_map(|&e| event_bounds(trace, e).map(|(s, end)| (e.0, s, end)))
        .max_by_key(|&(_, s, e)| (e - s, std::cmp::Reverse(s)));
    if let RowEvents::Span {
        start_ns, end_ns, ..
    } = row.events
    {
        longest = Some((EventTable::Kernels, start_ns, end_ns));
    }
    Some(ChosenRow {
        key,
        histogram: Histogram::of(&values, HISTOGRAM_BINS),
        events,
        longest,
    })
}
