//! Loader for Nsight Compute reports (`ncu -o`): `.ncu-rep`, the pre-2020.2 `.nsight-cuprof-report`
//! (the same bytes), either gzipped (`.ncu-rep.gz`) or compressed whole with zstd (`.ncu-repz`).
//! The format is told by the first bytes, not the name.
//!
//! The layout (Nsight Compute Customization Guide, report file format version 7), little-endian:
//! magic `NVR\0`; a u32 length and a `FileHeader` message; then blocks to the end of the file,
//! each a u32 length and a `BlockHeader` message followed by `PayloadSize` bytes that hold
//! `NumSources` length-prefixed `ProfileSource` messages (the kernels' cubin and SASS, skipped
//! without decoding) and `NumResults` `ProfileResult` messages (one profiled workload each).
//! Metric names are ids into the report's string table, which each block's table extends (most
//! reports hold every name in the first result's block; some add names in blocks after it).
//!
//! The file is read block by block (a block is one workload, a few MB at most), so memory follows
//! what is kept, not the file. A length that runs past the end of the file stops the read with
//! the workloads read so far and a warning: nothing is allocated from a length field before the
//! bytes are there.

mod arch_filter;
mod convert;
mod elf;
mod instances;
pub mod line_table;
pub mod messages;
mod metric_result;
pub mod sass;
mod section_messages;
mod source;
mod source_input;
mod source_messages;

use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use std::hash::{Hash, Hasher};

use bytes::Bytes;
use prost::Message;
use rayon::prelude::*;

use crate::load::{LoadControl, LoadError, LoadProgress};
use crate::trace::ncu::NcuReport;
use crate::trace::{Trace, TraceFormat};
use convert::Converter;
pub use instances::read_instances;
pub use source::read_source_data;
pub use source_input::{
    Disassemble, SourceInputError, SourceInputs, source_inputs, source_inputs_for,
};

/// The report's magic bytes.
pub const MAGIC: &[u8; 4] = b"NVR\0";
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// How the report's bytes are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    Plain,
    Gzip,
    Zstd,
}

/// Is a file that starts with `header` an Nsight Compute report, stored as it is?
pub fn is_report_header(header: &[u8]) -> bool {
    header.starts_with(MAGIC)
}

/// The packing of a file whose first bytes are `header`, when they are those of a report:
/// plain, or gzip / zstd whose first decompressed bytes are the report's magic.
pub fn report_packing(path: &Path, header: &[u8]) -> Option<Packing> {
    if is_report_header(header) {
        return Some(Packing::Plain);
    }
    let packing = if header.starts_with(&GZIP_MAGIC) {
        Packing::Gzip
    } else if header.starts_with(&ZSTD_MAGIC) {
        Packing::Zstd
    } else {
        return None;
    };
    let file = std::fs::File::open(path).ok()?;
    let mut reader = unpacked(file, packing).ok()?;
    let mut magic = [0u8; 4];
    reader.read_exact(&mut magic).ok()?;
    (&magic == MAGIC).then_some(packing)
}

/// Is the file at `path` an Nsight Compute report (by its bytes, as packed)?
pub fn is_report_file(path: &Path) -> bool {
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    report_packing(path, &head[..n]).is_some()
}

/// Is the file named like a report (`.ncu-rep`, `.ncu-repz`, `.nsight-cuprof-report`, either
/// one gzipped)? Only used to word the message when its bytes are not a report's.
pub fn has_report_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    [".ncu-rep", ".ncu-repz", ".nsight-cuprof-report"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// The error for a file whose first bytes (`header`) are not a report's: what they look like
/// instead, so that a renamed or damaged file is told from a report of another version.
pub fn not_a_report(path: &Path, header: &[u8]) -> LoadError {
    let looks = if header.is_empty() {
        "the file is empty".to_string()
    } else if header.starts_with(b"\x89PNG") {
        "it is a PNG image, not a report".to_string()
    } else if header.starts_with(b"SQLite format 3") {
        "it is an SQLite database, not a report".to_string()
    } else if let Some(text) = text_start(header) {
        format!("it is text ({text:?}…), not a report")
    } else {
        let bytes: Vec<String> = header.iter().take(4).map(|b| format!("{b:02x}")).collect();
        format!(
            "it starts with the bytes {} instead of the report magic NVR\\0 (4e 56 52 00): damaged, or another kind of file",
            bytes.join(" ")
        )
    };
    LoadError::NotNcuReport {
        path: path.to_path_buf(),
        detail: looks,
    }
}

/// The first bytes as text, when they are (a character cut at the end aside).
fn text_start(header: &[u8]) -> Option<&str> {
    let text = match std::str::from_utf8(header) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&header[..e.valid_up_to()]).ok()?
        }
        Err(_) => return None,
    };
    let printable = text
        .chars()
        .all(|c| !c.is_control() || c.is_ascii_whitespace());
    (text.len() >= 4 && printable).then_some(text)
}

