//! The kernel name as ncu's pages print it ("Kernel Name", "Function Name"): the demangled
//! name with the casts of non-negative integer template arguments dropped (`(int)4` → `4`,
//! `(bool)1` → `1`, `(at::cuda::CUDAHistogramMemoryType)0` → `0`; `(int)-1` stays), then
//! simplified as ncu 2022.4+ does by default (`--rename-kernels 1`): in each run of namespaces
//! (`a::b::c::`), only one is kept, the one that the fewest of the report's distinct kernel
//! names use (the first of those that tie). `at::native::reduce_kernel` prints
//! `native::reduce_kernel` in a report whose other kernels use `at::` alone (`at::Tensor`), but
//! `at::reduce_kernel` in one where `at` and `native` always come together. A run stops at
//! anything but `identifier::` (`at::native::<unnamed>::f` → `at::<unnamed>::f`). A run whose
//! namespaces every kernel name of the report uses (a C kernel's name too, which uses none) is
//! dropped whole, and with it the `<` or `[` that opens what follows (ncu's own slip:
//! `at::<unnamed>::f` prints `unnamed>::f`, `operator ()() const::[lambda…` prints
//! `operator ()() lambda…`); an ABI tag's `abi:` counts as a namespace. A name that is not
//! mangled prints as it is.
//!
//! The rule was worked out on the GPU machine with ncu 2025.3.1 on kernels made to tell the
//! candidates apart (`tests/fixtures/ncu_names/`: a namespace used by more names gives way, one
//! used only inside a template argument counts, launches of one kernel count once; one every
//! kernel uses goes, unless a C kernel is in the report) and gives ncu's name for every kernel
//! of the shared reports and of the 180 public ones.

use std::collections::HashMap;

use crate::trace::ncu::{NcuReport, NcuWorkload};

/// The printed name of every kernel of a report, worked out once for the whole report (a name
/// depends on the others).
pub struct KernelNames {
    printed: HashMap<String, String>,
}

impl KernelNames {
    pub fn of(report: &NcuReport) -> Self {
        // Each distinct demangled name once, with its casts dropped.
        let mut names: Vec<&str> = report
            .workloads
            .iter()
            .map(|w| w.demangled_name.as_str())
            .filter(|n| !n.is_empty())
            .collect();
        // Every kernel counts towards "every name uses it", a C kernel (no demangled name) too.
        // Each distinct name once before its casts are dropped (a report has a launch per row).
        let mut shown: Vec<&str> = report.workloads.iter().map(|w| w.display_name()).collect();
        shown.sort_unstable();
        shown.dedup();
        let mut all: Vec<String> = shown.into_iter().map(drop_casts).collect();
        all.sort_unstable();
        all.dedup();
        let everywhere = all.len();
        names.sort_unstable();
        names.dedup();
        let dropped: Vec<String> = names.iter().map(|n| drop_casts(n)).collect();
        // How many distinct names use each namespace.
        let mut distinct: Vec<&str> = dropped.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let mut uses: HashMap<&str, usize> = HashMap::new();
        for name in distinct {
            let mut seen: Vec<&str> = Vec::new();
            for ns in namespace_runs(name).into_iter().flat_map(|run| run.names) {
                if !seen.contains(&ns) {
                    seen.push(ns);
                }
            }
            for ns in seen {
                *uses.entry(ns).or_default() += 1;
            }
        }
        let printed = names
            .iter()
            .zip(&dropped)
            .map(|(name, dropped)| (name.to_string(), simplify(dropped, &uses, everywhere)))
            .collect();
        Self { printed }
    }

    /// The name ncu prints for a workload.
    pub fn get<'a>(&'a self, w: &'a NcuWorkload) -> &'a str {
        if w.demangled_name.is_empty() {
            return w.display_name();
        }
        self.printed
            .get(&w.demangled_name)
            .map_or(w.demangled_name.as_str(), String::as_str)
    }
}

/// A run of namespaces: `a::b::` before whatever follows.
struct Run<'a> {
    /// Byte range of the run in the name, the last `::` included.
    start: usize,
    end: usize,
    names: Vec<&'a str>,
}

