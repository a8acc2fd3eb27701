//! The tables and columns of an export that a [`Needs`] reads: the schema is narrowed before the
//! readers run, so a table left out reads as absent and a column left out as NULL, through the
//! same code that reads exports of versions that lack them.

use super::schema::Schema;
use super::{callchains, cpu_calls, gpu_metrics, gpu_ops, nvtx, openacc_openmp};
use super::{profiler_overhead, samples, sched, system, unified_memory};
use crate::trace::Needs;

/// The event tables of each part; the small system tables (GPUs, threads, session, strings) are
/// always read.
fn tables_of(part: Needs) -> &'static [&'static str] {
    match part {
        Needs::KERNELS => &[gpu_ops::T_KERNEL],
        Needs::MEMCPYS => &[gpu_ops::T_MEMCPY],
        Needs::MEMSETS => &[gpu_ops::T_MEMSET],
        Needs::GRAPHS => &[gpu_ops::T_GRAPH],
        Needs::API_CALLS => &cpu_calls::API_TABLES,
        Needs::NVTX => &[nvtx::T_NVTX],
        Needs::OSRT => &[cpu_calls::T_OSRT],
        Needs::SYNCS => &[gpu_ops::T_SYNC, gpu_ops::T_CUDA_EVENT],
        Needs::MEMORY_USAGE => &[system::T_MEMORY_USAGE],
        Needs::CPU_SAMPLES => &[samples::T_SAMPLES, callchains::T_SAMPLING_CALLCHAINS],
        Needs::THREAD_STATES => &[sched::T_SCHED],
        Needs::BACKTRACES => &[callchains::T_CUDA_CALLCHAINS, callchains::T_OSRT_CALLCHAINS],
        Needs::UNIFIED_MEMORY => &[unified_memory::T_CPU_FAULTS, unified_memory::T_GPU_FAULTS],
        Needs::PROFILER_OVERHEAD => &[profiler_overhead::T_OVERHEAD],
        Needs::GPU_METRICS => &[gpu_metrics::T_GPU_METRICS, gpu_metrics::T_GENERIC_EVENTS],
        _ => &[],
    }
}

const PARTS: [Needs; 15] = [
    Needs::KERNELS,
    Needs::MEMCPYS,
    Needs::MEMSETS,
    Needs::GRAPHS,
    Needs::API_CALLS,
    Needs::NVTX,
    Needs::OSRT,
    Needs::SYNCS,
    Needs::MEMORY_USAGE,
    Needs::CPU_SAMPLES,
    Needs::THREAD_STATES,
    Needs::BACKTRACES,
    Needs::UNIFIED_MEMORY,
    Needs::PROFILER_OVERHEAD,
    Needs::GPU_METRICS,
];

/// The kernel columns of [`Needs::KERNEL_CONFIG`].
const KERNEL_CONFIG_COLUMNS: &[&str] = &[
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "greenContextId",
];

/// The columns a lean load ([`Needs::lean`]) leaves out: where each event ran and what the
/// classic summaries do not print.
const DETAIL_COLUMNS: &[(&str, &[&str])] = &[
    (
        gpu_ops::T_KERNEL,
        &[
            "deviceId",
            "contextId",
            "streamId",
            "globalPid",
            "mangledName",
        ],
    ),
    (
        gpu_ops::T_MEMCPY,
        &[
            "deviceId",
            "contextId",
            "streamId",
            "globalPid",
            "srcKind",
            "dstKind",
            "srcDeviceId",
            "dstDeviceId",
            "greenContextId",
            "virtualAddress",
        ],
    ),
    (
        gpu_ops::T_MEMSET,
        &[
            "deviceId",
            "contextId",
            "streamId",
            "globalPid",
            "memKind",
            "greenContextId",
        ],
    ),
    (cpu_calls::API_TABLES[0], &["globalTid", "returnValue"]),
    (cpu_calls::API_TABLES[1], &["globalTid", "returnValue"]),
];

/// Narrows `schema` to what `needs` (closed under [`Needs::closed`]) reads.
pub fn narrow(schema: &mut Schema, needs: Needs) {
    if needs.is_all() {
        return;
    }
    if needs.is_lean() {
        for (table, columns) in DETAIL_COLUMNS {
            for column in *columns {
                schema.forget_column(table, column);
            }
        }
    }
    for part in PARTS {
        if !needs.contains(part) {
            for table in tables_of(part) {
                schema.forget_table(table);
            }
        }
    }
    if !needs.contains(Needs::OPENACC) {
        schema.forget_tables_with_prefix(openacc_openmp::OPENACC_PREFIX);
    }
    if !needs.contains(Needs::OPENMP) {
        schema.forget_tables_with_prefix(openacc_openmp::OPENMP_PREFIX);
    }
    if !needs.contains(Needs::KERNEL_CONFIG) {
        for column in KERNEL_CONFIG_COLUMNS {
            schema.forget_column(gpu_ops::T_KERNEL, column);
        }
    }
    if !needs.contains(Needs::GPU_LINKS) {
        for table in [gpu_ops::T_KERNEL, gpu_ops::T_MEMCPY, gpu_ops::T_MEMSET]
            .iter()
            .chain(&[gpu_ops::T_GRAPH])
            .chain(&cpu_calls::API_TABLES)
        {
            schema.forget_column(table, "correlationId");
        }
        // Graph nodes are grouped into launches by correlation: no links, no launches.
        for table in [gpu_ops::T_KERNEL, gpu_ops::T_MEMCPY, gpu_ops::T_MEMSET] {
            schema.forget_column(table, "graphNodeId");
        }
    }
    if !needs.contains(Needs::BACKTRACES) {
        for table in cpu_calls::API_TABLES.iter().chain(&[cpu_calls::T_OSRT]) {
            schema.forget_column(table, "callchainId");
        }
    }
}
