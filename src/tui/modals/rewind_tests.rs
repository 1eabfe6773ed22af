//! The `/undo` confirmation and the `/rewind` picker as the user sees them, and the keys that
//! lead from one to the other and to the commands sent.
#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, ReportEvent, TimeTravelEvent};
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::bus::Mode;
use crate::bus::{AgentEvent, FileConflict, Restore, RestorePlan, RewindPoint, UserCommand};
use crate::tool_output::FileChange;
use crate::tui::TuiOptions;
use crate::tui::app::App;

fn app() -> App {
    App::new(
        &TuiOptions {
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode: Mode::AutoEdit,
            read_only: false,
            initial_prompt: None,
            sandbox_off: None,
            trust: None,
            welcome: None,
            command_sources: None,
            history: Vec::new(),
        },
        Instant::now(),
    )
}

fn draw(app: &App, w: u16, h: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    terminal.backend().clone()
}

/// A key pressed alone, after a pause (see `App::press_alone`).
fn press(app: &mut App, code: KeyCode) {
    app.press_alone(KeyEvent::new(code, KeyModifiers::NONE));
}

fn type_line(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_input(&Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
    }
    app.handle_input(&Event::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE,
    )));
}

fn undo_plan() -> RestorePlan {
    RestorePlan {
        files: vec![
            FileChange {
                path: "src/lib.rs".into(),
                diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n fn main() {\n-    run(2);\n+    run(1);\n"
                    .into(),
                replacements: 1,
                ..FileChange::default()
            },
            FileChange {
                path: "made.txt".into(),
                diff: "--- a/made.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-made\n".into(),
                replacements: 1,
                ..FileChange::default()
            },
        ],
        conflicts: vec![FileConflict {
            path: "notes.md".into(),
            why: "changed since the turn (it is no longer what cairn left); left as it is".into(),
        }],
        note: None,
    }
}

#[test]
fn undo_asks_for_a_plan_and_shows_it_to_confirm() {
    let mut app = app();
    type_line(&mut app, "/undo");
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Restore {
            what: Restore::Undo,
            apply: false
        }]
    ));
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan {
        what: Restore::Undo,
        plan: undo_plan(),
    }));
    insta::assert_snapshot!(draw(&app, 100, 24));
    // y applies the same restore; the layer closes.
    press(&mut app, KeyCode::Char('y'));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Restore {
            what: Restore::Undo,
            apply: true
        }]
    ));
    assert!(app.layers.is_empty());
}

/// A file name the model chose is shown, not obeyed: an OSC 52 clipboard write, a newline
/// that would forge a line of its own and a zero-width space all show as markers.
#[test]
fn undo_confirmation_shows_hostile_file_names_escaped() {
    let mut app = app();
    type_line(&mut app, "/undo");
    app.take_commands();
    let mut plan = undo_plan();
    plan.files[1].path = "x\u{1b}]52;c;ZWNobyBoaQ==\u{7}\n\u{2713} restored all\u{200b}.txt".into();
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan {
        what: Restore::Undo,
        plan,
    }));
    let screen = draw(&app, 140, 24).to_string();
    assert!(screen.contains("x<U+001B>]52;c;"), "{screen}");
    assert!(screen.contains("<U+000A>"), "{screen}");
    assert!(screen.contains("<U+200B>.txt"), "{screen}");
    assert!(
        !screen
            .lines()
            .any(|l| l.trim_start_matches(['│', ' ']).starts_with("✓ restored")),
        "{screen}"
    );
}

#[test]
fn undo_is_refused_while_the_agent_works() {
    let mut app = app();
    type_line(&mut app, "do something");
    app.take_commands();
    type_line(&mut app, "/undo");
    assert!(app.take_commands().is_empty());
    let screen = draw(&app, 100, 24).to_string();
    assert!(screen.contains("/undo waits for the agent"), "{screen}");
}

fn points() -> Vec<RewindPoint> {
    vec![
        RewindPoint {
            at: 2,
            step: 7,
            text: "now add tests".into(),
            changes: 1,
            // A fixed time: the agent labels it (local time), the picker shows it as it is.
            when: Some("09:41".into()),
        },
        RewindPoint {
            at: 0,
            step: 0,
            text: "rename the crate\nand fix the docs".into(),
            changes: 2,
            when: Some("2026-11-29 17:05".into()),
        },
    ]
}

#[test]
fn rewind_picks_a_message_then_what_to_restore() {
    let mut app = app();
    type_line(&mut app, "/rewind");
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::ListRewindPoints]
    ));
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints {
        points: points(),
    }));
    insta::assert_snapshot!("rewind_picker", draw(&app, 100, 20));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("rewind_choice", draw(&app, 100, 20));
    // Both: the files are shown to confirm first.
    press(&mut app, KeyCode::Char('b'));
    let what = Restore::Rewind {
        at: 0,
        files: true,
        conversation: true,
    };
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Restore { what: w, apply: false }] if *w == what),
        "{sent:?}"
    );
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan {
        what: what.clone(),
        plan: undo_plan(),
    }));
    let screen = draw(&app, 100, 24).to_string();
    assert!(
        screen.contains("Rewind files and conversation to before “rename the crate …”"),
        "{screen}"
    );
    press(&mut app, KeyCode::Char('y'));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Restore { what: w, apply: true }] if *w == what),
        "{sent:?}"
    );
}

#[test]
fn rewinding_the_conversation_only_needs_no_confirmation_and_refills_the_input() {
    let mut app = app();
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints {
        points: points(),
    }));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('c'));
    let sent = app.take_commands();
    assert!(
        matches!(
            sent.as_slice(),
            [UserCommand::Restore {
                what: Restore::Rewind {
                    at: 2,
                    files: false,
                    conversation: true
                },
                apply: true
            }]
        ),
        "{sent:?}"
    );
    assert!(app.layers.is_empty());
    app.apply(&AgentEvent::Conversation(ConversationEvent::Reset));
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::Rewound {
        at: 2,
        text: "now add tests".into(),
    }));
    assert_eq!(app.composer.text(), "now add tests");
    let screen = draw(&app, 100, 24).to_string();
    assert!(screen.contains("rewound"), "{screen}");
}

#[test]
fn a_rewind_with_nothing_to_restore_closes_the_picker_with_the_reason() {
    let mut app = app();
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints {
        points: points(),
    }));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('f'));
    assert_eq!(app.take_commands().len(), 1);
    assert!(!app.layers.is_empty(), "waiting for the plan");
    app.apply(&AgentEvent::Report(ReportEvent::Warning {
        message: "nothing to restore: no file changed since that message".into(),
    }));
    assert!(app.layers.is_empty());
    let screen = draw(&app, 100, 24).to_string();
    assert!(screen.contains("nothing to restore"), "{screen}");
}
