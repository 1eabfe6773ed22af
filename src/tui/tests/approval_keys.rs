//! The approval prompt's keys: what each answers, what falls through it, a deny message,
//! Esc, and a prompt that opens while the user types (the typing lands in the input).

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};

use super::{app, held_rm, key, press, screen_text, scripted_session, type_text};
use crate::bus::{AgentEvent, Decision, StepId, UserCommand};
use crate::tui::app::App;

#[test]
fn approval_keys_send_decisions_and_other_keys_are_text() {
    let mut app = app(Instant::now());
    app.apply(&held_rm());
    type_text(&mut app, "hello");
    assert!(app.take_commands().is_empty());
    assert_eq!(app.composer.text(), "hello", "typing goes to the input");
    // A dangerous command has no "always" key: `a`, even alone, is text.
    press(&mut app, KeyCode::Char('a'));
    assert!(app.take_commands().is_empty());
    assert_eq!(app.composer.text(), "helloa");
    press(&mut app, KeyCode::Char('y'));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Decide { call, decision: Decision::Approve }]
            if call.as_str() == "d1"),
        "{sent:?}"
    );
    assert!(!screen_text(&app, 80, 24).contains("Allow bash?"));
}

#[test]
fn every_approval_key_the_help_lists_does_what_it_says() {
    use crate::tui::keymap::{BINDINGS, Scope};
    for binding in BINDINGS.iter().filter(|b| b.scope == Scope::Approval) {
        for k in binding.keys {
            let mut app = app(Instant::now());
            let mut held = held_rm();
            // `u` is offered for sandboxed commands only, `a` and `p` for commands that are
            // not dangerous.
            if let AgentEvent::Tool(crate::bus::ToolEvent::AwaitingApproval {
                sandboxed,
                subject,
                why,
                prefix,
                dangers,
                decisions,
                ..
            }) = &mut held
            {
                *sandboxed = true;
                *subject = "touch build/a".into();
                *why = "changes files".into();
                *prefix = "touch".into();
                dangers.clear();
                *decisions = crate::bus::DecisionKind::offered("bash", "touch", false, true);
            }
            app.apply(&held);
            app.press_alone(KeyEvent::new(k.code, k.mods));
            let sent = app.take_commands();
            let screen = screen_text(&app, 80, 24);
            match k.code {
                KeyCode::Char('m') => assert!(sent.is_empty() && screen.contains("Allow bash?")),
                // Widening answers ask once more; y there decides.
                KeyCode::Char('a' | 'p') => {
                    assert!(
                        sent.is_empty() && screen.contains("yes, allow it"),
                        "{screen}"
                    );
                    press(&mut app, KeyCode::Char('y'));
                    assert!(
                        matches!(app.take_commands().as_slice(), [UserCommand::Decide { .. }]),
                        "{}",
                        k.label()
                    );
                }
                KeyCode::PageUp | KeyCode::PageDown => {
                    assert!(sent.is_empty() && screen.contains("Allow bash?"))
                }
                _ => assert!(
                    matches!(sent.as_slice(), [UserCommand::Decide { .. }]),
                    "{}: {sent:?}",
                    k.label()
                ),
            }
        }
    }
}

