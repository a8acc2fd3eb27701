//! What a command needs read from a trace file: the parts of the model it looks at. The window
//! needs everything; `summary --report cuda_gpu_kern_sum` needs the kernels' times, streams and
//! names and nothing else, and a loader that is told so reads only those tables and columns.
//! Each report and rule declares its [`Needs`]; the command line loads their union.

use std::ops::{BitOr, BitOrAssign};

/// A set of model parts, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Needs(u32);

/// The bit of [`Needs::lean`]: set when every part asked for is needed only as times and names.
const LEAN: u32 = 1 << 31;

impl Needs {
    /// Nothing: the identity of [`Needs::union`] (and lean, as nothing asks for detail).
    pub const NONE: Needs = Needs(LEAN);
    /// Kernels: times, streams, names (short, demangled, mangled).
    pub const KERNELS: Needs = Needs(1);
    /// The kernels' launch configuration: grid, block, registers, shared memory, green context.
    pub const KERNEL_CONFIG: Needs = Needs(1 << 1);
    pub const MEMCPYS: Needs = Needs(1 << 2);
    pub const MEMSETS: Needs = Needs(1 << 3);
    /// CUDA graph executions traced as a whole.
    pub const GRAPHS: Needs = Needs(1 << 4);
    /// CUDA runtime and driver calls.
    pub const API_CALLS: Needs = Needs(1 << 5);
    /// GPU work joined to the API call that launched it (needs both sides: see [`Needs::closed`]).
    pub const GPU_LINKS: Needs = Needs(1 << 6);
    pub const NVTX: Needs = Needs(1 << 7);
    pub const OSRT: Needs = Needs(1 << 8);
    pub const SYNCS: Needs = Needs(1 << 9);
    pub const MEMORY_USAGE: Needs = Needs(1 << 10);
    pub const CPU_SAMPLES: Needs = Needs(1 << 11);
    pub const THREAD_STATES: Needs = Needs(1 << 12);
    /// Backtraces of CUDA API and OS runtime calls.
    pub const BACKTRACES: Needs = Needs(1 << 13);
    pub const UNIFIED_MEMORY: Needs = Needs(1 << 14);
    pub const OPENACC: Needs = Needs(1 << 15);
    pub const OPENMP: Needs = Needs(1 << 16);
    pub const PROFILER_OVERHEAD: Needs = Needs(1 << 17);
    pub const GPU_METRICS: Needs = Needs(1 << 18);
    /// Every part: what the window and an undeclared report get.
    pub const ALL: Needs = Needs((1 << 19) - 1);

    /// Every GPU operation the GPU-busy time is made of (kernels, copies, sets, graphs).
    pub const GPU_WORK: Needs =
        Needs(Self::KERNELS.0 | Self::MEMCPYS.0 | Self::MEMSETS.0 | Self::GRAPHS.0);

    /// These parts, read only as what the classic summaries look at: each event's times and name
    /// (and a copy's kind and size), not where it ran (the GPU work's device, context, stream and
    /// process, a CUDA call's thread) nor its other attributes (mangled names, return values,
    /// memory kinds). A union is lean only when both sides are: one report that needs the
    /// detail gets it read.
    pub const fn lean(self) -> Needs {
        Needs(self.0 | LEAN)
    }

    /// Whether every part is needed only as times and names (see [`Needs::lean`]).
    pub const fn is_lean(self) -> bool {
        self.0 & LEAN != 0
    }

    pub const fn union(self, other: Needs) -> Needs {
        Needs((self.0 | other.0) & !LEAN | (self.0 & other.0 & LEAN))
    }

    pub const fn contains(self, other: Needs) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn is_all(self) -> bool {
        self.contains(Self::ALL)
    }

    /// The set with what its parts imply: links join every GPU operation to every API call, so
    /// they need both sides whole (a link made against half the calls would call the rest
    /// unlinked); the launch configuration is a part of the kernels.
    pub const fn closed(self) -> Needs {
        let mut n = self;
        if n.contains(Self::GPU_LINKS) {
            n = n.union(Self::GPU_WORK).union(Self::API_CALLS);
        }
        if n.contains(Self::KERNEL_CONFIG) {
            n = n.union(Self::KERNELS);
        }
        // The unified-memory tables say whether the export has a copy table at all.
        if n.contains(Self::UNIFIED_MEMORY) {
            n = n.union(Self::MEMCPYS);
        }
        n
    }
}

impl Default for Needs {
    fn default() -> Self {
        Self::ALL
    }
}

impl BitOr for Needs {
    type Output = Needs;
    fn bitor(self, rhs: Needs) -> Needs {
        self.union(rhs)
    }
}

impl BitOrAssign for Needs {
    fn bitor_assign(&mut self, rhs: Needs) {
        *self = self.union(rhs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_bring_both_sides() {
        let n = Needs::GPU_LINKS.closed();
        assert!(n.contains(Needs::KERNELS | Needs::API_CALLS | Needs::GRAPHS));
        assert!(!n.contains(Needs::NVTX));
        assert!(Needs::ALL.is_all());
        assert_eq!(Needs::ALL | Needs::NONE, Needs::ALL);
        assert!(!Needs::KERNELS.is_all());
    }

    #[test]
    fn lean_only_when_every_side_is() {
        let api = Needs::API_CALLS.lean();
        assert!(api.is_lean() && (Needs::NONE | api).is_lean());
        assert!((api | Needs::KERNELS.lean()).is_lean());
        assert!(!(api | Needs::KERNELS).is_lean());
        assert!(!(Needs::KERNELS | api).is_lean());
        assert!(!(Needs::ALL | api).is_lean() && (Needs::ALL | api).is_all());
        assert!(!Needs::ALL.is_lean() && !Needs::KERNELS.is_lean());
        assert!((api | Needs::KERNELS).contains(Needs::API_CALLS | Needs::KERNELS));
    }
}
