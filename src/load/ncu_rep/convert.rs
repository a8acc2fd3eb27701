//! Turns the decoded messages of a report into the model ([`NcuReport`]): metric name ids of
//! each block's string table into the report's own ids, section definitions kept once (ncu
//! repeats them with every workload: they are told apart by their bytes), and processes named
//! once.

use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;

use super::messages as msg;
use crate::trace::ncu::{
    BodyItem, BodyItemKind, GROUP_PREFIX, InstanceList, ItemOrder, MetricId, MetricValue, NcuNvtx,
    NcuProcess, NcuReport, NcuRule, NcuSection, NcuSystem, NcuWorkload, NvtxDomainStack,
    RooflineQuantity, RooflineSpec, RuleMessage, RuleSpeedup, ScalarValue, SectionBody, SectionId,
    SectionMetric,
};

#[derive(Default)]
pub(super) struct Converter {
    /// The report's string table so far, as report metric ids.
    names: Vec<MetricId>,
    /// Section definitions seen, by a hash of their bytes (the bytes compared on a hit).
    sections: HashMap<u64, Vec<(Bytes, SectionId)>>,
    /// The process of the current block.
    process: Option<u32>,
    pid: u32,
    unknown_names: u64,
    /// Values whose names were not in the table yet (see [`Pending`]).
    pending: Vec<Pending>,
    bad_sections: u64,
    /// Derived metrics a section defines for some architectures only (their units: none).
    limited_definitions: Vec<String>,
}

impl Converter {
    pub fn block_header(&mut self, report: &mut NcuReport, header: &msg::BlockHeader) {
        // A block's strings extend the table of the blocks before it: ids count from the
        // report's first string. Most reports carry every name in the first result's block;
        // some (three public reports of ncu 2023.3) add names one block at a time after it, and
        // results before those blocks already use them (`nvlrx__bytes.sum.per_second`: name 967
        // of the first result, whose block's table holds 967 names; block 8 adds it).
        if let Some(table) = &header.string_table {
            self.names
                .extend(table.strings.iter().map(|s| report.intern_metric(s)));
        }
        if let Some(details) = &header.session_details {
            session(report, details);
        }
        if let Some(p) = &header.process {
            // Reports made on Windows end the process name with the C string's NUL, which
            // ncu's pages do not print (14 public reports).
            let text = |s: &Option<String>| {
                s.as_deref()
                    .unwrap_or_default()
                    .trim_end_matches('\0')
                    .to_string()
            };
            let process = NcuProcess {
                pid: p.process_id.unwrap_or(0),
                host_name: text(&p.hostname),
                executable: text(&p.process_name),
            };
            let processes = &mut report.session.processes;
            let index = match processes.iter().position(|q| *q == process) {
                Some(i) => i,
                None => {
                    processes.push(process);
                    processes.len() - 1
                }
            };
            self.pid = processes[index].pid;
            self.process = Some(index as u32);
        }
    }

