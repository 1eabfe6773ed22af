//! Unit tests of edit_file: matching, replacement, line breaks, argument forms.
#![allow(clippy::unwrap_used)]

use super::*;

fn edit(old: &str, new: &str, replace_all: bool) -> Edit {
    Edit {
        old: old.into(),
        new: new.into(),
        replace_all,
    }
}

fn apply(content: &str, edits: &[Edit]) -> Result<(String, usize), String> {
    apply_edits(content.as_bytes(), edits, "f.txt")
        .map(|(bytes, n)| (String::from_utf8(bytes).unwrap(), n))
        .map_err(|err| err.to_string())
}

#[test]
fn one_match_is_replaced() {
    assert_eq!(
        apply("a b c\n", &[edit("b", "B", false)]).unwrap(),
        ("a B c\n".into(), 1)
    );
}

#[test]
fn several_matches_need_replace_all() {
    let err = apply("x\ny\nx\n", &[edit("x", "z", false)]).unwrap_err();
    assert!(
        err.contains("occurs 2 times") && err.contains("lines 1, 3"),
        "{err}"
    );
    assert_eq!(
        apply("x\ny\nx\n", &[edit("x", "z", true)]).unwrap(),
        ("z\ny\nz\n".into(), 2)
    );
}

#[test]
fn zero_matches_show_similar_lines() {
    let err = apply("alpha\nbeta\n", &[edit("betta", "b", false)]).unwrap_err();
    assert!(
        err.contains("not found") && err.contains("     2\tbeta"),
        "{err}"
    );
}

#[test]
fn crlf_files_match_lf_text_and_stay_crlf() {
    let (out, n) = apply(
        "one\r\ntwo\r\nthree\r\n",
        &[edit("one\ntwo\n", "1\n2\n", false)],
    )
    .unwrap();
    assert_eq!((out.as_str(), n), ("1\r\n2\r\nthree\r\n", 1));
}

#[test]
fn a_missing_final_newline_stays_missing() {
    assert_eq!(
        apply("a\nlast", &[edit("last", "end", false)]).unwrap().0,
        "a\nend"
    );
}

#[test]
fn unicode_is_replaced_whole() {
    let (out, _) = apply(
        "caf\u{e9} \u{1f600} na\u{ef}ve\n",
        &[edit("\u{1f600}", "\u{1f680}\u{1f680}", false)],
    )
    .unwrap();
    assert_eq!(out, "caf\u{e9} \u{1f680}\u{1f680} na\u{ef}ve\n");
}

#[test]
fn edits_apply_in_order_and_see_each_other() {
    let edits = [edit("a", "b", false), edit("b b", "c", false)];
    assert_eq!(apply("a b\n", &edits).unwrap(), ("c\n".into(), 2));
}

#[test]
fn one_failing_edit_fails_all_and_says_which() {
    let edits = [edit("a", "b", false), edit("missing", "x", false)];
    let err = apply("a\n", &edits).unwrap_err();
    assert!(
        err.starts_with("edit 2 of 2: old_string was not found"),
        "{err}"
    );
    assert!(err.ends_with("No edit was applied."), "{err}");
}

#[test]
fn invalid_utf8_elsewhere_survives_an_edit() {
    let content = b"bad \xff here\nfix me\n";
    let (out, _) = apply_edits(content, &[edit("fix me", "fixed", false)], "f").unwrap();
    assert_eq!(out, b"bad \xff here\nfixed\n");
}

fn parse(args: serde_json::Value) -> Result<Vec<Edit>, String> {
    to_edits(parse_args(&args).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

#[test]
fn argument_forms_and_their_errors() {
    use serde_json::json;
    assert_eq!(
        parse(json!({"path": "f", "old_string": "a", "new_string": "b", "replace_all": "true", "junk": 1})).unwrap(),
        vec![edit("a", "b", true)]
    );
    assert_eq!(
        parse(json!({"path": "f", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "", "replace_all": true}]}))
            .unwrap(),
        vec![edit("a", "b", false), edit("c", "", true)]
    );
    assert_eq!(
        parse(json!({"path": "f", "edits": "[{\"old_string\": \"a\", \"new_string\": \"b\"}]"}))
            .unwrap(),
        vec![edit("a", "b", false)]
    );
    let err = |args| parse(args).unwrap_err();
    assert!(err(json!({"path": "f", "edits": "not json"})).contains("not a JSON array"));
    assert!(
        err(json!({"path": "f", "old_string": "", "new_string": "b"}))
            .contains("old_string is empty")
    );
    assert!(err(json!({"path": "f", "old_string": "a", "new_string": "a"})).contains("identical"));
    assert!(err(json!({"path": "f", "old_string": "a"})).contains("`new_string` is missing"));
    assert!(err(json!({"path": "f"})).contains("required"));
    assert!(err(json!({"path": "f", "edits": []})).contains("empty"));
    assert!(
        err(json!({"path": "f", "old_string": "a", "new_string": "b", "edits": []}))
            .contains("not both")
    );
    assert!(
        err(json!({"path": "f", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "x", "new_string": "x"}]}))
            .starts_with("invalid arguments: edit 2 of 2:")
    );
}