/// Every run of `identifier::` in `name`.
fn namespace_runs(name: &str) -> Vec<Run<'_>> {
    let bytes = name.as_bytes();
    let is_start = |b: u8| b.is_ascii_alphabetic() || b == b'_';
    let is_part = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let ident_end = |mut j: usize| {
        while j < bytes.len() && is_part(bytes[j]) {
            j += 1;
        }
        j
    };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_start(bytes[i]) || (i > 0 && is_part(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let mut names = Vec::new();
        let mut at = i;
        loop {
            let j = ident_end(at);
            // `ns::`, or the one colon of an ABI tag (`[abi:cxx11]`), which ncu treats alike.
            let colons = name[j..].bytes().take(2).take_while(|&b| b == b':').count();
            if colons == 0 {
                break;
            }
            names.push(&name[at..j]);
            at = j + colons;
            if !bytes.get(at).copied().is_some_and(is_start) {
                break;
            }
        }
        if names.is_empty() {
            i = ident_end(i);
        } else {
            runs.push(Run {
                start: i,
                end: at,
                names,
            });
            i = at;
        }
    }
    runs
}

/// `name` with each run of two or more namespaces cut to its least used one, and a run whose
/// namespaces every distinct name uses (`everywhere` of them) dropped whole, with the `<` or `[`
/// that opens what follows it.
fn simplify(name: &str, uses: &HashMap<&str, usize>, everywhere: usize) -> String {
    let mut out = String::with_capacity(name.len());
    let mut copied = 0;
    let used = |ns: &str| uses.get(ns).copied().unwrap_or(0);
    for run in namespace_runs(name) {
        if run.names.iter().all(|ns| used(ns) >= everywhere) {
            out.push_str(&name[copied..run.start]);
            copied = run.end;
            if matches!(name.as_bytes().get(run.end), Some(b'<' | b'[')) {
                copied += 1;
            }
            continue;
        }
        if run.names.len() < 2 {
            continue;
        }
        let Some(keep) = run.names.iter().min_by_key(|ns| used(ns)) else {
            continue;
        };
        out.push_str(&name[copied..run.start]);
        out.push_str(keep);
        out.push_str("::");
        copied = run.end;
    }
    out.push_str(&name[copied..]);
    out
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
    fn a_run_keeps_its_least_used_namespace() {
        let uses: HashMap<&str, usize> = [("at", 3), ("native", 2), ("std", 5)].into();
        assert_eq!(
            simplify(
                "void at::native::f<at::native::Op<at::Tensor>>(std::array<int>)",
                &uses,
                9
            ),
            "void native::f<native::Op<at::Tensor>>(std::array<int>)"
        );
        assert_eq!(
            simplify("at::native::<unnamed>::CatArray", &uses, 9),
            "native::<unnamed>::CatArray"
        );
        // A tie keeps the first; a run stops at `<unnamed>`.
        let tie: HashMap<&str, usize> = [("da", 2), ("db", 2), ("p", 1), ("q", 1)].into();
        assert_eq!(simplify("p::q::f(p::q::T)", &tie, 9), "p::f(p::T)");
        assert_eq!(
            simplify("da::<unnamed>::db::fk()", &tie, 9),
            "da::<unnamed>::db::fk()"
        );
    }

    #[test]
    fn a_run_every_name_uses_goes_with_the_bracket_after_it() {
        let uses: HashMap<&str, usize> = [("at", 2), ("const", 2), ("std", 1), ("abi", 2)].into();
        assert_eq!(
            simplify(
                "void at::<unnamed>::f<at::T>(std::array<int>)::operator ()() const::[lambda]",
                &uses,
                2
            ),
            "void unnamed>::f<T>(std::array<int>)::operator ()() lambda]"
        );
        assert_eq!(
            simplify(
                "cudapy::g[abi:cw51](A)",
                &[("cudapy", 2), ("abi", 2)].into(),
                2
            ),
            "g[cw51](A)"
        );
        assert_eq!(
            simplify("ns::g[abi:cxx11](A)", &[("ns", 2), ("abi", 1)].into(), 2),
            "g[abi:cxx11](A)"
        );
    }
}
