//! Background computation for the panel: every analysis whose cost grows with the trace (reports,
//! rules, gaps, overlap, the chosen row's events) runs on a worker thread, so a selection change
//! costs the UI thread only a key comparison and a thread start. One job per kind runs at a time;
//! a result that arrives for inputs no longer wanted is kept to show (dimmed) until the fresh one
//! lands, and the newest wanted inputs start as soon as the running job ends.

use std::sync::mpsc::{Receiver, TryRecvError, channel};

/// One kind of background computation, keyed by what it depends on.
pub struct Worker<K, T> {
    running: Option<(K, Receiver<T>)>,
    done: Option<(K, T)>,
    /// The inputs whose job panicked (a bug): not started again for them.
    failed: Option<K>,
    /// Jobs started, for tests and the bench.
    started: usize,
}

impl<K, T> Default for Worker<K, T> {
    fn default() -> Self {
        Self {
            running: None,
            done: None,
            failed: None,
            started: 0,
        }
    }
}

/// What a worker has for the key asked.
pub enum Status<'a, T> {
    /// The result for this key.
    Ready(&'a T),
    /// Still computing; the last result (for other inputs) if any, to show meanwhile.
    Pending(Option<&'a T>),
}

impl<'a, T> Status<'a, T> {
    /// The fresh result, if ready.
    pub fn ready(self) -> Option<&'a T> {
        match self {
            Status::Ready(t) => Some(t),
            Status::Pending(_) => None,
        }
    }

    /// Whatever there is to show: fresh, or stale while the fresh one is computed.
    pub fn latest(self) -> Option<&'a T> {
        match self {
            Status::Ready(t) => Some(t),
            Status::Pending(t) => t,
        }
    }

    pub fn is_pending(&self) -> bool {
        matches!(self, Status::Pending(_))
    }
}

impl<K: Clone + PartialEq + Send + 'static, T: Send + 'static> Worker<K, T> {
    /// Collects a finished job, then makes sure `key` is computed or being computed: `job` runs
    /// on a new thread unless the result for `key` is here or another job is still running
    /// (then it starts on a later call). `repaint` is called from the worker thread when done.
    pub fn request(
        &mut self,
        key: &K,
        job: impl FnOnce() -> T + Send + 'static,
        repaint: impl Fn() + Send + 'static,
    ) -> Status<'_, T> {
        self.poll();
        let have = self.done.as_ref().is_some_and(|(k, _)| k == key);
        if !have && self.running.is_none() && self.failed.as_ref() != Some(key) {
            let (tx, rx) = channel();
            std::thread::spawn(move || {
                let result = job();
                // The panel may have been dropped meanwhile; then nobody wants the result.
                let _ = tx.send(result);
                repaint();
            });
            self.running = Some((key.clone(), rx));
            self.started += 1;
        }
        self.status(key)
    }

    /// What there is for `key`, without starting anything.
    pub fn status(&self, key: &K) -> Status<'_, T> {
        match &self.done {
            Some((k, t)) if k == key => Status::Ready(t),
            other => Status::Pending(other.as_ref().map(|(_, t)| t)),
        }
    }

    /// Takes in a finished job's result.
    pub fn poll(&mut self) {
        let Some((_, rx)) = &self.running else {
            return;
        };
        match rx.try_recv() {
            Ok(result) => {
                if let Some((key, _)) = self.running.take() {
                    drop_elsewhere(self.done.replace((key, result)));
                }
            }
            Err(TryRecvError::Empty) => {}
            // The job panicked: remember for which inputs, so that it is not run again for them
            // on every frame; other inputs start afresh.
            Err(TryRecvError::Disconnected) => self.failed = self.running.take().map(|(k, _)| k),
        }
    }

    /// Did the job for `key` panic?
    pub fn failed(&self, key: &K) -> bool {
        self.failed.as_ref() == Some(key)
    }

    /// Is a job running?
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// The result held (fresh or stale), if any.
    pub fn done(&self) -> Option<&T> {
        self.done.as_ref().map(|(_, t)| t)
    }

    /// The key of the result held, if any.
    pub fn done_key(&self) -> Option<&K> {
        self.done.as_ref().map(|(k, _)| k)
    }

    pub fn started(&self) -> usize {
        self.started
    }

    /// Waits for the running job (tests and the bench only: the window never blocks).
    pub fn wait(&mut self) {
        if let Some((key, rx)) = self.running.take() {
            match rx.recv() {
                Ok(result) => drop_elsewhere(self.done.replace((key, result))),
                Err(_) => self.failed = Some(key),
            }
        }
    }
}

/// Drops `value` on a thread of its own: the result a new one replaces can be a table of
/// millions of rows, whose freeing would otherwise stall the frame that collects the new one.
pub fn drop_elsewhere<T: Send + 'static>(value: T) {
    if std::mem::needs_drop::<T>() {
        std::thread::spawn(move || drop(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_off_thread_and_keeps_the_last_result_while_pending() {
        let mut w: Worker<u32, u32> = Worker::default();
        assert!(w.request(&1, || 10, || {}).is_pending());
        w.wait();
        assert_eq!(w.request(&1, || 99, || {}).ready(), Some(&10));
        // New inputs: the old result stays visible until the new one lands.
        let s = w.request(&2, || 20, || {});
        assert!(s.is_pending());
        assert_eq!(s.latest(), Some(&10));
        w.wait();
        assert_eq!(w.status(&2).ready(), Some(&20));
        assert_eq!(w.started(), 2);
    }

    #[test]
    fn a_job_that_panics_is_not_started_again_for_the_same_inputs() {
        let mut w: Worker<u32, u32> = Worker::default();
        let _ = w.request(&1, || panic!("a bug"), || {});
        w.wait();
        assert!(w.failed(&1));
        assert!(w.request(&1, || 10, || {}).is_pending());
        assert!(!w.busy(), "not restarted");
        let _ = w.request(&2, || 20, || {});
        w.wait();
        assert_eq!(w.status(&2).ready(), Some(&20));
    }
}
