//! "Operators furthest from their roofline": for a PyTorch trace with recorded shapes, the ten
//! operators (by name and arguments) that lost most GPU time against what the GPU's roofline
//! allows for their FLOPs and bytes ([`crate::analysis::op_efficiency`], the `op_efficiency`
//! report's rows).

use super::RunReport;
use super::html::esc;
use crate::analysis::Filter;
use crate::analysis::headline::format_ns;
use crate::analysis::op_efficiency::{OpEfficiency, furthest_from_roofline, op_efficiency};
use crate::trace::{Trace, TraceFormat};

/// Rows listed.
pub const LISTED: usize = 10;

/// What the section shows of a run: its rows and why there are none.
#[derive(Debug, Clone, Default)]
pub struct OpRoofline {
    pub rows: Vec<OpEfficiency>,
    /// Set where the section has nothing to list: no modelled operator, an unknown GPU.
    pub note: Option<String>,
    /// Whether the run is a PyTorch trace (the section is shown only for those).
    pub applies: bool,
}

/// The run's operators furthest from their roofline.
pub fn gather(trace: &Trace, filter: &Filter) -> OpRoofline {
    if trace.format != TraceFormat::Kineto {
        return OpRoofline::default();
    }
    let all = op_efficiency(trace, filter);
    let rows = furthest_from_roofline(&all, LISTED);
    let peaks = crate::analysis::op_efficiency::peaks::gpu_peaks(trace);
    let note = if let Some(note) = peaks.note() {
        Some(note)
    } else if rows.is_empty() {
        Some("no operator with a model (record the trace with record_shapes=True)".to_string())
    } else {
        None
    };
    OpRoofline {
        rows,
        note,
        applies: true,
    }
}

/// The section, empty for a run that is not a PyTorch trace.
pub fn section(run: &RunReport) -> String {
    let r = &run.op_roofline;
    if !r.applies {
        return String::new();
    }
    let mut h = String::from(
        "<h2 id=\"roofline\">Operators furthest from their roofline</h2>\n<p>The PyTorch \
         operators (by name and arguments) that lost most GPU time against the roofline: time \
         lost = GPU time − FLOPs ÷ min(peak TFLOP/s, peak TB/s × FLOPS/Byte) for their data type \
         (<code>sightline summary TRACE --report op_efficiency</code> lists them all).</p>\n",
    );
    if let Some(note) = &r.note {
        h.push_str(&format!("<p>{}</p>\n", esc(note)));
    }
    if r.rows.is_empty() {
        return h;
    }
    h.push_str(
        "<table>\n<tr><th>Name</th><th>Category</th><th>Input Dims</th><th class=\"num\">Count</th>\
         <th class=\"num\">GPU time</th><th class=\"num\">Time lost</th><th class=\"num\">TFLOP/s</th>\
         <th class=\"num\">Roofline TFLOP/s</th><th class=\"num\">% of roofline</th></tr>\n",
    );
    for row in &r.rows {
        let num = |v: Option<f64>, digits: usize| {
            v.map_or("–".to_string(), |v| format!("{v:.digits$}"))
        };
        h.push_str(&format!(
            "<tr><td class=\"name\">{}</td><td>{}</td><td class=\"name\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            esc(&row.name),
            esc(&row.category),
            esc(&row.input_dims),
            row.count,
            format_ns(row.kernel_time_sum_us * 1e3),
            row.time_lost_us()
                .map_or("–".to_string(), |l| format_ns(l * 1e3)),
            num(row.tflops_per_s, 2),
            num(row.roofline_tflops(), 1),
            num(row.pct_of_roofline, 1),
        ));
    }
    h.push_str("</table>\n");
    h
}
