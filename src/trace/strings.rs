//! The interned string table: every name in a trace (kernels, API calls, NVTX text, threads) is
//! stored once and referred to by a 4-byte [`StrId`], so events carry no `String` of their own.

use std::collections::HashMap;

/// Index of a string in a [`StringTable`].
pub type StrId = u32;

/// Append-only set of unique strings.
#[derive(Debug, Default, Clone)]
pub struct StringTable {
    strings: Vec<Box<str>>,
    lookup: HashMap<Box<str>, StrId>,
}

impl StringTable {
    /// A table whose id 0 is the empty string, used for missing names.
    pub fn new() -> Self {
        let mut table = Self::default();
        table.intern("");
        table
    }

    /// The id of the empty string.
    pub const EMPTY: StrId = 0;

    /// Returns the id of `s`, adding it when it is new.
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.lookup.get(s) {
            return id;
        }
        let id = self.strings.len() as StrId;
        let boxed: Box<str> = s.into();
        self.strings.push(boxed.clone());
        self.lookup.insert(boxed, id);
        id
    }

    /// The id of `s` if it is in the table.
    pub fn find(&self, s: &str) -> Option<StrId> {
        self.lookup.get(s).copied()
    }

    /// The string of `id`; the empty string for an id this table never gave out.
    pub fn get(&self, id: StrId) -> &str {
        self.strings.get(id as usize).map_or("", |s| s)
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Moves every string of `other` into this table and returns, for each id of `other`,
    /// its id here.
    pub fn merge(&mut self, other: &StringTable) -> Vec<StrId> {
        other.strings.iter().map(|s| self.intern(s)).collect()
    }

    /// Approximate heap bytes held, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.strings.iter().map(|s| 2 * s.len() + 40).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_returns_one_id_per_distinct_string() {
        let mut t = StringTable::new();
        let a = t.intern("gemm");
        let b = t.intern("relu");
        assert_eq!(t.intern("gemm"), a);
        assert_ne!(a, b);
        assert_eq!(t.get(b), "relu");
        assert_eq!(t.get(StringTable::EMPTY), "");
        assert_eq!(t.get(999), "");
        let mut other = StringTable::new();
        let r = other.intern("relu");
        let x = other.intern("x");
        let remap = t.merge(&other);
        assert_eq!(remap[r as usize], b);
        assert_eq!(t.get(remap[x as usize]), "x");
    }
}
