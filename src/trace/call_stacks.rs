//! Interned call stacks: every distinct stack (a list of frames, innermost first) is stored once
//! and named by a [`StackId`]. CPU samples, CUDA API calls and OS-runtime calls hold a stack id;
//! the frames come from `SAMPLING_CALLCHAINS`, `CUDA_CALLCHAINS` and `OSRT_CALLCHAINS`.

use std::collections::HashMap;

use super::strings::StrId;

/// Index of a stack in [`CallStacks`].
pub type StackId = u32;

/// Marks an event with no call stack.
pub const NO_STACK: StackId = u32::MAX;

/// One frame of a call stack: the function (or, for an unresolved frame, the address text nsys
/// exported) and its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    pub function: StrId,
    pub module: StrId,
}

/// Every distinct call stack of a trace, frames innermost first.
#[derive(Debug, Clone, Default)]
pub struct CallStacks {
    frames: Vec<Frame>,
    /// Stack `s` is `frames[offsets[s]..offsets[s + 1]]`; one more entry than stacks.
    offsets: Vec<u32>,
}

impl CallStacks {
    /// Number of distinct stacks.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Frames of a stack, innermost first; empty for [`NO_STACK`] or an unknown id.
    pub fn frames(&self, id: StackId) -> &[Frame] {
        let i = id as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.frames[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Moves the stacks of `other` to the end of `self` (no deduplication across the two) and
    /// returns what to add to an id of `other` to name the same stack in `self`.
    pub fn append(&mut self, other: CallStacks) -> StackId {
        let shift = self.len() as StackId;
        if other.is_empty() {
            return shift;
        }
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        let base = self.frames.len() as u32;
        self.frames.extend_from_slice(&other.frames);
        self.offsets
            .extend(other.offsets.iter().skip(1).map(|&o| base + o));
        shift
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.frames.len() * std::mem::size_of::<Frame>() + self.offsets.len() * 4
    }
}

/// Builds a [`CallStacks`], storing each distinct stack once.
#[derive(Debug, Default)]
pub struct CallStacksBuilder {
    stacks: CallStacks,
    lookup: HashMap<Vec<Frame>, StackId>,
}

impl CallStacksBuilder {
    /// The id of `frames` (innermost first), adding the stack if it is new. An empty stack is
    /// [`NO_STACK`].
    pub fn intern(&mut self, frames: &[Frame]) -> StackId {
        if frames.is_empty() {
            return NO_STACK;
        }
        if let Some(&id) = self.lookup.get(frames) {
            return id;
        }
        if self.stacks.offsets.is_empty() {
            self.stacks.offsets.push(0);
        }
        let id = self.stacks.len() as StackId;
        self.stacks.frames.extend_from_slice(frames);
        self.stacks.offsets.push(self.stacks.frames.len() as u32);
        self.lookup.insert(frames.to_vec(), id);
        id
    }

    pub fn finish(self) -> CallStacks {
        self.stacks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_stacks_are_stored_once() {
        let f = |a, b| Frame {
            function: a,
            module: b,
        };
        let mut b = CallStacksBuilder::default();
        let x = b.intern(&[f(1, 2), f(3, 4)]);
        let y = b.intern(&[f(5, 6)]);
        let x2 = b.intern(&[f(1, 2), f(3, 4)]);
        assert_eq!(x, x2);
        assert_ne!(x, y);
        assert_eq!(b.intern(&[]), NO_STACK);
        let s = b.finish();
        assert_eq!(s.len(), 2);
        assert_eq!(s.frames(x), &[f(1, 2), f(3, 4)]);
        assert_eq!(s.frames(y), &[f(5, 6)]);
        assert!(s.frames(NO_STACK).is_empty());

        let mut c = CallStacksBuilder::default();
        let z = c.intern(&[f(7, 8), f(9, 9)]);
        let mut all = s.clone();
        let shift = all.append(c.finish());
        assert_eq!(all.len(), 3);
        assert_eq!(all.frames(z + shift), &[f(7, 8), f(9, 9)]);
        assert_eq!(all.frames(y), &[f(5, 6)]);
    }
}
