//! Quote removal for shell words: `r''m`, `"r"m`, `\rm` and `$'\x72m'` all become `rm`; a word
//! with an expansion keeps its source text and is marked as only known at run time.

use tree_sitter::Node;

use crate::permissions::classify::text;

/// A word of the command line after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The unquoted value when `literal`; the source text otherwise.
    pub text: String,
    /// False when the word contains an expansion or substitution only known at run time.
    pub literal: bool,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            literal: true,
        }
    }
}

/// Removes quoting from a word node; a word with expansions keeps its source text.
pub(crate) fn word(node: Node, src: &str) -> Word {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" => Word::literal(unescape_bare(raw)),
        "raw_string" => Word::literal(raw.trim_start_matches('\'').trim_end_matches('\'')),
        "ansi_c_string" => Word::literal(ansi_c(raw)),
        "string" => {
            let dynamic = node
                .named_children(&mut node.walk())
                .any(|c| c.kind() != "string_content");
            if dynamic {
                Word {
                    text: raw.to_string(),
                    literal: false,
                }
            } else {
                let inner = raw
                    .strip_prefix('"')
                    .and_then(|r| r.strip_suffix('"'))
                    .unwrap_or(raw);
                Word::literal(unescape_double(inner))
            }
        }
        "concatenation" => {
            let mut out = Word::literal(String::new());
            for child in node.named_children(&mut node.walk()) {
                let part = word(child, src);
                out.literal &= part.literal;
                out.text.push_str(&part.text);
            }
            if !out.literal {
                out.text = raw.to_string();
            }
            out
        }
        _ => Word {
            text: raw.to_string(),
            literal: false,
        },
    }
}

fn unescape_bare(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            },
            _ => out.push(c),
        }
    }
    out
}

fn unescape_double(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"' | '\\' | '$' | '`') => {
                    out.extend(chars.next());
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// Decodes `$'...'`: the escapes that could spell a command name (`$'\x72m'`).
fn ansi_c(raw: &str) -> String {
    let inner = raw
        .strip_prefix("$'")
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(raw);
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else { break };
        let (radix, max, first) = match e {
            'x' => (16, 2, None),
            'u' => (16, 4, None),
            'U' => (16, 8, None),
            '0'..='7' => (8, 2, Some(e)),
            'n' => {
                out.push('\n');
                continue;
            }
            't' => {
                out.push('\t');
                continue;
            }
            other => {
                out.push(other);
                continue;
            }
        };
        let mut digits: String = first.into_iter().collect();
        while digits.len() < max + usize::from(first.is_some()) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => digits.extend(chars.next()),
                _ => break,
            }
        }
        if let Some(decoded) = u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            out.push(decoded);
        }
    }
    out
}

/// How the arguments xargs adds from its input appear in reasons.
const INPUT_SHOWN: &str = "<input>";

/// The word xargs appends from its input: only known at run time.
pub(crate) fn input_word() -> Word {
    Word {
        text: INPUT_SHOWN.into(),
        literal: false,
    }
}

/// Whether `word` is the input's word that `input_word` made (no literal spells it).
pub(crate) fn is_input(word: &Word) -> bool {
    !word.literal && word.text == INPUT_SHOWN
}
