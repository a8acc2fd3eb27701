//! Decoding of the packed thread and process ids nsys stores in `globalTid` / `globalPid`.
//!
//! Nsight Systems packs `(vm, pid, tid)` into one 64-bit integer: the low 24 bits are the thread
//! id, the next 24 bits the process id. `globalPid` is the same value with the tid bits cleared.

/// A `globalTid` value as stored by nsys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalTid(pub i64);

impl GlobalTid {
    /// Operating-system thread id.
    pub fn tid(self) -> u32 {
        (self.0 & 0xFF_FFFF) as u32
    }

    /// Operating-system process id.
    pub fn pid(self) -> u32 {
        ((self.0 >> 24) & 0xFF_FFFF) as u32
    }

    /// The `globalPid` of the process this thread belongs to.
    pub fn global_pid(self) -> i64 {
        self.0 & !0xFF_FFFF
    }
}

/// Process id from a `globalPid` (or any `globalTid`).
pub fn pid_of(global_pid: i64) -> u32 {
    GlobalTid(global_pid).pid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_pid_and_tid_of_real_values() {
        // From transformer.sqlite's CUDA runtime rows: pid 717, tid 717.
        let g = GlobalTid(281_487_005_975_245);
        assert_eq!((g.pid(), g.tid()), (717, 717));
        let made = (1_i64 << 56) | (4321_i64 << 24) | 98765;
        let g = GlobalTid(made);
        assert_eq!(g.pid(), 4321);
        assert_eq!(g.tid(), 98765);
        assert_eq!(g.global_pid(), (1_i64 << 56) | (4321_i64 << 24));
        assert_eq!(pid_of(g.global_pid()), 4321);
    }
}
