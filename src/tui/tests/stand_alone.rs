//! The stand-alone rule in the app, on an injected clock: what a burst of typing and a lone
//! key do to every prompt and pane (the rule itself is tested in `stand_alone_tests.rs`).

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::{app, held_rm, key, press, screen_text, scripted_session};
use crate::bus::{AgentEvent, Decision, StepId, UserCommand};
use crate::tui::app::{App, Focus};
use crate::tui::stand_alone::{AFTER, DEAD_TIME};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `text` written at once at `at` (every key at the same instant), then a second of quiet
/// with the frames the loop would run.
fn burst(app: &mut App, text: &str, at: Instant) {
    app.set_now(at);
    for c in text.chars() {
        app.handle_input(&key(KeyCode::Char(c)));
    }
    app.set_now(at + AFTER);
    app.expire();
    app.set_now(at + Duration::from_secs(1));
    app.expire();
}

#[test]
fn a_burst_at_any_offset_after_a_prompt_answers_nothing_and_lands_in_the_input() {
    for offset in (0..=1500).step_by(100) {
        let t0 = Instant::now();
        let mut app = app(t0);
        app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
            step: StepId(1),
        }));
        let mut held = held_rm();
        if let AgentEvent::Tool(crate::bus::ToolEvent::AwaitingApproval { dangers, .. }) = &mut held
        {
            // Not dangerous: `a` and `p` are offered, so every key of the prompt is live.
            dangers.clear();
        }
        app.set_now(t0 + ms(3000));
        app.apply(&held);
        burst(&mut app, "my draft: any plum yes", t0 + ms(3000 + offset));
        assert!(app.take_commands().is_empty(), "offset {offset} ms");
        assert!(app.approval.is_open(), "offset {offset} ms");
        assert_eq!(app.composer.text(), "my draft: any plum yes");
        assert!(
            !app.approval.in_step(),
            "no message, no confirmation opened"
        );
    }
}

#[test]
fn a_lone_key_acts_only_after_the_dead_time_and_its_window() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.apply(&held_rm());
    // In the dead time: text.
    app.set_now(t0 + DEAD_TIME - ms(1));
    app.handle_input(&key(KeyCode::Char('n')));
    app.set_now(t0 + DEAD_TIME + ms(200));
    app.expire();
    assert!(app.take_commands().is_empty());
    assert_eq!(app.composer.text(), "n");
    // After a pause: it waits its window, then acts (the frame loop asks when).
    let at = t0 + Duration::from_secs(2);
    app.set_now(at);
    app.handle_input(&key(KeyCode::Char('n')));
    assert!(app.take_commands().is_empty(), "it waits for a follower");
    assert_eq!(app.next_tick(), Some(at + AFTER));
    app.set_now(at + AFTER);
    app.expire();
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Decide {
            decision: Decision::Deny { .. },
            ..
        }]
    ));
    assert_eq!(app.composer.text(), "n", "the lone n typed nothing");
}

#[test]
fn the_diff_pane_scrolls_with_lone_keys_and_passes_typing_to_the_input() {
    let mut app = scripted_session(Instant::now());
    app.set_focus(Focus::Diffs);
    press(&mut app, KeyCode::Char('}'));
    assert_eq!(app.diffs.hunk(), Some(0), "a lone key acts");
    let at = app.now + Duration::from_secs(1);
    burst(&mut app, "try really", at);
    assert!(app.take_commands().is_empty(), "nothing reverted");
    assert_eq!(app.focus(), Focus::Input);
    assert_eq!(app.composer.text(), "try really");
}

#[test]
fn help_opens_on_a_lone_question_mark_and_typing_starting_with_one_is_text() {
    let mut app = app(Instant::now());
    press(&mut app, KeyCode::Char('?'));
    assert!(screen_text(&app, 100, 30).contains(" Keys "));
    press(&mut app, KeyCode::Esc);
    let at = app.now + Duration::from_secs(1);
    burst(&mut app, "?why", at);
    assert!(!screen_text(&app, 100, 30).contains(" Keys "));
    assert_eq!(app.composer.text(), "?why");
}

#[test]
fn esc_in_a_prompts_dead_time_neither_denies_nor_interrupts() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    app.apply(&held_rm());
    app.set_now(t0 + ms(100));
    app.handle_input(&key(KeyCode::Esc));
    assert!(app.take_commands().is_empty());
    assert!(app.approval.is_open());
}

#[test]
fn holding_j_in_the_diff_pane_scrolls_and_types_nothing() {
    let mut app = scripted_session(Instant::now());
    app.set_focus(Focus::Diffs);
    // Pressed alone, then repeated by the terminal (500 ms delay, 33 ms apart).
    let at = app.now + Duration::from_secs(1);
    app.set_now(at);
    app.handle_input(&key(KeyCode::Char('j')));
    app.set_now(at + AFTER);
    app.expire();
    let mut repeat = at + ms(500);
    for _ in 0..15 {
        app.set_now(repeat);
        app.handle_input(&key(KeyCode::Char('j')));
        app.expire();
        repeat += ms(33);
    }
    app.set_now(repeat + Duration::from_secs(1));
    app.expire();
    assert_eq!(app.focus(), Focus::Diffs, "the keys stayed with the pane");
    assert_eq!(app.composer.text(), "");
}

#[test]
fn a_slow_typists_message_started_after_the_dead_time_answers_nothing() {
    let t0 = Instant::now();
    let mut app = app(t0);
    // Their first message, at 150 ms a key: the rule learns the pace.
    let mut at = t0;
    for c in "fix the failing test".chars() {
        app.set_now(at);
        app.handle_input(&key(KeyCode::Char(c)));
        at += ms(150);
    }
    app.set_now(at);
    app.handle_input(&key(KeyCode::Enter));
    app.take_commands();
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    let shown = at + Duration::from_secs(5);
    app.set_now(shown);
    app.apply(&held_rm());
    // Past the dead time, at the same pace, with every frame the loop would run.
    let mut at = shown + DEAD_TIME + ms(100);
    for c in "no wait, yes".chars() {
        app.set_now(at);
        app.handle_input(&key(KeyCode::Char(c)));
        if let Some(due) = app.next_tick().filter(|due| *due < at + ms(150)) {
            app.set_now(due);
            app.expire();
        }
        at += ms(150);
    }
    app.set_now(at + Duration::from_secs(1));
    app.expire();
    assert!(app.take_commands().is_empty(), "the n denied");
    assert!(app.approval.is_open());
    assert_eq!(app.composer.text(), "no wait, yes");
}
