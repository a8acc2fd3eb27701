//! Finds the events of a Chrome-trace JSON document in its bytes as they arrive, without building
//! a tree: the bytes of each element of `traceEvents` (or of a top-level array, the other form
//! Chrome traces take) come out as a range, every other top-level member as a key and its text.
//!
//! Only strings, escapes and brackets are looked at, so the scan runs near memory speed; the
//! events themselves are parsed later, in parallel ([`super::parse`]). The scan keeps its state
//! between calls, so a document may arrive in any number of pieces.

use std::ops::Range;

/// Where the scan is in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    /// Nothing but whitespace yet.
    Start,
    /// In the top-level object: `{"traceEvents": [...], ...}`.
    Object,
    /// In a top-level array of events: `[{...}, ...]`.
    Array,
    /// After the closing bracket of the top level.
    Done,
}

/// What comes next directly inside the top-level object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    /// A number, `true`, `false` or `null` that started at `value_start`.
    Scalar,
    /// A string value; ends at its closing quote.
    StringValue,
    /// An object or array value other than `traceEvents`, started at `value_start`.
    Composite,
    /// Inside `traceEvents`.
    Events,
    CommaOrEnd,
}

/// The bytes that open or close a string, an object or an array.
const STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t
};

/// What the document is not, when it is not a Chrome trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The first thing in the file is not `{` or `[`.
    NotJson,
}

/// The scan's state. Feed it the buffer it has seen so far plus new bytes; it reports complete
/// pieces with ranges into that buffer.
#[derive(Debug)]
pub struct Framer {
    root: Root,
    expect: Expect,
    depth: u32,
    /// Depth of the elements of the events array (1 for a top-level array, 2 in `traceEvents`).
    events_depth: u32,
    in_string: bool,
    /// A backslash was the last byte scanned inside a string: the next byte is escaped.
    escape_pending: bool,
    /// Next byte of the buffer to scan.
    pos: usize,
    string_start: usize,
    key: String,
    value_start: usize,
    /// Start of the event being scanned, if one is open.
    event_start: Option<usize>,
    /// End of the last complete event (where the buffer may be cut).
    pub last_event_end: usize,
    /// Top-level members other than the events: (key, value text).
    pub members: Vec<(String, String)>,
    /// Elements of the events array that are not objects.
    pub non_objects: u64,
    /// Inside a number or literal that is an element of the events array (skipped; it may go on
    /// in the next piece of the document).
    in_scalar: bool,
}

impl Default for Framer {
    fn default() -> Self {
        Self {
            root: Root::Start,
            expect: Expect::Key,
            depth: 0,
            events_depth: 0,
            in_string: false,
            escape_pending: false,
            pos: 0,
            string_start: 0,
            key: String::new(),
            value_start: 0,
            event_start: None,
            last_event_end: 0,
            members: Vec::new(),
            non_objects: 0,
            in_scalar: false,
        }
    }
}

