//! FLOPs and bytes of one operator call from its arguments: TraceLens' performance models
//! (AMD-AGI/TraceLens `TraceLens/PerfModel/perf_model.py` and `torch_op_mapping.py` at commit
//! `171dd747`), quirks included, so that the numbers agree with its `unified_perf_summary`.
//!
//! Quirks followed on purpose (docs/pytorch.md lists them):
//! - attention moves (Q + K + V + O) elements × **2 bytes** whatever the data type
//!   (`SDPA.bytes(bytes_per_element=2)`); backward adds dO, dQ, dK, dV, also × 2;
//! - `addmm`/`baddbmm` count the bias as N elements (`GEMM.bytes_func`: "assume bias shape as
//!   1xN") and every operand at the element size of A;
//! - a reduction writes one element: TraceLens reads `dim`/`keepdim` only from non-text Concrete
//!   Inputs, and a trace writes them as text (`'[0]'`, `'True'`), so `num_output_elems` is 1;
//! - a scalar operand of a binary elementwise op counts as one 4-byte element (`prod(()) == 1`,
//!   `name2bpe('Scalar') == 4`).

use super::args::ArgValue;

/// The performance model TraceLens has for an operator name (`op_to_perf_model_class_map`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelKind {
    Mm,
    Addmm,
    ScaledMm,
    Bmm,
    Baddbmm,
    /// `aten::_scaled_dot_product_flash_attention`: causal flag at Concrete Inputs[4].
    SdpaFlash,
    /// `…_efficient_attention` and `…_cudnn_attention`: causal flag at Concrete Inputs[6].
    SdpaEfficient,
    /// Sightline's own: the attention backward as one operator (see [`is_transparent`]); the
    /// causal flag's index in Concrete Inputs and whether the kernel recomputes QKᵀ (flash).
    SdpaBackward {
        causal_at: usize,
        flash: bool,
    },
    Conv,
    ConvBackward,
    Unary,
    /// `aten::replication_pad{1,2,3}d` and `aten::upsample_nearest{1,2,3}d`: unary, with the
    /// output shape from Concrete Inputs[1] (padding, or the output's spatial sizes).
    Resize {
        pad: bool,
    },
    Binary,
    /// `cumulative`: cumsum and cumprod, which write as many elements as they read.
    Reduce {
        cumulative: bool,
    },
    LayerNorm,
    LayerNormBackward,
    BatchNorm,
    RmsNorm,
    /// A norm TraceLens models that Sightline does not yet (group, instance, backward of batch
    /// and RMS norm): a row with its time, no FLOPs.
    OtherNorm {
        backward: bool,
    },
}

impl ModelKind {
    /// The category TraceLens files it under (the class's `category`).
    pub fn category(self) -> &'static str {
        match self {
            ModelKind::Mm
            | ModelKind::Addmm
            | ModelKind::ScaledMm
            | ModelKind::Bmm
            | ModelKind::Baddbmm => "GEMM",
            ModelKind::SdpaFlash | ModelKind::SdpaEfficient => "SDPA_fwd",
            ModelKind::SdpaBackward { .. } => "SDPA_bwd",
            ModelKind::Conv => "CONV_fwd",
            ModelKind::ConvBackward => "CONV_bwd",
            ModelKind::Unary | ModelKind::Resize { .. } | ModelKind::Binary => "elementwise",
            ModelKind::Reduce { .. } => "reduce",
            ModelKind::LayerNorm | ModelKind::BatchNorm | ModelKind::RmsNorm => "NORM_fwd",
            ModelKind::LayerNormBackward => "NORM_bwd",
            ModelKind::OtherNorm { backward: false } => "NORM_fwd",
            ModelKind::OtherNorm { backward: true } => "NORM_bwd",
        }
    }
}

