//! Tests of the diff pane: parsing unified diffs and both views.
#![allow(clippy::unwrap_used)]

use super::*;

const DIFF: &str =
    "--- a/x.rs\n+++ b/x.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-fn b() {}\n+fn c() {}\n fn d() {}\n";

#[test]
fn parse_numbers_old_and_new_lines() {
    assert_eq!(
        parse(DIFF),
        [
            DiffLine::Hunk("@@ -1,3 +1,3 @@".into()),
            DiffLine::Context {
                old: 1,
                new: 1,
                text: "fn a() {}".into()
            },
            DiffLine::Removed {
                old: 2,
                text: "fn b() {}".into()
            },
            DiffLine::Added {
                new: 2,
                text: "fn c() {}".into()
            },
            DiffLine::Context {
                old: 3,
                new: 3,
                text: "fn d() {}".into()
            },
        ]
    );
}

#[test]
fn removed_and_added_lines_that_look_like_headers_stay_in_the_hunk() {
    let before = b"-- list users\nselect * from users;\n++counter;\n";
    let after = b"-- list all users\nselect * from users;\n++total;\n";
    let diff = crate::fs::diff::diff_files(before, after, "q.sql", false);
    assert!(diff.text.contains("\n--- list users\n"), "{}", diff.text);
    let parsed = parse(&diff.text);
    assert!(parsed.contains(&DiffLine::Removed {
        old: 1,
        text: "-- list users".into()
    }));
    assert!(parsed.contains(&DiffLine::Added {
        new: 1,
        text: "-- list all users".into()
    }));
    assert!(parsed.contains(&DiffLine::Removed {
        old: 3,
        text: "++counter;".into()
    }));
    assert!(parsed.contains(&DiffLine::Added {
        new: 3,
        text: "++total;".into()
    }));
    assert_eq!(parsed.len(), 1 + 2 + 1 + 2, "{parsed:?}");
    let text: Vec<String> = unified(&parsed, "sql", 60)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        text.iter().any(|l| l.contains("- -- list users")),
        "{text:?}"
    );
}

#[test]
fn headers_of_a_second_file_after_a_finished_hunk_are_skipped() {
    let two = format!("{DIFF}--- a/y.rs\n+++ b/y.rs\n@@ -1 +1 @@\n-x\n+y\n");
    let parsed = parse(&two);
    assert_eq!(parsed.len(), 5 + 3, "{parsed:?}");
    assert_eq!(parsed[5], DiffLine::Hunk("@@ -1 +1 @@".into()));
}

#[test]
fn a_cut_diff_ends_in_a_note_not_a_context_line() {
    let after: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let diff = crate::fs::diff::diff_files(b"", after.as_bytes(), "big.txt", true);
    let parsed = parse(&diff.text);
    assert_eq!(parsed.last(), Some(&DiffLine::Truncated));
    assert!(
        !parsed
            .iter()
            .any(|l| matches!(l, DiffLine::Context { text, .. } if text.contains("truncated"))),
        "the marker is not shown as file content"
    );

    let small = format!("{DIFF}{TRUNCATED_MARKER}\n");
    for lines in [
        unified(&parse(&small), "rust", 70),
        side_by_side(&parse(&small), "rust", 70),
    ] {
        let last = lines.last().map(ToString::to_string).unwrap_or_default();
        assert!(last.starts_with("⋯ diff truncated"), "{last:?}");
        assert_eq!(lines.last().and_then(|l| l.style.fg), theme::warning().fg);
    }
}

#[test]
fn the_session_summary_sums_edits_per_file_in_first_touched_order() {
    let mut pane = DiffPane::new();
    let change = |path: &str, added, removed| FileChange {
        path: path.into(),
        added,
        removed,
        diff: DIFF.into(),
        ..FileChange::default()
    };
    pane.push(change("b.rs", 2, 1));
    pane.push(change("a.rs", 5, 0));
    pane.push(change("b.rs", 1, 1));
    assert_eq!(
        pane.summary(),
        [("b.rs".into(), 3, 2, 2), ("a.rs".into(), 5, 0, 1)]
    );
    assert_eq!(pane.selected(), Some(2), "the newest edit is shown");
    pane.prev();
    pane.push(change("c.rs", 1, 0));
    assert_eq!(
        pane.selected(),
        Some(1),
        "a user looking at an older edit keeps it"
    );
}

