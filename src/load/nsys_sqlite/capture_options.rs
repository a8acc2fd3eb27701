//! The capture options an nsys export records in `META_DATA_CAPTURE` (Nsight Systems 2023.x and
//! later; older exports have no such table): what was traced, the command profiled, the CUDA
//! graph trace mode, OS-runtime thresholds, triggers, and the `COLLECT_*` switches that were on.
//! Read on demand (the HTML report's configuration), not into the trace model: nothing else
//! uses them. Environment variables, session ids and user names are left out.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// The export's capture options as (name, value), in file order, `PROCESS_0:` dropped from the
/// names of a single-process capture; empty when the file has none or cannot be read.
pub fn capture_options(path: &Path) -> Vec<(String, String)> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = Connection::open_with_flags(path, flags) else {
        return Vec::new();
    };
    let rows: Vec<(String, String)> = conn
        .prepare("SELECT name, value FROM META_DATA_CAPTURE ORDER BY rowid")
        .and_then(|mut stmt| {
            stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                ))
            })?
            .collect()
        })
        .unwrap_or_default();
    summarise(rows)
}

/// Keeps what says how the capture was made (see the module comment).
fn summarise(rows: Vec<(String, String)>) -> Vec<(String, String)> {
    let single_process = !rows.iter().any(|(n, _)| n.starts_with("PROCESS_1:"));
    let mut traced: Vec<String> = Vec::new();
    let mut command: Vec<String> = Vec::new();
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, value) in rows {
        let short = match name.strip_prefix("PROCESS_0:") {
            Some(rest) if single_process => rest.to_string(),
            _ => name.clone(),
        };
        let leaf = short.rsplit(':').next().unwrap_or(&short);
        if short == "CAPTURE_EVENT_TYPE" {
            traced.push(value);
        } else if leaf == "COMMAND" || leaf.starts_with("ARGUMENT_") {
            command.push(value);
        } else if leaf.contains("ENVIRONMENT")
            || leaf.starts_with("PROFILING_SESSION")
            || matches!(
                leaf,
                "PID"
                    | "APPLICATION_PID"
                    | "USER_NAME"
                    | "WORKING_DIR"
                    | "DEVICE_ID"
                    | "LAUNCH_AS_ROOT"
            )
            || (leaf.starts_with("COLLECT_") && value == "false")
            || value.is_empty()
        {
            continue;
        } else {
            out.push((short, value));
        }
    }
    let mut head = Vec::new();
    if !traced.is_empty() {
        head.push(("Traced".to_string(), traced.join(", ")));
    }
    if !command.is_empty() {
        head.push(("Command".to_string(), command.join(" ")));
    }
    head.extend(out);
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_summarised_for_a_person() {
        let rows = [
            ("CAPTURE_EVENT_TYPE", "Cuda"),
            ("CAPTURE_EVENT_TYPE", "NvtxEvents"),
            ("PROCESS_0:COMMAND", "python3"),
            ("PROCESS_0:ARGUMENT_0", "train.py"),
            ("PROCESS_0:ENVIRONMENT_VARIABLE", "PATH=/bin"),
            ("PROCESS_0:COLLECT_CUDA_TRACE", "true"),
            ("PROCESS_0:COLLECT_CPU_TRACE", "false"),
            ("PROCESS_0:CUDA_GRAPH_TRACE_OPTIONS:MODE", "Graph"),
            ("PROFILING_SESSION_UUID", "1f3e"),
        ]
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .to_vec();
        let got = summarise(rows);
        let want = [
            ("Traced", "Cuda, NvtxEvents"),
            ("Command", "python3 train.py"),
            ("COLLECT_CUDA_TRACE", "true"),
            ("CUDA_GRAPH_TRACE_OPTIONS:MODE", "Graph"),
        ]
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .to_vec();
        assert_eq!(got, want);
    }
}
