//! Unit tests of read_file: line windows over any chunking, cut lines, lossy UTF-8, names.
#![allow(clippy::unwrap_used)]

use super::*;

/// Feeds `text` in chunks of `size` bytes and returns (lines, total, cut).
fn window_of(text: &[u8], offset: usize, limit: usize, size: usize) -> (Vec<String>, usize, usize) {
    let mut window = Window::new(offset, limit);
    for chunk in text.chunks(size.max(1)) {
        window.feed(chunk);
    }
    let total = window.finish();
    (window.lines, total, window.long_lines_cut)
}

#[test]
fn windows_are_the_same_for_any_chunking() {
    let text = b"one\ntwo\r\nthree\n\nfive";
    for size in [1, 2, 3, 5, 7, 64] {
        assert_eq!(
            window_of(text, 1, 10, size),
            (
                vec![
                    "one".into(),
                    "two".into(),
                    "three".into(),
                    "".into(),
                    "five".into()
                ],
                5,
                0
            ),
            "chunk size {size}"
        );
        assert_eq!(
            window_of(text, 2, 2, size),
            (vec!["two".into(), "three".into()], 5, 0),
            "{size}"
        );
        assert_eq!(
            window_of(text, 5, 2, size),
            (vec!["five".into()], 5, 0),
            "{size}"
        );
        assert_eq!(window_of(text, 9, 2, size), (vec![], 5, 0), "{size}");
    }
}

#[test]
fn line_counts_with_and_without_final_newline() {
    assert_eq!(window_of(b"", 1, 10, 4).1, 0);
    assert_eq!(window_of(b"\n", 1, 10, 4), (vec!["".into()], 1, 0));
    assert_eq!(window_of(b"a\nb\n", 1, 10, 4).1, 2);
    assert_eq!(window_of(b"a\nb", 1, 10, 4).1, 2);
    assert_eq!(window_of(b"a\nb", 1, 1, 1).1, 2);
}

#[test]
fn long_lines_are_cut_on_a_character_boundary_with_a_marker() {
    let long = "\u{e9}".repeat(MAX_LINE_CHARS + 10);
    let text = format!("short\n{long}\nafter\n");
    let (lines, total, cut) = window_of(text.as_bytes(), 1, 10, 1000);
    assert_eq!((total, cut), (3, 1));
    let expected = format!(
        "{} [line cut: {} bytes in all]",
        "\u{e9}".repeat(MAX_LINE_CHARS),
        long.len()
    );
    assert_eq!(lines[1], expected);
    assert_eq!(lines[2], "after");

    // Far beyond the byte cap, with 4-byte characters split by the cap.
    let huge = "\u{1f600}".repeat(MAX_LINE_BYTES);
    let (lines, _, cut) = window_of(huge.as_bytes(), 1, 1, 333);
    assert_eq!(cut, 1);
    assert!(lines[0].starts_with(&"\u{1f600}".repeat(MAX_LINE_CHARS)));
    assert!(!lines[0].contains('\u{fffd}'));
}

#[test]
fn invalid_utf8_later_in_a_file_is_shown_lossily_with_a_marker() {
    let (lines, _, _) = window_of(b"ok\nbad \xff byte\n", 1, 10, 4);
    assert_eq!(
        lines,
        vec![
            "ok".to_string(),
            "bad \u{fffd} byte [invalid UTF-8 shown as \u{fffd}]".into()
        ]
    );
}

#[test]
fn the_byte_budget_ends_a_window_early() {
    let line = "x".repeat(1000);
    let text = format!("{line}\n").repeat(600);
    let (lines, total, _) = window_of(text.as_bytes(), 1, 2000, 4096);
    assert_eq!(total, 600);
    assert!(
        lines.len() < 600 && lines.len() >= MAX_WINDOW_BYTES / 1001,
        "{}",
        lines.len()
    );
}

#[test]
fn similar_names_are_suggested_for_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["config.toml", "Config.rs", "main.rs", "unrelated.txt"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let err = missing_file(&dir.path().join("confg.toml"), "confg.toml").to_string();
    assert!(err.contains("config.toml"), "{err}");
    assert!(!err.contains("unrelated"), "{err}");
    let err = missing_file(&dir.path().join("main.py"), "main.py").to_string();
    assert!(err.contains("main.rs"), "{err}");
    let err = missing_file(&dir.path().join("nope/x.rs"), "nope/x.rs").to_string();
    assert!(err.contains("directory does not exist"), "{err}");
}
