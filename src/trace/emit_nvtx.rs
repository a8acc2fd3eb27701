//! What PyTorch writes in an NVTX range's text under `torch.autograd.profiler.emit_nvtx()`: the
//! operator's name, then `, seq = N` (its autograd sequence number), `, op_id = N`, and with
//! `record_shapes=True` `, sizes = [[2048, 768], [768], []]` (each input's sizes, `[]` for a
//! non-tensor) and `, input_op_ids = [(3,0), (0,-1)]` (PyTorch's `getNvtxStr`,
//! `torch/csrc/profiler/util.cpp`). An nsys export keeps that text as the range's name; the
//! operator-efficiency report reads the name and sizes from it as it reads a Kineto trace's
//! `Input Dims`. emit_nvtx writes no data types, strides or concrete inputs.

/// The parts of an emit_nvtx range text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmitNvtxText<'a> {
    /// The operator (`aten::addmm`) or `record_function` name.
    pub name: &'a str,
    pub seq: Option<i64>,
    pub op_id: Option<u64>,
    /// The sizes list as written (`[[768], [2048, 768], []]`), when shapes were recorded.
    pub sizes: Option<&'a str>,
}

const SEQ: &str = ", seq = ";
const OP_ID: &str = ", op_id = ";
const SIZES: &str = ", sizes = ";
const INPUT_OP_IDS: &str = ", input_op_ids = ";

/// The parts of `text` when it has emit_nvtx's form (at least `, op_id = N` or `, seq = N`
/// after the name); `None` for any other range text.
pub fn parse(text: &str) -> Option<EmitNvtxText<'_>> {
    // The fields follow the name in a fixed order; the name is what comes before the first.
    let first = [SEQ, OP_ID].iter().filter_map(|k| text.find(k)).min()?;
    let name = &text[..first];
    let mut rest = &text[first..];
    let number = |rest: &mut &str, key: &str| -> Option<Option<i64>> {
        let Some(after) = rest.strip_prefix(key) else {
            return Some(None);
        };
        let end = after.find(',').unwrap_or(after.len());
        let n = after[..end].trim().parse::<i64>().ok()?;
        *rest = &after[end..];
        Some(Some(n))
    };
    let seq = number(&mut rest, SEQ)?;
    let op_id = number(&mut rest, OP_ID)?;
    if seq.is_none() && op_id.is_none() {
        return None;
    }
    let sizes = match rest.strip_prefix(SIZES) {
        Some(after) => {
            let end = after.find(INPUT_OP_IDS).unwrap_or(after.len());
            let sizes = &after[..end];
            if !(sizes.starts_with('[') && sizes.ends_with(']')) {
                return None;
            }
            rest = &after[end..];
            Some(sizes)
        }
        None => None,
    };
    if !(rest.is_empty() || rest.starts_with(INPUT_OP_IDS)) {
        return None;
    }
    Some(EmitNvtxText {
        name,
        seq,
        op_id: op_id.and_then(|n| u64::try_from(n).ok()),
        sizes,
    })
}

/// The operator name of an emit_nvtx range with recorded shapes, else the text itself.
pub fn operator_name(text: &str) -> &str {
    match parse(text) {
        Some(p) if p.sizes.is_some() => p.name,
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_pytorch_writes() {
        // Texts from tests/fixtures/emit_nvtx/emit_nvtx_train.sqlite (PyTorch 2.11, nsys 2025.3).
        let p = parse(
            "aten::addmm, seq = 623, op_id = 97, sizes = [[768], [2048, 768], [768, 768], [], []], \
             input_op_ids = [(0,-1), (92,0), (94,0), (0,-1), (0,-1)]",
        )
        .expect("an emit_nvtx text");
        assert_eq!(p.name, "aten::addmm");
        assert_eq!(p.seq, Some(623));
        assert_eq!(p.op_id, Some(97));
        assert_eq!(p.sizes, Some("[[768], [2048, 768], [768, 768], [], []]"));
        let p =
            parse("aten::view, op_id = 5, sizes = [[8, 256], []], input_op_ids = [(0,-1), (0,-1)]")
                .expect("no seq");
        assert_eq!((p.name, p.seq, p.op_id), ("aten::view", None, Some(5)));
        let p = parse("step_0, op_id = 1").expect("a record_function range");
        assert_eq!((p.name, p.sizes), ("step_0", None));
        assert_eq!(operator_name("step_0, op_id = 1"), "step_0, op_id = 1");
        assert_eq!(
            operator_name("aten::mm, seq = 598, op_id = 36, sizes = [[2048, 768], [768, 2304]]"),
            "aten::mm"
        );
    }

    #[test]
    fn other_texts_are_not_read_as_operators() {
        for text in [
            "forward",
            "Layer 3, seq = x",
            "sizes = [[1]]",
            "a, op_id = 7, sizes = 12",
            "a, op_id = 7, colour = red",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }
}