/// The model of `name`, if TraceLens (or Sightline, for the attention backward) has one.
pub fn model_of(name: &str) -> Option<ModelKind> {
    let kind = match name {
        "aten::mm" => ModelKind::Mm,
        "aten::addmm" => ModelKind::Addmm,
        "aten::_scaled_mm" => ModelKind::ScaledMm,
        "aten::bmm" => ModelKind::Bmm,
        "aten::baddbmm" => ModelKind::Baddbmm,
        "aten::_scaled_dot_product_flash_attention" => ModelKind::SdpaFlash,
        "aten::_scaled_dot_product_efficient_attention"
        | "aten::_scaled_dot_product_cudnn_attention" => ModelKind::SdpaEfficient,
        // PyTorch's signatures (native_functions.yaml): is_causal follows dropout_p.
        "aten::_scaled_dot_product_flash_attention_backward" => ModelKind::SdpaBackward {
            causal_at: 11,
            flash: true,
        },
        "aten::_scaled_dot_product_efficient_attention_backward" => ModelKind::SdpaBackward {
            causal_at: 11,
            flash: false,
        },
        "aten::_scaled_dot_product_cudnn_attention_backward" => ModelKind::SdpaBackward {
            causal_at: 14,
            flash: false,
        },
        "aten::convolution" => ModelKind::Conv,
        "aten::convolution_backward" => ModelKind::ConvBackward,
        "aten::copy" | "aten::copy_" | "aten::clamp_min" | "aten::clamp_min_"
        | "aten::clamp_max" | "aten::clamp_max_" | "aten::sigmoid" | "aten::rsqrt"
        | "aten::silu" | "aten::neg" | "aten::pow" => ModelKind::Unary,
        "aten::replication_pad1d" | "aten::replication_pad2d" | "aten::replication_pad3d" => {
            ModelKind::Resize { pad: true }
        }
        "aten::upsample_nearest1d" | "aten::upsample_nearest2d" | "aten::upsample_nearest3d" => {
            ModelKind::Resize { pad: false }
        }
        "aten::div"
        | "aten::div_"
        | "aten::mul"
        | "aten::mul_"
        | "aten::add"
        | "aten::add_"
        | "aten::sigmoid_backward"
        | "aten::threshold_backward" => ModelKind::Binary,
        "aten::sum" | "aten::mean" | "aten::max" | "aten::min" | "aten::norm"
        | "aten::linalg_norm" | "aten::std" | "aten::var" | "aten::logsumexp" | "aten::amin"
        | "aten::amax" => ModelKind::Reduce { cumulative: false },
        "aten::cumsum" | "aten::cumprod" => ModelKind::Reduce { cumulative: true },
        "aten::layer_norm"
        | "aten::native_layer_norm"
        | "aten::miopen_layer_norm"
        | "aten::cudnn_layer_norm" => ModelKind::LayerNorm,
        "aten::layer_norm_backward"
        | "aten::native_layer_norm_backward"
        | "aten::miopen_layer_norm_backward"
        | "aten::cudnn_layer_norm_backward" => ModelKind::LayerNormBackward,
        "aten::batch_norm"
        | "aten::native_batch_norm"
        | "aten::miopen_batch_norm"
        | "aten::cudnn_batch_norm" => ModelKind::BatchNorm,
        "aten::_fused_rms_norm" => ModelKind::RmsNorm,
        n if is_other_norm(n) => ModelKind::OtherNorm {
            backward: n.ends_with("_backward"),
        },
        _ => return None,
    };
    Some(kind)
}

fn is_other_norm(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("aten::") else {
        return false;
    };
    let rest = ["native_", "miopen_", "cudnn_"]
        .iter()
        .find_map(|p| rest.strip_prefix(p))
        .unwrap_or(rest);
    matches!(
        rest,
        "group_norm"
            | "instance_norm"
            | "batch_norm_backward"
            | "group_norm_backward"
            | "instance_norm_backward"
            | "rms_norm_backward"
    ) || name == "aten::_fused_rms_norm_backward"
}

/// Whether a modelled operator still lets the modelled operators inside it have rows: the
/// attention backward, whose copies and reductions TraceLens reports on their own (it puts the
/// attention's backward numbers on one of the operators inside, through the forward's model).
pub fn is_transparent(kind: ModelKind) -> bool {
    matches!(kind, ModelKind::SdpaBackward { .. })
}

/// Matrix units (GEMM, attention, convolution) or vector units (the rest): which peak applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Matrix,
    Vector,
}

/// What a model says of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    pub flops: f64,
    /// `None` where TraceLens cannot size an operand (an unknown data type).
    pub bytes: Option<f64>,
    pub unit: Unit,
    /// The data type that sets the peak (`float`, `c10::BFloat16`), as the trace writes it.
    pub dtype: Option<String>,
}

/// An operator call's arguments, parsed.
pub struct CallArgs<'a> {
    pub dims: &'a [ArgValue],
    pub types: &'a [ArgValue],
    pub concrete: &'a [ArgValue],
}