fn unpacked<'a, R: Read + 'a>(inner: R, packing: Packing) -> std::io::Result<Box<dyn Read + 'a>> {
    Ok(match packing {
        // A plain report is read straight into each block's buffer: no second copy (the gzip
        // decoder buffers its input itself).
        Packing::Plain => Box::new(inner),
        Packing::Gzip => Box::new(flate2::read::MultiGzDecoder::new(inner)),
        Packing::Zstd => Box::new(
            ruzstd::decoding::StreamingDecoder::new(BufReader::new(inner))
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?,
        ),
    })
}

/// Counts the bytes read from the file (before decompression), for progress.
struct Counted<R> {
    inner: R,
    read: Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Loads a report as a [`Trace`] with no timeline: the report in [`Trace::ncu`].
pub fn load(path: &Path, control: &LoadControl) -> Result<Trace, LoadError> {
    let report = load_report(path, control)?;
    Ok(Trace {
        path: path.to_path_buf(),
        format: TraceFormat::NsightCompute,
        warnings: report.warnings.clone(),
        ncu: Some(Arc::new(report)),
        ..Default::default()
    })
}

/// A reader of a report's blocks, positioned after its file header; the file's length and a
/// counter of the bytes read from it (before decompression), for progress.
pub(super) fn open_blocks(
    path: &Path,
) -> Result<(BlockReader<'_>, u64, Arc<std::sync::atomic::AtomicU64>), LoadError> {
    let unreadable = |e: std::io::Error| LoadError::Unreadable {
        path: path.to_path_buf(),
        source: e,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let file_len = file.metadata().map_err(unreadable)?.len().max(1);
    let mut head = [0u8; 4];
    let n = {
        let mut f = &file;
        f.read(&mut head).map_err(unreadable)?
    };
    let packing = report_packing(path, &head[..n]).ok_or_else(|| not_a_report(path, &head[..n]))?;
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let read = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = Counted {
        inner: file,
        read: Arc::clone(&read),
    };
    let reader = unpacked(counted, packing).map_err(|e| LoadError::NotNcuReport {
        path: path.to_path_buf(),
        detail: format!("the compressed stream cannot be read ({e})"),
    })?;
    let mut blocks = BlockReader {
        reader,
        path,
        report: NcuReport::new(path.to_path_buf()),
        // A plain file cannot hold more than its length; a compressed one is allowed blocks of
        // up to 16 MiB before a buffer has to grow as its bytes arrive.
        pos: 0,
        room: match packing {
            Packing::Plain => file_len,
            Packing::Gzip | Packing::Zstd => 16 << 20,
        },
        damage: None,
        skip_sources: false,
        scratch: Vec::new(),
    };
    let header = blocks.read_header()?;
    blocks.report.format_version = header.version.unwrap_or(0);
    Ok((blocks, file_len, read))
}

/// Loads a report.
pub fn load_report(path: &Path, control: &LoadControl) -> Result<NcuReport, LoadError> {
    let (mut blocks, file_len, read) = open_blocks(path)?;
    blocks.skip_sources = true;
    blocks.read_all(control, &|| {
        read.load(std::sync::atomic::Ordering::Relaxed) as f32 / file_len as f32
    })?;
    let report = blocks.report;
    if report.workloads.is_empty() {
        let detail = match blocks.damage {
            Some(what) => {
                format!("it is damaged or cut short before its first profiled kernel: {what}")
            }
            None => "the report holds no profiled kernels: ncu profiled no kernel into it".into(),
        };
        return Err(LoadError::NotNcuReport {
            path: path.to_path_buf(),
            detail,
        });
    }
    Ok(report)
}

/// Why a read stopped early.
pub(super) enum Stop {
    /// The file ended exactly between blocks.
    End,
    /// The file ended or was damaged inside something: what, in words.
    Damaged(String),
}

pub(super) struct BlockReader<'a> {
    reader: Box<dyn Read + 'a>,
    path: &'a Path,
    report: NcuReport,
    /// The most a buffer is sized for before its bytes are there.
    room: u64,
    /// Bytes of the (decompressed) stream read so far.
    pos: u64,
    /// What stopped the read early, in words, when something did.
    damage: Option<String>,
    /// Whether blocks' source messages (cubins: most of a report's bytes) are read past rather
    /// than kept: the profiled kernels do not need them.
    skip_sources: bool,
    /// The buffer skipped bytes are read into, reused.
    scratch: Vec<u8>,
}

const TABLE: &str = "report";

impl BlockReader<'_> {
    /// Reads the magic and the file header.
    fn read_header(&mut self) -> Result<FileHeader, LoadError> {
        let mut magic = [0u8; 4];
        self.pos = 4;
        if read_fully(&mut self.reader, &mut magic).is_err() || &magic != MAGIC {
            return Err(LoadError::NotNcuReport {
                path: self.path.to_path_buf(),
                detail: "it does not start with the report magic NVR\\0".into(),
            });
        }
        let header = match self.length_prefixed() {
            Ok(bytes) => FileHeader::decode(bytes).ok(),
            Err(_) => None,
        };
        let Some(header) = header else {
            return Err(LoadError::NotNcuReport {
                path: self.path.to_path_buf(),
                detail: "its file header is cut short or damaged".into(),
            });
        };
        Ok(header)
    }

