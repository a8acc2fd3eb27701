//! The interned string table: every name in a trace (kernels, API calls, NVTX text, threads) is
//! stored once and referred to by a 4-byte [`StrId`], so events carry no `String` of their own.
//! A report that prints a name takes a counted reference to the same text ([`StringTable::shared`])
//! rather than a copy: an NVTX message of megabytes printed on a thousand rows is still held once.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Index of a string in a [`StringTable`].
pub type StrId = u32;

/// Append-only set of unique strings.
#[derive(Debug, Default, Clone)]
pub struct StringTable {
    /// The text of each id; the lookup's keys are the same allocations.
    strings: Vec<Arc<str>>,
    /// FxHash: a trace interns a name per event, and SipHash was a visible share of a load.
    lookup: FxHashMap<Arc<str>, StrId>,
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
        self.push(s.into())
    }

    /// [`StringTable::intern`] for text already shared: a new string is referred to, not copied.
    pub fn intern_shared(&mut self, s: &Arc<str>) -> StrId {
        if let Some(&id) = self.lookup.get(&**s) {
            return id;
        }
        self.push(Arc::clone(s))
    }

    fn push(&mut self, s: Arc<str>) -> StrId {
        let id = self.strings.len() as StrId;
        self.strings.push(Arc::clone(&s));
        self.lookup.insert(s, id);
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

    /// The string of `id` as a counted reference to the table's own text (no copy); the empty
    /// string for an id this table never gave out.
    pub fn shared(&self, id: StrId) -> Arc<str> {
        self.strings
            .get(id as usize)
            .map_or_else(|| Arc::from(""), Arc::clone)
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
        other
            .strings
            .iter()
            .map(|s| self.intern_shared(s))
            .collect()
    }

    /// Approximate heap bytes held, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.strings.iter().map(|s| s.len() + 56).sum::<usize>()
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
        // Shared, not copied: the table, its lookup and a merged table hold one allocation.
        let shared = t.shared(remap[x as usize]);
        assert!(Arc::ptr_eq(&shared, &other.shared(x)));
        assert_eq!(&*t.shared(999), "");
    }
}