impl CallArgs<'_> {
    fn shape(&self, k: usize) -> Result<Vec<u64>, String> {
        self.dims
            .get(k)
            .and_then(ArgValue::shape)
            .ok_or_else(|| format!("Input Dims[{k}] is not a shape"))
    }

    fn dtype(&self, k: usize) -> Option<&str> {
        self.types.get(k).and_then(ArgValue::as_str)
    }

    fn concrete(&self, k: usize) -> &str {
        self.concrete
            .get(k)
            .and_then(ArgValue::as_str)
            .unwrap_or("")
    }

    /// Whether argument `k` has dims (TraceLens: `args_input_dims[k]` is a non-empty list).
    fn has_dims(&self, k: usize) -> bool {
        !self
            .dims
            .get(k)
            .map(ArgValue::items)
            .unwrap_or(&[])
            .is_empty()
    }
}

/// Bytes per element of a data type, TraceLens' `name2bpe` (case-insensitive).
pub fn bytes_per_element(dtype: &str) -> Option<f64> {
    let b = match dtype.to_ascii_lowercase().as_str() {
        "double" | "long int" => 8.0,
        "float" | "scalar" | "int" => 4.0,
        "c10::half" | "c10::bfloat16" => 2.0,
        "c10::float8_e4m3fnuz"
        | "c10::float8_e4m3fn"
        | "c10::float8_e5m2"
        | "c10::float8_e8m0fnu"
        | "unsigned char"
        | "signed char"
        | "fp8"
        | "c10::float4_e2m1fn_x2"
        | "fp4" => 1.0,
        _ => return None,
    };
    Some(b)
}

fn product(shape: &[u64]) -> f64 {
    shape.iter().map(|&d| d as f64).product()
}

/// The model's FLOPs and bytes for one call; an error where TraceLens' model would raise.
pub fn evaluate(kind: ModelKind, args: &CallArgs) -> Result<Work, String> {
    // A call without Concrete Inputs (an nsys export's emit_nvtx ranges record sizes only) has
    // no causal flag, normalized shape, stride or output size to read: no numbers, not guesses.
    if args.concrete.is_empty() && reads_concrete_inputs(kind) {
        return Err("the trace records no Concrete Inputs for this call".to_string());
    }
    match kind {
        ModelKind::Mm => gemm(args, 0, false, false),
        ModelKind::Addmm => gemm(args, 1, true, false),
        ModelKind::Bmm => gemm(args, 0, false, true),
        ModelKind::Baddbmm => gemm(args, 1, true, true),
        ModelKind::ScaledMm => scaled_mm(args),
        ModelKind::SdpaFlash => attention(args, 4, None),
        ModelKind::SdpaEfficient => attention(args, 6, None),
        ModelKind::SdpaBackward { causal_at, flash } => attention(args, causal_at, Some(flash)),
        ModelKind::Conv => convolution(args),
        ModelKind::Unary => unary(args),
        ModelKind::Resize { pad } => resize(args, pad),
        ModelKind::Binary => binary(args),
        ModelKind::Reduce { cumulative } => reduce(args, cumulative),
        ModelKind::LayerNorm => layer_norm(args),
        ModelKind::LayerNormBackward => layer_norm_backward(args),
        ModelKind::BatchNorm => batch_norm(args),
        ModelKind::RmsNorm => rms_norm(args),
        ModelKind::ConvBackward | ModelKind::OtherNorm { .. } => {
            Err("not modelled by Sightline yet".to_string())
        }
    }
}

/// Models that read a flag or size from Concrete Inputs.
fn reads_concrete_inputs(kind: ModelKind) -> bool {
    matches!(
        kind,
        ModelKind::SdpaFlash
            | ModelKind::SdpaEfficient
            | ModelKind::SdpaBackward { .. }
            | ModelKind::Conv
            | ModelKind::Resize { .. }
            | ModelKind::LayerNorm
            | ModelKind::LayerNormBackward
            | ModelKind::BatchNorm
            | ModelKind::RmsNorm
    )
}

