//! The README and the user guide (`docs/`) stay true (STYLE.md: "every documented command is one a
//! test runs"):
//!
//! - every relative link and picture of `README.md`, `docs/*.md` and `BENCHMARKS.md` names a file that exists, and
//!   an anchor, where given, a heading of that file; every chapter of the guide is reachable from
//!   the README, directly or through the guide's index; the README stays one page;
//! - every `sightline …` command of a ```` ```sh ```` block runs from the repository root and exits
//!   0. `sightline` is the binary Cargo built; an output path (`--out X`, `gen-trace X`) is moved
//!   into a scratch folder, and a later command of the same block that reads it reads it there.
//!
//! Left out, by one rule: a block whose line before its opening fence is `<!-- not run: REASON
//! -->` (a command that opens the window, needs Slurm or a real `nsys`, reads files another test
//! derives, or fails on purpose). Commands that read `../shared/traces/` are skipped, loudly, where
//! that folder is missing. Comment lines (`# …`) and the README's `cargo run` lines are not
//! commands here. The test prints how many commands it ran, skipped and left out.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The repository root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `docs/*.md`, sorted.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("a docs/ folder")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    files.extend(guide);
    files
}

/// A file's path from the repository root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

// ------------------------------------------------------------------------ reading Markdown

/// A fenced code block: its info string (`sh`), its lines, where it starts (1-based line of the
/// fence) and the reason of a `<!-- not run: … -->` marker on the line before it.
struct Block {
    info: String,
    lines: Vec<String>,
    line: usize,
    not_run: Option<String>,
}

/// A Markdown file split into its prose lines (with their 1-based numbers) and its fenced blocks.
struct Doc {
    prose: Vec<(usize, String)>,
    blocks: Vec<Block>,
}

fn not_run_reason(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("<!-- not run:")?;
    Some(rest.strip_suffix("-->")?.trim().to_string())
}

fn parse(text: &str) -> Doc {
    let mut doc = Doc {
        prose: Vec::new(),
        blocks: Vec::new(),
    };
    let mut open: Option<Block> = None;
    let mut previous = "";
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            Some(block) if fence && line.trim() == "```" => doc.blocks.push(block),
            Some(mut block) => {
                block.lines.push(line.to_string());
                open = Some(block);
            }
            None if fence => {
                open = Some(Block {
                    info: line.trim_start().trim_start_matches('`').trim().to_string(),
                    lines: Vec::new(),
                    line: i + 1,
                    not_run: not_run_reason(previous),
                });
            }
            None => {
                doc.prose.push((i + 1, line.to_string()));
                let marker = line.trim_start().starts_with("<!-- not run");
                assert!(
                    !marker || not_run_reason(line).is_some(),
                    "line {}: a not-run marker reads `<!-- not run: REASON -->`",
                    i + 1
                );
                assert!(
                    not_run_reason(previous).is_none(),
                    "line {}: a not-run marker stands on the line before a code block",
                    i
                );
            }
        }
        previous = line;
    }
    assert!(open.is_none(), "a code block is never closed");
    doc
}

/// GitHub's anchor of a heading: lower case, punctuation dropped (but `-` and `_`), spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a file's headings, a repeated one numbered as GitHub numbers it (`x`, `x-1`, …).
fn anchors(doc: &Doc) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in &doc.prose {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of the inline links and pictures of a prose line (`[text](target)`,
/// `![alt](target)`), code spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let mut text = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            text.push_str(part);
        }
    }
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                out.push(after[..end].trim().to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    out
}

// ------------------------------------------------------------------------ links