    fn read_all(
        &mut self,
        control: &LoadControl,
        fraction: &dyn Fn() -> f32,
    ) -> Result<(), LoadError> {
        let mut convert = Converter::default();
        let mut stop = None;
        while stop.is_none() {
            if control.is_cancelled() {
                return Err(LoadError::Cancelled);
            }
            (control.progress)(&LoadProgress {
                phase: "profiled kernels",
                fraction: fraction().min(1.0),
            });
            // Read a batch of blocks, decode them on all cores, keep them in file order.
            let mut batch = Vec::with_capacity(BATCH_BLOCKS);
            while batch.len() < BATCH_BLOCKS {
                match self.raw_block() {
                    Ok(raw) => batch.push(raw),
                    Err(s) => {
                        stop = Some(s);
                        break;
                    }
                }
            }
            let decoded: Vec<Result<Vec<DecodedResult>, String>> =
                batch.par_iter().map(decode_block).collect();
            for (block, results) in batch.iter().zip(decoded) {
                convert.block_header(&mut self.report, &block.header);
                match results {
                    Ok(results) => {
                        for r in results {
                            convert.result(&mut self.report, r);
                        }
                    }
                    Err(what) => {
                        stop = Some(Stop::Damaged(what));
                        break;
                    }
                }
            }
        }
        if let Some(Stop::Damaged(what)) = stop {
            // With no kernel before the damage, the load fails with `what` instead.
            if !self.report.workloads.is_empty() {
                self.report.warnings.add_about(
                    TABLE,
                    "report [block|blocks]",
                    &format!(
                        "[is|are] damaged or cut short: {what} (the {} kernels before it are kept)",
                        self.report.workloads.len()
                    ),
                    1,
                );
            }
            self.damage = Some(what);
        }
        convert.finish(&mut self.report);
        Ok(())
    }

    /// A u32 length and that many bytes. At the end of the file before the length: `Stop::End`.
    fn length_prefixed(&mut self) -> Result<Bytes, Stop> {
        let len = self.length()?;
        self.bytes(len)
    }

    /// A message's little-endian u32 length (`Stop::End` where the stream ends before it).
    fn length(&mut self) -> Result<u64, Stop> {
        let mut len = [0u8; 4];
        match read_fully(&mut self.reader, &mut len) {
            Ok(0) => Err(Stop::End),
            Ok(4) => {
                self.pos += 4;
                Ok(u64::from(u32::from_le_bytes(len)))
            }
            Ok(_) => Err(Stop::Damaged("a length is cut short".into())),
            Err(e) => Err(Stop::Damaged(format!("reading failed ({e})"))),
        }
    }

    /// Exactly `len` bytes, grown as they arrive (a damaged length cannot allocate more than
    /// the file holds).
    fn bytes(&mut self, len: u64) -> Result<Bytes, Stop> {
        let mut buf = Vec::with_capacity(len.min(self.room) as usize);
        let got = (&mut self.reader)
            .take(len)
            .read_to_end(&mut buf)
            .map_err(|e| Stop::Damaged(format!("reading failed ({e})")))?;
        if (got as u64) < len {
            return Err(Stop::Damaged(format!(
                "a message of {len} bytes has only {got} in the file"
            )));
        }
        self.pos += len;
        Ok(Bytes::from(buf))
    }