/// GEMM (`aten_mm`, `aten_addmm`, `aten_bmm`, `aten_baddbmm`): A and B are Input Dims[a],
/// [a + 1]; FLOPs 2·M·N·K (+ M·N with a bias), × B when batched; bytes (M·K + K·N + M·N, + N with
/// a bias) × the element size of A, × B when batched.
fn gemm(args: &CallArgs, a: usize, bias: bool, batched: bool) -> Result<Work, String> {
    let (sa, sb) = (args.shape(a)?, args.shape(a + 1)?);
    let (batch, m, k, n) = match (batched, sa.as_slice(), sb.as_slice()) {
        (false, [m, k], [_, n]) => (1.0, *m as f64, *k as f64, *n as f64),
        (true, [b, m, k], [_, _, n]) => (*b as f64, *m as f64, *k as f64, *n as f64),
        _ => return Err(format!("GEMM operands {sa:?} × {sb:?}")),
    };
    let flops = batch * (2.0 * m * n * k + if bias { m * n } else { 0.0 });
    let dtype = args.dtype(a).map(str::to_string);
    let bytes = dtype
        .as_deref()
        .and_then(bytes_per_element)
        .map(|bpe| batch * (m * k + k * n + m * n + if bias { n } else { 0.0 }) * bpe);
    Ok(Work {
        flops,
        bytes,
        unit: Unit::Matrix,
        dtype,
    })
}

/// `aten::_scaled_mm`: a bias when there are exactly three Input Dims; fp8 writes fp16 (2 bytes).
fn scaled_mm(args: &CallArgs) -> Result<Work, String> {
    let (sa, sb) = (args.shape(0)?, args.shape(1)?);
    let ([m, k], [_, n]) = (sa.as_slice(), sb.as_slice()) else {
        return Err(format!("GEMM operands {sa:?} × {sb:?}"));
    };
    let (m, k, n) = (*m as f64, *k as f64, *n as f64);
    let bias = args.dims.len() == 3;
    let flops = 2.0 * m * n * k + if bias { m * n } else { 0.0 };
    let bpe_a = args.dtype(0).and_then(bytes_per_element);
    let bpe_b = args.dtype(1).and_then(bytes_per_element);
    let (Some(bpe), Some(_)) = (bpe_a, bpe_b) else {
        return Err("data types of A and B are not supported".to_string());
    };
    let out_bpe = match bpe as u32 {
        1 => Some(2.0),
        2 | 4 => Some(bpe),
        _ => None,
    };
    let bytes = out_bpe
        .map(|out| m * k * bpe + k * n * bpe + m * n * out + if bias { n * bpe } else { 0.0 });
    Ok(Work {
        flops,
        bytes,
        unit: Unit::Matrix,
        dtype: args.dtype(0).map(str::to_string),
    })
}

/// Scaled dot-product attention, Q, K, V as (B, H, N, d) (`extract_sdpa_cfg`). Forward (`flash`
/// is `None`): FLOPs 2·B·H_q·N_q·N_kv·(d_qk + d_v); backward: the four products of dV, dP, dQ,
/// dK (+ the recomputed QKᵀ for flash). Halved when causal. Bytes × 2 per element (TraceLens).
fn attention(args: &CallArgs, causal_at: usize, backward: Option<bool>) -> Result<Work, String> {
    // The backward's Input Dims start with the output's gradient.
    let first = usize::from(backward.is_some());
    let (q, k, v) = (
        args.shape(first)?,
        args.shape(first + 1)?,
        args.shape(first + 2)?,
    );
    let ([bq, hq, nq, dqk], [bk, hk, nk, dk], [bv, hv, nv, dv]) =
        (q.as_slice(), k.as_slice(), v.as_slice())
    else {
        return Err(format!("attention operands {q:?}, {k:?}, {v:?}"));
    };
    if bq != bk || bq != bv || hk != hv || nk != nv || dqk != dk {
        return Err(format!(
            "attention operands {q:?}, {k:?}, {v:?} do not match"
        ));
    }
    let f = |x: &u64| *x as f64;
    let (b, hq, nq, nkv, hkv, dqk, dv) = (f(bq), f(hq), f(nq), f(nk), f(hk), f(dqk), f(dv));
    let flag = args.concrete(causal_at);
    let causal = !matches!(flag, "" | "None") && flag.eq_ignore_ascii_case("true");
    let (mut flops, elements) = match backward {
        None => (
            b * hq * 2.0 * nq * nkv * dqk + b * hq * 2.0 * nq * dv * nkv,
            b * nq * hq * dqk + b * nkv * hkv * dqk + b * nkv * hkv * dv + b * nq * hq * dv,
        ),
        Some(flash) => {
            // Integer division in TraceLens (`H_Q // H_KV - 1`): the GQA reduction.
            let gqa = (hq / hkv).floor() - 1.0;
            let recompute = if flash {
                b * hq * 2.0 * nq * nkv * dqk
            } else {
                0.0
            };
            let dv_grad = b * hq * 2.0 * nkv * nq * dv + b * nkv * dv * gqa;
            let dp = b * hq * 2.0 * nq * nkv * dv;
            let dq = b * hq * 2.0 * nq * nkv * dqk;
            let dk_grad = b * hq * 2.0 * nkv * nq * dqk + b * nkv * dqk * gqa;
            (
                recompute + dv_grad + dp + dq + dk_grad,
                // Q, K, V and dO read; dQ, dK, dV written.
                2.0 * (b * nq * hq * dqk + b * nkv * hkv * dqk + b * nkv * hkv * dv)
                    + b * nq * hq * dv,
            )
        }
    };
    if causal {
        if nq != nkv {
            return Err(format!("causal attention with N_q {nq} ≠ N_kv {nkv}"));
        }
        flops /= 2.0;
    }
    Ok(Work {
        flops,
        bytes: Some(elements * 2.0),
        unit: Unit::Matrix,
        dtype: args.dtype(first).map(str::to_string),
    })
}

