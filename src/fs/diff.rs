//! Unified diffs of file changes, fast on huge files: the common head and tail are trimmed by
//! byte comparison first, and only the changed window (plus context) goes through Myers.
//! write_file and edit_file feed it; the result lands in `FileChange` for the UI's diffs.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, DiffTag};

/// Lines of context around each hunk.
const CONTEXT: usize = 3;
/// Beyond this the diff text is cut (the counts stay exact).
const MAX_DIFF_BYTES: usize = 512 * 1024;
/// Myers on a pathological window falls back to a coarser diff after this long.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// A diff and the figures the UI and the model summary need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineDiff {
    pub text: String,
    pub added: usize,
    pub removed: usize,
    /// 1-based span of new-file lines the change touched; 0 when nothing changed.
    pub first_line: usize,
    pub last_line: usize,
}

/// Diffs `before` → `after` (whole file contents) as a unified diff with 3 lines of context.
/// `created` makes the old side `/dev/null`.
pub fn diff_files(before: &[u8], after: &[u8], path: &str, created: bool) -> LineDiff {
    let head = common_head(before, after);
    let tail = common_tail(before, after, head);
    // Extend the changed window by the context lines on either side.
    let start = back_lines(before, head, CONTEXT);
    let old_end = forward_lines(before, before.len() - tail, CONTEXT);
    let new_end = after.len() - (before.len() - old_end);
    let old_lines = split_lines(&before[start..old_end]);
    let new_lines = split_lines(&after[start..new_end]);
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &old_lines,
        &new_lines,
        Some(Instant::now() + DIFF_TIMEOUT),
    );
    let line_offset = count_lines(&before[..start]);
    let mut out = LineDiff::default();
    count_changes(&ops, line_offset, new_lines.len(), after, &mut out);
    if out.added + out.removed > 0 {
        let old_name = if created {
            "/dev/null".to_string()
        } else {
            format!("a/{path}")
        };
        out.text = format!("--- {old_name}\n+++ b/{path}\n");
        for group in similar::group_diff_ops(ops, CONTEXT) {
            write_hunk(&mut out.text, &group, &old_lines, &new_lines, line_offset);
            if out.text.len() > MAX_DIFF_BYTES {
                // Cut at a line; the counts above stay exact.
                let cut = out.text[..MAX_DIFF_BYTES]
                    .rfind('\n')
                    .map_or(0, |at| at + 1);
                out.text.truncate(cut);
                out.text.push_str(crate::tool_output::DIFF_TRUNCATED);
                out.text.push('\n');
                break;
            }
        }
    }
    out
}

fn count_changes(
    ops: &[DiffOp],
    offset: usize,
    new_window: usize,
    after: &[u8],
    out: &mut LineDiff,
) {
    let mut span: Option<(usize, usize)> = None;
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        out.removed += old.len();
        out.added += new.len();
        let (first, last) = if new.is_empty() {
            // A pure deletion touches the line now standing where the removed lines were.
            let at = (offset + new.start + 1).min(offset + new_window.max(1));
            (at, at)
        } else {
            (offset + new.start + 1, offset + new.end)
        };
        span = Some(match span {
            None => (first, last),
            Some((a, b)) => (a.min(first), b.max(last)),
        });
    }
    if let Some((first, last)) = span {
        let total = count_lines(after).max(1);
        out.first_line = first.min(total);
        out.last_line = last.min(total).max(out.first_line);
    }
}

fn write_hunk(out: &mut String, group: &[DiffOp], old: &[&[u8]], new: &[&[u8]], offset: usize) {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return;
    };
    let old_range = first.old_range().start..last.old_range().end;
    let new_range = first.new_range().start..last.new_range().end;
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        hunk_range(&old_range, offset),
        hunk_range(&new_range, offset)
    ));
    for op in group {
        let (tag, old_r, new_r) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => push_lines(out, ' ', &old[old_r]),
            DiffTag::Delete => push_lines(out, '-', &old[old_r]),
            DiffTag::Insert => push_lines(out, '+', &new[new_r]),
            DiffTag::Replace => {
                push_lines(out, '-', &old[old_r]);
                push_lines(out, '+', &new[new_r]);
            }
        }
    }
}

fn hunk_range(range: &Range<usize>, offset: usize) -> String {
    let len = range.len();
    let start = if len == 0 {
        offset + range.start
    } else {
        offset + range.start + 1
    };
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

fn push_lines(out: &mut String, sign: char, lines: &[&[u8]]) {
    for line in lines {
        // Past the cap the caller cuts the text anyway: stop building it.
        if out.len() > MAX_DIFF_BYTES {
            return;
        }
        out.push(sign);
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        out.push_str(&String::from_utf8_lossy(body));
        out.push('\n');
        if !line.ends_with(b"\n") {
            out.push_str("\\ No newline at end of file\n");
        }
    }
}

/// Lines of `bytes`, each keeping its terminator.
fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    for at in memchr::memchr_iter(b'\n', bytes) {
        lines.push(&bytes[start..=at]);
        start = at + 1;
    }
    if start < bytes.len() {
        lines.push(&bytes[start..]);
    }
    lines
}

fn count_lines(bytes: &[u8]) -> usize {
    let breaks = super::text::count_newlines(bytes);
    if bytes.last().is_some_and(|&b| b != b'\n') {
        breaks + 1
    } else {
        breaks
    }
}

/// Length of the common head of `a` and `b`, backed up to a line start.
fn common_head(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let max = a.len().min(b.len());
    let mut same = 0;
    while same + BLOCK <= max && a[same..same + BLOCK] == b[same..same + BLOCK] {
        same += BLOCK;
    }
    while same < max && a[same] == b[same] {
        same += 1;
    }
    if same == a.len() && same == b.len() {
        return same;
    }
    memchr::memrchr(b'\n', &a[..same]).map_or(0, |at| at + 1)
}

