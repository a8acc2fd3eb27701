//! The TEMP views over an nsys export: one set of names and columns whatever the version wrote.
//!
//! Each view is written for the tables and columns this export has (read first with
//! [`Schema`]): a missing column reads as NULL, a missing table gives an empty view with the same
//! columns. Names come out of `StringIds`, pid/tid out of `globalPid`/`globalTid` as
//! [`crate::trace::GlobalTid`] decodes them (low 24 bits tid, next 24 bits pid).

use crate::load::nsys_sqlite::Schema;

/// `(name, columns)` of every view, in the order they are documented.
pub const VIEWS: &[(&str, &str)] = &[
    (
        "kernels",
        "start, end, dur, name, short_name, device, stream, pid, tid, correlation, grid, block, graph",
    ),
    (
        "memcpy",
        "start, end, dur, kind, bytes, device, stream, pid, correlation",
    ),
    (
        "memset",
        "start, end, dur, bytes, device, stream, correlation",
    ),
    ("api", "start, end, dur, name, pid, tid, correlation"),
    (
        "ranges",
        "start, end, dur, name, kind, domain, depth, pid, tid",
    ),
    ("threads", "pid, tid, name"),
    ("gpus", "device, name"),
];

/// Columns of `graph_executions`, made only where the trace has CUDA graphs traced as a whole.
pub const GRAPH_EXECUTIONS: &str =
    "start, end, dur, device, stream, pid, correlation, graph_id, graph_exec_id";

const PID: &str = "((%G >> 24) & 16777215)";
const TID: &str = "(%G & 16777215)";

fn pid(col: &str) -> String {
    PID.replace("%G", col)
}

fn tid(col: &str) -> String {
    TID.replace("%G", col)
}

/// A string column that holds a `StringIds` id (or, in some versions, the text itself).
fn string_of(schema: &Schema, table_alias: &str, table: &str, column: &str) -> String {
    if !schema.has_column(table, column) {
        return "NULL".into();
    }
    let col = format!("{table_alias}.\"{column}\"");
    if schema.has_table("StringIds") {
        format!("COALESCE((SELECT value FROM StringIds WHERE id = {col}), {col})")
    } else {
        col
    }
}

fn col(schema: &Schema, alias: &str, table: &str, column: &str) -> String {
    if schema.has_column(table, column) {
        format!("{alias}.\"{column}\"")
    } else {
        "NULL".into()
    }
}

/// An empty view with `columns`.
fn empty(columns: &str) -> String {
    let list: Vec<String> = columns
        .split(", ")
        .map(|c| format!("NULL AS \"{c}\""))
        .collect();
    format!("SELECT {} WHERE 0", list.join(", "))
}

/// The `CREATE TEMP VIEW` statements for this export.
pub fn create_statements(schema: &Schema) -> Vec<String> {
    let mut out: Vec<String> = VIEWS
        .iter()
        .map(|(name, columns)| {
            let body = match *name {
                "kernels" => kernels(schema),
                "memcpy" => memcpy(schema),
                "memset" => memset(schema),
                "api" => api(schema),
                "ranges" => ranges(schema),
                "threads" => threads(schema),
                _ => gpus(schema),
            }
            .unwrap_or_else(|| empty(columns));
            format!("CREATE TEMP VIEW \"{name}\" AS {body}")
        })
        .collect();
    if let Some(body) = graph_executions(schema) {
        out.push(format!("CREATE TEMP VIEW graph_executions AS {body}"));
    }
    // The time the window's axis counts from: an export's session start.
    out.push(format!("CREATE TEMP VIEW origin AS SELECT 0 AS {ORIGIN}"));
    out
}

/// The one column of `origin`: the time the window's axis and the details count from (0 in an
/// nsys export; a PyTorch trace's first event, its times being epoch ns), so that
/// `start - (SELECT start FROM origin)` reads as the window shows.
pub const ORIGIN: &str = "start";

/// `launch(pid, correlation, tid)`: the thread of each CUDA call, one row per (pid, correlation),
/// for joining GPU work to the thread that launched it (a GPU op belongs to the call with the same
/// `correlationId` in the same process). Materialized, so SQLite indexes it for the join.
fn launch_cte(schema: &Schema) -> Option<String> {
    let parts: Vec<String> = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"]
        .iter()
        .filter(|t| schema.has_column(t, "correlationId") && schema.has_column(t, "globalTid"))
        .map(|t| {
            format!(
                "SELECT {} AS pid, correlationId AS correlation, {} AS tid FROM {t}",
                pid("globalTid"),
                tid("globalTid")
            )
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "launch AS MATERIALIZED (SELECT pid, correlation, MIN(tid) AS tid FROM ({}) \
         GROUP BY pid, correlation)",
        parts.join(" UNION ALL ")
    ))
}

fn dims(schema: &Schema, table: &str, prefix: &str) -> String {
    let c: Vec<String> = ["X", "Y", "Z"]
        .iter()
        .map(|a| col(schema, "k", table, &format!("{prefix}{a}")))
        .collect();
    if c.iter().any(|x| x == "NULL") {
        return "NULL".into();
    }
    format!("{} || 'x' || {} || 'x' || {}", c[0], c[1], c[2])
}