#[test]
fn layers_take_keys_top_first_and_the_prompt_lets_paging_through() {
    let mut app = scripted_session(Instant::now());
    app.apply(&held_rm());
    // PgUp is not the prompt's: it falls through and scrolls the transcript behind it.
    let before = screen_text(&app, 100, 30);
    app.handle_input(&key(KeyCode::PageUp));
    let after = screen_text(&app, 100, 30);
    assert!(after.contains("Allow bash?"));
    assert_ne!(before, after, "the transcript scrolled");
    press(&mut app, KeyCode::Char('n'));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Decide {
            decision: Decision::Deny { .. },
            ..
        }]
    ));

    // The help open when a call is held stays below the prompt: the prompt takes the keys,
    // then the help is back.
    press(&mut app, KeyCode::Char('?'));
    let mut held = held_rm();
    if let AgentEvent::Tool(crate::bus::ToolEvent::AwaitingApproval { call, .. }) = &mut held {
        *call = crate::bus::CallId::new("d2");
    }
    // A pause after the last key, so the prompt takes keys at once.
    app.set_now(app.now + Duration::from_secs(1));
    app.apply(&held);
    assert!(screen_text(&app, 100, 30).contains("Allow bash?"));
    press(&mut app, KeyCode::Char('y'));
    let sent = app.take_commands();
    assert!(
        matches!(
            sent.as_slice(),
            [UserCommand::Decide {
                decision: Decision::Approve,
                ..
            }]
        ),
        "{sent:?}"
    );
    let screen = screen_text(&app, 100, 30);
    assert!(screen.contains(" Keys ") && !screen.contains("Allow bash?"));
    press(&mut app, KeyCode::Char('x'));
    assert!(!screen_text(&app, 100, 30).contains(" Keys "));
    assert!(
        app.composer.is_empty(),
        "the key that closed the help typed nothing"
    );
}

#[test]
fn deny_with_a_message() {
    let mut app = app(Instant::now());
    app.apply(&held_rm());
    press(&mut app, KeyCode::Char('m'));
    type_text(&mut app, "use cargo clean");
    assert!(screen_text(&app, 80, 24).contains("use cargo clean"));
    app.handle_input(&key(KeyCode::Enter));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::Decide { decision: Decision::Deny { message: Some(m) }, .. }] if m == "use cargo clean")
    );
}

/// Types `text` one key every `gap` from `start`; returns when the last key was typed.
fn type_slowly(app: &mut App, text: &str, start: Instant, gap: Duration) -> Instant {
    let mut at = start;
    for c in text.chars() {
        app.set_now(at);
        app.handle_input(&key(KeyCode::Char(c)));
        at += gap;
    }
    at - gap
}

#[test]
fn a_prompt_opening_while_typing_answers_nothing_and_the_typing_lands_in_the_input() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    // "any news?" as a user types it: the prompt opens after the `n` of "any" …
    let at = type_slowly(&mut app, "any", t0, Duration::from_millis(120));
    app.set_now(at + Duration::from_millis(60));
    app.apply(&held_rm());
    assert!(screen_text(&app, 80, 24).contains("you are typing"));
    // … and the burst goes on (` news? any` answers nothing: `y`, `n`, `a`, Esc would).
    let at = type_slowly(
        &mut app,
        " news? any",
        at + Duration::from_millis(120),
        Duration::from_millis(120),
    );
    app.set_now(at + Duration::from_millis(10));
    app.handle_input(&key(KeyCode::Esc));
    assert!(
        app.take_commands().is_empty(),
        "no decision, no interrupt during the burst"
    );
    assert_eq!(app.composer.text(), "any news? any");
    assert!(app.approval.is_open());
    // After a pause the prompt takes keys, and says which.
    app.set_now(at + Duration::from_millis(600));
    app.expire();
    assert!(screen_text(&app, 80, 24).contains("approve once"));
    press(&mut app, KeyCode::Char('n'));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Decide {
            decision: Decision::Deny { .. },
            ..
        }]
    ));
    assert_eq!(
        app.composer.text(),
        "any news? any",
        "the draft is untouched"
    );
}

#[test]
fn esc_on_the_prompt_denies_without_interrupting_the_turn() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    app.apply(&held_rm());
    press(&mut app, KeyCode::Esc);
    let sent = app.take_commands();
    assert!(
        matches!(
            sent.as_slice(),
            [UserCommand::Decide {
                decision: Decision::Deny { .. },
                ..
            }]
        ),
        "{sent:?}"
    );
    assert!(!screen_text(&app, 80, 24).contains("Allow bash?"));
    // Esc inside a deny message goes back to the keys, it does not deny.
    let mut app = self::app(Instant::now());
    app.apply(&held_rm());
    press(&mut app, KeyCode::Char('m'));
    press(&mut app, KeyCode::Esc);
    assert!(app.take_commands().is_empty());
    assert!(screen_text(&app, 80, 24).contains("deny with a message"));
}
