//! A unified diff (the text the edit tools produce) read into numbered lines, and the two ways
//! the pane lays them out. A leaf: `diff_lines.rs` draws the lines, `diff_body.rs` lays a
//! change out, `diffs.rs` is the pane.

/// How the pane lays a change out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffView {
    Unified,
    SideBySide,
}

/// One line of a parsed hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Hunk(String),
    Context {
        old: usize,
        new: usize,
        text: String,
    },
    Removed {
        old: usize,
        text: String,
    },
    Added {
        new: usize,
        text: String,
    },
    /// The tools cut the diff here (it was too large); a note, not part of the file.
    Truncated,
}

pub use crate::tool_output::DIFF_TRUNCATED as TRUNCATED_MARKER;

/// Parses unified diff text into numbered lines. File headers (`diff`, `---`, `+++`) are
/// skipped only outside a hunk: inside one, `--- x` is the removed line `-- x`. A hunk ends
/// when the line counts of its `@@` header are used up.
pub fn parse(diff: &str) -> Vec<DiffLine> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0, 0);
    // Lines of the current hunk still expected on each side.
    let (mut old_left, mut new_left) = (0usize, 0usize);
    for line in diff.lines() {
        if line == TRUNCATED_MARKER {
            out.push(DiffLine::Truncated);
            continue;
        }
        let in_hunk = old_left > 0 || new_left > 0;
        if !in_hunk
            && (line.starts_with("---") || line.starts_with("+++") || line.starts_with("diff "))
        {
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            let mut ranges = rest.split_whitespace();
            (old, old_left) = hunk_range(ranges.next());
            (new, new_left) = hunk_range(ranges.next());
            out.push(DiffLine::Hunk(line.to_string()));
            continue;
        }
        match line.chars().next() {
            Some('+') => {
                out.push(DiffLine::Added {
                    new,
                    text: line[1..].to_string(),
                });
                new += 1;
                new_left = new_left.saturating_sub(1);
            }
            Some('-') => {
                out.push(DiffLine::Removed {
                    old,
                    text: line[1..].to_string(),
                });
                old += 1;
                old_left = old_left.saturating_sub(1);
            }
            Some('\\') => {}
            _ => {
                out.push(DiffLine::Context {
                    old,
                    new,
                    text: line.get(1..).unwrap_or("").to_string(),
                });
                old += 1;
                new += 1;
                old_left = old_left.saturating_sub(1);
                new_left = new_left.saturating_sub(1);
            }
        }
    }
    out
}

/// `-12,3` → (12, 3); a missing count is 1. Unreadable ranges start at 1 and never end, so
/// nothing after them is mistaken for a header.
fn hunk_range(range: Option<&str>) -> (usize, usize) {
    let Some(range) = range.and_then(|r| r.get(1..)) else {
        return (1, usize::MAX);
    };
    let mut parts = range.split(',');
    let start = parts.next().and_then(|s| s.parse().ok());
    let count = match parts.next() {
        Some(count) => count.parse().ok(),
        None => Some(1),
    };
    match (start, count) {
        (Some(start), Some(count)) => (start, count),
        (start, _) => (start.unwrap_or(1), usize::MAX),
    }
}
