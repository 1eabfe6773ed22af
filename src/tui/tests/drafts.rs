//! Drafts are never lost and never in the way: a large paste shows as a placeholder and is
//! sent whole, Ctrl+C on an idle draft clears it and Ctrl+Z takes that back.

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode};

use super::{app, ctrl, key, screen_text, type_text};
use crate::bus::UserCommand;
use crate::tui::app::App;

#[test]
fn a_large_paste_is_a_placeholder_sent_whole() {
    let mut app = app(Instant::now());
    type_text(&mut app, "look: ");
    let pasted: String = (1..=600).map(|n| format!("line {n}\n")).collect();
    app.handle_input(&Event::Paste(pasted.clone()));
    type_text(&mut app, " thanks");
    assert_eq!(app.composer.text(), "look: [pasted 600 lines #1] thanks");
    let screen = screen_text(&app, 80, 24);
    assert!(screen.contains("[pasted 600 lines #1]"), "{screen}");
    assert!(!screen.contains("line 599"), "{screen}");
    app.handle_input(&key(KeyCode::Enter));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Submit { text, .. }] if *text == format!("look: {pasted} thanks")),
        "{sent:?}"
    );
    // A small paste is text as it is.
    app.handle_input(&Event::Paste("two\nlines".into()));
    assert_eq!(app.composer.text(), "two\nlines");
}

#[test]
fn ctrl_c_clears_an_idle_draft_and_ctrl_z_brings_it_back() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.handle_input(&Event::Paste("x\n".repeat(600)));
    app.handle_input(&ctrl('c'));
    assert!(app.composer.is_empty());
    assert!(!app.should_quit());
    app.handle_input(&ctrl('z'));
    assert_eq!(app.composer.full_text(), "x\n".repeat(600));
    // Twice quits, as always.
    app.set_now(t0 + Duration::from_secs(5));
    app.handle_input(&ctrl('c'));
    app.handle_input(&ctrl('c'));
    assert!(app.should_quit());
}

#[test]
fn a_failed_message_is_sent_again_by_retry_whole_and_once() {
    use crate::bus::{AgentEvent, EndReason, StepId};
    let mut app = app(Instant::now());
    type_text(&mut app, "second");
    app.handle_input(&key(KeyCode::Enter));
    app.take_commands();
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "second".into(),
        images: vec![],
        files: vec![],
        typed: None,
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::Failed("502 Bad Gateway".into()),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    assert!(screen_text(&app, 120, 24).contains("/retry (Ctrl+R) sends your message again"));
    app.handle_input(&ctrl('r'));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Submit { text, .. }] if text == "second"),
        "{sent:?}"
    );
    assert!(app.composer.is_empty(), "the draft is untouched");
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    // Nothing failed since: nothing to retry.
    type_text(&mut app, "/retry");
    app.handle_input(&key(KeyCode::Enter));
    assert!(app.take_commands().is_empty());
}

#[test]
fn a_command_is_shown_as_typed_not_as_its_expansion() {
    use crate::bus::AgentEvent;
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "You are asked to write AGENTS.md for this repository. Read the build files…".into(),
        images: vec![],
        files: vec![],
        typed: Some("/init keep it short".into()),
    }));
    let screen = screen_text(&app, 100, 24);
    assert!(screen.contains("/init keep it short"), "{screen}");
    assert!(!screen.contains("write AGENTS.md for this"), "{screen}");
}

#[test]
fn up_brings_back_what_was_sent_in_this_directory_before() {
    let mut app = App::new(
        &crate::tui::TuiOptions {
            history: vec!["run the tests".into(), "fix the flaky one".into()],
            ..super::options()
        },
        Instant::now(),
    );
    app.handle_input(&key(KeyCode::Up));
    assert_eq!(app.composer.text(), "fix the flaky one");
    app.handle_input(&key(KeyCode::Up));
    assert_eq!(app.composer.text(), "run the tests");
}
