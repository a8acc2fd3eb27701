//! Bounded pipes from the threads that write `summary`'s reports to the thread that prints them
//! in order: a report's text goes out as it is written, and a report that is not yet the one
//! being printed waits once its pipe holds [`OutputPipes::new`]'s `cap` bytes. Memory stays
//! bounded by the pipes, not by the output (a row dump of a 10 MB NVTX text on every row is
//! gigabytes of CSV).

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex};

/// Bytes a writer gathers before handing them to its pipe.
const BLOCK: usize = 1 << 16;

/// One pipe per report, in the order they are printed.
pub struct OutputPipes {
    pipes: Vec<Arc<Pipe>>,
}

#[derive(Default)]
struct Pipe {
    state: Mutex<PipeState>,
    changed: Condvar,
    cap: usize,
}

#[derive(Default)]
struct PipeState {
    chunks: VecDeque<Vec<u8>>,
    bytes: usize,
    /// The writer is done (dropped).
    closed: bool,
    /// Nobody will read any more: writes fail rather than wait.
    abandoned: bool,
}

impl OutputPipes {
    /// `len` pipes, each holding at most about `cap` bytes (one write more) before its writer
    /// waits.
    pub fn new(len: usize, cap: usize) -> Self {
        Self {
            pipes: (0..len)
                .map(|_| {
                    Arc::new(Pipe {
                        cap,
                        ..Pipe::default()
                    })
                })
                .collect(),
        }
    }

    /// The writing end of pipe `i` (one writer each); dropping it closes the pipe.
    pub fn writer(&self, i: usize) -> PipeWriter {
        PipeWriter {
            pipe: self.pipes.get(i).cloned().unwrap_or_default(),
            buf: Vec::new(),
        }
    }

    /// Copies pipe `i` to `out` until its writer closes it; whether anything came.
    pub fn drain(&self, i: usize, out: &mut impl Write) -> io::Result<bool> {
        let Some(pipe) = self.pipes.get(i) else {
            return Ok(false);
        };
        let mut any = false;
        loop {
            let chunk = {
                let mut st = pipe.state.lock().map_err(|_| poisoned())?;
                loop {
                    if let Some(chunk) = st.chunks.pop_front() {
                        st.bytes -= chunk.len();
                        break Some(chunk);
                    }
                    if st.closed {
                        break None;
                    }
                    st = pipe.changed.wait(st).map_err(|_| poisoned())?;
                }
            };
            pipe.changed.notify_all();
            match chunk {
                Some(chunk) => {
                    any = true;
                    out.write_all(&chunk)?;
                }
                None => return Ok(any),
            }
        }
    }

    /// Nothing more will be read: every writer's next write fails instead of waiting.
    pub fn abandon(&self) {
        for pipe in &self.pipes {
            if let Ok(mut st) = pipe.state.lock() {
                st.abandoned = true;
                st.chunks.clear();
                st.bytes = 0;
            }
            pipe.changed.notify_all();
        }
    }
}

fn poisoned() -> io::Error {
    io::Error::other("a report writer failed")
}

/// The writing end of one pipe.
pub struct PipeWriter {
    pipe: Arc<Pipe>,
    buf: Vec<u8>,
}

impl PipeWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let pipe = &self.pipe;
        let mut st = pipe.state.lock().map_err(|_| poisoned())?;
        while st.bytes >= pipe.cap && !st.abandoned {
            st = pipe.changed.wait(st).map_err(|_| poisoned())?;
        }
        if st.abandoned {
            self.buf.clear();
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the output is closed",
            ));
        }
        st.bytes += self.buf.len();
        st.chunks.push_back(std::mem::take(&mut self.buf));
        drop(st);
        pipe.changed.notify_all();
        Ok(())
    }
}

impl Write for PipeWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= BLOCK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let _ = self.send();
        if let Ok(mut st) = self.pipe.state.lock() {
            st.closed = true;
        }
        self.pipe.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_pipe_waits_at_its_cap_while_the_first_is_printed() {
        let pipes = OutputPipes::new(2, 4 * BLOCK);
        let mut out = Vec::new();
        std::thread::scope(|s| {
            // The second report writes 64 blocks: it can only finish once it is printed.
            s.spawn(|| {
                let mut w = pipes.writer(1);
                for k in 0..64u8 {
                    w.write_all(&vec![k; BLOCK]).ok();
                    let held = pipes.pipes[1].state.lock().map(|st| st.bytes).unwrap_or(0);
                    assert!(held <= 5 * BLOCK, "{held} bytes held");
                }
            });
            s.spawn(|| {
                let mut w = pipes.writer(0);
                w.write_all(b"first\n").ok();
            });
            assert_eq!(pipes.drain(0, &mut out).ok(), Some(true));
            assert_eq!(pipes.drain(1, &mut out).ok(), Some(true));
        });
        assert_eq!(&out[..6], b"first\n");
        assert_eq!(out.len(), 6 + 64 * BLOCK);
        assert!(out[6 + 63 * BLOCK..].iter().all(|&b| b == 63));
    }

    #[test]
    fn an_abandoned_pipe_fails_its_writer_instead_of_blocking_it() {
        let pipes = OutputPipes::new(1, 1);
        let mut w = pipes.writer(0);
        assert!(w.write_all(&vec![0; BLOCK]).is_ok());
        pipes.abandon();
        assert!(w.write_all(&vec![0; BLOCK]).is_err());
        let mut out = Vec::new();
        drop(w);
        assert_eq!(pipes.drain(0, &mut out).ok(), Some(false));
    }
}