/// Relative links and pictures resolve to files, anchors to headings; every chapter is reachable
/// from the README; the README stays one page.
#[test]
fn every_link_and_picture_resolves_and_every_chapter_is_reachable() {
    let files = doc_files();
    // BENCHMARKS.md's links are checked too (its commands are the benchmarks', not run here).
    let docs: BTreeMap<PathBuf, Doc> = files
        .iter()
        .chain([&root().join("BENCHMARKS.md")])
        .map(|f| (f.clone(), parse(&std::fs::read_to_string(f).expect("read"))))
        .collect();
    let mut broken = Vec::new();
    let mut links_to: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut checked = 0;
    for (file, doc) in &docs {
        let dir = file.parent().expect("a folder");
        for (n, line) in &doc.prose {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let resolved = if path.is_empty() {
                    file.clone()
                } else {
                    normalise(&dir.join(path))
                };
                let at = format!("{}:{n}: {target}", shown(file));
                if !resolved.exists() {
                    broken.push(format!("{at}: no file {}", shown(&resolved)));
                    continue;
                }
                if resolved.extension().is_some_and(|e| e == "md") {
                    links_to
                        .entry(file.clone())
                        .or_default()
                        .push(resolved.clone());
                }
                let Some(anchor) = anchor else { continue };
                let headings = match docs.get(&resolved) {
                    Some(d) => anchors(d),
                    None => anchors(&parse(&std::fs::read_to_string(&resolved).expect("read"))),
                };
                if !headings.contains(anchor) {
                    broken.push(format!(
                        "{at}: no heading #{anchor} in {}",
                        shown(&resolved)
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));

    // Every chapter reachable from the README.
    let readme = root().join("README.md");
    let mut reached = BTreeSet::from([readme.clone()]);
    let mut queue = VecDeque::from([readme.clone()]);
    while let Some(f) = queue.pop_front() {
        for next in links_to.get(&f).into_iter().flatten() {
            if reached.insert(next.clone()) {
                queue.push_back(next.clone());
            }
        }
    }
    let unreached: Vec<String> = files
        .iter()
        .filter(|f| !reached.contains(*f))
        .map(|f| shown(f))
        .collect();
    assert!(
        unreached.is_empty(),
        "not reachable from the README: {unreached:?}"
    );
    let chapters = files.len() - 2; // less the README and the guide's index
    assert!(chapters >= 5, "the guide has {chapters} chapters");

    let readme_lines = std::fs::read_to_string(&readme)
        .expect("read")
        .lines()
        .count();
    assert!(
        readme_lines < 250,
        "README.md has {readme_lines} lines: the rest belongs in docs/"
    );
    println!(
        "docs_commands: {checked} links and pictures resolve in {} files",
        files.len()
    );
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

// ------------------------------------------------------------------------ commands

/// The `sightline …` commands of a block: a command runs on while a quote is open or a line ends
/// in `\`.
fn commands(block: &Block) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in &block.lines {
        let text = match current.take() {
            Some(c) => format!("{c}\n{line}"),
            None if line.trim_start().starts_with("sightline ") => line.trim_start().to_string(),
            None => continue,
        };
        if continues(&text) {
            current = Some(text);
        } else {
            out.push(text);
        }
    }
    assert!(
        current.is_none(),
        "line {}: a command is never closed",
        block.line
    );
    out
}

/// Whether a command's text goes on to the next line: an open quote or a trailing `\`.
fn continues(text: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    let mut last_escape = false;
    let mut word_start = true;
    while let Some(c) = chars.next() {
        last_escape = false;
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"') | None, '\\') => {
                last_escape = chars.next().is_none();
            }
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if word_start => {
                // A comment runs to the end of its line.
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                word_start = true;
                continue;
            }
            _ => {}
        }
        word_start = quote.is_none() && c.is_whitespace();
    }
    quote.is_some() || last_escape
}

/// A command's words, as a POSIX shell splits them: quotes, backslashes, `\` + newline, comments
/// and `{a,b}` brace expansion. `$` outside single quotes is refused: a variable means the block
/// needs a not-run marker.
fn words(text: &str) -> Vec<String> {
    // Each word as characters with whether they were quoted.
    let mut out: Vec<Vec<(char, bool)>> = Vec::new();
    let mut word: Option<Vec<(char, bool)>> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => out.extend(word.take()),
            '#' if word.is_none() => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.get_or_insert_with(Vec::new).push((next, true)),
            },
            '\'' => {
                let w = word.get_or_insert_with(Vec::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push((c, true));
                }
            }
            '"' => {
                let w = word.get_or_insert_with(Vec::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            w.push((chars.next().expect("peeked"), true));
                        }
                        '\\' if chars.peek() == Some(&'\n') => {
                            chars.next();
                        }
                        '$' | '`' => {
                            panic!("a shell expansion in {text:?}: mark its block not-run")
                        }
                        c => w.push((c, true)),
                    }
                }
            }
            '$' | '`' | '|' | '>' | '<' | ';' | '&' | '*' | '?' => {
                panic!("shell syntax `{c}` in {text:?}: mark its block not-run")
            }
            c => word.get_or_insert_with(Vec::new).push((c, false)),
        }
    }
    out.extend(word);
    out.into_iter().flat_map(|w| expand_braces(&w)).collect()
}

