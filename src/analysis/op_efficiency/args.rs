//! An operator's arguments as a PyTorch trace writes them (`Input Dims`, `Input type`, `Input
//! Strides`, `Concrete Inputs`), read into a small value tree, and printed back the way TraceLens
//! prints them: Python's `str` of the lists turned into tuples (`((768,), (2048, 3072), ())`).

/// One argument value: a list, a string, a number or a literal (`None`, `True`).
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    List(Vec<ArgValue>),
    Str(String),
    /// A number as written (`768`, `0.1`).
    Number(String),
    /// `null`/`None`, `true`/`True`, `false`/`False`.
    Literal(&'static str),
}

impl ArgValue {
    /// The items of a list; nothing for any other value.
    pub fn items(&self) -> &[ArgValue] {
        match self {
            ArgValue::List(items) => items,
            _ => &[],
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            ArgValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The sizes of a shape (`[2048, 768]`); `None` for anything that is not a list of integers.
    pub fn shape(&self) -> Option<Vec<u64>> {
        match self {
            ArgValue::List(items) => items
                .iter()
                .map(|v| match v {
                    ArgValue::Number(n) => n.parse::<u64>().ok(),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// Python's `str()` of the value with every list turned into a tuple (TraceLens'
    /// `list_to_tuple`): `(768,)` for one item, `()` for none, strings in `repr` quotes.
    pub fn python_tuple(&self) -> String {
        let mut out = String::new();
        self.write_tuple(&mut out);
        out
    }

    fn write_tuple(&self, out: &mut String) {
        match self {
            ArgValue::List(items) => {
                out.push('(');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    item.write_tuple(out);
                }
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            ArgValue::Str(s) => python_repr_str(s, out),
            ArgValue::Number(n) => out.push_str(n),
            ArgValue::Literal(l) => out.push_str(l),
        }
    }
}

/// Python's `repr` of a string: single quotes unless the text has one and no double quote.
fn python_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Reads a JSON text (`["float", null]`) or a Python literal (`[[2048, 768], None, 'a']`, how
/// Sightline keeps `Input Dims`); `None` when it is neither.
pub fn parse(text: &str) -> Option<ArgValue> {
    let mut p = Parser {
        text: text.as_bytes(),
        at: 0,
    };
    let v = p.value()?;
    p.skip_space();
    (p.at == p.text.len()).then_some(v)
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Option<ArgValue> {
        self.skip_space();
        match *self.text.get(self.at)? {
            b'[' | b'(' => self.list(),
            b'"' | b'\'' => self.string().map(ArgValue::Str),
            b'-' | b'+' | b'0'..=b'9' | b'.' => {
                let start = self.at;
                while self
                    .text
                    .get(self.at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
                {
                    self.at += 1;
                }
                let n = std::str::from_utf8(&self.text[start..self.at]).ok()?;
                Some(ArgValue::Number(n.to_string()))
            }
            _ => {
                let start = self.at;
                while self.text.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
                    self.at += 1;
                }
                let word = &self.text[start..self.at];
                let literal = match word {
                    b"null" | b"None" => "None",
                    b"true" | b"True" => "True",
                    b"false" | b"False" => "False",
                    _ => return None,
                };
                Some(ArgValue::Literal(literal))
            }
        }
    }

    fn list(&mut self) -> Option<ArgValue> {
        let close = if self.text[self.at] == b'[' {
            b']'
        } else {
            b')'
        };
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.text.get(self.at)? {
                c if *c == close => {
                    self.at += 1;
                    return Some(ArgValue::List(items));
                }
                b',' => self.at += 1,
                _ => items.push(self.value()?),
            }
        }
    }

    /// A quoted string; JSON escapes are read, a Python literal's text is kept as written.
    fn string(&mut self) -> Option<String> {
        let quote = self.text[self.at];
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        while let Some(&c) = self.text.get(self.at) {
            if c == b'\\' {
                escaped = true;
                self.at += 2;
                continue;
            }
            if c == quote {
                let raw = std::str::from_utf8(self.text.get(start..self.at)?).ok()?;
                self.at += 1;
                if escaped && quote == b'"' {
                    return serde_json::from_str::<String>(&format!("\"{raw}\"")).ok();
                }
                return Some(raw.to_string());
            }
            self.at += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(text: &str) -> String {
        parse(text).map(|v| v.python_tuple()).unwrap_or_default()
    }

    #[test]
    fn lists_print_as_python_tuples() {
        assert_eq!(
            tuple("[[768], [2048, 3072], [3072, 768], [], []]"),
            "((768,), (2048, 3072), (3072, 768), (), ())"
        );
        assert_eq!(tuple("[[6297600]]"), "((6297600,),)");
        assert_eq!(
            tuple(r#"["float", "Scalar", "", "long int"]"#),
            "('float', 'Scalar', '', 'long int')"
        );
        assert_eq!(
            tuple(r#"["", "0.10000000000000001", "[True, False]"]"#),
            "('', '0.10000000000000001', '[True, False]')"
        );
        assert_eq!(
            tuple("[[2048, 768], None, ['a']]"),
            "((2048, 768), None, ('a',))"
        );
        assert_eq!(tuple(r#"["it's"]"#), "(\"it's\",)");
        assert_eq!(tuple(r#"["a\"b"]"#), "('a\"b',)");
        assert!(parse("[1, 2").is_none());
        assert!(parse("[1] x").is_none());
    }

    #[test]
    fn shapes_are_lists_of_sizes() {
        let v = parse("[[8, 12], [], ['x']]").unwrap_or(ArgValue::Literal("None"));
        let items = v.items();
        assert_eq!(items[0].shape(), Some(vec![8, 12]));
        assert_eq!(items[1].shape(), Some(vec![]));
        assert_eq!(items[2].shape(), None);
    }
}
