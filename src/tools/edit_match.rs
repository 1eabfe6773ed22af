//! The correctable errors of edit_file: where an ambiguous `old_string` occurs, and which
//! lines of the current file come closest to one that does not occur at all, so the model can
//! fix its next call without reading the whole file again.

use std::collections::HashMap;

use crate::fs::text::{cut_chars, line_of};

/// Line numbers shown for an ambiguous match.
const MAX_LISTED: usize = 20;
/// Candidate places shown for a missing match, and lines shown of each.
const MAX_CANDIDATES: usize = 3;
const MAX_CANDIDATE_LINES: usize = 6;
/// Lines are compared on at most this many characters.
const MAX_COMPARED_CHARS: usize = 400;
const MIN_SIMILARITY: f64 = 0.5;

/// "occurs N times (lines …)", asking for more context or `replace_all`.
pub fn ambiguous(content: &[u8], found: &[usize], display: &str) -> String {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut from = 0;
    for &at in found.iter().take(MAX_LISTED) {
        line += line_of(&content[from..at], at - from) - 1;
        from = at;
        lines.push(line.to_string());
    }
    let more = if found.len() > MAX_LISTED {
        ", …"
    } else {
        ""
    };
    format!(
        "old_string occurs {} times in {display} (lines {}{more}). Include more surrounding lines \
         to make it unique, or set replace_all to change every occurrence.",
        found.len(),
        lines.join(", ")
    )
}

/// "not found", with the closest lines of the current file.
pub fn not_found(content: &[u8], old: &str, display: &str) -> String {
    if has_line_number_prefixes(old) {
        return format!(
            "old_string was not found in {display}: it starts its lines with line numbers and a \
             tab as read_file shows them. Those are not in the file; leave them out."
        );
    }
    let text = String::from_utf8_lossy(content);
    let lines: Vec<&str> = text.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    let Some(anchor) = old_lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()) else {
        return format!(
            "old_string was not found in {display}; it is only whitespace. read_file it and copy the text exactly."
        );
    };
    let anchor_index = old_lines
        .iter()
        .position(|l| l.trim() == anchor)
        .unwrap_or(0);
    let places = closest(&lines, anchor);
    if places.is_empty() {
        return format!(
            "old_string was not found in {display}, and no line resembles its first line. read_file \
             it again to see the current content."
        );
    }
    let shown = old_lines.len().clamp(1, MAX_CANDIDATE_LINES);
    let mut out =
        format!("old_string was not found in {display}. The closest lines in the current file:\n");
    for (i, &place) in places.iter().enumerate() {
        if i > 0 {
            out.push_str("  ...\n");
        }
        let start = place.saturating_sub(anchor_index);
        for (n, line) in lines.iter().enumerate().skip(start).take(shown) {
            let (line, _) = cut_chars(line, 200);
            out.push_str(&format!("{:>6}\t{line}\n", n + 1));
        }
    }
    out.push_str(
        "Copy the text exactly as it is there (indentation included, without the line numbers).",
    );
    out
}

/// True when every line starts like read_file's numbering: spaces, digits, a tab.
fn has_line_number_prefixes(old: &str) -> bool {
    old.lines().all(|line| {
        let rest = line.trim_start_matches(' ');
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && rest[digits..].starts_with('\t')
    })
}

/// Indexes of the lines most like `anchor`: equal up to whitespace first, else by similarity.
fn closest(lines: &[&str], anchor: &str) -> Vec<usize> {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let anchor_squashed = squash(anchor);
    let equal: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| squash(line) == anchor_squashed)
        .map(|(i, _)| i)
        .take(MAX_CANDIDATES)
        .collect();
    if !equal.is_empty() {
        return equal;
    }
    let wanted = Bigrams::of(anchor);
    let mut scored: Vec<(f64, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| (wanted.similarity(line.trim()), i))
        .filter(|(score, _)| *score >= MIN_SIMILARITY)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_CANDIDATES)
        .map(|(_, i)| i)
        .collect()
}

/// Character bigrams of a line, for a Dice similarity that costs one pass per line.
struct Bigrams {
    counts: HashMap<(char, char), usize>,
    total: usize,
}

impl Bigrams {
    fn of(text: &str) -> Self {
        let (text, _) = cut_chars(text, MAX_COMPARED_CHARS);
        let mut counts = HashMap::new();
        let chars: Vec<char> = text.chars().collect();
        for pair in chars.windows(2) {
            *counts.entry((pair[0], pair[1])).or_insert(0) += 1;
        }
        Self {
            total: chars.len().saturating_sub(1),
            counts,
        }
    }

    fn similarity(&self, line: &str) -> f64 {
        let (line, _) = cut_chars(line, MAX_COMPARED_CHARS);
        let chars: Vec<char> = line.chars().collect();
        let total = chars.len().saturating_sub(1);
        if self.total + total == 0 {
            return 0.0;
        }
        let mut left = self.counts.clone();
        let mut common = 0;
        for pair in chars.windows(2) {
            if let Some(n) = left.get_mut(&(pair[0], pair[1]))
                && *n > 0
            {
                *n -= 1;
                common += 1;
            }
        }
        2.0 * common as f64 / (self.total + total) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n\nfn compute(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

    #[test]
    fn ambiguous_matches_list_their_lines() {
        let content = b"x = 1\ny = 2\nx = 1\n\nx = 1\n";
        let found: Vec<usize> = memchr::memmem::find_iter(content, b"x = 1").collect();
        assert_eq!(
            ambiguous(content, &found, "a.py"),
            "old_string occurs 3 times in a.py (lines 1, 3, 5). Include more surrounding lines to \
             make it unique, or set replace_all to change every occurrence."
        );
    }

    #[test]
    fn a_near_miss_shows_the_closest_lines_with_numbers() {
        let msg = not_found(FILE.as_bytes(), "let totl = compute(1, 3);", "src/main.rs");
        assert!(
            msg.contains("     2\t    let total = compute(1, 2);\n"),
            "{msg}"
        );
        assert!(!msg.contains("a + b"), "{msg}");
    }

    #[test]
    fn wrong_indentation_points_at_the_right_place() {
        let msg = not_found(FILE.as_bytes(), "a + b\n}", "src/main.rs");
        assert!(msg.contains("     7\t    a + b\n     8\t}\n"), "{msg}");
    }

    #[test]
    fn copied_line_numbers_are_pointed_out() {
        let msg = not_found(
            FILE.as_bytes(),
            "     2\t    let total = compute(1, 2);\n     3\t}",
            "m.rs",
        );
        assert!(msg.contains("line numbers"), "{msg}");
        let msg = not_found(FILE.as_bytes(), "let x = 1;\n     3\t}", "m.rs");
        assert!(!msg.contains("line numbers"), "{msg}");
    }

    #[test]
    fn nothing_alike_says_to_read_again() {
        let msg = not_found(
            FILE.as_bytes(),
            "completely unrelated words here",
            "src/main.rs",
        );
        assert!(msg.contains("no line resembles"), "{msg}");
    }
}
