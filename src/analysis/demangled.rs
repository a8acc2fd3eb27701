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
}