#[test]
fn a_selected_hunk_is_marked_scrolled_to_and_names_the_revert_target() {
    let before: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let after = before
        .replace("line 3\n", "line three\n")
        .replace("line 20\n", "line twenty\n")
        .replace("line 37\n", "line thirty-seven\n");
    let diff = crate::fs::diff::diff_files(before.as_bytes(), after.as_bytes(), "f.txt", false);
    let mut pane = DiffPane::new();
    let call = crate::bus::ChangeSource::Call(crate::bus::CallId::new("c2"));
    pane.push_from(
        FileChange {
            path: "f.txt".into(),
            diff: diff.text,
            added: 3,
            removed: 3,
            ..FileChange::default()
        },
        call.clone(),
        0,
    );
    assert_eq!(pane.hunk(), None);
    let whole = pane.hunk_target().unwrap();
    assert_eq!((whole.file, whole.hunk), (Some(0), None));
    pane.step_hunk(1);
    pane.step_hunk(1);
    assert_eq!(pane.hunk(), Some(1));
    let target = pane.hunk_target().unwrap();
    assert_eq!(
        (target.source, target.file, target.hunk),
        (call.clone(), Some(0), Some(1))
    );
    let change = pane.change_target().unwrap();
    assert_eq!((change.file, change.hunk), (None, None));

    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 16)).unwrap();
    terminal
        .draw(|f| pane.render(f.area(), f.buffer_mut(), true))
        .unwrap();
    let screen = terminal.backend().to_string();
    insta::assert_snapshot!("diff_hunk_selected", screen);
    assert!(screen.contains("hunk 2/3"), "{screen}");
    assert!(screen.contains("▌"), "{screen}");
    assert!(
        screen.contains("line twenty"),
        "the selected hunk is scrolled into view"
    );
    // Stepping past the ends stays on the last hunk; another change drops the selection.
    pane.step_hunk(5);
    assert_eq!(pane.hunk(), Some(2));
    pane.push_from(FileChange::default(), call, 1);
    pane.next();
    assert_eq!(pane.hunk(), None);
    // A change of unknown origin cannot be reverted from the pane.
    let mut bare = DiffPane::new();
    bare.push(FileChange::default());
    assert!(bare.hunk_target().is_none());
}

#[test]
fn side_by_side_is_drawn_only_where_every_line_fits_whole() {
    // The widest code line is 9 columns ("fn b() {}"): a half needs 6 + 9 = 15 columns, so
    // the pane needs 2 × 15 + 1 = 31.
    let parsed = parse(DIFF);
    assert!(side_by_side_fits(&parsed, 31));
    assert!(!side_by_side_fits(&parsed, 30));
    // Wide characters count by their columns, tabs as the four spaces they are drawn as.
    let wide = parse("@@ -1 +1 @@\n-日本語\n+\tx\n");
    assert!(side_by_side_fits(&wide, 2 * (6 + 6) + 1));
    assert!(!side_by_side_fits(&wide, 2 * (6 + 6)));

    let mut pane = DiffPane::new();
    pane.push(FileChange {
        path: "x.rs".into(),
        diff: DIFF.into(),
        added: 1,
        removed: 1,
        ..FileChange::default()
    });
    pane.toggle_view();
    let draw = |width: u16| {
        let area = Rect::new(0, 0, width, 12);
        let mut buf = Buffer::empty(area);
        pane.render(area, &mut buf, true);
        (0..area.height)
            .map(|y| {
                (0..width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
    };
    // The pane's border takes two columns.
    let fits = draw(33);
    assert!(fits[0].contains("side by side"), "{fits:?}");
    assert!(
        fits.iter()
            .any(|row| row.contains("fn b() {}") && row.contains("fn c() {}")),
        "{fits:?}"
    );
    let narrow = draw(32);
    assert!(narrow[0].contains("unified"), "{narrow:?}");
    assert!(
        narrow.iter().any(|row| row.contains("- fn b() {}")),
        "{narrow:?}"
    );
    assert!(
        !narrow
            .iter()
            .any(|row| row.contains("fn b()") && row.contains("fn c()")),
        "{narrow:?}"
    );
}

#[test]
fn the_title_says_why_a_wide_change_is_not_side_by_side() {
    let mut pane = DiffPane::new();
    let long = format!("@@ -1 +1 @@\n-{}\n+{}\n", "a".repeat(50), "b".repeat(50));
    pane.push(FileChange {
        path: "x.txt".into(),
        diff: long,
        added: 1,
        removed: 1,
        ..FileChange::default()
    });
    pane.toggle_view();
    let title = |width: u16| {
        let area = Rect::new(0, 0, width, 8);
        let mut buf = Buffer::empty(area);
        pane.render(area, &mut buf, true);
        (0..width)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect::<String>()
    };
    assert!(
        title(80).contains("Diffs · unified: too narrow for side by side"),
        "{}",
        title(80)
    );
    // A narrower pane shortens the title but still says it.
    assert!(title(36).contains("unified (too narrow)"), "{}", title(36));
    assert!(
        title(120).contains("side by side · f full width"),
        "{}",
        title(120)
    );
}
