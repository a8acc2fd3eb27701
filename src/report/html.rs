//! The report as one HTML page that needs nothing else: styles inline, pictures as `data:` URIs
//! or inline SVG, no script but the JSON data block, no font or file loaded from anywhere (the
//! only links are plain `<a>` links within the page). Light colours that print; tables do not
//! split rows across pages.

use super::json::{script_safe, to_json};
use super::sections;
use super::{Report, RunReport};

/// `text` escaped for HTML text and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root { --ok: #1e7e34; --bad: #b02a37; --na: #6c757d; --line: #d0d4da; --soft: #f4f6f8; }
* { box-sizing: border-box; }
.ncu-charts { display: flex; flex-wrap: wrap; gap: 12px; }
.ncu-chart { background: #fff; border: 1px solid var(--line); }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1d2330; margin: 0 auto; max-width: 1480px; padding: 24px 32px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: #555; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.name { max-width: 640px; overflow-wrap: anywhere; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
tr { break-inside: avoid; }
.met { color: #fff; background: var(--ok); }
.not_met { color: #fff; background: var(--bad); }
.not_measurable, .no_target, .not_applicable { color: #fff; background: var(--na); }
.badge { display: inline-block; border-radius: 3px; padding: 0 6px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.better { color: var(--ok); font-weight: 600; }
.worse { color: var(--bad); font-weight: 600; }
.finding { border-left: 4px solid var(--bad); padding: 4px 10px; margin: 8px 0; background: var(--soft); break-inside: avoid; }
.finding .lost { font-weight: 700; }
.finding .advice { margin-top: 2px; }
.finding .when { color: #555; font-size: 12px; }
figure { margin: 8px 0 16px; break-inside: avoid; }
figure img { width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: #555; font-size: 12px; }
dl.defs dt { font-weight: 600; margin-top: 8px; }
dl.defs dd { margin-left: 16px; }
.cols { display: flex; gap: 24px; flex-wrap: wrap; }
.cols > div { flex: 1 1 420px; }
a { color: #1d5fbf; }
@media print { body { padding: 0; max-width: none; } h2 { break-after: avoid; } a { color: inherit; } }
"#;

/// The whole page.
pub fn page(report: &Report) -> String {
    let run = &report.run;
    let mut h = String::with_capacity(1 << 20);
    let name = file_name(&run.config.trace);
    let title = match &report.baseline {
        Some(b) => format!("{name} vs {}", file_name(&b.config.trace)),
        None => name.clone(),
    };
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str(&format!(
        "<title>Sightline report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&title)
    ));
    h.push_str(&format!(
        "<h1>Performance report: {}</h1>\n<p class=\"sub\">{} · written by Sightline {}{}</p>\n",
        esc(&title),
        esc(run.config.format),
        env!("CARGO_PKG_VERSION"),
        match &report.baseline {
            Some(b) => format!(" · baseline: {}", esc(&b.config.trace)),
            None => String::new(),
        }
    ));
    h.push_str(&contents(report));
    if report.baseline.is_some() {
        h.push_str(&sections::what_changed(report));
    }
    h.push_str(&sections::key_metrics(report));
    h.push_str(&sections::findings(run));
    h.push_str(&pictures(report));
    h.push_str(&sections::iterations(report));
    h.push_str(&super::bounds::section(report));
    h.push_str(&sections::top_tables(report));
    h.push_str(&super::op_roofline::section(run));
    h.push_str(&super::ncu_charts::section(&run.ncu_kernels));
    h.push_str(&sections::host_threads(run));
    h.push_str(&sections::configuration(report));
    h.push_str(DEFINITIONS);
    h.push_str(&format!(
        "<script type=\"application/json\" id=\"sightline-metrics\">\n{}\n</script>\n",
        script_safe(&to_json(report))
    ));
    h.push_str("</body>\n</html>\n");
    h
}

/// The last part of a path.
pub fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn contents(report: &Report) -> String {
    let mut links = Vec::new();
    if report.baseline.is_some() {
        links.push(("changed", "What changed"));
    }
    links.extend([
        ("metrics", "Key metrics"),
        ("findings", "Findings"),
        ("pictures", "Pictures"),
        ("iterations", "Iterations"),
        ("bounds", "What bounds each step"),
        ("tops", "Top tables"),
    ]);
    if report.run.op_roofline.applies {
        links.push(("roofline", "Operators furthest from their roofline"));
    }
    links.extend([
        ("threads", "Host threads"),
        ("configuration", "Configuration"),
        ("definitions", "How the figures are computed"),
    ]);
    let items: Vec<String> = links
        .iter()
        .map(|(id, t)| format!("<a href=\"#{id}\">{t}</a>"))
        .collect();
    format!("<p>{}</p>\n", items.join(" · "))
}

fn pictures(report: &Report) -> String {
    let mut h = String::from("<h2 id=\"pictures\">Pictures</h2>\n");
    let runs: Vec<(&str, &RunReport)> = match &report.baseline {
        Some(b) => vec![("This run: ", &report.run), ("Baseline: ", b)],
        None => vec![("", &report.run)],
    };
    for (who, run) in &runs {
        h.push_str(&format!(
            "<h3>{who}{} time by cause (gaps ≥ {} µs)</h3>\n",
            if who.is_empty() { "Idle" } else { "idle" },
            crate::analysis::DEFAULT_MIN_GAP_NS / 1000
        ));
        match super::pictures::idle_bar_svg(&run.idle_by_cause) {
            Some(svg) => h.push_str(&format!("<figure>{svg}</figure>\n")),
            None => h.push_str("<p>No idle gap that long.</p>\n"),
        }
    }
    for (who, run) in &runs {
        for p in &run.pictures {
            match p {
                Ok(p) => h.push_str(&format!(
                    "<figure><img alt=\"{0}\" src=\"{1}\"><figcaption>{2}{0}</figcaption></figure>\n",
                    esc(&p.caption),
                    p.data_uri,
                    esc(who)
                )),
                Err(e) => h.push_str(&format!(
                    "<p>{}the timeline could not be drawn: {}</p>\n",
                    esc(who),
                    esc(e)
                )),
            }
        }
    }
    h
}

/// How each figure is computed; the metric names in the page link here.
const DEFINITIONS: &str = r#"<h2 id="definitions">How the figures are computed</h2>
<dl class="defs">
<dt id="def-utilization">GPU utilisation (target &gt; 85 %)</dt>
<dd>Busy time ÷ measured time of one GPU. Busy: the union over all its streams of kernels, memory copies, memsets and CUDA graph executions. Measured: that GPU's active span (first start to last end of its operations starting in the range), less warm-up time when excluded. The panel's Gaps tab and <code>sightline diff --report headline</code> read the same figure (<code>analysis::gpu_activity</code>).</dd>
<dt id="def-overlap">Copy/compute overlap (target &gt; 60 %)</dt>
<dd>|kernel union ∩ memory-op union| ÷ |memory-op union| on one GPU, inside its measured time: the share of copy and memset time hidden under kernels (<code>analysis::copy_compute_overlap</code>, <code>sightline summary --report overlap</code>). The target applies where copies and memsets (their union) take at least 1 % of the GPU's active span; below that, hiding them all would shorten the run by less than 1 %, and the verdict is <i>n/a</i> with their share.</dd>
<dt id="def-sync-wait">Synchronisation wait (target &lt; 10 %)</dt>
<dd>For each host thread whose CUDA calls launched work on the GPU: the union of its synchronising calls (device/context/stream/event synchronize, synchronous cudaMemcpy/cudaMemset) ÷ the span from its first to its last CUDA call; per GPU, the threads that launched work on it summed (<code>analysis::sync_wait</code>).</dd>
<dt id="def-exposed-comm">Exposed communication</dt>
<dd>Time communication kernels (NCCL/RCCL, all-reduce, all-gather, reduce-scatter, all-to-all names) and peer copies ran with no compute kernel on the same GPU, as a share of its measured time (<code>analysis::comm_overlap</code>, the panel's Overlap tab). The guides set no target.</dd>
<dt id="def-dram">Memory bandwidth (target &gt; 80 %)</dt>
<dd>Average of the GPU metrics DRAM read + DRAM write throughput (% of peak) over the GPU's active span; only with <code>nsys profile --gpu-metrics-device</code>. Without them, with <code>--ncu REPORT</code> (an Nsight Compute report of the same program): the DRAM throughput ncu measured of each kernel it profiled and matched to the timeline (<code>dram__throughput</code> / <code>gpu__dram_throughput</code>, % of peak), weighted by the kernel's duration on the timeline.</dd>
<dt id="def-pcie">PCIe throughput (target 50–70 %)</dt>
<dd>Average of the GPU metrics PCIe RX and TX throughput (% of peak) over the GPU's active span, the larger judged; only with GPU metrics. Like copy/compute overlap, <i>n/a</i> where copies and memsets take less than 1 % of the active span.</dd>
<dt id="def-sm-active">SM active</dt>
<dd>Average of the GPU metric SM Active (% of cycles with at least one warp on an SM) over the GPU's active span; only with GPU metrics. No target in the guides.</dd>
<dt id="def-gaps">Idle gaps and their causes</dt>
<dd>Intervals of at least 100 µs where a GPU ran nothing, each with a cause from the call that launched the work after it: launch-late (the host had not begun launching), launch-overhead (the launch was in flight), dependency (queued but waiting), graph-untraced, unknown (<code>sightline gaps --causes</code>, the Gaps tab).</dd>
<dt id="def-critical-path">Critical path</dt>
<dd>The chain of dependent work that runs through an iteration from its start to its end, across every thread of its process, built as HTA's critical path analysis builds it and taken further: each thread's CPU operators, CUDA calls and OS-runtime calls in order (its untraced time between them counts as its CPU), a call to the GPU work it launched (launch latency where the stream was empty), the operations of a stream one after another (GPU idle between them), a stream that waited for an event to the work another stream finished just before, and a synchronize to the work it waited for. Where a thread waits (between its events, in a blocking OS call such as <code>pthread_cond_wait</code>, in a synchronize) the path follows the work another thread of the process did meanwhile: the autograd thread during <code>backward</code>. Time nothing in the trace explains is Unattributed. Its parts sum to the iteration's duration; copies are counted by direction, apart from kernels (<code>sightline summary --report critical_path</code>, <code>critical_path_segments</code>).</dd>
<dt id="def-iterations">Iterations</dt>
<dd>The instances of the outermost repeated range family (<code>step_N</code>, <code>ProfilerStep#N</code>, <code>token_N</code>: names that differ only in their numbers), each with its duration, the kernels launched by CUDA calls that any thread of its process started in it (PyTorch's autograd thread, which runs the backward pass, included) and the union on the GPU of every operation those calls launched, copies and memsets included; warm-up iterations are those the warm-up exclusion covers (or ranges named warmup), outliers last longer than the median + 3 × MAD of the others (<code>sightline summary --report iterations</code>).</dd>
<dt id="def-findings">Findings</dt>
<dd>The <code>nsys analyze</code> rules (as the Findings tab runs them) and the gap causes, ranked by time lost: the GPU idle time (active span less busy time) each explains, every idle instant counted once, so the findings add up to no more than the GPUs' idle time. A finding explains the idle time of its GPU inside what its rows point at: a cause's gaps; a gap or low-utilisation region of <code>gpu_gaps</code> / <code>gpu_time_util</code> (only the idle time inside it, not its length); a synchronous or pageable copy or memset, its call and operation; a synchronising call of <code>cuda_api_sync</code>, the call, on the GPUs its thread launched work on. Where two explain the same time, the more specific keeps it: first the rules whose rows are calls, then the gap causes, then <code>gpu_gaps</code> and <code>gpu_time_util</code>. "N long in all" is what the rows themselves add up to, as <code>nsys analyze</code> lists them (<code>rows_ns</code> in the JSON).</dd>
</dl>
"#;
