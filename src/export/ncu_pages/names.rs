//! The kernel name as ncu's pages print it ("Kernel Name", "Function Name"): the demangled
//! name with the casts of non-negative integer template arguments dropped (`(int)4` → `4`,
//! `(bool)1` → `1`, `(at::cuda::CUDAHistogramMemoryType)0` → `0`; `(int)-1` stays); a name
//! that is not mangled prints as it is.
//!
//! ncu 2025 also drops namespace components (`at::native::reduce_kernel` →
//! `native::reduce_kernel`, `cublasLt::epilogue::impl::globalKernel` →
//! `cublasLt::globalKernel`, but `at::native::<unnamed>::f` → `at::<unnamed>::f` in one kernel
//! and `native::<unnamed>::f` in another). No rule that explains every case of the shared
//! reports was found. What is done here is an approximation, not ncu's rule: a name qualified
//! by two or more namespaces keeps the innermost one (with `<unnamed>`, the one around it). It
//! gives ncu's name for 10 of the 17 distinct demangled kernel names of the shared reports
//! (casts alone: 0); the other 7 (cub, thrust, cublasLt, a clamp and a histogram kernel of
//! PyTorch) differ.

use std::sync::LazyLock;

use regex::Regex;

use crate::trace::ncu::NcuWorkload;

/// A qualified name: components (identifiers or `<unnamed>`) joined by `::`.
static QUALIFIED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:(?:[A-Za-z_][A-Za-z0-9_]*|<unnamed>)::)+[A-Za-z_~][A-Za-z0-9_]*").ok()
});

/// The name ncu prints for a workload.
pub fn kernel_name(w: &NcuWorkload) -> String {
    if w.demangled_name.is_empty() {
        return w.display_name().to_string();
    }
    shorten_namespaces(&drop_casts(&w.demangled_name))
}

/// `a::b::c::f` → `c::f`; `a::b::<unnamed>::f` → `b::<unnamed>::f` (see the module's note).
pub fn shorten_namespaces(name: &str) -> String {
    let Some(re) = QUALIFIED.as_ref() else {
        return name.to_string();
    };
    re.replace_all(name, |caps: &regex::Captures| {
        let whole = &caps[0];
        let parts: Vec<&str> = whole.split("::").collect();
        let n = parts.len();
        if n < 3 {
            return whole.to_string();
        }
        let keep = if parts[n - 2] == "<unnamed>" { 3 } else { 2 };
        parts[n.saturating_sub(keep)..].join("::")
    })
    .into_owned()
}

/// Removes `(TYPE)` before a digit, where TYPE holds no parenthesis.
pub fn drop_casts(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] == b'(' {
            let close = bytes[i + 1..]
                .iter()
                .position(|&b| b == b')' || b == b'(')
                .map(|p| i + 1 + p);
            if let Some(c) = close
                && bytes[c] == b')'
                && c > i + 1
                && bytes.get(c + 1).is_some_and(u8::is_ascii_digit)
                && is_type(&name[i + 1..c])
            {
                out.push_str(&name[copied..i]);
                copied = c + 1;
                i = c + 1;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&name[copied..]);
    out
}

/// A cast's type: a (qualified) name, possibly several words (`unsigned long`).
fn is_type(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':' || b == b' ')
        && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_of_non_negative_literals_go() {
        assert_eq!(
            drop_casts("void f<(int)4, (bool)1, (int)-1, (at::X)0>(int, T1 *)"),
            "void f<4, 1, (int)-1, 0>(int, T1 *)"
        );
        assert_eq!(
            drop_casts("std::array<char *, (unsigned long)2>"),
            "std::array<char *, 2>"
        );
    }

    #[test]
    fn namespaces_shorten_to_the_innermost() {
        assert_eq!(
            shorten_namespaces("void at::native::f<at::native::Op<at::Tensor>>(std::array<int>)"),
            "void native::f<native::Op<at::Tensor>>(std::array<int>)"
        );
        assert_eq!(
            shorten_namespaces("at::native::<unnamed>::CatArray"),
            "native::<unnamed>::CatArray"
        );
    }
}
