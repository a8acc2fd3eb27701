//! A [`RankDigest`] as tables ([`Columns`]) and back: `rank` (one row: what the trace says of
//! its rank, its clock and span, its GPU time), `busy` (its GPUs' busy intervals),
//! `collectives` and `steps` (occurrences on its own clock); and any report [`Table`] (the
//! kernel and CUDA API summaries) as columns of its own names.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::columns::{Columns, Values};
use crate::analysis::ranks::RankHints;
use crate::analysis::ranks::collectives::{Occurrence, RankCollectives, Source};
use crate::analysis::ranks::digest::RankDigest;
use crate::analysis::ranks::table::GpuTime;
use crate::analysis::table::{Cell, Table};

fn one(v: i64) -> Values {
    Values::Int(vec![Some(v)])
}

fn opt(v: Option<i64>) -> Values {
    Values::Int(vec![v])
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The `rank` table: one row.
pub fn rank_table(d: &RankDigest) -> Columns {
    let mut c = Columns::default();
    let hint = |r: Option<u32>| opt(r.map(i64::from));
    c.push("rank_distributed", hint(d.hints.distributed));
    c.push("rank_environment", hint(d.hints.environment));
    c.push(
        "source",
        Values::Text(vec![Some(d.hints.path.to_string_lossy().to_string())]),
    );
    c.push("utc_origin_ns", opt(d.utc_origin));
    c.push("first_ns", one(d.first_ns));
    c.push("last_ns", one(d.last_ns));
    c.push("gpu_first_ns", opt(d.gpu_span.map(|s| s.0)));
    c.push("gpu_last_ns", opt(d.gpu_span.map(|s| s.1)));
    let t = &d.gpu_time;
    c.push("span_ns", one(t.span_ns));
    c.push("busy_ns", one(t.busy_ns));
    c.push("kernel_ns", one(t.kernel_ns));
    c.push("comm_ns", one(t.comm_ns));
    c.push("exposed_comm_ns", one(t.exposed_comm_ns));
    c.push("events", one(count(d.events)));
    c.push(
        "collectives_source",
        Values::Text(vec![d.collectives.source.map(|s| s.label().to_string())]),
    );
    c
}

/// The `busy` table: start and end of each busy interval.
pub fn busy_table(d: &RankDigest) -> Columns {
    let mut c = Columns::default();
    c.push(
        "start_ns",
        Values::Int(d.busy.iter().map(|b| Some(b.0)).collect()),
    );
    c.push(
        "end_ns",
        Values::Int(d.busy.iter().map(|b| Some(b.1)).collect()),
    );
    c
}

/// The `collectives` or `steps` table: one row per occurrence.
pub fn occurrence_table(list: &[Occurrence]) -> Columns {
    let mut c = Columns::default();
    let texts =
        |f: &dyn Fn(&Occurrence) -> Option<String>| Values::Text(list.iter().map(f).collect());
    let ints = |f: &dyn Fn(&Occurrence) -> Option<i64>| Values::Int(list.iter().map(f).collect());
    c.push("name", texts(&|o| Some(o.name.clone())));
    c.push("collective", texts(&|o| Some(o.collective.clone())));
    c.push("seq_group", texts(&|o| o.seq.as_ref().map(|s| s.0.clone())));
    c.push(
        "seq",
        ints(&|o| {
            o.seq
                .as_ref()
                .map(|s| i64::try_from(s.1).unwrap_or(i64::MAX))
        }),
    );
    c.push("start_ns", ints(&|o| Some(o.start_ns)));
    c.push("end_ns", ints(&|o| Some(o.end_ns)));
    c.push("event_index", ints(&|o| Some(count(o.index))));
    c
}

fn occurrences(c: &Columns) -> Result<Vec<Occurrence>> {
    let (names, collectives) = (c.texts("name")?, c.texts("collective")?);
    let (groups, seqs) = (c.texts("seq_group")?, c.ints("seq")?);
    (0..c.rows())
        .map(|i| {
            let seq = match (
                groups.get(i).cloned().flatten(),
                seqs.get(i).copied().flatten(),
            ) {
                (Some(g), Some(s)) => Some((g, u64::try_from(s)?)),
                _ => None,
            };
            Ok(Occurrence {
                name: names.get(i).cloned().flatten().unwrap_or_default(),
                collective: collectives.get(i).cloned().flatten().unwrap_or_default(),
                seq,
                start_ns: c.int("start_ns", i)?,
                end_ns: c.int("end_ns", i)?,
                index: usize::try_from(c.int("event_index", i)?)?,
            })
        })
        .collect()
}

fn source_named(label: &str) -> Result<Source> {
    [Source::NcclKernels, Source::C10dOperators, Source::Ranges]
        .into_iter()
        .find(|s| s.label() == label)
        .ok_or_else(|| anyhow!("unknown collectives source '{label}'"))
}

/// The digest the tables hold.
pub fn digest_of(
    rank: &Columns,
    busy: &Columns,
    collectives: &Columns,
    steps: &Columns,
) -> Result<RankDigest> {
    let hint = |name: &str| -> Result<Option<u32>> {
        rank.ints(name)?
            .first()
            .copied()
            .flatten()
            .map(u32::try_from)
            .transpose()
            .map_err(Into::into)
    };
    let first_opt =
        |name: &str| -> Result<Option<i64>> { Ok(rank.ints(name)?.first().copied().flatten()) };
    let gpu_span = match (first_opt("gpu_first_ns")?, first_opt("gpu_last_ns")?) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    let source = rank.texts("collectives_source")?.first().cloned().flatten();
    let (starts, ends) = (busy.ints("start_ns")?, busy.ints("end_ns")?);
    let busy = starts
        .iter()
        .zip(ends)
        .map(|(s, e)| match (s, e) {
            (Some(s), Some(e)) => Ok((*s, *e)),
            _ => Err(anyhow!("a busy interval without its start or end")),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RankDigest {
        hints: RankHints {
            distributed: hint("rank_distributed")?,
            environment: hint("rank_environment")?,
            path: PathBuf::from(rank.text("source", 0)?),
        },
        utc_origin: first_opt("utc_origin_ns")?,
        first_ns: rank.int("first_ns", 0)?,
        last_ns: rank.int("last_ns", 0)?,
        gpu_span,
        busy,
        gpu_time: GpuTime {
            span_ns: rank.int("span_ns", 0)?,
            busy_ns: rank.int("busy_ns", 0)?,
            kernel_ns: rank.int("kernel_ns", 0)?,
            comm_ns: rank.int("comm_ns", 0)?,
            exposed_comm_ns: rank.int("exposed_comm_ns", 0)?,
        },
        collectives: Arc::new(RankCollectives {
            source: source.as_deref().map(source_named).transpose()?,
            list: occurrences(collectives)?,
        }),
        steps: occurrences(steps)?,
        events: usize::try_from(rank.int("events", 0)?)?,
        source_stamp: None,
    })
}

/// A report's table as columns of its own names: integers where every cell is one, floats where
/// every cell is a number, else text (nulls stay null).
pub fn report_columns(table: &Table) -> Columns {
    let mut c = Columns::default();
    for (j, name) in table.columns.iter().enumerate() {
        let cells: Vec<&Cell> = table.rows.iter().map(|r| &r.cells[j]).collect();
        let all = |f: fn(&Cell) -> bool| cells.iter().all(|c| matches!(c, Cell::Null) || f(c));
        let values = if all(|c| matches!(c, Cell::Int(_))) {
            Values::Int(
                cells
                    .iter()
                    .map(|c| match c {
                        Cell::Int(v) => Some(*v),
                        _ => None,
                    })
                    .collect(),
            )
        } else if all(|c| c.number().is_some()) {
            Values::Float(cells.iter().map(|c| c.number()).collect())
        } else {
            Values::Text(
                cells
                    .iter()
                    .map(|c| (!matches!(c, Cell::Null)).then(|| c.csv_text()))
                    .collect(),
            )
        };
        c.push(name, values);
    }
    c
}
