//! Plan mode in the TUI: the plan card, its keys, and Shift+Tab cycling the modes.

#![allow(clippy::unwrap_used)]

use crate::bus::ReportEvent;
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::{app, draw, key, press, screen_text, tool, type_text};
use crate::bus::Mode;
use crate::bus::{AgentEvent, CallId, ToolEvent};

fn held_plan() -> AgentEvent {
    tool(ToolEvent::AwaitingApproval {
        call: CallId::new("p1"),
        name: "exit_plan_mode".into(),
        subject: "1. Read `src/lib.rs` and the failing test.\n2. Fix `add` to handle overflow.\n3. Run `cargo test` and report."
            .into(),
        why: "the model proposes this plan; nothing was changed while planning".into(),
        sandboxed: false,
        reach: None,
        prefix: String::new(),
        decisions: crate::bus::DecisionKind::offered(crate::bus::EXIT_PLAN_MODE, "", false, false),
        dangers: Vec::new(),
        diff: None,
    })
}

#[test]
fn plan_card_at_80_and_160_columns() {
    let mut app = app(Instant::now());
    app.apply(&held_plan());
    let narrow = draw(&app, 80, 24);
    insta::assert_snapshot!("plan_card_80x24", narrow);
    insta::assert_snapshot!("plan_card_160x30", draw(&app, 160, 30));
}

#[test]
fn a_plan_is_approved_into_the_chosen_mode_or_answered_with_feedback() {
    use crate::bus::{Decision, UserCommand};
    let mut app = app(Instant::now());
    app.apply(&held_plan());
    for c in ['a', 'p', 'u'] {
        press(&mut app, KeyCode::Char(c));
    }
    assert!(app.take_commands().is_empty(), "no rule keys on a plan");
    assert_eq!(
        app.composer.text(),
        "apu",
        "keys that are not the plan's are text"
    );
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Char('y'));
    let sent = app.take_commands();
    assert!(
        matches!(
            sent.as_slice(),
            [UserCommand::Decide {
                decision: Decision::ApprovePlan { mode: Mode::Auto },
                ..
            }]
        ),
        "{sent:?}"
    );
    let mut app = self::app(Instant::now());
    app.apply(&held_plan());
    press(&mut app, KeyCode::Char('m'));
    type_text(&mut app, "also update the docs");
    app.handle_input(&key(KeyCode::Enter));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Decide { decision: Decision::Deny { message: Some(m) }, .. }] if m == "also update the docs"),
        "{sent:?}"
    );
}

#[test]
fn shift_tab_cycles_the_modes_without_never_and_each_switch_is_a_line() {
    use crate::bus::UserCommand;
    let t0 = Instant::now();
    let mut app = app(t0);
    let mut seen = Vec::new();
    for _ in 0..5 {
        app.handle_input(&Event::Key(KeyEvent::new(
            KeyCode::BackTab,
            KeyModifiers::SHIFT,
        )));
        for command in app.take_commands() {
            if let UserCommand::SetMode { mode } = command {
                seen.push(mode);
            }
        }
    }
    assert_eq!(
        seen,
        [
            Mode::Auto,
            Mode::Plan,
            Mode::Ask,
            Mode::AutoEdit,
            Mode::Auto
        ]
    );
    let screen = screen_text(&app, 100, 30);
    assert!(screen.contains("│ auto · "), "{screen}");
    // Switches in a row are one line: the mode they ended on.
    assert!(screen.contains("mode → auto"), "{screen}");
    assert_eq!(screen.matches("mode →").count(), 1, "{screen}");
    // The agent's confirmations, arriving late, do not move the status line back.
    for mode in &seen[..4] {
        app.apply(&AgentEvent::Report(ReportEvent::ModeChanged {
            mode: *mode,
        }));
    }
    assert!(screen_text(&app, 100, 30).contains("│ auto · "));
    // A switch of the agent's own (an approved plan) shows too.
    app.apply(&AgentEvent::Report(ReportEvent::ModeChanged {
        mode: Mode::Auto,
    }));
    app.apply(&AgentEvent::Report(ReportEvent::ModeChanged {
        mode: Mode::Ask,
    }));
    let screen = screen_text(&app, 100, 30);
    assert!(
        screen.contains("│ ask · ") && screen.contains("mode → ask"),
        "{screen}"
    );
}

#[test]
fn the_slash_palette_lists_matches_and_tab_completes_at_80_and_160_columns() {
    let mut app = app(Instant::now());
    type_text(&mut app, "/co");
    let narrow = screen_text(&app, 80, 24);
    assert!(
        narrow.contains("/compact") && narrow.contains("/cost"),
        "{narrow}"
    );
    insta::assert_snapshot!("palette_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("palette_160x30", draw(&app, 160, 30));
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.composer.text(), "/compact ");
    assert!(
        !screen_text(&app, 80, 24).contains(" commands "),
        "arguments: palette closed"
    );
    // `/mode` alone opens the mode picker, not an error.
    app.composer.set_text("/mode");
    app.handle_input(&key(KeyCode::Enter));
    let screen = screen_text(&app, 100, 30);
    assert!(screen.contains("Permission mode"), "{screen}");
    assert!(!screen.contains("unknown mode"), "{screen}");
}
