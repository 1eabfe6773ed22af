//! `@` mentions in a prompt: `@path`, `@"a path with spaces"`, either followed by a line
//! range `#L10-20` (or `#L10`). Only the spelling is decided here; whether a mention names a
//! file is the agent's question (a word that names none stays text, so `@types/node` is
//! just text). An `@` inside a word (`a@b.com`) never starts a mention.

/// One `@` mention found in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Byte range of the whole mention in the prompt, `@` included.
    pub span: std::ops::Range<usize>,
    /// The path as written (quotes removed).
    pub path: String,
    pub lines: Option<LineRange>,
}

/// Lines `first..=last` (1-based); `last` is `None` for `#L10` (that line only is `Some(10)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    pub first: usize,
    pub last: usize,
}

/// Trailing characters that end a sentence rather than a path: `see @src/lib.rs.`
const TRAILING: &[char] = &[
    '.', ',', ';', ':', '!', '?', ')', ']', '}', '>', '\'', '"', '`',
];

/// Every mention in `text`, in order.
pub fn parse(text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find('@') {
        let start = at + found;
        at = start + 1;
        let starts_word = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | '{' | '"' | '\''));
        if !starts_word {
            continue;
        }
        if let Some(mention) = mention_at(text, start) {
            at = mention.span.end;
            out.push(mention);
        }
    }
    out
}

/// The mention whose `@` is at byte `start`, if a path follows it.
fn mention_at(text: &str, start: usize) -> Option<Mention> {
    let rest = &text[start + 1..];
    let (path, mut end) = if let Some(quoted) = rest.strip_prefix('"') {
        let close = quoted.find('"')?;
        let path = &quoted[..close];
        (path.to_string(), start + 1 + 1 + close + 1)
    } else {
        let word_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = rest[..word_len].trim_end_matches(TRAILING);
        // A range is part of the word: `@a.rs#L3-4,` keeps `#L3-4`.
        (word.to_string(), start + 1 + word.len())
    };
    let (path, mut lines) = split_range(&path);
    if lines.is_none() {
        // `@"a b.rs"#L2-3`: the range after the closing quote.
        let after = &text[end..];
        let len = after.find(char::is_whitespace).unwrap_or(after.len());
        let word = after[..len].trim_end_matches(TRAILING);
        if let Some(range) = word.strip_prefix('#').and_then(line_range) {
            lines = Some(range);
            end += word.len();
        }
    }
    if path.is_empty() || path.contains('\n') {
        return None;
    }
    Some(Mention {
        span: start..end,
        path,
        lines,
    })
}

/// `src/a.rs#L10-20` → (`src/a.rs`, lines 10-20). A `#` that is not a line range stays in the
/// path (file names may hold `#`).
fn split_range(word: &str) -> (String, Option<LineRange>) {
    if let Some(hash) = word.rfind("#L")
        && let Some(range) = line_range(&word[hash + 1..])
    {
        return (word[..hash].to_string(), Some(range));
    }
    (word.to_string(), None)
}

/// `L10-20`, `L10-L20`, `L10`.
fn line_range(spec: &str) -> Option<LineRange> {
    let spec = spec.strip_prefix('L')?;
    let (first, last) = match spec.split_once('-') {
        Some((first, last)) => (first, last.strip_prefix('L').unwrap_or(last)),
        None => (spec, spec),
    };
    let first: usize = first.parse().ok()?;
    let last: usize = last.parse().ok()?;
    (first >= 1 && last >= first).then_some(LineRange { first, last })
}

/// The mention spelling of `path` for inserting into a prompt: quoted when it has a space.
pub fn spelling(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("@\"{path}\"")
    } else {
        format!("@{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<(String, Option<(usize, usize)>)> {
        parse(text)
            .into_iter()
            .map(|m| (m.path, m.lines.map(|l| (l.first, l.last))))
            .collect()
    }

    fn one(path: &str, lines: Option<(usize, usize)>) -> Vec<(String, Option<(usize, usize)>)> {
        vec![(path.to_string(), lines)]
    }

    #[test]
    fn mentions_are_found_in_their_spellings() {
        assert_eq!(paths("look at @src/lib.rs"), one("src/lib.rs", None));
        assert_eq!(paths("@src/lib.rs, please"), one("src/lib.rs", None));
        assert_eq!(paths("(see @src/lib.rs)."), one("src/lib.rs", None));
        assert_eq!(
            paths("@src/lib.rs#L10-20 only"),
            one("src/lib.rs", Some((10, 20)))
        );
        assert_eq!(paths("@a.rs#L10-L12"), one("a.rs", Some((10, 12))));
        assert_eq!(paths("@a.rs#L7."), one("a.rs", Some((7, 7))));
        assert_eq!(
            paths(r#"fix @"dir with space/f.txt" now"#),
            one("dir with space/f.txt", None)
        );
        assert_eq!(
            paths(r##"@"dir with space/f.txt"#L2-3"##),
            one("dir with space/f.txt", Some((2, 3)))
        );
        assert_eq!(paths("@~/.ssh/id_rsa"), one("~/.ssh/id_rsa", None));
        assert_eq!(
            paths("@a.rs and\n@b.rs"),
            vec![("a.rs".into(), None), ("b.rs".into(), None)]
        );
    }

    #[test]
    fn words_that_are_not_mentions_stay_text() {
        assert!(paths("mail a@b.com about it").is_empty());
        assert!(paths("an @ alone, @ and @\"unclosed").is_empty());
        assert!(paths("user@host:path").is_empty());
        // A path with a `#` that is no range keeps it; a backwards range is no range.
        assert_eq!(paths("@notes#1.md"), one("notes#1.md", None));
        assert_eq!(paths("@a.rs#L9-3"), one("a.rs#L9-3", None));
        assert_eq!(paths("@a.rs#L0"), one("a.rs#L0", None));
        // `@types/node` is found here; the agent keeps it as text when no such file exists.
        assert_eq!(paths("npm i @types/node"), one("types/node", None));
    }

    #[test]
    fn spans_cover_the_whole_mention() {
        let text = r##"x @"a b.rs"#L1-2 y"##;
        let found = parse(text);
        assert_eq!(&text[found[0].span.clone()], r##"@"a b.rs"#L1-2"##);
        assert_eq!(spelling("a b.rs"), "@\"a b.rs\"");
        assert_eq!(spelling("a.rs"), "@a.rs");
    }
}
