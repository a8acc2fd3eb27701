//! The messages of a report that its Source page reads (package `NV.Profiler.Messages`, by
//! field number as real reports of ncu 2025.3 hold them): a block's `ProfileSource` messages —
//! a module's reference, its cubin (`Binary`), the SM revision, the CUDA files imported with
//! `--import-source yes` and the functions with their load addresses — and, of each profiled
//! kernel, the reference of its module and its metric results.

use bytes::Bytes;
use prost::Message;

use super::messages::MetricResult;

/// A module's source data (ncu's `SourceData` within the block's source messages).
#[derive(Clone, PartialEq, Message)]
pub struct ProfileSource {
    #[prost(uint64, optional, tag = "1")]
    pub reference: Option<u64>,
    /// The cubin: an ELF image whose `.text.<mangled name>` sections hold the SASS.
    #[prost(bytes = "bytes", optional, tag = "4")]
    pub binary: Option<Bytes>,
    #[prost(uint32, optional, tag = "6")]
    pub sm_revision: Option<u32>,
    #[prost(message, optional, tag = "8")]
    pub files: Option<SourceFiles>,
    #[prost(message, optional, tag = "9")]
    pub functions: Option<SourceFunctions>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SourceFiles {
    #[prost(message, repeated, tag = "1")]
    pub files: Vec<SourceFile>,
}

/// An imported source file; its text as bytes (a file need not be UTF-8).
#[derive(Clone, PartialEq, Message)]
pub struct SourceFile {
    #[prost(string, optional, tag = "1")]
    pub path: Option<String>,
    #[prost(bytes = "bytes", optional, tag = "2")]
    pub text: Option<Bytes>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SourceFunctions {
    #[prost(message, repeated, tag = "1")]
    pub functions: Vec<SourceFunction>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SourceFunction {
    #[prost(string, optional, tag = "1")]
    pub mangled_name: Option<String>,
    #[prost(uint64, optional, tag = "2")]
    pub address: Option<u64>,
}

/// What the Source page reads of a profiled kernel.
#[derive(Clone, PartialEq, Message)]
pub struct SourceResult {
    #[prost(message, repeated, tag = "13")]
    pub metric_results: Vec<MetricResult>,
    #[prost(message, optional, tag = "15")]
    pub source: Option<SourceReference>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SourceReference {
    #[prost(uint64, optional, tag = "1")]
    pub reference: Option<u64>,
}
