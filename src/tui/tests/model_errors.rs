//! How the TUI shows model errors: a retried reply starts over, a kept partial says it is
//! incomplete, a failure's summary comes first.

#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, ReportEvent};
use std::time::Instant;

use super::{app, screen_text};
use crate::bus::{AgentEvent, EndReason, StepId};

fn streamed(app: &mut super::App, text: &str) {
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::TextDelta {
        step: StepId(1),
        text: text.into(),
    }));
}

#[test]
fn a_retry_drops_the_cut_attempts_text_and_the_reply_streams_again() {
    let mut app = app(Instant::now());
    streamed(&mut app, "the first attempt got this far");
    assert!(screen_text(&app, 100, 24).contains("the first attempt got this far"));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Retrying {
        attempt: 1,
        wait_ms: 500,
        reason: "the answer was cut off (the connection dropped before the reply was complete)"
            .into(),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::TextDelta {
        step: StepId(1),
        text: "the whole answer".into(),
    }));
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step: StepId(1),
            text: "the whole answer".into(),
            reasoning: String::new(),
        },
    ));
    let screen = screen_text(&app, 100, 24);
    assert!(!screen.contains("the first attempt"), "{screen}");
    assert_eq!(screen.matches("the whole answer").count(), 1, "{screen}");
    assert!(
        screen.contains("cut off") && screen.contains("retrying"),
        "{screen}"
    );
}

#[test]
fn a_kept_partial_is_shown_marked_incomplete_with_the_failure_after_it() {
    let mut app = app(Instant::now());
    streamed(&mut app, "one two");
    let kept = "one two\n\n[cut off: the reply broke off here and is incomplete]".to_string();
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step: StepId(1),
            text: kept,
            reasoning: String::new(),
        },
    ));
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::Failed(
            "the answer was cut off; the text that arrived is kept, marked incomplete\nthe connection dropped before the reply was complete"
                .into(),
        ),
    }));
    let screen = screen_text(&app, 200, 24);
    assert!(screen.contains("one two"), "{screen}");
    assert!(
        screen.contains("broke off here and is incomplete"),
        "{screen}"
    );
    assert!(
        screen.contains("failed: the answer was cut off; the text that arrived is kept"),
        "{screen}"
    );
}

#[test]
fn the_start_up_check_shows_a_warning_only_when_it_failed() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Report(ReportEvent::EndpointChecked {
        problem: None,
    }));
    let quiet = screen_text(&app, 160, 24);
    assert!(quiet.contains("What should we work on?"), "{quiet}");
    app.apply(&AgentEvent::Report(ReportEvent::EndpointChecked {
        problem: Some(
            "start-up check: could not reach the model server at http://127.0.0.1:9/v1/chat/completions: nothing is listening at 127.0.0.1:9 (connection refused); check --base-url / base_url"
                .into(),
        ),
    }));
    let screen = screen_text(&app, 160, 24);
    assert!(
        screen.contains("! start-up check: could not reach"),
        "{screen}"
    );
    assert!(screen.contains("--base-url"), "{screen}");
}

#[test]
fn an_interrupted_answer_stays_in_the_transcript_marked() {
    let mut app = app(Instant::now());
    streamed(&mut app, "step step step");
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step: StepId(1),
            text: "step step step\n\n[interrupted by the user: the reply stopped here]".into(),
            reasoning: String::new(),
        },
    ));
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::Interrupted,
    }));
    let screen = screen_text(&app, 160, 24);
    assert_eq!(screen.matches("step step step").count(), 1, "{screen}");
    assert!(
        screen.contains("[interrupted by the user: the reply stopped here]"),
        "{screen}"
    );
}

#[test]
fn a_late_start_up_warning_does_not_split_an_answer_that_is_streaming() {
    let mut app = app(Instant::now());
    streamed(&mut app, "the server answers after all");
    app.apply(&AgentEvent::Report(ReportEvent::EndpointChecked {
        problem: Some("start-up check: the model server did not answer within 10s".into()),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::TextDelta {
        step: StepId(1),
        text: ", in one piece".into(),
    }));
    let screen = screen_text(&app, 160, 24);
    assert!(!screen.contains("start-up check"), "{screen}");
    assert!(
        screen.contains("the server answers after all, in one piece"),
        "{screen}"
    );
}

#[test]
fn a_warning_that_arrives_mid_stream_does_not_split_the_answer() {
    let mut app = app(Instant::now());
    streamed(&mut app, "first half");
    app.apply(&AgentEvent::Report(ReportEvent::Warning {
        message: "something to know".into(),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::TextDelta {
        step: StepId(1),
        text: " and second half".into(),
    }));
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step: StepId(1),
            text: "first half and second half".into(),
            reasoning: String::new(),
        },
    ));
    let screen = screen_text(&app, 160, 24);
    assert_eq!(
        screen.matches("first half and second half").count(),
        1,
        "{screen}"
    );
    assert_eq!(screen.matches("second half").count(), 1, "{screen}");
    assert!(screen.contains("something to know"), "{screen}");
}
