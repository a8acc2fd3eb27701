//! The Fenwick tree behind [`super::Launches::project`]: merges of GPU projections over the
//! slots from an index on, under inserts, in O(log n) each.

use super::Projection;

/// A Fenwick tree over slots answering "merge of the slots `lo..`" under inserts.
pub(super) struct SuffixAggregate {
    tree: Vec<Option<Projection>>,
}

impl SuffixAggregate {
    pub(super) fn new(len: usize) -> Self {
        Self {
            tree: vec![None; len + 1],
        }
    }

    /// Slots are stored mirrored, so a suffix is a Fenwick prefix.
    fn mirrored(&self, slot: usize) -> usize {
        self.tree.len() - 1 - slot
    }

    pub(super) fn insert(&mut self, slot: usize, value: Projection) {
        let mut i = self.mirrored(slot);
        while i < self.tree.len() {
            let cell = &mut self.tree[i];
            *cell = Some(cell.map_or(value, |c| c.merge(value)));
            i += i & i.wrapping_neg();
        }
    }

    pub(super) fn from(&self, lo: usize) -> Option<Projection> {
        if lo + 1 >= self.tree.len() {
            return None;
        }
        let mut i = self.mirrored(lo);
        let mut acc: Option<Projection> = None;
        while i > 0 {
            if let Some(c) = self.tree[i] {
                acc = Some(acc.map_or(c, |a| a.merge(c)));
            }
            i -= i & i.wrapping_neg();
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffix_aggregate_merges_inserted_slots_from_lo() {
        let mut t = SuffixAggregate::new(5);
        let p = |s, e| Projection {
            start_ns: s,
            end_ns: e,
            launches: 1,
        };
        t.insert(1, p(10, 20));
        t.insert(3, p(5, 8));
        t.insert(4, p(30, 40));
        assert_eq!(
            t.from(0),
            Some(Projection {
                start_ns: 5,
                end_ns: 40,
                launches: 3
            })
        );
        assert_eq!(
            t.from(2),
            Some(Projection {
                start_ns: 5,
                end_ns: 40,
                launches: 2
            })
        );
        assert_eq!(t.from(4), Some(p(30, 40)));
        assert_eq!(t.from(5), None);
        assert_eq!(SuffixAggregate::new(0).from(0), None);
    }
}
