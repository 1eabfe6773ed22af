//! Reverse patches: takes a change shown in the diff pane (the unified diff text `diff` wrote)
//! back out of a file as it is now. A hunk applies only where its post-change lines (context
//! and added lines) are found exactly, as `patch` does without fuzz: at the line the diff names,
//! or shifted by lines added or removed above it (nearest shift first). Anything else is a
//! conflict naming the lines that differ, and nothing is produced. The diff text drops a
//! line's `\r` and shows invalid UTF-8 as U+FFFD, so lines are compared the same way and the
//! lines put back take the file's own line ending; context lines keep their exact bytes.

use crate::tool_output::DIFF_TRUNCATED;

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Context,
    Removed,
    Added,
}

/// One line of a hunk; `no_newline` when the file line had no line break (the last line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    pub kind: LineKind,
    pub text: String,
    pub no_newline: bool,
}

/// One `@@` hunk: 1-based start lines of each side (0 for an empty side) and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub new_start: usize,
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    /// The lines as they were before the change (context and removed).
    fn old_side(&self) -> impl Iterator<Item = &HunkLine> {
        self.lines.iter().filter(|l| l.kind != LineKind::Added)
    }
    /// The lines the change left (context and added): what must be found in the file.
    fn new_side(&self) -> impl Iterator<Item = &HunkLine> {
        self.lines.iter().filter(|l| l.kind != LineKind::Removed)
    }
}

/// A unified diff of one file, read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedDiff {
    pub hunks: Vec<Hunk>,
    /// The old side is `/dev/null`: the change created the file.
    pub created: bool,
    /// The new side is `/dev/null`: the change deleted the file.
    pub deleted: bool,
    /// The tools cut the text for size: the hunks are not the whole change.
    pub truncated: bool,
    /// A change shown without hunks (binary or too large to diff).
    pub summarised: bool,
}

impl ParsedDiff {
    /// True when the hunks are the whole change and can be applied in reverse.
    pub fn complete(&self) -> bool {
        !self.truncated && !self.summarised
    }
}

/// Reads unified diff text as `diff::diff_files` (or a checkpoint's summary) writes it.
pub fn parse(diff: &str) -> ParsedDiff {
    let mut out = ParsedDiff::default();
    let (mut old_left, mut new_left) = (0usize, 0usize);
    let mut saw_body = false;
    for line in diff.lines() {
        if line == DIFF_TRUNCATED {
            out.truncated = true;
            break;
        }
        let in_hunk = old_left > 0 || new_left > 0;
        if !in_hunk {
            if let Some(name) = line.strip_prefix("--- ") {
                out.created |= name == "/dev/null";
                continue;
            }
            if let Some(name) = line.strip_prefix("+++ ") {
                out.deleted |= name == "/dev/null";
                continue;
            }
            if let Some(rest) = line.strip_prefix("@@") {
                let mut ranges = rest.split_whitespace();
                let (old_start, old_count) = range(ranges.next());
                let (new_start, new_count) = range(ranges.next());
                (old_left, new_left) = (old_count, new_count);
                out.hunks.push(Hunk {
                    old_start,
                    new_start,
                    lines: Vec::new(),
                });
                continue;
            }
            if line.starts_with('\\') {
                mark_no_newline(&mut out);
                continue;
            }
            if !line.is_empty() {
                saw_body = true;
            }
            continue;
        }
        let (kind, text) = match line.chars().next() {
            Some('+') => (LineKind::Added, &line[1..]),
            Some('-') => (LineKind::Removed, &line[1..]),
            Some('\\') => {
                mark_no_newline(&mut out);
                continue;
            }
            _ => (LineKind::Context, line.get(1..).unwrap_or("")),
        };
        if kind != LineKind::Added {
            old_left = old_left.saturating_sub(1);
        }
        if kind != LineKind::Removed {
            new_left = new_left.saturating_sub(1);
        }
        if let Some(hunk) = out.hunks.last_mut() {
            hunk.lines.push(HunkLine {
                kind,
                text: text.to_string(),
                no_newline: false,
            });
        }
    }
    // A body line outside any hunk is the summary of a binary or large file.
    out.summarised = out.hunks.is_empty() && saw_body;
    out
}

