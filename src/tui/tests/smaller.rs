//! The smaller fixes of issue 31 item 11, each at 80 and 160 columns: Shift+Tab pressed
//! several times leaves one mode line, a command run with `u` says it ran unsandboxed, and
//! `q` quits a replay.

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::{app, command, draw, key, options, press, screen_text, tool};
use crate::bus::{AgentEvent, CallId, Decision, ToolEvent};
use crate::tui::app::App;

#[test]
fn shift_tab_pressed_several_times_leaves_one_mode_line() {
    let mut app = app(Instant::now());
    for _ in 0..3 {
        app.handle_input(&key(KeyCode::BackTab));
    }
    let screen = screen_text(&app, 80, 24);
    assert_eq!(screen.matches("mode →").count(), 1, "{screen}");
    insta::assert_snapshot!("mode_lines_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("mode_lines_160x30", draw(&app, 160, 30));
}

#[test]
fn a_command_run_with_u_says_it_ran_outside_the_sandbox() {
    let mut app = app(Instant::now());
    let call = CallId::new("c1");
    app.apply(&tool(ToolEvent::Requested {
        call: call.clone(),
        name: "bash".into(),
        args: serde_json::json!({"command": "cargo build"}),
    }));
    app.apply(&tool(ToolEvent::Decided {
        call: call.clone(),
        decision: Decision::ApproveUnsandboxed,
    }));
    app.apply(&tool(ToolEvent::Finished {
        call,
        name: "bash".into(),
        result: command("cargo build", "Finished\n", 0, 1200),
    }));
    let screen = screen_text(&app, 80, 24);
    assert!(screen.contains("ran outside the sandbox"), "{screen}");
    insta::assert_snapshot!("unsandboxed_card_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("unsandboxed_card_160x30", draw(&app, 160, 30));
}

#[test]
fn q_quits_a_replay_and_is_text_in_a_live_session() {
    let mut replay = App::new(
        &crate::tui::TuiOptions {
            read_only: true,
            ..options()
        },
        Instant::now(),
    );
    replay.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    press(&mut replay, KeyCode::Char('q'));
    assert!(replay.should_quit());
    let mut live = app(Instant::now());
    live.handle_input(&key(KeyCode::Tab));
    press(&mut live, KeyCode::Char('q'));
    assert!(!live.should_quit());
    assert_eq!(live.composer.text(), "q");
}

#[test]
fn feedback_on_a_plan_is_called_feedback_not_a_denial() {
    let mut app = app(Instant::now());
    let call = CallId::new("p1");
    app.apply(&tool(ToolEvent::Requested {
        call: call.clone(),
        name: crate::bus::EXIT_PLAN_MODE.into(),
        args: serde_json::json!({"plan": "1. do it"}),
    }));
    app.apply(&tool(ToolEvent::Decided {
        call: call.clone(),
        decision: Decision::Deny {
            message: Some("also update the docs".into()),
        },
    }));
    app.apply(&tool(ToolEvent::Finished {
        call,
        name: crate::bus::EXIT_PLAN_MODE.into(),
        result: crate::bus::ToolResult::error("the user answered with feedback"),
    }));
    let screen = screen_text(&app, 100, 24);
    assert!(
        screen.contains("your feedback: also update the docs"),
        "{screen}"
    );
    assert!(!screen.contains("denied"), "{screen}");
}

#[test]
fn the_plan_box_renders_markdown() {
    let mut app = app(Instant::now());
    app.apply(&tool(ToolEvent::AwaitingApproval {
        call: CallId::new("p1"),
        name: crate::bus::EXIT_PLAN_MODE.into(),
        subject: "## Plan\n\n1. **rename** `world`\n2. run the tests".into(),
        why: "the model proposes a plan".into(),
        sandboxed: false,
        reach: None,
        prefix: String::new(),
        decisions: crate::bus::DecisionKind::offered(crate::bus::EXIT_PLAN_MODE, "", false, false),
        dangers: Vec::new(),
        diff: None,
    }));
    let screen = screen_text(&app, 80, 24);
    assert!(
        !screen.contains("**rename**") && !screen.contains("`world`"),
        "{screen}"
    );
    assert!(screen.contains("1. rename world"), "{screen}");
    insta::assert_snapshot!("plan_box_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("plan_box_160x30", draw(&app, 160, 30));
}

#[test]
fn a_long_rewind_title_ends_with_an_ellipsis() {
    use crate::bus::{Restore, RestorePlan, RewindPoint};
    use crate::tui::modals::rewind::RestoreConfirm;
    let point = RewindPoint {
        at: 0,
        step: 0,
        text: "rename the crate everywhere, fix every doc link, bump the version and write the changelog entry for it".into(),
        changes: 1,
        when: None,
    };
    let confirm = RestoreConfirm::new(
        Restore::Rewind {
            at: 0,
            files: true,
            conversation: true,
        },
        &RestorePlan::default(),
        Some(&point),
    );
    for (w, h) in [(80, 16), (160, 16)] {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
        terminal
            .draw(|f| confirm.render(f.area(), f.buffer_mut()))
            .unwrap();
        let screen = terminal.backend().to_string();
        let title = screen
            .lines()
            .find(|l| l.contains("Rewind"))
            .unwrap_or_default();
        assert!(title.contains('…'), "{w}: {title}");
        insta::assert_snapshot!(format!("rewind_title_{w}"), screen);
    }
}
