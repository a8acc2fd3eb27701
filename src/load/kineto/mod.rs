//! Loader for PyTorch profiler traces: the Chrome-trace JSON that `torch.profiler` (Kineto) writes
//! (`export_chrome_trace`, `tensorboard_trace_handler`), plain or gzipped, current schema and the
//! 2021 one. It fills the same [`Trace`] as an nsys export, so every view and report reads it.
//!
//! The file is streamed, never held whole: one thread decodes it (gzip on the fly) in blocks,
//! the calling thread finds the events in the bytes ([`framer`]), and batches of events are
//! parsed on rayon's pool ([`parse`]) while the next block is decoded. [`build`] joins the batches
//! and runs the nsys loader's assembly on them.

mod build;
pub mod event;
mod framer;
mod overhead;
mod parse;

use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use crate::load::{LoadControl, LoadError, LoadProgress};
use crate::trace::{LoadWarnings, Trace};
use build::{EVENTS, FileContents};
use framer::{FrameError, Framer};
use parse::Parsed;

pub(crate) use build::memory_tracks;
pub use parse::{global_tid, gpu_lane_tid, memcpy_kinds, short_kernel_name};

/// Bytes decoded per block handed from the decoding thread.
const BLOCK_BYTES: usize = 4 << 20;
/// Bytes of events per batch parsed as one job.
const BATCH_BYTES: usize = 8 << 20;
/// Batches being parsed at once (bounds the memory of a load to a few batches).
const BATCHES_IN_FLIGHT: usize = 4;

/// Does a file that starts with `header` hold a Chrome trace (JSON, possibly gzipped)?
pub fn looks_like_trace(header: &[u8]) -> bool {
    if header.starts_with(&[0x1f, 0x8b]) {
        return true;
    }
    let text = header.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(header);
    matches!(
        text.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    )
}

/// Loads a PyTorch profiler trace.
pub fn load(path: &Path, control: &LoadControl) -> Result<Trace, LoadError> {
    let unreadable = |e: std::io::Error| LoadError::Unreadable {
        path: path.to_path_buf(),
        source: e,
    };
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let file_len = file.metadata().map_err(unreadable)?.len().max(1);
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(unreadable)?;
    let gzipped = n == 2 && magic == [0x1f, 0x8b];
    drop(file);
    let file = std::fs::File::open(path).map_err(unreadable)?;
    (control.progress)(&LoadProgress {
        phase: "reading events",
        fraction: 0.0,
    });

    let consumed = Arc::new(AtomicU64::new(0));
    let counting = CountingReader {
        inner: file,
        consumed: consumed.clone(),
    };
    let (block_tx, block_rx) = mpsc::sync_channel::<Result<Vec<u8>, String>>(4);
    let decoder = std::thread::Builder::new()
        .name("sightline-kineto-decode".into())
        .spawn(move || {
            let reader: Box<dyn Read> = if gzipped {
                Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
                    counting,
                )))
            } else {
                Box::new(counting)
            };
            decode_blocks(reader, &block_tx);
        })
        .map_err(unreadable)?;

    let result = frame_and_parse(path, control, &block_rx, &consumed, file_len, gzipped);
    // Stop the decoder (dropping the receiver ends its sends) and wait for it.
    drop(block_rx);
    let _ = decoder.join();
    let contents = result?;
    (control.progress)(&LoadProgress {
        phase: "building tracks",
        fraction: 0.9,
    });
    let mut trace = build::build(contents);
    trace.path = path.to_path_buf();
    if trace.event_count() == 0 && trace.torch.as_ref().is_none_or(|t| t.memory.is_empty()) {
        return Err(LoadError::EmptyTrace {
            path: path.to_path_buf(),
        });
    }
    (control.progress)(&LoadProgress {
        phase: "done",
        fraction: 1.0,
    });
    Ok(trace)
}