/// Length of the common tail of `a` and `b` that starts at a line start in both and does not
/// overlap the first `head` bytes.
fn common_tail(a: &[u8], b: &[u8], head: usize) -> usize {
    const BLOCK: usize = 4096;
    let max = a.len().min(b.len()) - head;
    let mut same = 0;
    while same + BLOCK <= max
        && a[a.len() - same - BLOCK..a.len() - same] == b[b.len() - same - BLOCK..b.len() - same]
    {
        same += BLOCK;
    }
    while same < max && a[a.len() - same - 1] == b[b.len() - same - 1] {
        same += 1;
    }
    let at_line_start = |s: &[u8], pos: usize| pos == head || s[pos - 1] == b'\n';
    if at_line_start(a, a.len() - same) && at_line_start(b, b.len() - same) {
        return same;
    }
    // Move forward to the first line start inside the common tail (equal in both files).
    match memchr::memchr(b'\n', &a[a.len() - same..]) {
        Some(at) => same - at - 1,
        None => 0,
    }
}

/// Start of the line `n` lines before the line starting at `pos` (pos is a line start).
fn back_lines(bytes: &[u8], pos: usize, n: usize) -> usize {
    let mut start = pos;
    for _ in 0..n {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &bytes[..start - 1]).map_or(0, |at| at + 1);
    }
    start
}

/// Position after `n` more lines from `pos` (pos is a line start), capped at the end.
fn forward_lines(bytes: &[u8], pos: usize, n: usize) -> usize {
    let mut end = pos;
    for _ in 0..n {
        match memchr::memchr(b'\n', &bytes[end..]) {
            Some(at) => end += at + 1,
            None => return bytes.len(),
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn one_changed_line_in_the_middle() {
        let before = numbered(20);
        let after = before.replace("line 10\n", "line ten\n");
        let diff = diff_files(before.as_bytes(), after.as_bytes(), "f.txt", false);
        let expected = "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n";
        assert_eq!(diff.text, expected);
        assert_eq!(
            (diff.added, diff.removed, diff.first_line, diff.last_line),
            (1, 1, 10, 10)
        );
    }

    #[test]
    fn changes_at_both_ends_make_two_hunks() {
        let before = numbered(30);
        let after = before
            .replace("line 1\n", "first\n")
            .replace("line 30\n", "last\n");
        let diff = diff_files(before.as_bytes(), after.as_bytes(), "f", false);
        assert_eq!(diff.text.matches("@@ ").count(), 2, "{}", diff.text);
        assert!(diff.text.contains("@@ -1,4 +1,4 @@\n-line 1\n+first\n"));
        assert!(
            diff.text
                .contains("@@ -27,4 +27,4 @@\n line 27\n line 28\n line 29\n-line 30\n+last\n")
        );
        assert_eq!((diff.first_line, diff.last_line), (1, 30));
    }

    #[test]
    fn insertion_and_deletion_counts_and_span() {
        let before = numbered(5);
        let after = before.replace("line 3\n", "line 3\nnew a\nnew b\n");
        let diff = diff_files(before.as_bytes(), after.as_bytes(), "f", false);
        assert_eq!(
            (diff.added, diff.removed, diff.first_line, diff.last_line),
            (2, 0, 4, 5)
        );
        assert!(diff.text.contains("@@ -1,5 +1,7 @@\n"), "{}", diff.text);

        let deleted = before.replace("line 2\nline 3\n", "");
        let diff = diff_files(before.as_bytes(), deleted.as_bytes(), "f", false);
        assert_eq!(
            (diff.added, diff.removed, diff.first_line, diff.last_line),
            (0, 2, 2, 2)
        );
    }

    #[test]
    fn created_file_and_missing_final_newline() {
        let diff = diff_files(b"", b"a\nb", "new.txt", true);
        assert_eq!(
            diff.text,
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
        );
        assert_eq!((diff.added, diff.first_line, diff.last_line), (2, 1, 2));
    }

    #[test]
    fn adding_a_final_newline_is_a_change_of_the_last_line() {
        let diff = diff_files(b"a\nb", b"a\nb\n", "f", false);
        assert_eq!(
            diff.text,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
    }

    #[test]
    fn crlf_lines_show_without_carriage_returns() {
        let diff = diff_files(b"a\r\nb\r\n", b"a\r\nc\r\n", "f", false);
        assert_eq!(diff.text, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    }

    #[test]
    fn huge_diffs_are_cut_but_counted() {
        let after: String = (0..200_000).map(|i| format!("new line {i}\n")).collect();
        let diff = diff_files(b"", after.as_bytes(), "big", true);
        assert_eq!(
            (diff.added, diff.first_line, diff.last_line),
            (200_000, 1, 200_000)
        );
        assert!(
            diff.text.len() <= MAX_DIFF_BYTES + 100,
            "{}",
            diff.text.len()
        );
        assert!(diff.text.ends_with("\n[diff truncated]\n"));
    }

    #[test]
    fn identical_contents_have_no_diff() {
        let diff = diff_files(b"same\n", b"same\n", "f", false);
        assert_eq!(diff, LineDiff::default());
    }

    #[test]
    fn repeated_lines_around_the_change_keep_correct_numbers() {
        let before = "x\nx\nx\nx\nx\nx\n";
        let after = "x\nx\nx\nx\nx\nx\nx\n";
        let diff = diff_files(before.as_bytes(), after.as_bytes(), "f", false);
        assert_eq!((diff.added, diff.removed), (1, 0));
        assert!(
            diff.text.contains("@@ -4,3 +4,4 @@\n x\n x\n x\n+x\n"),
            "{}",
            diff.text
        );
    }
}
