//! One row of a table b-tree leaf, read in place: the cell's payload (gathered from overflow
//! pages when it does not fit in its page) and its record header, which gives each column's
//! serial type and where its value starts (SQLite's file format, "Record Format").

use rusqlite::types::ValueRef;

use super::PageError;

/// A varint at `at`: its value and length. SQLite's varints are big-endian, 7 bits a byte, at
/// most nine bytes, the ninth giving all eight of its bits.
pub fn varint(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let b = *bytes.get(at + i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(b), 9));
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// A record's columns: serial type and offset of each value in the payload.
#[derive(Default)]
pub struct Record {
    columns: Vec<(u64, usize)>,
}

impl Record {
    /// Reads the header of `payload`, keeping the first `wanted` columns. Fails, as SQLite
    /// does, on a header that runs past the payload or whose values do not fill the payload
    /// exactly (every serial type is read for that, not only the wanted ones).
    pub fn parse(&mut self, payload: &[u8], wanted: usize) -> Result<(), PageError> {
        self.columns.clear();
        let bad = || PageError("a record header runs past its payload".into());
        let (header_len, n) = varint(payload, 0).ok_or_else(bad)?;
        let header_len = usize::try_from(header_len).map_err(|_| bad())?;
        if header_len > payload.len() || header_len < n {
            return Err(bad());
        }
        let mut at = n;
        let mut body = header_len;
        let header = &payload[..header_len];
        while at < header_len {
            // Every serial type but a long text's or blob's is one byte.
            let serial = match header[at] {
                b if b < 0x80 => {
                    at += 1;
                    u64::from(b)
                }
                _ => {
                    let (serial, n) = varint(header, at).ok_or_else(bad)?;
                    at += n;
                    serial
                }
            };
            if self.columns.len() < wanted {
                self.columns.push((serial, body));
            }
            body = body.checked_add(value_len(serial)).ok_or_else(bad)?;
        }
        if body != payload.len() {
            return Err(PageError(
                "a record's values do not fill its payload".into(),
            ));
        }
        Ok(())
    }

    /// Column `i` as an integer where it is stored as one (most columns of an export), without
    /// going through a `ValueRef`; `None` for any other kind (the caller then asks [`Self::value`]).
    #[inline]
    pub fn integer(&self, payload: &[u8], i: usize) -> Option<i64> {
        let &(serial, at) = self.columns.get(i)?;
        let n = match serial {
            1..=4 => serial as usize,
            5 => 6,
            6 => 8,
            8 => return Some(0),
            9 => return Some(1),
            _ => return None,
        };
        let bytes = &payload[at..at + n];
        let first = i64::from(bytes[0] as i8);
        Some(
            bytes[1..]
                .iter()
                .fold(first, |v, &b| (v << 8) | i64::from(b)),
        )
    }

    /// Column `i`'s value; a column beyond the record's (added to the table later) is NULL.
    pub fn value<'p>(&self, payload: &'p [u8], i: usize) -> ValueRef<'p> {
        let Some(&(serial, at)) = self.columns.get(i) else {
            return ValueRef::Null;
        };
        let int = |n: usize| -> i64 {
            let bytes = &payload[at..at + n];
            let first = i64::from(bytes[0] as i8);
            bytes[1..]
                .iter()
                .fold(first, |v, &b| (v << 8) | i64::from(b))
        };
        match serial {
            0 => ValueRef::Null,
            1 => ValueRef::Integer(int(1)),
            2 => ValueRef::Integer(int(2)),
            3 => ValueRef::Integer(int(3)),
            4 => ValueRef::Integer(int(4)),
            5 => ValueRef::Integer(int(6)),
            6 => ValueRef::Integer(int(8)),
            7 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&payload[at..at + 8]);
                ValueRef::Real(f64::from_be_bytes(b))
            }
            8 => ValueRef::Integer(0),
            9 => ValueRef::Integer(1),
            10 | 11 => ValueRef::Null,
            n => {
                let len = value_len(n);
                let bytes = &payload[at..at + len];
                if n % 2 == 1 {
                    ValueRef::Text(bytes)
                } else {
                    ValueRef::Blob(bytes)
                }
            }
        }
    }
}

/// Bytes of a value of each serial type below 12.
const FIXED_LEN: [usize; 12] = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0];

/// How many bytes a value of serial type `serial` takes.
fn value_len(serial: u64) -> usize {
    match FIXED_LEN.get(serial as usize) {
        Some(&n) if serial < 12 => n,
        _ => usize::try_from((serial - 12) / 2).unwrap_or(usize::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_one_to_nine_bytes() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
    }

    #[test]
    fn a_record_of_every_kind() {
        // header: its length (8), then the types: NULL, i8, i16, f64, text(2), zero, one
        let payload = [
            8, 0, 1, 2, 7, 17, 8, 9, 0xfe, 0x01, 0x00, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, b'h', b'i',
        ];
        let mut r = Record::default();
        r.parse(&payload, 16).unwrap();
        assert_eq!(r.value(&payload, 0), ValueRef::Null);
        assert_eq!(r.value(&payload, 1), ValueRef::Integer(-2));
        assert_eq!(r.value(&payload, 2), ValueRef::Integer(256));
        assert_eq!(r.value(&payload, 3), ValueRef::Real(1.0));
        assert_eq!(r.value(&payload, 4), ValueRef::Text(b"hi"));
        assert_eq!(r.value(&payload, 5), ValueRef::Integer(0));
        assert_eq!(r.value(&payload, 6), ValueRef::Integer(1));
        assert_eq!(r.value(&payload, 7), ValueRef::Null);
        // A text said to be longer than the payload is refused.
        let short = [2, 21, b'a'];
        assert!(r.parse(&short, 4).is_err());
    }
}