    pub fn result(&mut self, report: &mut NcuReport, decoded: super::DecodedResult) {
        let r = decoded.result;
        let mut metrics: Vec<(MetricId, MetricValue)> = Vec::with_capacity(decoded.metrics.len());
        let mut value_instances = Vec::new();
        for m in decoded.metrics {
            let list = m.list;
            let Some(index) = m.name_id else {
                self.unknown_names += 1;
                continue;
            };
            let Some(&id) = self.names.get(index as usize) else {
                // A name a later block adds: resolved when the whole table is known.
                self.pending.push(Pending {
                    workload: report.workloads.len(),
                    index,
                    value: m.value,
                    list,
                });
                continue;
            };
            let value = metric_value(report, id, m.value.as_ref(), list, &mut value_instances);
            metrics.push((id, value));
        }
        // A metric a result holds twice keeps its last value, as NVIDIA's reader does (12
        // kernels of public ncu 2025.1 reports with PM sampling hold `gpu__time_duration.sum`
        // twice, with different values). Stable sorts of the reversed lists put the last first.
        metrics.reverse();
        metrics.sort_by_key(|(id, _)| *id);
        metrics.dedup_by_key(|(id, _)| *id);
        value_instances.reverse();
        value_instances.sort_by_key(|(id, _)| *id);
        value_instances.dedup_by_key(|(id, _)| *id);
        let sections = r
            .sections
            .iter()
            .zip(decoded.section_hashes)
            .filter_map(|(bytes, hash)| self.section(report, bytes, hash))
            .collect();
        let workload = NcuWorkload {
            id: report.workloads.len() as u32,
            process: self.process,
            pid: self.pid,
            thread_id: r.thread_id.unwrap_or(0),
            api_call_id: r.api_call_id.unwrap_or(0),
            kernel_id: r.kernel_id.unwrap_or(0),
            mangled_name: r.kernel_mangled_name.unwrap_or_default(),
            function_name: r.kernel_function_name.unwrap_or_default(),
            demangled_name: r.kernel_demangled_name.unwrap_or_default(),
            context: r.context_id.unwrap_or(0),
            stream: r.stream_id.unwrap_or(0),
            scope: r.collection_scope,
            grid: r.grid_size.map(|g| g.xyz()).unwrap_or_default(),
            block: r.block_size.map(|b| b.xyz()).unwrap_or_default(),
            creation_time: r.creation_time,
            nvtx: r.nvtx.map(|n| nvtx(&n, r.thread_id)).unwrap_or_default(),
            metrics,
            value_instances,
            sections,
            rules: r.rule_results.iter().map(rule).collect(),
        };
        report.workloads.push(workload);
    }

    fn section(&mut self, report: &mut NcuReport, bytes: &Bytes, key: u64) -> Option<SectionId> {
        let seen = self.sections.entry(key).or_default();
        if let Some((_, id)) = seen.iter().find(|(b, _)| b == bytes) {
            return Some(*id);
        }
        let Ok(section) = msg::Section::decode(bytes.clone()) else {
            self.bad_sections += 1;
            return None;
        };
        let definitions = section
            .metric_definitions
            .iter()
            .flat_map(|d| &d.definitions);
        for d in definitions.filter(|d| d.filter.is_some()) {
            if let Some(name) = &d.name {
                self.limited_definitions.push(name.clone());
            }
        }
        let id = report.sections.len() as SectionId;
        report.sections.push(section_of(section));
        seen.push((bytes.clone(), id));
        Some(id)
    }

    pub fn finish(mut self, report: &mut NcuReport) {
        for p in std::mem::take(&mut self.pending) {
            let Some(&id) = self.names.get(p.index as usize) else {
                self.unknown_names += 1;
                continue;
            };
            let mut instances = Vec::new();
            let value = metric_value(report, id, p.value.as_ref(), p.list, &mut instances);
            let Some(workload) = report.workloads.get_mut(p.workload) else {
                continue;
            };
            if workload.metrics.iter().all(|(m, _)| *m != id) {
                workload.metrics.push((id, value));
                workload.metrics.sort_by_key(|(id, _)| *id);
                workload.value_instances.extend(instances);
                workload.value_instances.sort_by_key(|(id, _)| *id);
                workload.value_instances.dedup_by_key(|(id, _)| *id);
            }
        }
        // ncu 2025.3 prints no unit for a derived metric whose definition carries an
        // architecture filter (`derived__pct_occupancy_per_barrier_count`,
        // `derived__l1tex__lsu_writeback_bytes_mem_lgds.*`), while the unfiltered ones of the
        // same sections have units: seen in all four shared reports.
        for name in &self.limited_definitions {
            if let Some(id) = report.metric_id(name) {
                report.unitless.insert(id);
            }
        }
        if self.unknown_names > 0 {
            report.warnings.skip(
                "report",
                "metric [value|values] [names|name] no string of the report's string table (left out)",
                self.unknown_names,
            );
        }
        if self.bad_sections > 0 {
            report.warnings.skip(
                "report",
                "section [definition does|definitions do] not decode (left out)",
                self.bad_sections,
            );
        }
    }
}

/// A metric value whose name a later block's string table holds.
pub(super) struct Pending {
    workload: usize,
    index: u32,
    value: Option<msg::MetricValue>,
    list: Option<InstanceList>,
}

