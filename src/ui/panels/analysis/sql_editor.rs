//! The SQL tab's editor: a multi-line text box whose layouter colours SQL (egui's code-editor
//! pattern, no extra crate): keywords, the views' names, strings, numbers, comments and
//! `:parameters` such as `:sel_start`.

use egui::text::{LayoutJob, TextFormat};
use egui::{Color32, FontId, Ui};

use crate::sql::views;

const KEYWORDS: &[&str] = &[
    "ALL",
    "AND",
    "AS",
    "ASC",
    "AVG",
    "BETWEEN",
    "BY",
    "CASE",
    "CAST",
    "COALESCE",
    "COUNT",
    "CROSS",
    "DESC",
    "DISTINCT",
    "ELSE",
    "END",
    "EXCEPT",
    "EXISTS",
    "FILTER",
    "FROM",
    "GLOB",
    "GROUP",
    "HAVING",
    "IFNULL",
    "IN",
    "INNER",
    "INTERSECT",
    "IS",
    "JOIN",
    "LAG",
    "LEAD",
    "LEFT",
    "LIKE",
    "LIMIT",
    "MAX",
    "MIN",
    "NOT",
    "NULL",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "PRAGMA",
    "RECURSIVE",
    "ROUND",
    "ROW_NUMBER",
    "ROWS",
    "SELECT",
    "SUM",
    "THEN",
    "TOTAL",
    "UNION",
    "USING",
    "VALUES",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
];

/// What a stretch of the query is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    Plain,
    Keyword,
    View,
    Text,
    Number,
    Comment,
    Parameter,
}

/// Splits `sql` into `(byte range, token)` runs covering all of it.
pub fn tokens(sql: &str) -> Vec<(std::ops::Range<usize>, Token)> {
    let bytes = sql.as_bytes();
    let mut out: Vec<(std::ops::Range<usize>, Token)> = Vec::new();
    let mut i = 0;
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    while i < bytes.len() {
        let start = i;
        let b = bytes[i];
        let token = if b == b'-' && bytes.get(i + 1) == Some(&b'-') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            Token::Comment
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(bytes.len());
            Token::Comment
        } else if b == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'\'' {
                i += 1;
            }
            i = (i + 1).min(bytes.len());
            Token::Text
        } else if (b == b':' || b == b'@' || b == b'$')
            && bytes.get(i + 1).is_some_and(|&c| word(c))
        {
            i += 1;
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            Token::Parameter
        } else if b.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            Token::Number
        } else if word(b) {
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            let w = &sql[start..i];
            if KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(w)) {
                Token::Keyword
            } else if views::VIEWS.iter().any(|(v, _)| v.eq_ignore_ascii_case(w))
                || ["graph_executions", "samples", "gaps"]
                    .iter()
                    .any(|v| v.eq_ignore_ascii_case(w))
            {
                Token::View
            } else {
                Token::Plain
            }
        } else {
            // Up to the next byte that may start a token, whole UTF-8 characters only.
            i += 1;
            while i < bytes.len() && !sql.is_char_boundary(i) {
                i += 1;
            }
            Token::Plain
        };
        match out.last_mut() {
            Some((range, t)) if *t == token && token == Token::Plain => {
                *range = range.start..i;
            }
            _ => out.push((start..i, token)),
        }
    }
    out
}

fn color(token: Token, dark: bool, plain: Color32) -> Color32 {
    let pick = |d: (u8, u8, u8), l: (u8, u8, u8)| {
        let (r, g, b) = if dark { d } else { l };
        Color32::from_rgb(r, g, b)
    };
    match token {
        Token::Plain => plain,
        Token::Keyword => pick((0x6c, 0xb6, 0xff), (0x00, 0x4f, 0xb0)),
        Token::View => pick((0x4e, 0xc9, 0xb0), (0x00, 0x7a, 0x60)),
        Token::Text => pick((0xe6, 0xb4, 0x73), (0xa3, 0x4a, 0x00)),
        Token::Number => pick((0xb5, 0xce, 0xa8), (0x2a, 0x7a, 0x2a)),
        Token::Comment => pick((0x80, 0x80, 0x80), (0x70, 0x70, 0x70)),
        Token::Parameter => pick((0xd7, 0x8f, 0xf0), (0x8a, 0x2b, 0xb0)),
    }
}

/// `sql` laid out in colour, wrapped at `wrap_width`.
pub fn highlight(ui: &Ui, sql: &str, wrap_width: f32) -> LayoutJob {
    let font = FontId::monospace(13.0);
    let dark = ui.visuals().dark_mode;
    let plain = ui.visuals().text_color();
    let mut job = LayoutJob::default();
    for (range, token) in tokens(sql) {
        job.append(
            &sql[range],
            0.0,
            TextFormat::simple(font.clone(), color(token, dark, plain)),
        );
    }
    job.wrap.max_width = wrap_width;
    job
}

/// The query shown in grey in an empty editor, and run when Run is pressed there.
pub const EXAMPLE_QUERY: &str = "SELECT name, SUM(dur) FROM kernels GROUP BY name ORDER BY 2 DESC";

/// The editor: a code-style text box over `query` with `id`, `rows` lines tall.
pub fn editor(ui: &mut Ui, query: &mut String, id: egui::Id, rows: usize) -> egui::Response {
    let mut layouter = |ui: &Ui, text: &dyn egui::TextBuffer, wrap_width: f32| {
        let job = highlight(ui, text.as_str(), wrap_width);
        ui.fonts_mut(|f| f.layout_job(job))
    };
    ui.add(
        egui::TextEdit::multiline(query)
            .id(id)
            .code_editor()
            .desired_rows(rows)
            .desired_width(f32::INFINITY)
            .hint_text(EXAMPLE_QUERY)
            .layouter(&mut layouter),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_covered_and_the_kinds_are_told_apart() {
        let sql = "SELECT name, 12 -- x\nFROM kernels WHERE start < :sel_end AND n = 'é'";
        let t = tokens(sql);
        assert_eq!(t.first().map(|r| r.0.start), Some(0));
        assert_eq!(t.last().map(|r| r.0.end), Some(sql.len()));
        assert!(t.windows(2).all(|w| w[0].0.end == w[1].0.start));
        let kind_of = |s: &str| {
            let at = sql.find(s).unwrap_or(usize::MAX);
            t.iter().find(|(r, _)| r.start == at).map(|(_, k)| *k)
        };
        assert_eq!(kind_of("SELECT"), Some(Token::Keyword));
        assert_eq!(kind_of("kernels"), Some(Token::View));
        assert_eq!(kind_of("12"), Some(Token::Number));
        assert_eq!(kind_of("-- x"), Some(Token::Comment));
        assert_eq!(kind_of(":sel_end"), Some(Token::Parameter));
        assert_eq!(kind_of("'é'"), Some(Token::Text));
    }
}
