//! The text of a report cell, held by reference: a name is a counted reference to the trace's
//! own interned string ([`crate::trace::StringTable::shared`]), and a text a report builds from
//! names (`--` × level before a range's name, `domain:text`) is a list of such pieces printed one
//! after the other. A report of a thousand rows naming one NVTX message of megabytes holds the
//! message once, not a thousand times; the CSV and table writers print the pieces as they go.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Text of a [`super::Cell::Text`]: shared, cheap to clone, compared and printed by content.
#[derive(Clone)]
pub struct CellText(Repr);

#[derive(Clone)]
enum Repr {
    One(Arc<str>),
    /// Pieces printed one after the other.
    Joined(Arc<[Arc<str>]>),
}

impl CellText {
    /// Text made of `pieces` one after the other, each shared rather than copied.
    pub fn joined(pieces: impl IntoIterator<Item = Arc<str>>) -> Self {
        let mut pieces: Vec<Arc<str>> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        match pieces.len() {
            0 => CellText::from(""),
            1 => CellText(Repr::One(pieces.remove(0))),
            _ => CellText(Repr::Joined(pieces.into())),
        }
    }

    /// The pieces, in order; their concatenation is the text.
    pub fn pieces(&self) -> &[Arc<str>] {
        match &self.0 {
            Repr::One(s) => std::slice::from_ref(s),
            Repr::Joined(p) => p,
        }
    }

    /// The text, borrowed when it is one piece (a name), else put together.
    pub fn as_str(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::One(s) => Cow::Borrowed(s),
            Repr::Joined(p) => Cow::Owned(p.concat()),
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.pieces().iter().map(|p| p.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The characters of the text, piece after piece.
    pub fn chars(&self) -> impl Iterator<Item = char> + '_ {
        self.pieces().iter().flat_map(|p| p.chars())
    }

    /// The bytes of the text, piece after piece.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.pieces().iter().flat_map(|p| p.bytes())
    }
}

impl From<Arc<str>> for CellText {
    fn from(s: Arc<str>) -> Self {
        CellText(Repr::One(s))
    }
}

impl From<&str> for CellText {
    fn from(s: &str) -> Self {
        CellText(Repr::One(s.into()))
    }
}

impl From<String> for CellText {
    fn from(s: String) -> Self {
        CellText(Repr::One(s.into()))
    }
}

impl From<&String> for CellText {
    fn from(s: &String) -> Self {
        CellText::from(s.as_str())
    }
}

impl From<Cow<'_, str>> for CellText {
    fn from(s: Cow<'_, str>) -> Self {
        CellText(Repr::One(s.into()))
    }
}

impl fmt::Display for CellText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.pieces().iter().try_for_each(|p| f.write_str(p))
    }
}

impl fmt::Debug for CellText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_str(), f)
    }
}

/// Equal by content, however the text is split into pieces.
impl PartialEq for CellText {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::One(a), Repr::One(b)) => a == b,
            _ => self.len() == other.len() && self.bytes().eq(other.bytes()),
        }
    }
}

impl PartialEq<str> for CellText {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.bytes().eq(other.bytes())
    }
}

impl PartialEq<&str> for CellText {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_read_as_one_text_and_share_their_names() {
        let name: Arc<str> = "x".repeat(1 << 20).into();
        let tree = CellText::joined(["----".into(), Arc::clone(&name)]);
        assert_eq!(tree.len(), 4 + (1 << 20));
        assert!(tree.as_str().starts_with("----xx"));
        assert!(Arc::ptr_eq(&tree.pieces()[1], &name));
        assert_eq!(Arc::strong_count(&name), 2);
        // Equal by content, however split.
        assert_eq!(
            CellText::joined(["a".into(), "bc".into()]),
            CellText::from("abc")
        );
        assert_ne!(
            CellText::joined(["a".into(), "b".into()]),
            CellText::from("abc")
        );
        assert_eq!(CellText::joined(["".into(), "ab".into()]), "ab");
        assert_eq!(CellText::joined([]).pieces().len(), 1);
        assert_eq!(tree.to_string(), tree.as_str());
        assert_eq!(format!("{:?}", CellText::from("q\"")), "\"q\\\"\"");
    }
}
