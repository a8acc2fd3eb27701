//! The structure of a report's bytes, read here on its own (the u32 lengths and each block
//! header's counts, decoded with the loader's prost messages), to know where to cut and where to
//! flip a byte, and how many kernels a cut report still holds.

use prost::Message;
use sightline::load::ncu_rep::messages::BlockHeader;

/// One block: a u32 length, a `BlockHeader`, then its payload of length-prefixed messages.
pub struct Block {
    /// Offset of the block's u32 header length.
    pub start: usize,
    pub header_len: usize,
    pub payload_start: usize,
    pub payload_len: usize,
    /// Each message: the offset of its u32 length, its length, whether it is a result.
    pub messages: Vec<(usize, usize, bool)>,
    pub results: usize,
}

impl Block {
    pub fn end(&self) -> usize {
        self.payload_start + self.payload_len
    }
}

pub struct ReportLayout {
    pub file_header_len: usize,
    /// The blocks wholly in the bytes.
    pub blocks: Vec<Block>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<usize> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

impl ReportLayout {
    pub fn parse(bytes: &[u8]) -> Self {
        assert_eq!(&bytes[..4], b"NVR\0", "a report");
        let file_header_len = u32_at(bytes, 4).expect("file header length");
        let mut blocks = Vec::new();
        let mut at = 8 + file_header_len;
        while let Some(header_len) = u32_at(bytes, at) {
            let payload_start = at + 4 + header_len;
            let Some(header) = bytes.get(at + 4..payload_start) else {
                break;
            };
            let header = BlockHeader::decode(header).expect("a block header");
            let payload_len = header.payload_size.unwrap_or(0) as usize;
            if payload_start + payload_len > bytes.len() {
                break;
            }
            let sources = header.num_sources.unwrap_or(0) as usize;
            let results = header.num_results.unwrap_or(0) as usize;
            let mut messages = Vec::new();
            let mut m = payload_start;
            for i in 0..sources + results {
                let len = u32_at(bytes, m).expect("a message length");
                messages.push((m, len, i >= sources));
                m += 4 + len;
            }
            assert_eq!(m, payload_start + payload_len, "messages fill the payload");
            blocks.push(Block {
                start: at,
                header_len,
                payload_start,
                payload_len,
                messages,
                results,
            });
            at = payload_start + payload_len;
        }
        ReportLayout {
            file_header_len,
            blocks,
        }
    }

    /// Where the first block starts: after the magic and the file header.
    pub fn first_block(&self) -> usize {
        8 + self.file_header_len
    }

    pub fn kernels(&self) -> usize {
        self.blocks.iter().map(|b| b.results).sum()
    }

    /// The kernels of the blocks that end at or before `at`.
    pub fn kernels_before(&self, at: usize) -> usize {
        self.blocks
            .iter()
            .filter(|b| b.end() <= at)
            .map(|b| b.results)
            .sum()
    }

    pub fn is_block_boundary(&self, at: usize) -> bool {
        at == self.first_block() || self.blocks.iter().any(|b| b.end() == at)
    }

    /// The end of the last block that ends within `limit` bytes.
    pub fn last_end_within(&self, limit: usize) -> usize {
        self.blocks
            .iter()
            .map(Block::end)
            .filter(|&e| e <= limit)
            .max()
            .unwrap_or(self.first_block())
    }

    /// The first blocks in full and a sample of the others (about a dozen), with their index.
    fn chosen_blocks(&self, first: usize) -> Vec<(usize, &Block, bool)> {
        let step = (self.blocks.len() / 12).max(1);
        self.blocks
            .iter()
            .enumerate()
            .filter(|(k, _)| *k < first || k % step == 0 || *k + 1 == self.blocks.len())
            .map(|(k, b)| (k, b, k < first))
            .collect()
    }