/// A metric's value as the model keeps it (a list beside a value goes to `value_instances`).
fn metric_value(
    report: &mut NcuReport,
    id: MetricId,
    value: Option<&msg::MetricValue>,
    list: Option<InstanceList>,
    value_instances: &mut Vec<(MetricId, InstanceList)>,
) -> MetricValue {
    if list
        .as_ref()
        .and_then(super::instances::first_instance)
        .is_some_and(|i| matches!(i.correlation, Some(ScalarValue::Str(_))))
    {
        report.unitless.insert(id);
    }
    match (value, list) {
        // Both a value and instances (found against NVIDIA's reader): keep both.
        (Some(v), Some(list)) => {
            value_instances.push((id, list));
            scalar(v).into()
        }
        (Some(v), None) => scalar(v).into(),
        (None, Some(InstanceList::Read(list))) => MetricValue::List(list),
        // Only lists beside a value are left in the file.
        (None, Some(InstanceList::Packed { .. } | InstanceList::Deferred(_))) | (None, None) => {
            MetricValue::List(Vec::new())
        }
    }
}

fn session(report: &mut NcuReport, d: &msg::SessionDetails) {
    let s = &mut report.session;
    if d.creation_time.is_some() {
        s.created_unix_s = d.creation_time;
    }
    let system = |i: &msg::SystemInfo| NcuSystem {
        os_name: i.os_name.clone().unwrap_or_default(),
        build: i.build.clone().unwrap_or_default(),
        processor: i.processor.clone().unwrap_or_default(),
        architecture: i.architecture.clone().unwrap_or_default(),
        computer_name: i.computer_name.clone().unwrap_or_default(),
    };
    if let Some(h) = &d.host_system {
        s.host = Some(system(h));
    }
    if let Some(t) = &d.target_system {
        s.target = Some(system(t));
    }
    for v in &d.versions {
        s.versions.push((
            v.provider.clone().unwrap_or_default(),
            v.version.clone().unwrap_or_default(),
        ));
    }
    if let Some(e) = &d.executable {
        let exe = e.executable_path.clone().unwrap_or_default();
        let args = e.arguments.clone().unwrap_or_default();
        s.command_line = Some(if args.is_empty() {
            exe
        } else {
            format!("{exe} {args}")
        });
    }
}

pub(super) fn scalar(v: &msg::MetricValue) -> ScalarValue {
    if let Some(s) = &v.string_value {
        ScalarValue::Str(s.clone())
    } else if let Some(x) = v.double_value {
        ScalarValue::F64(x)
    } else if let Some(x) = v.float_value {
        ScalarValue::F32(x)
    } else if let Some(x) = v.uint64_value {
        ScalarValue::U64(x)
    } else if let Some(x) = v.uint32_value {
        ScalarValue::U32(x)
    } else {
        ScalarValue::Unknown
    }
}

impl From<ScalarValue> for MetricValue {
    fn from(v: ScalarValue) -> Self {
        match v {
            ScalarValue::Str(s) => MetricValue::Str(s),
            ScalarValue::F32(x) => MetricValue::F32(x),
            ScalarValue::F64(x) => MetricValue::F64(x),
            ScalarValue::U32(x) => MetricValue::U32(x),
            ScalarValue::U64(x) => MetricValue::U64(x),
            ScalarValue::Unknown => MetricValue::Unknown,
        }
    }
}

fn metric(m: &msg::SectionMetric) -> SectionMetric {
    SectionMetric {
        name: m.name.clone().unwrap_or_default(),
        label: m.label.clone().unwrap_or_default(),
        blank_label: m.label.as_deref() == Some(""),
        unit: m.unit.clone().unwrap_or_default(),
        show_instances: m.show_instances.unwrap_or(false),
        archs: super::arch_filter::arch_ranges(&m.filter),
        scopes: m
            .filter
            .as_ref()
            .and_then(|f| f.scopes.as_ref())
            .map(|s| s.scopes.clone())
            .unwrap_or_default(),
        options: m
            .options
            .iter()
            .map(|o| {
                (
                    o.name.clone().unwrap_or_default(),
                    o.label.clone().unwrap_or_default(),
                )
            })
            .collect(),
        option_archs: m
            .options
            .iter()
            .map(|o| super::arch_filter::arch_ranges(&o.filter))
            .collect(),
    }
}

