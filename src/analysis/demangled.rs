//! One spelling for a demangled kernel name, whichever demangler wrote it, so that a PyTorch
//! trace (CUPTI's names: `(anonymous namespace)`, `{lambda()#2}`, `<8, …>`, substituted
//! parameter types) and an nsys export of the same program (Nsight Systems 2025's names:
//! `<unnamed>`, `[lambda() (instance 2)]`, `<(int)8, …>`, parameters as `T3 *`) can be compared
//! name by name.
//!
//! The canonical form keeps CUPTI's spelling, drops the kernel's own parameter list (nsys 2025
//! prints template parameters there, not types), removes the casts nsys puts before integer
//! template arguments and the suffixes CUPTI puts after them (`2ul`), and the spaces around
//! punctuation.

use std::sync::LazyLock;

use regex::Regex;

static LAMBDA: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\[lambda\(([^()]*)\) \(instance (\d+)\)\]").ok());
static CAST: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool)\)(-?\d)").ok()
});
static SUFFIX: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"([<,]\s*-?\d+)(?:ull|ul|ll|u|l)\b").ok());
static SPACE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\s*([*&,<>()\[\]{}])\s*").ok());

/// The canonical spelling of a demangled kernel name.
pub fn canonical_kernel_name(name: &str) -> String {
    let mut s = without_parameters(name.trim()).to_string();
    s = s.replace("<unnamed>", "(anonymous namespace)");
    if let Some(re) = LAMBDA.as_ref() {
        s = re.replace_all(&s, "{lambda($1)#$2}").into_owned();
    }
    if let Some(re) = CAST.as_ref() {
        s = re.replace_all(&s, "$1").into_owned();
    }
    if let Some(re) = SUFFIX.as_ref() {
        s = re.replace_all(&s, "$1").into_owned();
    }
    if let Some(re) = SPACE.as_ref() {
        s = re.replace_all(&s, "$1").into_owned();
    }
    // `, ` after punctuation removal reads better with its space back.
    s.replace(',', ", ")
}

static BOOL_CAST: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\(bool\)([01])\b").ok());
static CONST_BEFORE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\bconst ([A-Za-z_][\w:]*)([*&,>)]|$)").ok());
static VOID_ARGUMENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"([<,]\s*)void\s+").ok());

/// A looser key than [`canonical_kernel_name`] for matching one program's kernels across
/// captures whose demanglers differ most (Nsight Compute's and CUPTI's, as in a PyTorch trace):
/// also `(bool)1` as `true`, `const T` as `T const`, no `void` before a function named in a
/// template argument, and no parameter list of a function that encloses a lambda (ncu prints
/// template parameters there, CUPTI the types they stand for).
pub fn kernel_match_key(name: &str) -> String {
    let mut s = name.trim().to_string();
    if let Some(re) = BOOL_CAST.as_ref() {
        s = re
            .replace_all(
                &s,
                |c: &regex::Captures| {
                    if &c[1] == "1" { "true" } else { "false" }
                },
            )
            .into_owned();
    }
    if let Some(re) = CONST_BEFORE.as_ref() {
        // Twice: a match's trailing punctuation can start the next one.
        for _ in 0..2 {
            s = re.replace_all(&s, "$1 const$2").into_owned();
        }
    }
    if let Some(re) = VOID_ARGUMENT.as_ref() {
        s = re.replace_all(&s, "$1").into_owned();
    }
    without_enclosing_parameters(&canonical_kernel_name(&s))
}

/// Removes each parameter list that is followed by `::` (with `const` between, or not): the
/// parameters of a function a lambda or a local type is named inside.
fn without_enclosing_parameters(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let after_name = i > 0
            && (bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b'>');
        if c == b'(' && after_name && !name[..i].ends_with("operator") {
            // Find the matching ')'.
            let mut depth = 0usize;
            let mut end = None;
            for (j, &d) in bytes.iter().enumerate().skip(i) {
                match d {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(end) = end {
                let rest = name[end + 1..].trim_start_matches("const");
                if rest.starts_with("::") {
                    i = end + 1;
                    continue;
                }
            }
        }
        let ch = name[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The name without its trailing parameter list: `f<int>(float*, int)` → `f<int>`.
fn without_parameters(name: &str) -> &str {
    if !name.ends_with(')') {
        return name;
    }
    let mut depth = 0i32;
    for (i, c) in name.char_indices().rev() {
        match c {
            ')' | '>' | ']' | '}' => depth += 1,
            '(' | '<' | '[' | '{' => {
                depth -= 1;
                if depth == 0 {
                    return if c == '(' { &name[..i] } else { name };
                }
            }
            _ => {}
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_demanglers_meet() {
        // From n25_ws_baseline.sqlite (Nsight Systems 2025.3.1) and kt_ws_baseline (PyTorch 2.11).
        let pairs = [
            (
                "void at::native::vectorized_elementwise_kernel<(int)8, at::native::AUnaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)2>>(int, T2, T3)",
                "void at::native::vectorized_elementwise_kernel<8, at::native::AUnaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
            ),
            (
                "void at::native::<unnamed>::cunn_SoftMaxForwardReg<c10::Half, float, c10::Half, at::native::<unnamed>::SoftMaxForwardEpilogue, long, (int)4>(T3 *, const T1 *, T5)",
                "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 4>(c10::Half*, c10::Half const*, long)",
            ),
            (
                "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
                "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT",
            ),
        ];
        for (nsys, cupti) in pairs {
            assert_eq!(canonical_kernel_name(nsys), canonical_kernel_name(cupti));
        }
        assert_eq!(
            canonical_kernel_name(pairs[1].0),
            "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 4>"
        );
        assert_eq!(
            canonical_kernel_name("f::[lambda(float) (instance 1)]"),
            "f::{lambda(float)#1}"
        );
    }

    #[test]
    fn ncu_and_cupti_meet_on_the_match_key() {
        // From ncu_kt_pair (Nsight Compute 2025.3.1) and kt_pair (PyTorch 2.11), one program.
        let pairs = [
            (
                "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float>>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
                "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1})",
            ),
            (
                "void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)",
                "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int, float, float const*, float const*, float const*, float*, float*, float*)",
            ),
            (
                "void gemmSN_TN_kernel<float, (int)128, (int)16, (int)2, (int)4, (int)8, (int)9, (bool)0, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>>(cublasGemmSmallNParams<T9, T10, T11, T1>)",
                "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<float const, float const, float, float>)",
            ),
        ];
        for (ncu, cupti) in pairs {
            assert_eq!(kernel_match_key(ncu), kernel_match_key(cupti), "{ncu}");
        }
        // Different kernels stay apart.
        assert_ne!(kernel_match_key(pairs[0].0), kernel_match_key(pairs[1].0));
        assert_ne!(
            kernel_match_key("k<(bool)1>(int)"),
            kernel_match_key("k<false>(int)")
        );
    }
}
