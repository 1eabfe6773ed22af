//! Tests of the revert confirmation: what it shows for a clean revert and for a conflict, and
//! which keys send what.
#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, TimeTravelEvent};
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
        shown: None,
    }
}

fn ready(warning: Option<&str>) -> RevertPlan {
    let diff = crate::fs::diff::diff_files(
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

fn press(modal: &mut RevertModal, code: KeyCode) -> LayerOutcome {
    modal.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
}

const WHAT: &str = "hunk 2 of 3 of the edit of src/f.txt";

#[test]
fn the_preview_shows_the_reverse_diff_and_the_keys() {
    let mut modal = RevertModal::asking(target());
    assert!(draw(&modal, 80, 16).contains("Working out what the revert would do"));
    modal.show(WHAT, ready(None), false);
    insta::assert_snapshot!("revert_preview", draw(&modal, 80, 16));
    // y asks once more; n goes back; y, y applies.
    assert_eq!(press(&mut modal, KeyCode::Char('y')), LayerOutcome::Open);
    let screen = draw(&modal, 80, 16);
    assert!(
        screen.contains("1 file will change on disk now"),
        "{screen}"
    );
    assert!(screen.contains("yes, revert"), "{screen}");
    assert_eq!(press(&mut modal, KeyCode::Char('n')), LayerOutcome::Open);
    assert!(draw(&modal, 80, 16).contains("apply…"));
    assert_eq!(press(&mut modal, KeyCode::Enter), LayerOutcome::Open);
    let LayerOutcome::Send {
        command: UserCommand::Revert {
            target: sent,
            stamp,
        },
        close: false,
    } = press(&mut modal, KeyCode::Char('y'))
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
        LayerOutcome::Open
    ));
    assert!(matches!(
        press(&mut modal, KeyCode::Enter),
        LayerOutcome::Closed
    ));
    assert!(matches!(
        press(&mut modal, KeyCode::Esc),
        LayerOutcome::Closed
    ));
}

mod in_the_app {
    use std::time::Instant;

    use crossterm::event::Event;

    use super::*;
    use crate::bus::{AgentEvent, StepId, ToolEvent, ToolResult};
    use crate::tool_output::ToolOutput;
    use crate::tui::TuiOptions;
    use crate::tui::app::{App, Focus};

    fn change_diff() -> String {
        crate::fs::diff::diff_files(b"a\nb\n", b"a\nc\n", "src/f.txt", false).text
    }

    fn app_with_an_edit() -> App {
        let options = TuiOptions {
            provider: "p".into(),
            model: "m".into(),
            mode: crate::bus::Mode::AutoEdit,
            read_only: false,
            initial_prompt: None,
            sandbox_off: None,
            trust: None,
            welcome: None,
            command_sources: None,
            history: Vec::new(),
        };
        let mut app = App::new(&options, Instant::now());
        app.apply(&AgentEvent::Tool(ToolEvent::Finished {
            call: CallId::new("c2"),
            name: "edit_file".into(),
            result: ToolResult::ok(ToolOutput::FileChanged(FileChange {
                path: "src/f.txt".into(),
                diff: change_diff(),
                added: 1,
                removed: 1,
                ..FileChange::default()
            })),
        }));
        app.set_focus(Focus::Diffs);
        app
    }