fn mark_no_newline(out: &mut ParsedDiff) {
    if let Some(line) = out.hunks.last_mut().and_then(|h| h.lines.last_mut()) {
        line.no_newline = true;
    }
}

/// `-12,3` → (12, 3); a missing count is 1.
fn range(text: Option<&str>) -> (usize, usize) {
    let Some(text) = text.and_then(|t| t.get(1..)) else {
        return (0, 0);
    };
    let mut parts = text.split(',');
    let start = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let count = parts.next().map_or(1, |c| c.parse().unwrap_or(0));
    (start, count)
}

/// A line the hunk expected and what the file has there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// 1-based line of the file.
    pub line: usize,
    pub expected: String,
    /// None past the end of the file.
    pub found: Option<String>,
}

/// Why a reverse patch does not apply; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkConflict {
    /// 0-based index of the hunk in the diff.
    pub hunk: usize,
    pub why: String,
    /// Where the hunk was expected, the lines that differ (at most a few).
    pub lines: Vec<Mismatch>,
}

/// Lines shown in a conflict at most.
const MISMATCHES_SHOWN: usize = 6;

/// A file line split into its text (as the diff shows it) and its line break.
struct FileLine<'a> {
    bytes: &'a [u8],
    text: String,
    has_newline: bool,
}

fn file_lines(bytes: &[u8]) -> Vec<FileLine<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at + 1);
        let line = &bytes[start..end];
        let has_newline = line.ends_with(b"\n");
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        out.push(FileLine {
            bytes: line,
            text: String::from_utf8_lossy(body).into_owned(),
            has_newline,
        });
        start = end;
    }
    out
}

fn same(file: &FileLine<'_>, expected: &HunkLine) -> bool {
    file.text == expected.text && file.has_newline != expected.no_newline
}