fn kernels(schema: &Schema) -> Option<String> {
    let t = "CUPTI_ACTIVITY_KIND_KERNEL";
    if !schema.has_table(t) {
        return None;
    }
    // `name` is the demangled name, as cuda_gpu_kern_sum groups (older exports wrote only it).
    let (with, join, tid) = match launch_cte(schema) {
        Some(cte) => (
            format!("WITH {cte} "),
            format!(
                " LEFT JOIN launch l ON l.correlation = k.correlationId AND l.pid = {}",
                pid("k.globalPid")
            ),
            "l.tid",
        ),
        None => (String::new(), String::new(), "NULL"),
    };
    Some(format!(
        "{with}SELECT k.start AS start, k.\"end\" AS \"end\", k.\"end\" - k.start AS dur, \
         {name} AS name, {short} AS short_name, k.deviceId AS device, k.streamId AS stream, \
         {pid} AS pid, {tid} AS tid, k.correlationId AS correlation, {grid} AS grid, \
         {block} AS block, {graph} AS graph FROM {t} k{join}",
        name = string_of(schema, "k", t, "demangledName"),
        short = string_of(schema, "k", t, "shortName"),
        pid = pid("k.globalPid"),
        grid = dims(schema, t, "grid"),
        block = dims(schema, t, "block"),
        graph = col(schema, "k", t, "graphNodeId"),
    ))
}

/// nsys's labels of `copyKind` (`ENUM_CUDA_MEMCPY_OPER`), fixed across versions; written out
/// so that exports without the ENUM table (before 2022.4) read the same.
const COPY_KINDS: &[(u8, &str)] = &[
    (0, "Unknown"),
    (1, "Host-to-Device"),
    (2, "Device-to-Host"),
    (3, "Host-to-Array"),
    (4, "Array-to-Host"),
    (5, "Array-to-Array"),
    (6, "Array-to-Device"),
    (7, "Device-to-Array"),
    (8, "Device-to-Device"),
    (9, "Host-to-Host"),
    (10, "Peer-to-Peer"),
    (11, "Unified Host-to-Device"),
    (12, "Unified Device-to-Host"),
    (13, "Unified Device-to-Device"),
];

/// SQL that labels a copy kind the way [`crate::trace::CopyKind::label`] does.
pub fn copy_kind_case(column: &str) -> String {
    let arms: Vec<String> = COPY_KINDS
        .iter()
        .map(|(k, l)| format!("WHEN {k} THEN '{l}'"))
        .collect();
    format!("CASE {column} {} ELSE 'Unknown' END", arms.join(" "))
}

fn memcpy(schema: &Schema) -> Option<String> {
    let t = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if !schema.has_table(t) {
        return None;
    }
    Some(format!(
        "SELECT k.start AS start, k.\"end\" AS \"end\", k.\"end\" - k.start AS dur, \
         {kind} AS kind, k.bytes AS bytes, k.deviceId AS device, k.streamId AS stream, \
         {pid} AS pid, k.correlationId AS correlation FROM {t} k",
        kind = copy_kind_case("k.copyKind"),
        pid = pid("k.globalPid"),
    ))
}

fn memset(schema: &Schema) -> Option<String> {
    let t = "CUPTI_ACTIVITY_KIND_MEMSET";
    if !schema.has_table(t) {
        return None;
    }
    Some(format!(
        "SELECT k.start AS start, k.\"end\" AS \"end\", k.\"end\" - k.start AS dur, \
         k.bytes AS bytes, k.deviceId AS device, k.streamId AS stream, \
         k.correlationId AS correlation FROM {t} k"
    ))
}

