//! What the model sees of file reads and changes.

use super::{FileChange, FileSlice};

/// `cat -n` style numbering, plus how many lines remain.
pub fn slice_text(slice: &FileSlice) -> String {
    let mut out = String::new();
    let last = slice.offset + slice.lines.len();
    let width = last.to_string().len().max(6);
    for (i, line) in slice.lines.iter().enumerate() {
        out.push_str(&format!("{:>width$}\t{line}\n", slice.offset + i));
    }
    let shown_to = last.saturating_sub(1);
    if shown_to < slice.total_lines {
        let remaining = slice.total_lines - shown_to;
        out.push_str(&format!(
            "[{remaining} more lines; continue with offset {}]\n",
            shown_to + 1
        ));
    }
    if slice.lines.is_empty() && slice.total_lines == 0 {
        out.push_str("[empty file]\n");
    }
    out
}

/// A one-line summary: the model asked for the change, it does not need the diff back.
pub fn change_text(change: &FileChange) -> String {
    let verb = if change.created { "Created" } else { "Updated" };
    format!(
        "{verb} {} (+{} -{}, lines {}-{})",
        change.path, change.added, change.removed, change.first_line, change.last_line
    )
}