/// Where `hunk`'s new side sits in `lines`, searching from `wanted` outwards, never before
/// `floor` (the end of the hunk before it).
fn locate(lines: &[FileLine<'_>], hunk: &Hunk, wanted: usize, floor: usize) -> Option<usize> {
    let expected: Vec<&HunkLine> = hunk.new_side().collect();
    let fits = |at: usize| {
        at >= floor
            && at + expected.len() <= lines.len()
            && expected.iter().zip(&lines[at..]).all(|(e, f)| same(f, e))
    };
    if expected.is_empty() {
        // A change that emptied the file: it must still be empty.
        return lines.is_empty().then_some(0);
    }
    let max = lines.len();
    for distance in 0..=max {
        if let Some(at) = wanted.checked_sub(distance)
            && fits(at)
        {
            return Some(at);
        }
        if distance > 0 && fits(wanted + distance) {
            return Some(wanted + distance);
        }
        if wanted.saturating_sub(distance) < floor && wanted + distance > max {
            break;
        }
    }
    None
}

fn conflict_at(lines: &[FileLine<'_>], hunk: &Hunk, index: usize, at: usize) -> HunkConflict {
    let expected: Vec<&HunkLine> = hunk.new_side().collect();
    let mut mismatches = Vec::new();
    for (i, want) in expected.iter().enumerate() {
        let found = lines.get(at + i);
        if found.is_some_and(|f| same(f, want)) {
            continue;
        }
        let describe = |f: &FileLine<'_>| {
            if f.has_newline || !want.no_newline {
                f.text.clone()
            } else {
                format!("{} (no line break at the end)", f.text)
            }
        };
        mismatches.push(Mismatch {
            line: at + i + 1,
            expected: want.text.clone(),
            found: found.map(describe),
        });
    }
    let shown = mismatches.len().min(MISMATCHES_SHOWN);
    let why = if expected.is_empty() {
        "the change emptied the file and it has content again".to_string()
    } else if mismatches.is_empty() {
        "the lines the change left are no longer where the change put them".to_string()
    } else {
        format!(
            "the file changed since: {} of the {} lines the change left {} no longer there",
            mismatches.len(),
            expected.len(),
            if mismatches.len() == 1 { "is" } else { "are" }
        )
    };
    mismatches.truncate(shown);
    HunkConflict {
        hunk: index,
        why,
        lines: mismatches,
    }
}

/// The file's line break for lines put back: the more common of CRLF and LF (LF when none).
fn line_break(lines: &[FileLine<'_>]) -> &'static [u8] {
    let crlf = lines.iter().filter(|l| l.bytes.ends_with(b"\r\n")).count();
    let lf = lines.iter().filter(|l| l.has_newline).count() - crlf;
    if crlf > lf { b"\r\n" } else { b"\n" }
}

/// Takes the hunks numbered `which` (all when None) of `diff` back out of `current`.
/// Refuses a diff that is not the whole change (cut for size, binary).
pub fn reverse(
    current: &[u8],
    diff: &ParsedDiff,
    which: Option<usize>,
) -> Result<Vec<u8>, HunkConflict> {
    if !diff.complete() {
        return Err(HunkConflict {
            hunk: 0,
            why: "the diff was cut for size (or the file is binary): only the whole change can \
                  be reverted, from the checkpoint"
                .into(),
            lines: Vec::new(),
        });
    }
    let chosen: Vec<(usize, &Hunk)> = diff
        .hunks
        .iter()
        .enumerate()
        .filter(|(i, _)| which.is_none_or(|w| w == *i))
        .collect();
    if chosen.is_empty() {
        return Err(HunkConflict {
            hunk: which.unwrap_or(0),
            why: "the change has no such hunk".into(),
            lines: Vec::new(),
        });
    }
    let lines = file_lines(current);
    let ending = line_break(&lines);
    // Each hunk's position in the file; the shift found for one is where the next is sought.
    let mut placed: Vec<(usize, &Hunk)> = Vec::new();
    let (mut shift, mut floor) = (0isize, 0usize);
    for (index, hunk) in chosen {
        let named = hunk.new_start.saturating_sub(1);
        let wanted = named.saturating_add_signed(shift).min(lines.len());
        let Some(at) = locate(&lines, hunk, wanted.max(floor), floor) else {
            return Err(conflict_at(&lines, hunk, index, wanted.max(floor)));
        };
        let len = hunk.new_side().count();
        let ends_file = at + len == lines.len();
        if hunk.old_side().any(|l| l.no_newline) && !ends_file {
            return Err(HunkConflict {
                hunk: index,
                why: "the change's last line had no line break, and lines were added after it \
                      since"
                    .into(),
                lines: Vec::new(),
            });
        }
        shift = at as isize - named as isize;
        floor = at + len;
        placed.push((at, hunk));
    }
    let mut out = Vec::with_capacity(current.len());
    let mut next = 0;
    for (at, hunk) in placed {
        for line in &lines[next..at] {
            out.extend_from_slice(line.bytes);
        }
        let mut in_file = at;
        for line in &hunk.lines {
            match line.kind {
                LineKind::Context => {
                    out.extend_from_slice(lines[in_file].bytes);
                    in_file += 1;
                }
                LineKind::Added => in_file += 1,
                LineKind::Removed => {
                    out.extend_from_slice(line.text.as_bytes());
                    if !line.no_newline {
                        out.extend_from_slice(ending);
                    }
                }
            }
        }
        next = in_file;
    }
    for line in &lines[next..] {
        out.extend_from_slice(line.bytes);
    }
    Ok(out)
}

/// True when `current` is exactly what a created file's diff says it was created with
/// (compared as the diff shows lines: without `\r`, invalid UTF-8 as U+FFFD).
pub fn is_created_content(current: &[u8], diff: &ParsedDiff) -> bool {
    if !diff.complete() {
        return false;
    }
    let expected: Vec<&HunkLine> = diff.hunks.iter().flat_map(|h| h.new_side()).collect();
    let lines = file_lines(current);
    lines.len() == expected.len() && lines.iter().zip(expected).all(|(f, e)| same(f, e))
}

/// True when a line put back would not be the bytes it was: the diff shows invalid UTF-8 as
/// U+FFFD, so such a line can only come back from a checkpoint.
pub fn loses_bytes(diff: &ParsedDiff, which: Option<usize>) -> bool {
    diff.hunks
        .iter()
        .enumerate()
        .filter(|(i, _)| which.is_none_or(|w| w == *i))
        .flat_map(|(_, h)| h.old_side())
        .any(|l| l.kind == LineKind::Removed && l.text.contains('\u{FFFD}'))
}

#[cfg(test)]
#[path = "patch_tests.rs"]
mod tests;