fn api(schema: &Schema) -> Option<String> {
    let parts: Vec<String> = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"]
        .iter()
        .filter(|t| schema.has_table(t))
        .map(|t| {
            format!(
                "SELECT k.start AS start, k.\"end\" AS \"end\", k.\"end\" - k.start AS dur, \
                 {name} AS raw_name, {pid} AS pid, {tid} AS tid, \
                 k.correlationId AS correlation FROM {t} k",
                name = string_of(schema, "k", t, "nameId"),
                pid = pid("k.globalTid"),
                tid = tid("k.globalTid"),
            )
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    // cuda_api_sum's naming: `cudaLaunchKernel_v7000` is `cudaLaunchKernel`.
    Some(format!(
        "SELECT start, \"end\", dur, CASE WHEN substr(raw_name, -6, 2) = '_v' \
         THEN substr(raw_name, 1, length(raw_name) - 6) ELSE raw_name END AS name, \
         pid, tid, correlation FROM ({})",
        parts.join(" UNION ALL ")
    ))
}

fn ranges(schema: &Schema) -> Option<String> {
    let t = "NVTX_EVENTS";
    if !schema.has_column(t, "eventType") {
        return None;
    }
    let text = if schema.has_column(t, "textId") && schema.has_table("StringIds") {
        "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))".to_string()
    } else {
        col(schema, "n", t, "text")
    };
    let domain_text = if schema.has_column(t, "textId") && schema.has_table("StringIds") {
        "COALESCE(d.text, (SELECT value FROM StringIds WHERE id = d.textId))"
    } else {
        "d.text"
    };
    let domain_id = col(schema, "n", t, "domainId");
    // Push/pop (59, 70) and start/end (60, 71) ranges; an unclosed range ends at the last NVTX
    // timestamp, as nvtx_sum ends it. `depth` is how many ranges of the same thread are still
    // open when it starts (equal starts: the longer is the outer), 0 outermost.
    Some(format!(
        "WITH r AS (SELECT n.rowid AS id, n.start AS start, \
           COALESCE(n.\"end\", (SELECT MAX(MAX(start, COALESCE(\"end\", start))) FROM {t})) AS \"end\", \
           {text} AS name, {domain_id} AS domain_id, n.globalTid AS g \
           FROM {t} n WHERE n.eventType IN (59, 60, 70, 71)), \
         dom AS MATERIALIZED (SELECT d.domainId AS domain_id, MIN({domain_text}) AS domain \
           FROM {t} d WHERE d.eventType = 75 GROUP BY d.domainId), \
         edges AS (SELECT id, g, start AS t, 1 AS step, -\"end\" AS tie FROM r \
           UNION ALL SELECT id, g, \"end\", -1, 0 FROM r), \
         depth AS MATERIALIZED (SELECT id, depth FROM (SELECT id, step, \
           SUM(step) OVER (PARTITION BY g ORDER BY t, step, tie, id ROWS UNBOUNDED PRECEDING) - 1 \
           AS depth FROM edges) WHERE step = 1) \
         SELECT r.start AS start, r.\"end\" AS \"end\", r.\"end\" - r.start AS dur, r.name AS name, \
           'nvtx' AS kind, dom.domain AS domain, depth.depth AS depth, {pid} AS pid, \
           {tid} AS tid FROM r LEFT JOIN dom ON dom.domain_id = r.domain_id \
           LEFT JOIN depth ON depth.id = r.id",
        pid = pid("r.g"),
        tid = tid("r.g"),
    ))
}

/// Tables whose rows belong to a CPU thread (`globalTid`): a thread in any of them is listed,
/// named or not, as the model lists every thread with events.
const THREAD_TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "NVTX_EVENTS",
    "OSRT_API",
    "COMPOSITE_EVENTS",
    "SCHED_EVENTS",
];

fn threads(schema: &Schema) -> Option<String> {
    let t = "ThreadNames";
    let mut parts: Vec<String> = Vec::new();
    if schema.has_column(t, "globalTid") {
        parts.push(format!(
            "SELECT k.globalTid AS g, {name} AS name FROM {t} k",
            name = string_of(schema, "k", t, "nameId"),
        ));
    }
    for table in THREAD_TABLES {
        if schema.has_column(table, "globalTid") {
            parts.push(format!(
                "SELECT DISTINCT globalTid AS g, NULL AS name FROM {table} WHERE globalTid IS NOT NULL"
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "SELECT {pid} AS pid, {tid} AS tid, MIN(name) AS name FROM ({}) GROUP BY g",
        parts.join(" UNION ALL "),
        pid = pid("g"),
        tid = tid("g"),
    ))
}

fn gpus(schema: &Schema) -> Option<String> {
    let t = "TARGET_INFO_GPU";
    if schema.has_table(t) {
        // The CUDA ordinal: `cuDevice`, else mapped through TARGET_INFO_CUDA_DEVICE (2025), else
        // `id` (as the loader's read_gpus decides).
        let mapped = if schema.has_column("TARGET_INFO_CUDA_DEVICE", "gpuId")
            && schema.has_column("TARGET_INFO_CUDA_DEVICE", "cudaId")
        {
            "(SELECT c.cudaId FROM TARGET_INFO_CUDA_DEVICE c WHERE c.gpuId = g.id LIMIT 1)"
        } else {
            "NULL"
        };
        return Some(format!(
            "SELECT COALESCE({cu}, {mapped}, {id}, {dev}) AS device, {name} AS name FROM {t} g",
            cu = col(schema, "g", t, "cuDevice"),
            id = col(schema, "g", t, "id"),
            dev = col(schema, "g", t, "deviceId"),
            name = col(schema, "g", t, "name"),
        ));
    }
    let t = "TARGET_INFO_CUDA_GPU";
    if schema.has_column(t, "deviceId") {
        return Some(format!(
            "SELECT g.deviceId AS device, {name} AS name FROM {t} g",
            name = col(schema, "g", t, "name"),
        ));
    }
    None
}

fn graph_executions(schema: &Schema) -> Option<String> {
    let t = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
    if !schema.has_table(t) {
        return None;
    }
    Some(format!(
        "SELECT k.start AS start, k.\"end\" AS \"end\", k.\"end\" - k.start AS dur, \
         k.deviceId AS device, k.streamId AS stream, {pid} AS pid, \
         k.correlationId AS correlation, {g} AS graph_id, {e} AS graph_exec_id FROM {t} k",
        pid = pid("k.globalPid"),
        g = col(schema, "k", t, "graphId"),
        e = col(schema, "k", t, "graphExecId"),
    ))
}
