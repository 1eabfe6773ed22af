//! Tests of the revert confirmation: what it shows for a clean revert and for a conflict, and
//! which keys send what.
#![allow(clippy::unwrap_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::bus::{CallId, ChangeSource, RevertMismatch};
use crate::tool_output::FileChange;

fn target() -> RevertTarget {
    RevertTarget {
        source: ChangeSource::Call(CallId::new("c2")),
        file: Some(0),
        hunk: Some(1),
    }
}

fn ready(warning: Option<&str>) -> RevertPlan {
    let diff = crate::tools::diff::diff_files(
        b"a\nb\nline twenty\nd\ne\n",
        b"a\nb\nline 20\nd\ne\n",
        "src/f.txt",
        false,
    );
    RevertPlan::Ready {
        files: vec![RevertFile {
            change: FileChange {
                path: "src/f.txt".into(),
                diff: diff.text,
                added: diff.added,
                removed: diff.removed,
                ..FileChange::default()
            },
            warning: warning.map(str::to_string),
        }],
        stamp: "0123".into(),
    }
}

fn conflict() -> RevertPlan {
    RevertPlan::Conflict {
        conflicts: vec![RevertConflict {
            path: "src/f.txt".into(),
            why: "hunk 2: the file changed since: 1 of the 7 lines the change left is no longer \
                  there"
                .into(),
            lines: vec![RevertMismatch {
                line: 20,
                expected: "line twenty".into(),
                found: Some("line twenty, mine".into()),
            }],
        }],
    }
}

fn draw(modal: &RevertModal, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal
        .draw(|f| modal.render(f.area(), f.buffer_mut()))
        .unwrap();
    terminal.backend().to_string()
}

fn press(modal: &mut RevertModal, code: KeyCode) -> RevertKey {
    modal.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
}

const WHAT: &str = "hunk 2 of 3 in src/f.txt (the edit_file call c2)";

#[test]
fn the_preview_shows_the_reverse_diff_and_the_keys() {
    let mut modal = RevertModal::asking(target());
    assert!(draw(&modal, 80, 16).contains("Working out what the revert would do"));
    modal.show(WHAT, ready(None), false);
    insta::assert_snapshot!("revert_preview", draw(&modal, 80, 16));
    let RevertKey::Send(UserCommand::Revert {
        target: sent,
        stamp,
    }) = press(&mut modal, KeyCode::Char('y'))
    else {
        panic!("y applies")
    };
    assert_eq!((sent, stamp.as_str()), (target(), "0123"));
    assert!(draw(&modal, 80, 16).contains("Reverting…"));
}

#[test]
fn a_protected_path_and_a_moved_file_are_said_before_anything_is_written() {
    let mut modal = RevertModal::asking(target());
    modal.show(WHAT, ready(Some("changes a git hook (.git/hooks/x)")), true);
    let screen = draw(&modal, 80, 16);
    assert!(screen.contains("⚠ changes a git hook"), "{screen}");
    assert!(
        screen.contains("The files changed since the preview"),
        "{screen}"
    );
}

#[test]
fn a_conflict_shows_expected_and_found_lines_and_only_closes() {
    let mut modal = RevertModal::asking(target());
    modal.show(WHAT, conflict(), false);
    insta::assert_snapshot!("revert_conflict", draw(&modal, 80, 14));
    assert!(matches!(
        press(&mut modal, KeyCode::Char('y')),
        RevertKey::Open
    ));
    assert!(matches!(
        press(&mut modal, KeyCode::Enter),
        RevertKey::Close
    ));
    assert!(matches!(press(&mut modal, KeyCode::Esc), RevertKey::Close));
}