    /// Where to cut the report, each with where that is in words.
    pub fn cut_points(&self) -> Vec<(usize, String)> {
        let mut points: Vec<(usize, String)> = vec![
            (0, "an empty file".into()),
            (1, "inside the magic".into()),
            (3, "inside the magic".into()),
            (4, "after the magic".into()),
            (5, "inside the file header's length".into()),
            (7, "inside the file header's length".into()),
            (8, "before the file header".into()),
            (
                8 + self.file_header_len / 2,
                "inside the file header".into(),
            ),
            (
                self.first_block(),
                "after the file header: no blocks".into(),
            ),
        ];
        for (k, b, in_full) in self.chosen_blocks(8) {
            let at = |p: usize, what: &str| (p, format!("{what} of block {k}"));
            points.push(at(b.start, "the start"));
            points.push(at(b.start + 2, "inside the header length"));
            points.push(at(b.start + 4 + b.header_len / 2, "inside the header"));
            points.push(at(b.end() - 1, "one byte before the end"));
            if let Some(&(m, len, _)) = b.messages.iter().find(|m| m.2) {
                points.push(at(m + 4 + len / 2, "inside the first result"));
            }
            if !in_full {
                continue;
            }
            points.push(at(b.start + 1, "inside the header length"));
            points.push(at(b.start + 4, "before the header"));
            points.push(at(b.payload_start, "before the payload"));
            let n = b.messages.len();
            for (i, &(m, len, _)) in b.messages.iter().enumerate() {
                if i < 2 || i + 1 == n {
                    points.push(at(m + 2, "inside a message length"));
                    points.push(at(m + 4, "at a message's start"));
                    points.push(at(m + 4 + len / 2, "inside a message"));
                }
            }
        }
        points
    }

    /// Where to flip a byte of a report of `len` bytes, with the mask to flip it by and where
    /// that is in words: every byte of the magic's and the length fields of the first blocks
    /// and messages, bytes of their headers and results, and pseudo-random offsets.
    pub fn flip_points(&self, len: usize) -> Vec<(usize, u8, String)> {
        let mut points = Vec::new();
        let length_field = |at: usize, what: String, points: &mut Vec<_>| {
            for i in 0..4 {
                points.push((at + i, 0xff, format!("{what} byte {i}")));
            }
            points.push((at, 0x01, format!("{what} low bit")));
            points.push((at + 3, 0x80, format!("{what} top bit")));
        };
        points.push((0, 0xff, "the magic".to_string()));
        points.push((3, 0x01, "the magic's NUL".to_string()));
        length_field(4, "the file header's length".into(), &mut points);
        for i in 0..self.file_header_len {
            points.push((8 + i, 0xff, "the file header".into()));
        }
        for (k, b, _) in self.chosen_blocks(0).into_iter().take(6) {
            length_field(b.start, format!("block {k}'s header length"), &mut points);
            let header = b.start + 4..b.payload_start;
            let spread = (header.len() / 8).max(1);
            for at in header.clone() {
                let near_end = at + 24 >= header.end;
                if header.len() <= 64 || near_end || (at - header.start) % spread == 0 {
                    points.push((at, 0xff, format!("block {k}'s header")));
                }
            }
            let n = b.messages.len();
            for (i, &(m, len, result)) in b.messages.iter().enumerate() {
                if i < 2 || i + 1 == n {
                    length_field(m, format!("block {k}'s message {i}'s length"), &mut points);
                }
                if result && i + 1 == n {
                    let spread = (len / 16).max(1);
                    for at in (m + 4..m + 4 + len).step_by(spread) {
                        let mask = if at % 2 == 0 { 0xff } else { 0x01 };
                        points.push((at, mask, format!("block {k}'s result")));
                    }
                }
            }
        }
        let mut state = len as u64 | 1;
        for _ in 0..48 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            points.push(((state % len as u64) as usize, 0xff, "a random byte".into()));
        }
        points.retain(|p| p.0 < len);
        points
    }
}