fn metrics(ms: &[msg::SectionMetric]) -> Vec<SectionMetric> {
    ms.iter().map(metric).collect()
}

/// A body item as the items it shows: a container's items in order (flattened), a roofline
/// chart's rooflines and achieved values, else itself.
pub(super) fn body_items(i: &msg::SectionBodyItem) -> Vec<BodyItem> {
    let mut items = body_items_unfiltered(i);
    let archs = super::arch_filter::arch_ranges(&i.filter);
    for item in items.iter_mut().filter(|item| item.archs.is_empty()) {
        item.archs.clone_from(&archs);
    }
    items
}

fn body_items_unfiltered(i: &msg::SectionBodyItem) -> Vec<BodyItem> {
    if let Some(c) = &i.container {
        return c.items.iter().flat_map(body_items).collect();
    }
    if let Some(chart) = &i.roofline_chart {
        let rooflines = chart.rooflines.iter().map(|r| roofline(r, false));
        return rooflines
            .chain(chart.achieved.iter().map(|r| roofline(r, true)))
            .collect();
    }
    vec![body_item(i)]
}

/// A roofline's item: its work metrics, then its traffic metrics, each group in name order
/// (the order ncu prints them).
fn roofline(r: &msg::SectionRoofline, achieved: bool) -> BodyItem {
    let group = |q: &Option<msg::RooflineQuantity>| {
        let mut ms: Vec<SectionMetric> = q
            .iter()
            .flat_map(|q| {
                let per_cycle = q
                    .per_cycle
                    .iter()
                    .flat_map(|p| p.metrics.iter().chain(&p.frequency));
                q.metric.iter().chain(per_cycle)
            })
            .map(metric)
            .collect();
        ms.sort_by(|a, b| a.name.cmp(&b.name));
        ms
    };
    let mut metrics = group(&r.work);
    metrics.extend(group(&r.traffic));
    let quantity = |q: &Option<msg::RooflineQuantity>| match q {
        Some(msg::RooflineQuantity {
            per_cycle: Some(p), ..
        }) => RooflineQuantity {
            metrics: p.metrics.iter().map(metric).collect(),
            frequency: p.frequency.as_ref().map(metric),
        },
        Some(q) => RooflineQuantity {
            metrics: q.metric.iter().map(metric).collect(),
            frequency: None,
        },
        None => RooflineQuantity::default(),
    };
    let spec = RooflineSpec {
        work: quantity(&r.work),
        traffic: quantity(&r.traffic),
    };
    BodyItem {
        kind: BodyItemKind::Roofline,
        label: r
            .options
            .as_ref()
            .and_then(|o| o.label.clone())
            .unwrap_or_default(),
        metrics,
        achieved,
        order: ItemOrder::ByName,
        rows: 0,
        columns: 0,
        roofline: Some(spec),
        archs: Vec::new(),
    }
}

/// A metric grid's cells: for each row, its counter with each column's suffix, in name order.
fn grid_rows(g: &msg::SectionMetricGrid) -> Vec<Vec<SectionMetric>> {
    let rows = g.rows.as_ref().map(|r| &r.metrics[..]).unwrap_or(&[]);
    let columns = g.columns.as_ref().map(|c| &c.columns[..]).unwrap_or(&[]);
    rows.iter()
        .map(|row| {
            let mut cells: Vec<SectionMetric> = columns
                .iter()
                .map(|c| {
                    let mut m = metric(row);
                    m.name.push_str(c.suffix.as_deref().unwrap_or(""));
                    m
                })
                .collect();
            cells.sort_by(|a, b| a.name.cmp(&b.name));
            cells
        })
        .collect()
}

