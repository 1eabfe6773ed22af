//! The queue above the input: what waits for the next step, for after the turn, the user's
//! commands, the selection and the paused state, at 80 and 160 columns.

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::{app, ctrl, draw, key, type_text};
use crate::bus::{AgentEvent, EndReason, StepId};

fn busy_with_a_queue() -> crate::tui::app::App {
    let mut app = app(Instant::now());
    type_text(&mut app, "fix the failing test");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "also look at the README");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "!!git status --short");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "then commit it");
    app.handle_input(&ctrl('q'));
    app.take_commands();
    app
}

#[test]
fn the_queue_shows_each_entry_and_where_it_waits() {
    let mut app = busy_with_a_queue();
    insta::assert_snapshot!("queue_80x24", draw(&app, 80, 24));
    app.handle_input(&Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)));
    app.handle_input(&Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)));
    insta::assert_snapshot!("queue_selected_160x30", draw(&app, 160, 30));
}

#[test]
fn a_turn_that_did_not_finish_pauses_the_queue_and_says_so() {
    let mut app = busy_with_a_queue();
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::Failed("the provider is down".into()),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    assert!(
        app.take_commands().is_empty(),
        "nothing sent after a failure"
    );
    insta::assert_snapshot!("queue_paused_80x24", draw(&app, 80, 24));
}
