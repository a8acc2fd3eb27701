//! The few messages of XLA's `hlo.proto` (package `xla`) needed to name framework ops: the
//! `/host:metadata` plane of an XPlane holds each program's `HloProto` as bytes (stat `Hlo
//! Proto`), whose instructions carry the framework op (`OpMetadata.op_name`, e.g.
//! `jit(step)/jvp()/dot_general`). Field numbers as in XLA's public `xla/service/hlo.proto` and
//! `xla/xla_data.proto`; every other field is skipped by `prost`.

use std::collections::HashMap;

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct HloProto {
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OpMetadata {
    #[prost(string, tag = "1")]
    pub op_type: String,
    #[prost(string, tag = "2")]
    pub op_name: String,
}

/// Each instruction's framework op name by its name, of one program; `None` when the bytes do
/// not decode.
pub fn framework_ops(hlo_proto: &[u8]) -> Option<HashMap<String, String>> {
    let proto = HloProto::decode(hlo_proto).ok()?;
    let mut out = HashMap::new();
    for c in proto.hlo_module?.computations {
        for i in c.instructions {
            // XProf's `TfOpFullname(op_type, op_name)`: JAX writes no op_type, and then the
            // name is the op_name itself.
            let name = match i.metadata {
                Some(m) if m.op_type.is_empty() => m.op_name,
                Some(m) => format!("{}:{}", m.op_name, m.op_type),
                None => String::new(),
            };
            // The first instruction of a name wins, as XProf's `try_emplace`.
            out.entry(i.name).or_insert(name);
        }
    }
    Some(out)
}