/// Reads `reader` to its end in blocks; an error ends the stream with its message.
fn decode_blocks(mut reader: Box<dyn Read>, tx: &mpsc::SyncSender<Result<Vec<u8>, String>>) {
    loop {
        let mut block = vec![0u8; BLOCK_BYTES];
        let mut filled = 0;
        let outcome = loop {
            match reader.read(&mut block[filled..]) {
                Ok(0) => break Ok(true),
                Ok(n) => {
                    filled += n;
                    if filled == block.len() {
                        break Ok(false);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e.to_string()),
            }
        };
        block.truncate(filled);
        if !block.is_empty() && tx.send(Ok(block)).is_err() {
            return;
        }
        match outcome {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// The calling thread's part: frames the decoded blocks into events and parses batches of them
/// on the pool.
fn frame_and_parse(
    path: &Path,
    control: &LoadControl,
    blocks: &mpsc::Receiver<Result<Vec<u8>, String>>,
    consumed: &AtomicU64,
    file_len: u64,
    gzipped: bool,
) -> Result<FileContents, LoadError> {
    let mut framer = Framer::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let mut warnings = LoadWarnings::default();
    let (done_tx, done_rx) = mpsc::channel::<(usize, Parsed)>();
    let mut parsed: Vec<Option<Parsed>> = Vec::new();
    let mut in_flight = 0usize;
    let mut decode_error: Option<String> = None;
    let receive = |parsed: &mut Vec<Option<Parsed>>| {
        if let Ok((i, p)) = done_rx.recv() {
            parsed[i] = Some(p);
        }
    };
    loop {
        if control.is_cancelled() {
            return Err(LoadError::Cancelled);
        }
        let block = match blocks.recv() {
            Ok(Ok(block)) => Some(block),
            Ok(Err(e)) => {
                decode_error = Some(e);
                None
            }
            Err(_) => None,
        };
        let at_end = block.is_none();
        if let Some(block) = block {
            buf.extend_from_slice(&block);
            if let Err(FrameError::NotJson) = framer.scan(&buf, &mut ranges) {
                return Err(not_a_trace(path, gzipped));
            }
        }
        if ranges.is_empty() && !at_end {
            continue;
        }
        let batch_bytes = framer.last_event_end;
        if at_end || batch_bytes >= BATCH_BYTES {
            // Hand the complete events to the pool; keep the unfinished tail.
            let tail = buf.split_off(batch_bytes);
            let bytes = std::mem::replace(&mut buf, tail);
            framer.forget_prefix(batch_bytes);
            let batch = std::mem::take(&mut ranges);
            if !batch.is_empty() {
                while in_flight >= BATCHES_IN_FLIGHT {
                    receive(&mut parsed);
                    in_flight -= 1;
                }
                let index = parsed.len();
                parsed.push(None);
                in_flight += 1;
                let tx = done_tx.clone();
                rayon::spawn(move || {
                    let p = parse::parse_batch(&bytes, &batch);
                    let _ = tx.send((index, p));
                });
            }
            let fraction = consumed.load(Ordering::Relaxed) as f32 / file_len as f32;
            (control.progress)(&LoadProgress {
                phase: "reading events",
                fraction: (fraction * 0.85).min(0.85),
            });
        }
        if at_end {
            break;
        }
    }
    while in_flight > 0 {
        receive(&mut parsed);
        in_flight -= 1;
    }
    if framer.is_empty() {
        if let Some(e) = decode_error {
            return Err(LoadError::DamagedGzip {
                path: path.to_path_buf(),
                detail: e,
            });
        }
        return Err(LoadError::EmptyTrace {
            path: path.to_path_buf(),
        });
    }
    if let Some(e) = decode_error {
        warnings.add_about(
            EVENTS,
            "[file|files]",
            &format!(
                "[is|are] damaged: decoding stopped ({e}); the events before the damage are shown"
            ),
            1,
        );
    } else if !framer.is_complete() {
        warnings.add_about(
            EVENTS,
            "[file|files]",
            "[ends|end] before its JSON does (truncated?): the events before the cut are shown",
            1,
        );
    }
    if framer.has_open_event() {
        warnings.skip(
            EVENTS,
            "[is|are] cut off by the end of the file (left out)",
            1,
        );
    }
    warnings.add_about(
        EVENTS,
        "[element|elements] of `traceEvents`",
        "[is|are] not a JSON object (left out)",
        framer.non_objects,
    );
    Ok(FileContents {
        batches: parsed.into_iter().flatten().collect(),
        members: std::mem::take(&mut framer.members),
        warnings,
    })
}

fn not_a_trace(path: &Path, gzipped: bool) -> LoadError {
    LoadError::NotATrace {
        path: path.to_path_buf(),
        detail: if gzipped {
            "gzip-compressed, but what it holds is not JSON".to_string()
        } else {
            "it starts like JSON but is not".to_string()
        },
    }
}

/// Counts the bytes read from the file, for the progress bar.
struct CountingReader {
    inner: std::fs::File,
    consumed: Arc<AtomicU64>,
}

impl Read for CountingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
