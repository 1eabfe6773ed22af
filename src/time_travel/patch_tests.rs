//! Tests of reverse patches, on diffs made by the same `diff_files` the tools use.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::fs::diff::diff_files;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn diff_of(before: &str, after: &str) -> ParsedDiff {
    parse(&diff_files(before.as_bytes(), after.as_bytes(), "f.txt", false).text)
}

/// A 40-line file with three changes far apart: three hunks.
fn three_hunks() -> (String, String) {
    let before = numbered(40);
    let after = before
        .replace("line 3\n", "line three\n")
        .replace("line 20\n", "line twenty\nline twenty-b\n")
        .replace("line 37\n", "");
    (before, after)
}

#[test]
fn a_multi_hunk_edit_reverts_only_its_middle_hunk() {
    let (before, after) = three_hunks();
    let diff = diff_of(&before, &after);
    assert_eq!(diff.hunks.len(), 3);
    let out = reverse(after.as_bytes(), &diff, Some(1)).unwrap();
    let expected = after.replace("line twenty\nline twenty-b\n", "line 20\n");
    assert_eq!(String::from_utf8(out).unwrap(), expected);
    // All hunks: the file before the change, byte for byte.
    let out = reverse(after.as_bytes(), &diff, None).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), before);
}

#[test]
fn lines_added_above_the_hunk_since_shift_it_and_it_still_applies() {
    let (before, after) = three_hunks();
    let diff = diff_of(&before, &after);
    let edited =
        format!("// a header the user wrote\n// two lines\n{after}").replace("line 30\n", "");
    let out = reverse(edited.as_bytes(), &diff, Some(1)).unwrap();
    let expected = edited.replace("line twenty\nline twenty-b\n", "line 20\n");
    assert_eq!(String::from_utf8(out).unwrap(), expected);
    // The other hunks too, each found at its own shift.
    let out = reverse(edited.as_bytes(), &diff, None).unwrap();
    let expected =
        format!("// a header the user wrote\n// two lines\n{before}").replace("line 30\n", "");
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn a_line_edited_inside_the_hunk_since_is_a_conflict_naming_it() {
    let (before, after) = three_hunks();
    let diff = diff_of(&before, &after);
    let edited = after.replace("line twenty-b\n", "line twenty-b, edited by the user\n");
    let conflict = reverse(edited.as_bytes(), &diff, Some(1)).unwrap_err();
    assert_eq!(conflict.hunk, 1);
    assert!(conflict.why.contains("1 of the"), "{}", conflict.why);
    assert_eq!(
        conflict.lines,
        [Mismatch {
            line: 21,
            expected: "line twenty-b".into(),
            found: Some("line twenty-b, edited by the user".into()),
        }]
    );
    // Hunks elsewhere still apply; reverting all of them is refused as a whole.
    assert!(reverse(edited.as_bytes(), &diff, Some(0)).is_ok());
    assert!(reverse(edited.as_bytes(), &diff, None).is_err());
}

#[test]
fn a_context_line_changed_since_is_a_conflict_too() {
    let (before, after) = three_hunks();
    let diff = diff_of(&before, &after);
    let edited = after.replace("line 18\n", "line 18 changed\n");
    let conflict = reverse(edited.as_bytes(), &diff, Some(1)).unwrap_err();
    assert_eq!(conflict.lines[0].expected, "line 18");
}

#[test]
fn a_file_cut_short_since_shows_the_missing_lines() {
    let (before, after) = three_hunks();
    let diff = diff_of(&before, &after);
    let short: String = after.lines().take(34).map(|l| format!("{l}\n")).collect();
    let conflict = reverse(short.as_bytes(), &diff, Some(2)).unwrap_err();
    assert!(
        conflict.lines.iter().any(|m| m.found.is_none()),
        "{conflict:?}"
    );
}

#[test]
fn crlf_files_keep_their_line_breaks() {
    let before = "one\r\ntwo\r\nthree\r\nfour\r\n";
    let after = "one\r\n2\r\nthree\r\nfour\r\n";
    let diff = diff_of(before, after);
    let out = reverse(after.as_bytes(), &diff, None).unwrap();
    assert_eq!(out, before.as_bytes());
}

#[test]
fn a_missing_final_newline_is_put_back_and_taken_away() {
    // The change added a final newline: the revert takes it away again.
    let diff = diff_of("a\nb", "a\nb\n");
    assert_eq!(reverse(b"a\nb\n", &diff, None).unwrap(), b"a\nb");
    // The change removed one.
    let diff = diff_of("a\nb\n", "a\nc");
    assert_eq!(reverse(b"a\nc", &diff, None).unwrap(), b"a\nb\n");
    // Lines appended since after a line that had no break: the break is needed, conflict.
    let diff = diff_of("a\nb\n", "a\nb");
    assert!(reverse(b"a\nb\nmore\n", &diff, None).is_err());
}

#[test]
fn unicode_lines_round_trip() {
    let before = "grüße\n日本語\nemoji 🦀\nend\n";
    let after = "grüße\n日本語のテキスト\nemoji 🦀🦀\nend\n";
    let diff = diff_of(before, after);
    assert_eq!(
        reverse(after.as_bytes(), &diff, None).unwrap(),
        before.as_bytes()
    );
}

#[test]
fn a_created_file_is_recognised_only_with_its_created_content() {
    let diff = parse(&diff_files(b"", b"x\r\ny\r\n", "new.txt", true).text);
    assert!(diff.created);
    assert!(is_created_content(b"x\r\ny\r\n", &diff));
    assert!(!is_created_content(b"x\r\ny\r\nz\r\n", &diff));
    assert!(!is_created_content(b"x\r\n", &diff));
}

#[test]
fn a_deleted_files_diff_is_marked_deleted() {
    let text = diff_files(b"gone\n", b"", "old.txt", false).text.replacen(
        "+++ b/old.txt",
        "+++ /dev/null",
        1,
    );
    let diff = parse(&text);
    assert!(diff.deleted && !diff.created);
    assert!(diff.complete());
}

#[test]
fn a_truncated_diff_cannot_be_reverted_hunk_by_hunk() {
    let after: String = (0..100_000).map(|i| format!("row {i}\n")).collect();
    let text = diff_files(b"", after.as_bytes(), "big.txt", true).text;
    let diff = parse(&text);
    assert!(diff.truncated && !diff.complete());
    let err = reverse(after.as_bytes(), &diff, Some(0)).unwrap_err();
    assert!(err.why.contains("only the whole change"), "{}", err.why);
    assert!(!is_created_content(after.as_bytes(), &diff));
    let summary = parse("--- a/x.bin\n+++ b/x.bin\nBinary or large file changed (3 → 4 bytes)\n");
    assert!(summary.summarised && !summary.complete());
}

#[test]
fn an_emptied_file_comes_back_only_while_still_empty() {
    let diff = diff_of("a\nb\n", "");
    assert_eq!(reverse(b"", &diff, None).unwrap(), b"a\nb\n");
    assert!(reverse(b"new\n", &diff, None).is_err());
}

#[test]
fn invalid_utf8_lines_cannot_be_put_back_from_the_text() {
    let diff = parse(&diff_files(b"caf\xe9\n", b"cafe\n", "f", false).text);
    assert!(loses_bytes(&diff, None));
    let diff = diff_of("a\n", "b\n");
    assert!(!loses_bytes(&diff, None));
}

#[test]
fn a_hunk_matching_twice_is_taken_nearest_to_where_the_diff_says() {
    // Repeated blocks: the revert must touch the one the diff names, not the first.
    let block = "x\nx\nx\nTARGET\nx\nx\nx\n";
    let before = format!("{block}{block}{block}");
    let after = format!("{block}{}{block}", block.replace("TARGET", "CHANGED"));
    let diff = diff_of(&before, &after);
    // The file now also has a CHANGED block at the top (the user pasted it): the one the diff
    // names (the middle) is reverted.
    let with_copy = format!(
        "{}{}{block}",
        block.replace("TARGET", "CHANGED"),
        block.replace("TARGET", "CHANGED")
    );
    let out = String::from_utf8(reverse(with_copy.as_bytes(), &diff, None).unwrap()).unwrap();
    assert_eq!(
        out,
        format!("{}{block}{block}", block.replace("TARGET", "CHANGED"))
    );
}