/// `aten::convolution` (`aten_conv`): input, weight, optional bias; stride, padding, dilation,
/// transposed, output padding, groups in Concrete Inputs[3..=8].
fn convolution(args: &CallArgs) -> Result<Work, String> {
    let x = args.shape(0)?;
    let w = args.shape(1)?;
    if x.len() < 3 || w.len() != x.len() {
        return Err(format!("convolution operands {x:?}, {w:?}"));
    }
    let nd = x.len() - 2;
    let bias = args.dims.len() == 3;
    let tuple = |k: usize, default: i64| -> Result<Vec<i64>, String> {
        let text = args.concrete(k);
        if text.is_empty() {
            return Ok(vec![default; nd]);
        }
        let v: Vec<i64> = text
            .trim_matches(|c| c == '[' || c == ']' || c == '(' || c == ')')
            .split(',')
            .map(|s| s.trim().parse::<i64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("convolution argument {text}"))?;
        Ok(if v.len() == 1 { vec![v[0]; nd] } else { v })
    };
    let (stride, padding, dilation, output_padding) =
        (tuple(3, 1)?, tuple(4, 0)?, tuple(5, 1)?, tuple(7, 0)?);
    let transposed = args.concrete(6) == "True";
    if args.dtype(0) != args.dtype(1) {
        return Err("data types of input and weight differ".to_string());
    }
    let out_filters = if transposed { w[1] } else { w[0] } as i64;
    let mut out = vec![x[0] as i64, out_filters];
    for i in 0..nd {
        let (xi, wi) = (x[i + 2] as i64, w[i + 2] as i64);
        let get = |v: &[i64]| v.get(i).copied().unwrap_or(0);
        let (s, p, d) = (get(&stride), get(&padding), get(&dilation));
        out.push(if transposed {
            (xi - 1) * s - 2 * p + d * (wi - 1) + get(&output_padding) + 1
        } else {
            if s == 0 {
                return Err("convolution stride 0".to_string());
            }
            // Python's int() of a true division: truncation toward zero.
            (((xi + 2 * p - d * (wi - 1) - 1) as f64 / s as f64) + 1.0).trunc() as i64
        });
    }
    let prod_i = |v: &[i64]| v.iter().map(|&d| d as f64).product::<f64>();
    let x_f: Vec<i64> = x.iter().map(|&d| d as i64).collect();
    let w_f: Vec<i64> = w.iter().map(|&d| d as i64).collect();
    let per_element = 2.0 * prod_i(&w_f[1..]);
    let conv = if transposed {
        prod_i(&x_f)
    } else {
        prod_i(&out)
    } * per_element;
    let flops = conv + if bias { prod_i(&out) } else { 0.0 };
    let dtype = args.dtype(0).map(str::to_string);
    let bytes = dtype.as_deref().and_then(bytes_per_element).map(|bpe| {
        (prod_i(&x_f) + prod_i(&w_f) + if bias { out[1] as f64 } else { 0.0 } + prod_i(&out)) * bpe
    });
    Ok(Work {
        flops,
        bytes,
        unit: Unit::Matrix,
        dtype,
    })
}

