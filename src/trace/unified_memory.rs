//! CUDA unified-memory page faults (`CUDA_UM_CPU_PAGE_FAULT_EVENTS`,
//! `CUDA_UM_GPU_PAGE_FAULT_EVENTS`, recorded with `--cuda-um-cpu-page-faults` /
//! `--cuda-um-gpu-page-faults`). The migrations they cause are memcpys of copyKind 11–13 in
//! [`super::Memcpys`], with their `virtual_address`. Read by the `um_*` reports.

use super::events::Spans;
use super::strings::StrId;

/// Which unified-memory tables the export has: nsys's `um_*` reports refuse a file lacking one
/// (even an empty table lets them run).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct UnifiedMemoryTables {
    pub cpu_page_faults: bool,
    pub gpu_page_faults: bool,
    /// `CUPTI_ACTIVITY_KIND_MEMCPY`, where the migrations are.
    pub memcpy: bool,
}

/// CPU page faults on managed memory, in file order: each an instant (`spans.end_ns` equals
/// `spans.start_ns`); `spans.name` is the function of the faulting instruction
/// (`CpuInstruction`).
#[derive(Debug, Default, Clone)]
pub struct CpuPageFaults {
    pub spans: Spans,
    pub global_pid: Vec<i64>,
    /// Virtual address of the page.
    pub address: Vec<u64>,
    /// The module of the faulting instruction.
    pub module: Vec<StrId>,
    /// The source file of the faulting instruction (`SourceFile`, written by newer nsys when
    /// it could resolve it; empty otherwise).
    pub source_file: Vec<StrId>,
    /// Its line in that file (`SourceLine`).
    pub source_line: Vec<Option<i64>>,
}

/// GPU page-fault groups on managed memory, in file order; `spans.name` is unused (empty).
#[derive(Debug, Default, Clone)]
pub struct GpuPageFaults {
    pub spans: Spans,
    pub global_pid: Vec<i64>,
    pub device: Vec<u16>,
    /// Virtual address of the page.
    pub address: Vec<u64>,
    /// Faults on that page the row stands for (`numberOfPageFaults`).
    pub faults: Vec<u32>,
    /// `faultAccessType` (`ENUM_CUDA_UNIF_MEM_ACCESS_TYPE`).
    pub access_type: Vec<u8>,
}

/// The unified-memory data of a trace.
#[derive(Debug, Default, Clone)]
pub struct UnifiedMemory {
    pub tables: UnifiedMemoryTables,
    pub cpu_page_faults: CpuPageFaults,
    pub gpu_page_faults: GpuPageFaults,
}