    /// `len` bytes read past.
    fn skip(&mut self, len: u64) -> Result<(), Stop> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.resize(len.min(1 << 20) as usize, 0);
        let mut left = len;
        while left > 0 {
            let n = left.min(scratch.len() as u64) as usize;
            let got = read_fully(&mut self.reader, &mut scratch[..n])
                .map_err(|e| Stop::Damaged(format!("reading failed ({e})")))?;
            if got < n {
                return Err(Stop::Damaged(format!(
                    "a message of {len} bytes has only {} in the file",
                    len - left + got as u64
                )));
            }
            left -= n as u64;
        }
        self.pos += len;
        self.scratch = scratch;
        Ok(())
    }

    /// The next block's header and payload, read but not decoded (with `skip_sources`, the
    /// payload from its first result on, the header saying it has no sources).
    pub(super) fn raw_block(&mut self) -> Result<RawBlock, Stop> {
        let header = self.length_prefixed()?;
        let mut header = messages::BlockHeader::decode(header)
            .map_err(|e| Stop::Damaged(format!("a block header does not decode ({e})")))?;
        let mut payload_len = u64::from(header.payload_size.unwrap_or(0));
        if self.skip_sources {
            for _ in 0..header.num_sources.unwrap_or(0) {
                // Inside a block, the stream ending is damage, not its end.
                let len = match self.length() {
                    Err(Stop::End) => {
                        return Err(Stop::Damaged("a block's payload ends early".into()));
                    }
                    other => other?,
                };
                payload_len = payload_len.checked_sub(4 + len).ok_or_else(|| {
                    Stop::Damaged("a message runs past the end of its block".into())
                })?;
                self.skip(len)?;
            }
            header.num_sources = Some(0);
        }
        let offset = self.pos;
        let payload = self.bytes(payload_len)?;
        Ok(RawBlock {
            header,
            payload,
            offset,
        })
    }
}

/// Blocks read and decoded together (a block is one workload: a few MB at most).
const BATCH_BLOCKS: usize = 8;

/// A block read but not decoded, and where its payload starts in the stream.
pub(super) struct RawBlock {
    pub header: messages::BlockHeader,
    pub payload: Bytes,
    pub offset: u64,
}

/// A decoded workload, the hashes of its section definitions' bytes and its metric results
/// (in `result.metric_results` order).
pub(super) struct DecodedResult {
    pub result: messages::ProfileResult,
    pub section_hashes: Vec<u64>,
    pub metrics: Vec<metric_result::ParsedMetric>,
}

/// The workloads of a block's payload: `NumSources` source messages (skipped) then
/// `NumResults` results.
fn decode_block(block: &RawBlock) -> Result<Vec<DecodedResult>, String> {
    let (header, payload) = (&block.header, &block.payload);
    let sources = header.num_sources.unwrap_or(0) as usize;
    let results = header.num_results.unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(results.min(1024));
    let mut at = 0usize;
    for index in 0..sources.saturating_add(results) {
        let Some(len) = payload.get(at..at + 4) else {
            return Err("a block's payload ends early".into());
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let start = at + 4;
        let Some(end) = start.checked_add(len).filter(|&e| e <= payload.len()) else {
            return Err("a message runs past the end of its block".into());
        };
        at = end;
        if index < sources {
            continue; // cubin / SASS: not read until asked
        }
        let result = messages::ProfileResult::decode(payload.slice(start..end))
            .map_err(|e| format!("a profiled kernel does not decode ({e})"))?;
        let section_hashes = result
            .sections
            .iter()
            .map(|bytes| {
                let mut hasher = rustc_hash::FxHasher::default();
                bytes.hash(&mut hasher);
                hasher.finish()
            })
            .collect();
        let metrics = result
            .metric_results
            .iter()
            .map(|m| metric_result::parse(m, payload, block.offset))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("a metric result does not decode ({e})"))?;
        out.push(DecodedResult {
            result,
            section_hashes,
            metrics,
        });
    }
    Ok(out)
}

use messages::FileHeader;

/// Reads until `buf` is full or the reader ends; the number of bytes read.
fn read_fully(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
