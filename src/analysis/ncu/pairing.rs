//! Pairing the two sides of a join: processes by executable and order of appearance, threads
//! by the order they first launch, and the k-th item of each key with the k-th of the same key.

use std::collections::HashMap;

/// Whether a timeline process name is the executable ncu names: the same file name, or one a
/// prefix of the other where the rest is a version (`python3` / `python3.12`) or where Linux cut
/// the name to its 15-character `comm`.
pub fn same_executable(ncu_executable: &str, timeline_name: &str) -> bool {
    let file_name = |s: &str| s.rsplit(['/', '\\']).next().unwrap_or(s).to_string();
    let (a, b) = (file_name(ncu_executable), file_name(timeline_name));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    let (short, long) = if a.len() < b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match long.strip_prefix(short.as_str()) {
        Some(rest) => {
            short.len() == 15 || rest.starts_with(|c: char| c == '.' || c.is_ascii_digit())
        }
        None => false,
    }
}

/// Pairs the report's processes with the timeline's: for each ncu pid, the timeline pid. `ncu`
/// is (pid, executable) in order of first workload, `timeline` (pid, name) in order of first
/// kernel. The k-th ncu process of an executable gets the k-th timeline process of that name.
pub fn pair_processes(ncu: &[(u32, String)], timeline: &[(u32, String)]) -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    if ncu.len() == 1 && timeline.len() == 1 {
        out.insert(ncu[0].0, timeline[0].0);
        return out;
    }
    let mut taken = vec![false; timeline.len()];
    for (pid, exe) in ncu {
        let found = timeline
            .iter()
            .enumerate()
            .find(|(i, (_, name))| !taken[*i] && same_executable(exe, name));
        if let Some((i, (t_pid, _))) = found {
            taken[i] = true;
            out.insert(*pid, *t_pid);
        }
    }
    out
}

/// Where a launch ran: (process, context, stream, canonical name). The process is the
/// timeline's pid on both sides once processes are paired.
/// (process, context, stream, launching thread's ordinal or [`ANY_THREAD`], name).
pub(super) type PlaceKey = (u32, u32, u32, u32, String);

/// The thread part of a key that leaves threads out.
pub(super) const ANY_THREAD: u32 = u32::MAX;

/// The k-th item of each key on one side paired with the k-th of the same key on the other.
/// `ncu` is in ncu's order; `timeline` already in launch order. Returns, for each ncu item, the
/// index into `timeline` of its partner.
pub fn pair_in_order<K: Eq + std::hash::Hash + Clone>(
    ncu: &[Option<K>],
    timeline: &[K],
) -> Vec<Option<usize>> {
    let mut launches: HashMap<&K, Vec<usize>> = HashMap::new();
    for (i, key) in timeline.iter().enumerate() {
        launches.entry(key).or_default().push(i);
    }
    let mut seen: HashMap<K, usize> = HashMap::new();
    ncu.iter()
        .map(|key| {
            let key = key.as_ref()?;
            let k = seen.entry(key.clone()).or_insert(0);
            let nth = *k;
            *k += 1;
            launches.get(key).and_then(|l| l.get(nth)).copied()
        })
        .collect()
}

/// Threads numbered per process in the order they first launch (their ids differ between two
/// runs; their order does not); a launch whose thread is unknown gets [`ANY_THREAD`].
#[derive(Default)]
pub(super) struct ThreadOrdinals {
    seen: HashMap<(u32, u64), u32>,
    per_pid: HashMap<u32, u32>,
}

impl ThreadOrdinals {
    pub(super) fn ordinal(&mut self, pid: u32, tid: Option<u64>) -> u32 {
        let Some(tid) = tid else {
            return ANY_THREAD;
        };
        if let Some(&n) = self.seen.get(&(pid, tid)) {
            return n;
        }
        let next = self.per_pid.entry(pid).or_insert(0);
        let n = *next;
        *next += 1;
        self.seen.insert((pid, tid), n);
        n
    }
}
