//! Work handed out in order to several threads, with the results taken back in the same
//! order: `summary` computes and writes its reports side by side and prints them as asked.

use anyhow::Result;

/// Work items handed out in order to several threads, with their results collected in order:
/// at most `ahead` finished results wait for the printer at any time.
pub struct OrderedWork<T> {
    state: std::sync::Mutex<OrderedState<T>>,
    changed: std::sync::Condvar,
    ahead: usize,
}

struct OrderedState<T> {
    next: usize,
    printed: usize,
    len: usize,
    stopped: bool,
    done: std::collections::BTreeMap<usize, T>,
}

impl<T> OrderedWork<T> {
    pub fn new(len: usize, ahead: usize) -> Self {
        Self {
            state: std::sync::Mutex::new(OrderedState {
                next: 0,
                printed: 0,
                len,
                stopped: false,
                done: Default::default(),
            }),
            changed: std::sync::Condvar::new(),
            ahead: ahead.max(1),
        }
    }

    /// The next item to work on, once there is room ahead of the printer; `None` at the end.
    pub fn take(&self) -> Option<usize> {
        let mut st = self.state.lock().ok()?;
        loop {
            if st.stopped || st.next >= st.len {
                return None;
            }
            if st.next < st.printed + self.ahead {
                st.next += 1;
                return Some(st.next - 1);
            }
            st = self.changed.wait(st).ok()?;
        }
    }

    pub fn finish(&self, i: usize, result: T) {
        if let Ok(mut st) = self.state.lock() {
            st.done.insert(i, result);
        }
        self.changed.notify_all();
    }

    pub fn stop(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.stopped = true;
        }
        self.changed.notify_all();
    }
}

impl<T> OrderedWork<Result<T>> {
    /// Waits for item `i` (taken in order by the printer) and hands it over.
    pub fn wait_for(&self, i: usize) -> Result<T> {
        let poisoned = || anyhow::anyhow!("a report failed");
        let mut st = self.state.lock().map_err(|_| poisoned())?;
        loop {
            if let Some(result) = st.done.remove(&i) {
                st.printed = i + 1;
                drop(st);
                self.changed.notify_all();
                return result;
            }
            st = self.changed.wait(st).map_err(|_| poisoned())?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_order_they_finish_in() {
        let work: OrderedWork<Result<usize>> = OrderedWork::new(40, 3);
        let mut got = Vec::new();
        std::thread::scope(|s| {
            for w in 0..4 {
                let work = &work;
                s.spawn(move || {
                    while let Some(i) = work.take() {
                        // Later items finish sooner on some workers.
                        std::thread::sleep(std::time::Duration::from_micros(((40 - i) * w) as u64));
                        work.finish(i, Ok(i * 10));
                    }
                });
            }
            for i in 0..40 {
                got.push(work.wait_for(i).unwrap_or(usize::MAX));
            }
            work.stop();
        });
        assert_eq!(got, (0..40).map(|i| i * 10).collect::<Vec<_>>());
    }

    #[test]
    fn a_stopped_queue_hands_out_nothing_more() {
        let work: OrderedWork<Result<()>> = OrderedWork::new(5, 2);
        assert_eq!(work.take(), Some(0));
        assert_eq!(work.take(), Some(1));
        work.stop();
        assert_eq!(work.take(), None);
    }
}