/// Unary elementwise (`aten_unary_elementwise`): one FLOP per element; read at the input's size,
/// written at the second argument's type when it has dims (an `out`), else the input's.
fn unary(args: &CallArgs) -> Result<Work, String> {
    let n = product(&args.shape(0)?);
    let dtype_in = args.dtype(0);
    let bpe_in = dtype_in.and_then(bytes_per_element);
    let bpe_out = if args.dims.len() > 1 && args.has_dims(1) {
        args.dtype(1).and_then(bytes_per_element)
    } else {
        bpe_in
    };
    Ok(Work {
        flops: n,
        bytes: bpe_in.zip(bpe_out).map(|(i, o)| n * i + n * o),
        unit: Unit::Vector,
        dtype: dtype_in.map(str::to_string),
    })
}

/// `aten_replication_pad` / `aten_upsample_nearest`: one FLOP per output element; the input
/// read and the output written at the input's element size.
fn resize(args: &CallArgs, pad: bool) -> Result<Work, String> {
    let input = args.shape(0)?;
    let sizes: Vec<i64> = args
        .concrete(1)
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("resize argument {}", args.concrete(1)))?;
    let mut out: Vec<i64> = input.iter().map(|&d| d as i64).collect();
    if pad {
        // Padding pairs innermost first: pair 0 widens the last dimension.
        for (i, pair) in sizes.chunks(2).enumerate() {
            let Some(d) = out.len().checked_sub(1 + i) else {
                break;
            };
            out[d] += pair.iter().sum::<i64>();
        }
    } else {
        out.truncate(2);
        out.extend_from_slice(&sizes);
    }
    let n_in = product(&input);
    let n_out: f64 = out.iter().map(|&d| d as f64).product();
    let dtype = args.dtype(0);
    Ok(Work {
        flops: n_out,
        bytes: dtype
            .and_then(bytes_per_element)
            .map(|b| n_in * b + n_out * b),
        unit: Unit::Vector,
        dtype: dtype.map(str::to_string),
    })
}

/// Binary elementwise (`aten_binary_elementwise`): one FLOP per output element (the broadcast
/// shape); each input read at its size, the output at the third argument's type when it has
/// dims, else the wider input's (two tensors) or the first's.
fn binary(args: &CallArgs) -> Result<Work, String> {
    let (s1, s2) = (args.shape(0)?, args.shape(1)?);
    let nd = s1.len().max(s2.len());
    let pad = |s: &[u64]| {
        let mut v = vec![1u64; nd - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (p1, p2) = (pad(&s1), pad(&s2));
    let mut out = Vec::with_capacity(nd);
    for (&a, &b) in p1.iter().zip(&p2) {
        if a != b && a != 1 && b != 1 {
            return Err(format!("shapes not broadcastable: {s1:?} and {s2:?}"));
        }
        out.push(a.max(b));
    }
    let (n1, n2, n_out) = (product(&s1), product(&s2), product(&out));
    let (b1, b2) = (
        args.dtype(0).and_then(bytes_per_element),
        args.dtype(1).and_then(bytes_per_element),
    );
    let b_out = if args.dims.len() > 2 && args.has_dims(2) {
        args.dtype(2).and_then(bytes_per_element)
    } else {
        match (b1, b2) {
            (Some(a), Some(b)) if !s1.is_empty() && !s2.is_empty() => Some(a.max(b)),
            (Some(a), Some(_)) => Some(a),
            _ => None,
        }
    };
    let bytes = match (b1, b2, b_out) {
        (Some(a), Some(b), Some(o)) => Some(n1 * a + n2 * b + n_out * o),
        _ => None,
    };
    Ok(Work {
        flops: n_out,
        bytes,
        unit: Unit::Vector,
        dtype: args.dtype(0).map(str::to_string),
    })
}

/// Reductions (`aten_reduce`): one FLOP per input element; the input read and, as TraceLens reads
/// a trace's text arguments, one output element written (all of them for cumsum/cumprod).
fn reduce(args: &CallArgs, cumulative: bool) -> Result<Work, String> {
    let Some(first) = args.dims.first() else {
        return Ok(Work {
            flops: 0.0,
            bytes: None,
            unit: Unit::Vector,
            dtype: None,
        });
    };
    let n = product(&first.shape().ok_or("Input Dims[0] is not a shape")?);
    let dtype = args.dtype(0).filter(|d| !d.is_empty());
    let bpe = dtype.and_then(bytes_per_element);
    Ok(Work {
        flops: n,
        bytes: bpe.map(|b| n * b + if cumulative { n } else { 1.0 } * b),
        unit: Unit::Vector,
        dtype: dtype.map(str::to_string),
    })
}

/// `parse_list(text, int)`: the product of a list of sizes written as text (`'[768]'`).
fn channels(text: &str) -> Result<f64, String> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    inner
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<f64>())
        .product::<Result<f64, _>>()
        .map_err(|_| format!("normalized shape {text}"))
}

