//! What the model sees of file reads and changes: numbered lines with a "continue at" marker,
//! and a one-line summary of a change (the diff itself is for the UI, not the model).

use super::{FileChange, FileSlice};

/// `cat -n` style numbering, plus how many lines remain and where to continue.
pub fn slice_text(slice: &FileSlice) -> String {
    let mut out = String::new();
    if slice.total_lines == 0 {
        out.push_str(&format!("[{} is empty]\n", slice.path));
        return out;
    }
    if let Some(encoding) = &slice.encoding {
        out.push_str(&format!(
            "[encoding: {encoding}; writes and edits keep it]\n"
        ));
    }
    for (i, line) in slice.lines.iter().enumerate() {
        out.push_str(&format!("{:>6}\t{line}\n", slice.offset + i));
    }
    let shown_to = slice.offset + slice.lines.len() - 1;
    if shown_to < slice.total_lines {
        let remaining = slice.total_lines - shown_to;
        let lines = if remaining == 1 { "line" } else { "lines" };
        out.push_str(&format!(
            "[{remaining} more {lines} of {}; continue with offset {}]\n",
            slice.total_lines,
            shown_to + 1
        ));
    }
    if slice.long_lines_cut > 0 {
        let n = slice.long_lines_cut;
        let lines = if n == 1 { "line was" } else { "lines were" };
        out.push_str(&format!(
            "[{n} long {lines} cut; use grep to search inside them]\n"
        ));
    }
    out
}

/// A one-line summary: the model asked for the change, it does not need the diff back.
pub fn change_text(change: &FileChange) -> String {
    let path = &change.path;
    if change.created {
        let lines = match change.last_line {
            1 => "1 line".to_string(),
            n => format!("{n} lines"),
        };
        return format!("Created {path} ({lines}).");
    }
    if change.added + change.removed == 0 {
        return format!("{path} unchanged: the new content is identical to the old.");
    }
    let lines = if change.first_line == change.last_line {
        format!("line {}", change.first_line)
    } else {
        format!("lines {}-{}", change.first_line, change.last_line)
    };
    let replacements = match change.replacements {
        0 | 1 => String::new(),
        n => format!(", {n} replacements"),
    };
    format!(
        "Updated {path}: {lines} (+{} -{}{replacements}). Read the file again only if you need \
         its new content.",
        change.added, change.removed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(offset: usize, lines: &[&str], total: usize) -> FileSlice {
        FileSlice {
            path: "f.rs".into(),
            offset,
            lines: lines.iter().map(|l| l.to_string()).collect(),
            total_lines: total,
            long_lines_cut: 0,
            encoding: None,
        }
    }

    #[test]
    fn slices_are_numbered_and_say_where_to_continue() {
        assert_eq!(
            slice_text(&slice(1, &["a", "b"], 2)),
            "     1\ta\n     2\tb\n"
        );
        assert_eq!(
            slice_text(&slice(10, &["x"], 12)),
            "    10\tx\n[2 more lines of 12; continue with offset 11]\n"
        );
        assert_eq!(slice_text(&slice(1, &[], 0)), "[f.rs is empty]\n");
        let mut cut = slice(1, &["a"], 1);
        cut.long_lines_cut = 2;
        assert!(
            slice_text(&cut).ends_with("[2 long lines were cut; use grep to search inside them]\n")
        );
        let mut latin1 = slice(1, &["caf\u{e9}"], 1);
        latin1.encoding = Some("windows-1252".into());
        assert_eq!(
            slice_text(&latin1),
            "[encoding: windows-1252; writes and edits keep it]\n     1\tcaf\u{e9}\n"
        );
    }

    #[test]
    fn change_summaries() {
        let change = |created, added, removed, first, last, replacements| FileChange {
            path: "src/a.rs".into(),
            created,
            diff: "--- a\n+++ b\n".into(),
            added,
            removed,
            first_line: first,
            last_line: last,
            replacements,
        };
        let cases = [
            (change(true, 3, 0, 1, 3, 1), "Created src/a.rs (3 lines)."),
            (
                change(false, 0, 0, 0, 0, 1),
                "src/a.rs unchanged: the new content is identical to the old.",
            ),
            (
                change(false, 1, 1, 7, 7, 1),
                "Updated src/a.rs: line 7 (+1 -1). Read the file again only if you need its new content.",
            ),
            (
                change(false, 4, 2, 3, 40, 3),
                "Updated src/a.rs: lines 3-40 (+4 -2, 3 replacements). Read the file again only if you \
                 need its new content.",
            ),
        ];
        for (value, text) in cases {
            assert_eq!(change_text(&value), text);
        }
    }
}