    fn press(app: &mut App, c: char) {
        app.press_alone(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }

    fn screen(app: &App) -> String {
        let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
        terminal.draw(|f| app.render(f)).unwrap();
        terminal.backend().to_string()
    }

    #[test]
    fn typing_in_the_diff_pane_goes_to_the_input_and_reverts_nothing() {
        // `/redo yes`, `try`, `really`: written at once, at any time after a preview opened.
        for text in ["/redo yes", "try", "really", "ry"] {
            let mut app = app_with_an_edit();
            app.set_now(app.now + std::time::Duration::from_secs(2));
            for c in text.chars() {
                app.handle_input(&Event::Key(KeyEvent::new(
                    KeyCode::Char(c),
                    KeyModifiers::NONE,
                )));
            }
            app.set_now(app.now + std::time::Duration::from_secs(1));
            app.expire();
            assert!(app.take_commands().is_empty(), "{text}");
            assert_eq!(app.composer.text(), text);
            assert_eq!(app.focus(), Focus::Input);
        }
    }

    #[test]
    fn esc_first_unselects_the_hunk_then_leaves_the_pane() {
        let mut app = app_with_an_edit();
        press(&mut app, '}');
        assert_eq!(app.diffs.hunk(), Some(0));
        let esc = Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        app.handle_input(&esc);
        assert_eq!((app.diffs.hunk(), app.focus()), (None, Focus::Diffs));
        app.handle_input(&esc);
        assert_eq!(app.focus(), Focus::Input);
    }

    #[test]
    fn a_replay_reverts_nothing() {
        let mut app = app_with_an_edit();
        app.read_only = true;
        press(&mut app, 'R');
        assert!(app.take_commands().is_empty());
    }

    #[test]
    fn while_the_model_works_a_revert_is_refused_and_says_why() {
        let mut app = app_with_an_edit();
        app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
            step: StepId(1),
        }));
        press(&mut app, 'R');
        assert!(
            app.take_commands().is_empty(),
            "nothing is asked of the agent"
        );
        assert!(
            screen(&app).contains("wait until the model stops, or press Esc"),
            "{}",
            screen(&app)
        );
    }

    #[test]
    fn r_asks_for_a_preview_y_confirms_it_and_the_revert_becomes_a_change() {
        let mut app = app_with_an_edit();
        press(&mut app, '}');
        press(&mut app, 'r');
        let wanted = RevertTarget {
            source: ChangeSource::Call(CallId::new("c2")),
            file: Some(0),
            hunk: Some(0),
            shown: Some((0, crate::bus::diff_fingerprint(&change_diff()))),
        };
        let commands = app.take_commands();
        assert!(
            matches!(commands.as_slice(), [UserCommand::PreviewRevert { target }] if *target == wanted),
            "{commands:?}"
        );
        assert!(screen(&app).contains("Working out what the revert would do"));
        app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview {
            target: wanted.clone(),
            what: "hunk 1 of 1 of the edit of src/f.txt".into(),
            plan: ready(None),
            moved: false,
        }));
        assert!(screen(&app).contains("y apply…"));
        press(&mut app, 'y');
        assert!(app.take_commands().is_empty(), "one y reverts nothing");
        press(&mut app, 'y');
        let commands = app.take_commands();
        assert!(
            matches!(commands.as_slice(), [UserCommand::Revert { stamp, .. }] if stamp == "0123"),
            "{commands:?}"
        );
        app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::Reverted {
            id: "revert-1".into(),
            target: wanted,
            what: "hunk 1 of 1 of the edit of src/f.txt".into(),
            changes: vec![FileChange {
                path: "src/f.txt".into(),
                diff: "--- a/src/f.txt\n+++ b/src/f.txt\n@@ -1,2 +1,2 @@\n a\n-c\n+b\n".into(),
                added: 1,
                removed: 1,
                ..FileChange::default()
            }],
        }));
        let shown = screen(&app);
        assert!(!shown.contains("apply…"), "the modal closed:\n{shown}");
        assert!(
            shown.contains("reverted hunk 1 of 1 of the edit of src/f.txt"),
            "{shown}"
        );
        // The revert is a revert, not a second edit.
        assert!(shown.contains("1 edit · 1 revert · 1 file"), "{shown}");
        // The revert's own entry is selected and can be reverted in turn.
        press(&mut app, 'R');
        let commands = app.take_commands();
        assert!(
            matches!(
                commands.as_slice(),
                [UserCommand::PreviewRevert { target }]
                    if target.source == ChangeSource::Revert("revert-1".into())
            ),
            "{commands:?}"
        );
    }
}
