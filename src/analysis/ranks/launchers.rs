//! Which operators a CUDA call was made inside, by time on its thread: how a kernel is tied to
//! the collective operator that launched it where the trace's `External id`s do not join them.
//!
//! PyTorch normally gives a kernel (and its CUDA call) the `External id` of the operator that
//! launched it. Some traces do not: in HTA's sampled NCCL traces (`trace_filter`, PyTorch of
//! 2023) every kernel's and CUDA call's `External id` is its own correlation id, which names no
//! operator. The launching call still lies inside its operators on its own thread — as the
//! profiler recorded them, nested — so the operators around it say who launched it.

/// For each call (`calls`: its thread's `globalTid` and start), the ranges of its thread that
/// contain it (`ranges`: thread, start, end), innermost first, as long as `keep` accepts them:
/// empty where no range contains the call or the innermost one is not kept. A range contains a
/// call that starts in `[start, end)`.
pub fn enclosing(
    ranges: &[(i64, i64, i64)],
    calls: &[(i64, i64)],
    keep: impl Fn(usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut by_start: Vec<usize> = (0..ranges.len()).collect();
    by_start.sort_unstable_by_key(|&i| {
        let (tid, start, end) = ranges[i];
        (tid, start, std::cmp::Reverse(end), i)
    });
    let mut by_time: Vec<usize> = (0..calls.len()).collect();
    by_time.sort_unstable_by_key(|&c| (calls[c], c));

    let contains = |i: usize, t: i64| ranges[i].1 <= t && t < ranges[i].2;
    let mut out = vec![Vec::new(); calls.len()];
    let mut next = 0; // into by_start
    let mut open: Vec<usize> = Vec::new(); // ranges of the current thread that may contain later calls
    let mut thread: Option<i64> = None;
    for c in by_time {
        let (tid, t) = calls[c];
        if thread != Some(tid) {
            open.clear();
            thread = Some(tid);
            next = by_start.partition_point(|&i| ranges[i].0 < tid);
        }
        while let Some(&i) = by_start.get(next) {
            let (range_tid, start, _) = ranges[i];
            if range_tid != tid || start > t {
                break;
            }
            while open.last().is_some_and(|&top| ranges[top].2 <= start) {
                open.pop();
            }
            open.push(i);
            next += 1;
        }
        while open.last().is_some_and(|&top| ranges[top].2 <= t) {
            open.pop();
        }
        // Ranges that overlap without nesting stay below the top; `contains` drops them.
        out[c] = open
            .iter()
            .rev()
            .copied()
            .take_while(|&i| contains(i, t) && keep(i))
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranges of `ranges` on thread `tid` that contain `t`, innermost (latest start) first,
    /// as long as `keep` accepts them: the definition, by brute force.
    fn brute(
        ranges: &[(i64, i64, i64)],
        (tid, t): (i64, i64),
        keep: &dyn Fn(usize) -> bool,
    ) -> Vec<usize> {
        let mut around: Vec<usize> = (0..ranges.len())
            .filter(|&i| ranges[i].0 == tid && ranges[i].1 <= t && t < ranges[i].2)
            .collect();
        around.sort_by_key(|&i| (std::cmp::Reverse(ranges[i].1), ranges[i].2, i));
        around.into_iter().take_while(|&i| keep(i)).collect()
    }

    #[test]
    fn calls_are_placed_in_the_operators_around_them_on_their_thread() {
        // Thread 1: c10d (0..100) ⊃ record_param_comms (10..90) ⊃ copy (20..30); thread 2: an
        // operator at the same times.
        let ranges = [
            (1, 0, 100),
            (1, 10, 90),
            (1, 20, 30),
            (2, 0, 100),
            (1, 200, 300),
        ];
        let collective = |i: usize| i != 2;
        let calls = [
            (1, 15),  // inside record_param_comms and c10d
            (1, 25),  // inside copy: not the collective's
            (1, 95),  // inside c10d only
            (1, 100), // ends are open
            (2, 50),  // the other thread's operator
            (3, 50),  // a thread without operators
            (1, 250),
        ];
        let got = enclosing(&ranges, &calls, collective);
        assert_eq!(
            got,
            vec![
                vec![1, 0],
                vec![],
                vec![0],
                vec![],
                vec![3],
                vec![],
                vec![4]
            ]
        );
        for (c, &call) in calls.iter().enumerate() {
            assert_eq!(got[c], brute(&ranges, call, &collective), "call {c}");
        }
    }

    #[test]
    fn nested_ranges_agree_with_brute_force() {
        // Nested ranges on three threads (each level inside the one before it, with gaps), and
        // calls at every tenth ns.
        let mut ranges = Vec::new();
        for tid in 0..3i64 {
            for block in 0..20i64 {
                let base = block * 1000 + tid * 7;
                for depth in 0..4i64 {
                    ranges.push((tid, base + depth * 50, base + 900 - depth * 100));
                }
                ranges.push((tid, base + 400, base + 450)); // a sibling inside depth 3
            }
        }
        let keep = |i: usize| i % 5 != 1;
        let calls: Vec<(i64, i64)> = (0..3)
            .flat_map(|tid| (0..2100).map(move |k| (tid, k * 10)))
            .collect();
        let got = enclosing(&ranges, &calls, keep);
        for (c, &call) in calls.iter().enumerate() {
            assert_eq!(got[c], brute(&ranges, call, &keep), "call {call:?}");
        }
    }
}
