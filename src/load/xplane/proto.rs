//! The XPlane protobuf messages that `jax.profiler` (and TensorFlow's profiler) write to
//! `<host>.xplane.pb`, declared by hand for `prost` (no `protoc` needed), field numbers as in the
//! public `tsl/profiler/protobuf/xplane.proto` (package `tensorflow.profiler`; in XLA's tree at
//! `xla/tsl/profiler/protobuf/xplane.proto`, formerly `third_party/tsl/tsl/profiler/protobuf/`).
//! Every field of that schema is declared, so nothing is skipped silently.

use std::collections::HashMap;

use prost::{Message, Oneof};

/// A whole capture: one plane per device or host domain.
#[derive(Clone, PartialEq, Message)]
pub struct XSpace {
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    #[prost(string, repeated, tag = "2")]
    pub errors: Vec<String>,
    #[prost(string, repeated, tag = "3")]
    pub warnings: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

/// A device (`/device:GPU:0`) or host domain (`/host:CPU`, `/host:metadata`).
#[derive(Clone, PartialEq, Message)]
pub struct XPlane {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    /// Event names (and their constant stats) by the id events refer to.
    #[prost(map = "int64, message", tag = "4")]
    pub event_metadata: HashMap<i64, XEventMetadata>,
    /// Stat names by id; XLA's writers also intern string values here (a `ref_value` names
    /// the entry whose `name` is the value).
    #[prost(map = "int64, message", tag = "5")]
    pub stat_metadata: HashMap<i64, XStatMetadata>,
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

/// A timeline of a plane: a CUDA stream, a host thread.
#[derive(Clone, PartialEq, Message)]
pub struct XLine {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "11")]
    pub display_name: String,
    /// What the events' `offset_ps` count from, in ns (JAX writes it from the session start).
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
}

/// One occurrence of an event.
#[derive(Clone, PartialEq, Message)]
pub struct XEvent {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "EventData", tags = "2, 5")]
    pub data: Option<EventData>,
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// An event's place: an offset from its line's timestamp, or a count of an aggregated event.
#[derive(Clone, PartialEq, Oneof)]
pub enum EventData {
    #[prost(int64, tag = "2")]
    OffsetPs(i64),
    #[prost(int64, tag = "5")]
    NumOccurrences(i64),
}

/// A named value on an event, a plane or an event's metadata.
#[derive(Clone, PartialEq, Message)]
pub struct XStat {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "StatValue", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<StatValue>,
}

#[derive(Clone, PartialEq, Oneof)]
pub enum StatValue {
    #[prost(double, tag = "2")]
    Double(f64),
    #[prost(uint64, tag = "3")]
    Uint64(u64),
    #[prost(int64, tag = "4")]
    Int64(i64),
    #[prost(string, tag = "5")]
    Str(String),
    #[prost(bytes = "vec", tag = "6")]
    Bytes(Vec<u8>),
    /// The id of a [`XStatMetadata`] whose `name` is the value.
    #[prost(uint64, tag = "7")]
    Ref(u64),
}

#[derive(Clone, PartialEq, Message)]
pub struct XEventMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub display_name: String,
    #[prost(bytes = "vec", tag = "3")]
    pub metadata: Vec<u8>,
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
    #[prost(int64, repeated, tag = "6")]
    pub child_id: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct XStatMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub description: String,
}