/// `a{0,1}b` → `a0b`, `a1b` (one unquoted brace group with a comma; none: the word as it is).
fn expand_braces(word: &[(char, bool)]) -> Vec<String> {
    let plain = |w: &[(char, bool)]| w.iter().map(|(c, _)| c).collect::<String>();
    let open = word.iter().position(|&(c, q)| c == '{' && !q);
    let close = word.iter().rposition(|&(c, q)| c == '}' && !q);
    if let (Some(open), Some(close)) = (open, close) {
        let inner = &word[open + 1..close];
        if open < close && inner.iter().any(|&(c, q)| c == ',' && !q) {
            let (head, tail) = (plain(&word[..open]), plain(&word[close + 1..]));
            return inner
                .split(|&(c, q)| c == ',' && !q)
                .map(|alt| format!("{head}{}{tail}", plain(alt)))
                .collect();
        }
    }
    vec![plain(word)]
}

/// The arguments with each output path (`--out X`, `gen-trace X`) moved into `scratch`, and
/// recorded in `written` so that a later command of the block that reads it reads it there.
fn place_outputs(
    args: &[String],
    scratch: &Path,
    written: &mut BTreeMap<String, PathBuf>,
) -> Vec<String> {
    let key = |a: &str| a.trim_end_matches('/').to_string();
    let gen_trace = args.first().is_some_and(|a| a == "gen-trace");
    let mut output_next = false;
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let is_output = output_next || (gen_trace && i == 1);
        output_next = arg == "--out";
        if is_output {
            let moved = scratch.join(arg);
            written.insert(key(arg), moved.clone());
            out.push(moved.display().to_string());
        } else {
            let read = written.get(&key(arg)).map(|m| m.display().to_string());
            out.push(read.unwrap_or_else(|| arg.clone()));
        }
    }
    out
}

/// What became of the documented commands.
#[derive(Default)]
struct Tally {
    ran: usize,
    skipped: Vec<String>,
    left_out: Vec<String>,
    failed: Vec<String>,
}

