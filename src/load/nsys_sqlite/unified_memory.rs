//! Readers for the unified-memory page-fault tables (`CUDA_UM_CPU_PAGE_FAULT_EVENTS`,
//! `CUDA_UM_GPU_PAGE_FAULT_EVENTS`), in file order. CPU faults are instants (the table has no
//! `end`); the migrations are read with the other memcpys.

use super::connection::int;
use super::gpu_ops::T_MEMCPY;
use super::reader::{FileStrings, Reader, checked_span};
use crate::load::LoadError;
use crate::trace::{
    CpuPageFaults, GpuPageFaults, LoadWarnings, StringTable, UnifiedMemory, UnifiedMemoryTables,
};

pub const T_CPU_FAULTS: &str = "CUDA_UM_CPU_PAGE_FAULT_EVENTS";
pub const T_GPU_FAULTS: &str = "CUDA_UM_GPU_PAGE_FAULT_EVENTS";
/// `SourceFile` / `SourceLine` come with newer exports (Nsight Systems 2025.3's
/// `um_cpu_page_faults_sum.py` reads them); older ones select NULL.
const CPU_FAULT_COLUMNS: &[&str] = &[
    "start",
    "globalPid",
    "address",
    "CpuInstruction",
    "module",
    "SourceFile",
    "SourceLine",
];
const GPU_FAULT_COLUMNS: &[&str] = &[
    "start",
    "end",
    "globalPid",
    "deviceId",
    "address",
    "numberOfPageFaults",
    "faultAccessType",
];

fn address(v: Option<i64>) -> u64 {
    // SQLite keeps 64-bit addresses as signed integers; the bits are the address.
    v.map_or(0, |a| a as u64)
}

pub fn read_unified_memory(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(UnifiedMemory, LoadWarnings), LoadError> {
    let mut um = UnifiedMemory {
        tables: UnifiedMemoryTables {
            cpu_page_faults: r.schema.has_table(T_CPU_FAULTS),
            gpu_page_faults: r.schema.has_table(T_GPU_FAULTS),
            memcpy: r.schema.has_table(T_MEMCPY),
        },
        ..Default::default()
    };
    let mut warnings = LoadWarnings::default();
    if um.tables.cpu_page_faults {
        let conn = r.open()?;
        let sql = format!(
            "{} ORDER BY rowid",
            r.schema.select(T_CPU_FAULTS, CPU_FAULT_COLUMNS)
        );
        let f: &mut CpuPageFaults = &mut um.cpu_page_faults;
        r.for_each_row(&conn, T_CPU_FAULTS, &sql, |row| {
            let Some(start) = int(row, 0) else {
                warnings.skip(T_CPU_FAULTS, "[has|have] no start time (skipped)", 1);
                return;
            };
            let instruction = strings.get(int(row, 3)).unwrap_or(StringTable::EMPTY);
            f.spans.push(start, start, instruction);
            f.global_pid.push(int(row, 1).unwrap_or(0));
            f.address.push(address(int(row, 2)));
            f.module
                .push(strings.get(int(row, 4)).unwrap_or(StringTable::EMPTY));
            f.source_file
                .push(strings.get(int(row, 5)).unwrap_or(StringTable::EMPTY));
            f.source_line.push(int(row, 6));
        })?;
    }
    if um.tables.gpu_page_faults {
        let conn = r.open()?;
        let sql = format!(
            "{} ORDER BY rowid",
            r.schema.select(T_GPU_FAULTS, GPU_FAULT_COLUMNS)
        );
        let f: &mut GpuPageFaults = &mut um.gpu_page_faults;
        r.for_each_row(&conn, T_GPU_FAULTS, &sql, |row| {
            let Some((s, e)) = checked_span(int(row, 0), int(row, 1), T_GPU_FAULTS, &mut warnings)
            else {
                return;
            };
            f.spans.push(s, e, StringTable::EMPTY);
            f.global_pid.push(int(row, 2).unwrap_or(0));
            f.device
                .push(int(row, 3).unwrap_or(0).clamp(0, i64::from(u16::MAX)) as u16);
            f.address.push(address(int(row, 4)));
            f.faults
                .push(int(row, 5).unwrap_or(0).clamp(0, i64::from(u32::MAX)) as u32);
            f.access_type
                .push(int(row, 6).unwrap_or(0).clamp(0, 255) as u8);
        })?;
    }
    Ok((um, warnings))
}