impl Framer {
    /// Scans `buf` from where the last call stopped; pushes the range of every event completed.
    pub fn scan(&mut self, buf: &[u8], events: &mut Vec<Range<usize>>) -> Result<(), FrameError> {
        let n = buf.len();
        let mut i = self.pos;
        if self.escape_pending && i < n {
            self.escape_pending = false;
            i += 1;
        }
        while i < n {
            if self.in_string {
                match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                    Some(k) => {
                        i += k;
                        if buf[i] == b'\\' {
                            if i + 1 >= n {
                                self.escape_pending = true;
                                i = n;
                            } else {
                                i += 2;
                            }
                            continue;
                        }
                        self.in_string = false;
                        self.string_ended(buf, i);
                        i += 1;
                        continue;
                    }
                    None => {
                        i = n;
                        break;
                    }
                }
            }
            if self.depth >= 2 && self.depth != self.events_depth {
                // Inside an event (or a nested member): only strings and brackets matter.
                while i < n && !STRUCTURAL[buf[i] as usize] {
                    i += 1;
                }
                if i == n {
                    break;
                }
            }
            let b = buf[i];
            if self.in_scalar {
                if matches!(b, b',' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                    self.in_scalar = false;
                } else {
                    i += 1;
                    continue;
                }
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.string_start = i;
                    if self.depth == self.events_depth && self.expect == Expect::Events {
                        self.non_objects += 1;
                    } else if self.depth == 1 && self.root == Root::Object {
                        match self.expect {
                            Expect::Key => {}
                            Expect::Value => {
                                self.expect = Expect::StringValue;
                                self.value_start = i;
                            }
                            _ => {}
                        }
                    }
                }
                b'{' | b'[' => {
                    self.opened(b, i)?;
                }
                b'}' | b']' => {
                    self.closed(buf, i, events);
                }
                b',' if self.depth == 1 && self.root == Root::Object => {
                    if self.expect == Expect::Scalar {
                        self.member_value(buf, self.value_start..i);
                    }
                    self.expect = Expect::Key;
                }
                b':' if self.depth == 1 && self.root == Root::Object => {
                    if self.expect == Expect::Colon {
                        self.expect = Expect::Value;
                    }
                }
                b' ' | b'\n' | b'\r' | b'\t' | b',' | b':' => {}
                0xEF | 0xBB | 0xBF if self.root == Root::Start => {} // a UTF-8 byte-order mark
                _ => {
                    if self.root == Root::Start {
                        return Err(FrameError::NotJson);
                    }
                    if self.depth == 1 && self.root == Root::Object && self.expect == Expect::Value
                    {
                        self.expect = Expect::Scalar;
                        self.value_start = i;
                    } else if self.depth == self.events_depth
                        && self.expect == Expect::Events
                        && self.event_start.is_none()
                    {
                        self.non_objects += 1;
                        self.in_scalar = true;
                    }
                }
            }
            i += 1;
        }
        self.pos = i;
        Ok(())
    }

    fn opened(&mut self, b: u8, i: usize) -> Result<(), FrameError> {
        match self.root {
            Root::Start => {
                if b == b'{' {
                    self.root = Root::Object;
                    self.expect = Expect::Key;
                } else {
                    self.root = Root::Array;
                    self.expect = Expect::Events;
                    self.events_depth = 1;
                }
                self.depth = 1;
                return Ok(());
            }
            Root::Done => {
                self.depth += 1;
                return Ok(());
            }
            _ => {}
        }
        if self.expect == Expect::Events && self.depth == self.events_depth {
            if b == b'{' {
                self.event_start = Some(i);
            } else {
                self.non_objects += 1;
            }
        } else if self.depth == 1 && self.root == Root::Object && self.expect == Expect::Value {
            if b == b'[' && self.key == "traceEvents" {
                self.expect = Expect::Events;
                self.events_depth = 2;
            } else {
                self.expect = Expect::Composite;
                self.value_start = i;
            }
        }
        self.depth += 1;
        Ok(())
    }

    fn closed(&mut self, buf: &[u8], i: usize, events: &mut Vec<Range<usize>>) {
        if self.depth == 0 {
            return;
        }
        if self.depth == 1 && self.expect == Expect::Scalar {
            self.member_value(buf, self.value_start..i);
        }
        self.depth -= 1;
        if self.expect == Expect::Events {
            if self.depth == self.events_depth {
                if let Some(start) = self.event_start.take() {
                    events.push(start..i + 1);
                    self.last_event_end = i + 1;
                }
            } else if self.depth + 1 == self.events_depth {
                // The events array closed.
                self.expect = Expect::CommaOrEnd;
            }
        } else if self.depth == 1 && self.expect == Expect::Composite {
            self.member_value(buf, self.value_start..i + 1);
            self.expect = Expect::CommaOrEnd;
        }
        if self.depth == 0 {
            self.root = Root::Done;
        }
    }

    fn string_ended(&mut self, buf: &[u8], i: usize) {
        if self.depth != 1 || self.root != Root::Object {
            return;
        }
        match self.expect {
            Expect::Key => {
                self.key = String::from_utf8_lossy(&buf[self.string_start + 1..i]).into_owned();
                self.expect = Expect::Colon;
            }
            Expect::StringValue => {
                self.member_value(buf, self.value_start..i + 1);
                self.expect = Expect::CommaOrEnd;
            }
            _ => {}
        }
    }

    fn member_value(&mut self, buf: &[u8], range: Range<usize>) {
        let text = String::from_utf8_lossy(&buf[range]).trim().to_string();
        self.members.push((std::mem::take(&mut self.key), text));
    }

    /// Forgets the first `cut` bytes of the buffer (the caller removed them): every position
    /// moves down by `cut`. `cut` must not exceed [`Self::last_event_end`].
    pub fn forget_prefix(&mut self, cut: usize) {
        self.pos -= cut;
        self.last_event_end -= cut;
        self.string_start = self.string_start.saturating_sub(cut);
        self.value_start = self.value_start.saturating_sub(cut);
        if let Some(s) = self.event_start.as_mut() {
            *s -= cut;
        }
    }

    /// The document ended where it should (its top level closed).
    pub fn is_complete(&self) -> bool {
        self.root == Root::Done
    }

    /// An event had begun and not ended when the bytes ran out.
    pub fn has_open_event(&self) -> bool {
        self.event_start.is_some()
    }

    /// Nothing but whitespace was seen.
    pub fn is_empty(&self) -> bool {
        self.root == Root::Start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `doc` in pieces of `step` bytes, cutting the buffer after events as the loader does.
    fn frame(doc: &str, step: usize) -> (Vec<String>, Vec<(String, String)>, bool) {
        let mut f = Framer::default();
        let mut buf: Vec<u8> = Vec::new();
        let mut out = Vec::new();
        for piece in doc.as_bytes().chunks(step) {
            buf.extend_from_slice(piece);
            let mut ranges = Vec::new();
            f.scan(&buf, &mut ranges).unwrap();
            for r in ranges {
                out.push(String::from_utf8(buf[r].to_vec()).unwrap());
            }
            let cut = f.last_event_end;
            buf.drain(..cut);
            f.forget_prefix(cut);
        }
        (out, f.members.clone(), f.is_complete())
    }

    #[test]
    fn events_and_members_come_out_whatever_the_piece_size() {
        let doc = r#" {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H100 }{"}],
            "traceEvents": [ {"name": "a\"}", "ts": 1.5}, {"name": "b\\", "args": {"x": [1, {}]}} , 7, "s", [1] ],
            "traceName": "x.json", "flag": true } "#;
        for step in [1, 2, 3, 7, 64, 4096] {
            let (events, members, complete) = frame(doc, step);
            assert_eq!(
                events,
                vec![
                    r#"{"name": "a\"}", "ts": 1.5}"#.to_string(),
                    r#"{"name": "b\\", "args": {"x": [1, {}]}}"#.to_string()
                ],
                "step {step}"
            );
            let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                keys,
                ["schemaVersion", "deviceProperties", "traceName", "flag"]
            );
            assert_eq!(members[0].1, "1");
            assert_eq!(members[1].1, r#"[{"id": 0, "name": "H100 }{"}]"#);
            assert_eq!(members[2].1, r#""x.json""#);
            assert_eq!(members[3].1, "true");
            assert!(complete);
        }
    }

    #[test]
    fn a_top_level_array_is_a_list_of_events() {
        let (events, members, complete) = frame(r#"[{"ph":"X"},{"ph":"i"}]"#, 5);
        assert_eq!(events.len(), 2);
        assert!(members.is_empty());
        assert!(complete);
    }

    #[test]
    fn a_truncated_document_keeps_its_complete_events() {
        let (events, _, complete) = frame(r#"{"traceEvents": [{"a": 1}, {"b": "#, 4);
        assert_eq!(events, vec![r#"{"a": 1}"#.to_string()]);
        assert!(!complete);
    }

    #[test]
    fn text_is_not_json() {
        let mut f = Framer::default();
        assert_eq!(
            f.scan(b"  hello", &mut Vec::new()),
            Err(FrameError::NotJson)
        );
    }
}