/// Runs one command (the words after `sightline`) from the repository root, with no display and a
/// cache folder of its own; stdout and stderr go to files in `scratch`. Its exit status, or why
/// there is none, and the tail of its stderr.
fn run(args: &[String], scratch: &Path, n: usize) -> Result<(), String> {
    let stdout = scratch.join(format!("{n}.stdout"));
    let stderr = scratch.join(format!("{n}.stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .current_dir(root())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("SIGHTLINE_CACHE_DIR", scratch.join("cache"))
        .stdin(Stdio::null())
        .stdout(File::create(&stdout).expect("create stdout file"))
        .stderr(File::create(&stderr).expect("create stderr file"))
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let limit = Duration::from_secs(300);
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.success() {
        return Ok(());
    }
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    let tail: Vec<&str> = err.lines().rev().take(8).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!("{status}:\n    {}", tail.join("\n    ")))
}

/// Every `sightline …` command of a ```sh block of the README and the guide exits 0, but those of
/// a block marked not-run and, without `../shared/traces`, those that read it.
#[test]
fn every_documented_command_runs() {
    let shared = root().join("../shared/traces").is_dir();
    let scratch_root =
        std::env::temp_dir().join(format!("sightline-docs-commands-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch_root);
    let mut tally = Tally::default();
    let mut n = 0;
    for file in doc_files() {
        let doc = parse(&std::fs::read_to_string(&file).expect("read"));
        for block in doc.blocks.iter().filter(|b| b.info == "sh") {
            let at = format!("{}:{}", shown(&file), block.line);
            if let Some(reason) = &block.not_run {
                for c in commands(block) {
                    tally
                        .left_out
                        .push(format!("{at}: {} ({reason})", first_line(&c)));
                }
                if commands(block).is_empty() {
                    tally
                        .left_out
                        .push(format!("{at}: a block with no sightline line ({reason})"));
                }
                continue;
            }
            // One scratch folder per block: its commands may read what an earlier one wrote.
            let scratch = scratch_root.join(format!("block-{n}"));
            std::fs::create_dir_all(&scratch).expect("create a scratch folder");
            let mut written = BTreeMap::new();
            for text in commands(block) {
                n += 1;
                let all = words(&text);
                assert_eq!(all[0], "sightline", "{at}: {text}");
                if !shared && all.iter().any(|w| w.contains("../shared/traces")) {
                    println!(
                        "SKIPPED: {at}: {} (../shared/traces is not beside the checkout)",
                        first_line(&text)
                    );
                    tally.skipped.push(at.clone());
                    continue;
                }
                let args = place_outputs(&all[1..], &scratch, &mut written);
                let began = Instant::now();
                match run(&args, &scratch, n) {
                    Ok(()) => {
                        tally.ran += 1;
                        println!(
                            "ran {at}: {} ({:.1} s)",
                            first_line(&text),
                            began.elapsed().as_secs_f64()
                        );
                    }
                    Err(why) => tally
                        .failed
                        .push(format!("{at}: sightline {}\n  {why}", args.join(" "))),
                }
            }
        }
    }
    println!(
        "docs_commands: ran {}, skipped {} (../shared/traces missing), left out {} (not-run blocks), failed {}",
        tally.ran,
        tally.skipped.len(),
        tally.left_out.len(),
        tally.failed.len()
    );
    for l in &tally.left_out {
        println!("  left out: {l}");
    }
    if tally.skipped.is_empty() {
        let _ = std::fs::remove_dir_all(&scratch_root);
    }
    assert!(
        tally.failed.is_empty(),
        "documented commands that fail:\n{}",
        tally.failed.join("\n")
    );
    assert!(tally.ran > 0, "no documented command ran");
}

/// A command's first line, for the tally.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// The shell reading the commands rest on: quotes, escapes, continuations, comments, braces.
#[test]
fn commands_split_as_a_shell_splits_them() {
    let block = Block {
        info: "sh".into(),
        lines: [
            "# a comment, then a command over three lines",
            "sightline render t.sqlite --out s.png \\",
            "  --sql-track \"SELECT \\\"end\\\" FROM ranges",
            "  WHERE name GLOB 'step_*'\"   # trailing comment",
            "cargo run --release -- x",
            "sightline ranks a_rank-{0,1}.json.gz --align 'token_*#1'",
        ]
        .map(String::from)
        .to_vec(),
        line: 1,
        not_run: None,
    };
    let found = commands(&block);
    assert_eq!(found.len(), 2, "{found:?}");
    let first = words(&found[0]);
    assert_eq!(first[1..4], ["render", "t.sqlite", "--out"]);
    assert_eq!(
        first[6],
        "SELECT \"end\" FROM ranges\n  WHERE name GLOB 'step_*'"
    );
    assert_eq!(first.len(), 7);
    let second = words(&found[1]);
    assert_eq!(
        second[2..5],
        ["a_rank-0.json.gz", "a_rank-1.json.gz", "--align"]
    );
    assert_eq!(second[5], "token_*#1");
    let mut written = BTreeMap::new();
    let scratch = Path::new("/tmp/x");
    let moved = place_outputs(
        &words("sightline digest r0 --out D/")[1..],
        scratch,
        &mut written,
    );
    assert_eq!(moved[3], "/tmp/x/D/");
    let read = place_outputs(&words("sightline ranks D/")[1..], scratch, &mut written);
    assert_eq!(read[1], "/tmp/x/D/");
}
