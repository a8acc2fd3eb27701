//! Resident memory of this process, from `/proc/self/status` (Linux); `None` elsewhere.

/// Resident set size now (`VmRSS`) and its peak so far (`VmHWM`), in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resident {
    pub now_bytes: u64,
    pub peak_bytes: u64,
}

pub fn resident() -> Option<Resident> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    };
    Some(Resident {
        now_bytes: field("VmRSS:")?,
        peak_bytes: field("VmHWM:")?,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_own_rss_on_linux() {
        if cfg!(target_os = "linux") {
            let r = super::resident().expect("/proc/self/status has VmRSS");
            assert!(r.now_bytes > 0 && r.peak_bytes >= r.now_bytes);
        }
    }
}