/// `parse_list(text, bool)`: Python's `bool()` of each item `ast.literal_eval` gives.
fn mask(text: &str) -> Vec<bool> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| !matches!(s, "False" | "0" | "0.0" | "None"))
        .collect()
}

/// The forward of a normalisation (`Normalization.flops_func` / `bytes_func`).
fn norm_forward(
    n: f64,
    c: f64,
    affine: bool,
    bias: bool,
    training: bool,
    dtype: Option<&str>,
) -> Work {
    let mut flops = c * 3.0;
    if training {
        flops += n * 3.0;
    }
    flops += c * 3.0 + 2.0 * n;
    let mut tensors = 2.0;
    if affine {
        tensors += 1.0;
        if bias {
            tensors += 1.0;
        }
    }
    if training {
        tensors += 2.0;
    }
    let bytes = dtype
        .and_then(bytes_per_element)
        .map(|b| n * b + n * b + tensors * c * b);
    Work {
        flops,
        bytes,
        unit: Unit::Vector,
        dtype: dtype.map(str::to_string),
    }
}

/// `LayerNorm`: channels from Concrete Inputs[1]; affine and bias always (an absent weight is an
/// empty list, never Python's `None`); training.
fn layer_norm(args: &CallArgs) -> Result<Work, String> {
    let n = product(&args.shape(0)?);
    let c = channels(args.concrete(1))?;
    Ok(norm_forward(n, c, true, true, true, args.dtype(0)))
}

/// `BatchNorm`: channels are dimension 1; training is `bool(Concrete Inputs[5])`, true for any
/// non-empty text.
fn batch_norm(args: &CallArgs) -> Result<Work, String> {
    let shape = args.shape(0)?;
    let c = *shape.get(1).ok_or("batch norm input without channels")? as f64;
    let training = !args.concrete(5).is_empty();
    Ok(norm_forward(
        product(&shape),
        c,
        true,
        true,
        training,
        args.dtype(0),
    ))
}

/// `RMSNorm`: FLOPs (elements / channels)·(2·channels + 2) + elements·2 (affine); bytes read
/// input, write output, read the weight.
fn rms_norm(args: &CallArgs) -> Result<Work, String> {
    let n = product(&args.shape(0)?);
    let c = channels(args.concrete(1))?;
    let dtype = args.dtype(0);
    let flops = n / c * (2.0 * c + 2.0) + n * 2.0;
    // TraceLens' `is_affine = args_input_dims[2] is not None`: always.
    let bytes = dtype
        .and_then(bytes_per_element)
        .map(|b| n * b + n * b + c * b);
    Ok(Work {
        flops,
        bytes,
        unit: Unit::Vector,
        dtype: dtype.map(str::to_string),
    })
}

/// `LayerNormBwd`: the input is Input Dims[1], channels Concrete Inputs[2], the output mask [7].
fn layer_norm_backward(args: &CallArgs) -> Result<Work, String> {
    let n = product(&args.shape(1)?);
    let c = channels(args.concrete(2))?;
    let mask = mask(args.concrete(7));
    let get = |k: usize| mask.get(k).copied().unwrap_or(false);
    let (dx, affine, bias) = (get(0), get(1), get(2));
    // Training: per channel 4·(n/c) for the dot product, + 5·(n/c) with dx.
    let per_channel = n / c;
    let flops_per_channel = 4.0 * per_channel + if dx { 5.0 } else { 2.0 } * per_channel;
    let flops = c * flops_per_channel;
    let dtype = args.dtype(1);
    let bytes = dtype.and_then(bytes_per_element).map(|b| {
        let mut bytes = n * b + n * b * if dx { 2.0 } else { 1.0 };
        bytes += c * b;
        if affine {
            bytes += c * b;
            bytes += c * b * if bias { 2.0 } else { 1.0 };
        }
        bytes
    });
    Ok(Work {
        flops,
        bytes,
        unit: Unit::Vector,
        dtype: dtype.map(str::to_string),
    })
}