/// A labelled grid's metrics, in name order (the order ncu prints them).
fn grid_metrics(g: &msg::SectionMetricGrid) -> Vec<SectionMetric> {
    let mut out: Vec<SectionMetric> = grid_rows(g).into_iter().flatten().collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// An unlabelled grid's metrics: row by row, each labelled with its row's label.
fn operation_metrics(g: &msg::SectionMetricGrid) -> Vec<SectionMetric> {
    grid_rows(g).into_iter().flatten().collect()
}

fn body_item(i: &msg::SectionBodyItem) -> BodyItem {
    let item = |kind, label: &Option<String>, metrics: Vec<SectionMetric>| BodyItem {
        kind,
        label: label.clone().unwrap_or_default(),
        metrics,
        achieved: false,
        order: ItemOrder::ByName,
        rows: 0,
        columns: 0,
        roofline: None,
        archs: Vec::new(),
    };
    if let Some(t) = &i.table {
        return BodyItem {
            rows: t.rows.unwrap_or(0),
            columns: t.columns.unwrap_or(0),
            ..item(BodyItemKind::Table, &t.label, metrics(&t.metrics))
        };
    }
    if let Some(c) = &i.bar_chart {
        let order = match (c.sort_key, c.sort_direction) {
            (Some(1), Some(1)) => ItemOrder::ValueAscending,
            (Some(1), _) => ItemOrder::ValueDescending,
            _ => ItemOrder::ByName,
        };
        return BodyItem {
            order,
            ..item(BodyItemKind::BarChart, &c.label, metrics(&c.metrics))
        };
    }
    // Unlabelled grids (the tensor roofline's tables of operations by data type) print a row
    // per operation on ncu's details page, labelled with the operation.
    if let Some(g) = &i.metric_grid {
        let labelled = g.label.as_deref().is_some_and(|l| !l.is_empty());
        let (kind, metrics) = if labelled {
            (BodyItemKind::Table, grid_metrics(g))
        } else {
            (BodyItemKind::OperationGrid, operation_metrics(g))
        };
        return BodyItem {
            rows: g.rows.as_ref().map_or(0, |r| r.metrics.len() as u32),
            columns: g.columns.as_ref().map_or(0, |c| c.columns.len() as u32),
            ..item(kind, &g.label, metrics)
        };
    }
    if let Some(t) = &i.hotspot_table {
        let m = t.metric.iter().map(metric).collect();
        return item(BodyItemKind::Table, &t.label, m);
    }
    if let Some(c) = &i.histogram_chart {
        let m = c.metric.iter().map(metric).collect();
        return item(BodyItemKind::HistogramChart, &c.label, m);
    }
    if let Some(c) = &i.line_chart {
        let mut ms = metrics(&c.metrics);
        ms.extend(c.highlight.iter().flat_map(|h| metrics(&h.metrics)));
        return item(BodyItemKind::LineChart, &c.label, ms);
    }
    // ncu-ui's memory tables and chart: their metrics are listed by a metric of the workload
    // (`group:memory__…`), not by the section.
    let memory = [
        (&i.memory_shared_table, "memory__shared_table"),
        (&i.memory_l1_table, "memory__first_level_cache_table"),
        (&i.memory_l1tex_table, "memory__first_level_cache_table"),
        (&i.memory_l2_table, "memory__l2_cache_table"),
        (&i.memory_l2_cache_table, "memory__l2_cache_table"),
        (
            &i.memory_l2_evict_table,
            "memory__l2_cache_evict_policy_table",
        ),
        (&i.memory_device_table, "memory__dram_table"),
        (&i.memory_chart, "memory__chart"),
    ];
    if let Some((t, group)) = memory
        .into_iter()
        .find_map(|(t, group)| t.as_ref().map(|t| (t, group)))
    {
        let kind = if group == "memory__chart" {
            BodyItemKind::MemoryChart
        } else {
            BodyItemKind::MemoryTable
        };
        let listed = SectionMetric {
            name: format!("{GROUP_PREFIX}{group}"),
            ..SectionMetric::default()
        };
        return item(kind, &t.label, vec![listed]);
    }
    if let Some(c) = &i.nvlink_topology {
        return item(BodyItemKind::NvlinkTopology, &c.label, Vec::new());
    }
    if let Some(c) = &i.numa_table {
        return item(BodyItemKind::NumaTable, &c.label, Vec::new());
    }
    item(BodyItemKind::Other, &None, Vec::new())
}

fn section_of(s: msg::Section) -> NcuSection {
    NcuSection {
        identifier: s.identifier.unwrap_or_default(),
        display_name: s.display_name.unwrap_or_default(),
        order: s.order.unwrap_or(0),
        description: s.description.unwrap_or_default(),
        header_rows: s.header.as_ref().and_then(|h| h.rows).unwrap_or(0),
        header: s
            .header
            .as_ref()
            .map(|h| metrics(&h.metrics))
            .unwrap_or_default(),
        bodies: s
            .body
            .iter()
            .map(|b| SectionBody {
                display_name: b.display_name.clone().unwrap_or_default(),
                items: b.items.iter().flat_map(body_items).collect(),
            })
            .collect(),
        // The source view's metrics (Source Counters) print with the section's own.
        extra_metrics: [&s.metrics, &s.source_metrics]
            .into_iter()
            .flatten()
            .flat_map(|m| metrics(&m.metrics))
            .collect(),
        source_metrics: s
            .source_metrics
            .as_ref()
            .or_else(|| s.metrics.as_ref().filter(|_| !s.source_groups.is_empty()))
            .map(|m| metrics(&m.metrics))
            .unwrap_or_default(),
    }
}

fn rule(r: &msg::RuleResult) -> NcuRule {
    let mut out = NcuRule {
        identifier: r.identifier.clone().unwrap_or_default(),
        display_name: r.display_name.clone().unwrap_or_default(),
        section: r.section_identifier.clone().unwrap_or_default(),
        ..Default::default()
    };
    for item in r.body.iter().flat_map(|b| &b.items) {
        if let Some(m) = &item.message {
            out.messages.push(RuleMessage {
                text: m.message.clone().unwrap_or_default(),
                kind: m.kind.unwrap_or(0),
                title: m.title.clone().unwrap_or_default(),
                speedup: None,
            });
        }
        if let Some(f) = &item.focus_metric
            && let (Some(name), Some(value)) = (&f.metric_name, f.metric_value)
        {
            out.focus_metrics.push((name.clone(), value));
        }
        if let Some(s) = &item.speedup
            && let Some(value) = s.value
        {
            let speedup = RuleSpeedup {
                kind: s.kind.unwrap_or(0),
                percent: value,
            };
            out.speedup = Some(speedup);
            // A speedup belongs to the message before it (a rule may say several things).
            if let Some(last) = out.messages.last_mut() {
                last.speedup = Some(speedup);
            }
        }
    }
    out
}

/// The NVTX state of a launch: the push/pop stacks of the launching thread (`thread_id`; the
/// first thread when the workload does not say), the start/end ranges of the process.
fn nvtx(n: &msg::NvtxState, thread_id: Option<u32>) -> NcuNvtx {
    let domain_name = |id: Option<u64>| -> Option<String> {
        if id.is_none() || id == n.default_domain {
            return None;
        }
        n.domains
            .iter()
            .find(|d| d.id == id)
            .and_then(|d| d.name.clone())
    };
    let thread = match thread_id {
        Some(tid) => n.threads.iter().find(|t| t.tid == Some(tid)),
        None => n.threads.first(),
    };
    NcuNvtx {
        thread: thread.and_then(|t| t.tid),
        push_pop: thread
            .map(|t| {
                t.push_pop_domains
                    .iter()
                    .map(|d| NvtxDomainStack {
                        domain: domain_name(d.id),
                        ranges: d
                            .stack
                            .iter()
                            .map(|r| r.name.clone().unwrap_or_default())
                            .collect(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        start_end: n
            .start_end_domains
            .iter()
            .map(|d| NvtxDomainStack {
                domain: domain_name(d.id),
                ranges: d
                    .ranges
                    .iter()
                    .map(|r| r.name.clone().unwrap_or_default())
                    .collect(),
            })
            .collect(),
    }
}
