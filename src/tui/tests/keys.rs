//! Behaviour of keys and events: what the user presses, what the engine is sent.

#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, QueueEvent, ReportEvent};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::{app, ctrl, draw, key, options, press, screen_text, scripted_session, type_text};
use crate::bus::Mode;
use crate::bus::{AgentEvent, EndReason, StepId, UserCommand};
use crate::tui::app::{App, AppIntent, Focus};

fn steer_id(commands: &[UserCommand], want: &str) -> String {
    match commands {
        [UserCommand::Steer { id, text, .. }] if text == want => id.clone(),
        other => panic!("one steering message {want:?} expected: {other:?}"),
    }
}

#[test]
fn enter_while_busy_steers_at_the_next_step_and_ctrl_q_holds_for_after_the_turn() {
    let mut app = app(Instant::now());
    type_text(&mut app, "first");
    app.handle_input(&key(KeyCode::Enter));
    assert!(
        matches!(app.take_commands().as_slice(), [UserCommand::Submit { text, .. }] if text == "first")
    );
    type_text(&mut app, "second");
    app.handle_input(&key(KeyCode::Enter));
    let steered = steer_id(&app.take_commands(), "second");
    type_text(&mut app, "third");
    app.handle_input(&ctrl('q'));
    assert!(app.take_commands().is_empty(), "held for after the turn");
    assert!(app.composer.is_empty());
    let screen = screen_text(&app, 80, 24);
    assert!(
        screen.contains("next step: second") && screen.contains("after the turn: third"),
        "{screen}"
    );
    app.apply(&AgentEvent::Queue(QueueEvent::Delivered {
        id: steered,
        step: 1,
    }));
    assert!(!screen_text(&app, 80, 24).contains("next step: second"));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    steer_id(&app.take_commands(), "third");
    assert!(!screen_text(&app, 80, 24).contains("third"));
}

#[test]
fn a_queued_message_pulled_back_is_withdrawn_into_the_input() {
    let mut app = app(Instant::now());
    type_text(&mut app, "first");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "steer me");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "later");
    app.handle_input(&ctrl('q'));
    let steered = match app.take_commands().as_slice() {
        [_, UserCommand::Steer { id, .. }] => id.clone(),
        other => panic!("{other:?}"),
    };
    let alt_up = Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT));
    // The newest first, then the one before.
    app.handle_input(&alt_up);
    app.handle_input(&alt_up);
    assert!(screen_text(&app, 80, 24).contains("Enter: back into the input"));
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "steer me");
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Withdraw { id, text, sent: true }] if *id == steered && text == "steer me"
    ));
    // The agent confirms: nothing more to say. Had it delivered it first, the user is told.
    app.apply(&AgentEvent::Queue(QueueEvent::Withdrawn { id: steered }));
    let screen = screen_text(&app, 80, 24);
    assert!(!screen.contains("next step: steer me") && screen.contains("after the turn: later"));
    // Delete withdraws the held one for good; the log is told (not sent: it never left).
    app.composer.clear();
    app.handle_input(&alt_up);
    app.handle_input(&key(KeyCode::Delete));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Withdraw { text, sent: false, .. }] if text == "later"
    ));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    assert!(app.take_commands().is_empty(), "nothing left to send");
}

#[test]
fn pulling_a_message_back_never_overwrites_a_draft_and_a_late_withdrawal_is_said() {
    let mut app = app(Instant::now());
    type_text(&mut app, "first");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "steer");
    app.handle_input(&key(KeyCode::Enter));
    let id = match app.take_commands().as_slice() {
        [_, UserCommand::Steer { id, .. }] => id.clone(),
        other => panic!("{other:?}"),
    };
    type_text(&mut app, "draft");
    app.handle_input(&Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)));
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "draft", "the draft stays");
    assert!(app.take_commands().is_empty(), "nothing withdrawn");
    app.composer.clear();
    app.handle_input(&Event::Key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)));
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "steer");
    app.apply(&AgentEvent::Queue(QueueEvent::Delivered { id, step: 2 }));
    assert!(screen_text(&app, 120, 30).contains("already delivered (after step 2)"));
}

#[test]
fn esc_interrupts_and_ctrl_c_twice_quits() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    app.handle_input(&key(KeyCode::Esc));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Interrupt]
    ));
    app.handle_input(&ctrl('c'));
    assert!(!app.should_quit());
    assert!(
        matches!(app.take_commands().as_slice(), [UserCommand::Interrupt]),
        "the first one stops the turn"
    );
    assert!(screen_text(&app, 80, 24).contains("Ctrl+C again"));
    app.set_now(t0 + Duration::from_millis(500));
    app.handle_input(&ctrl('c'));
    assert!(app.should_quit());
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Shutdown]
    ));
}

#[test]
fn a_late_second_ctrl_c_does_not_quit() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.handle_input(&ctrl('c'));
    app.set_now(t0 + Duration::from_secs(5));
    app.handle_input(&ctrl('c'));
    assert!(!app.should_quit());
}

#[test]
fn slash_commands_become_commands() {
    let mut app = app(Instant::now());
    let mut run = |line: &str| {
        type_text(&mut app, line);
        app.handle_input(&key(KeyCode::Enter));
        app.take_commands()
    };
    assert!(matches!(run("/new").as_slice(), [UserCommand::NewSession]));
    assert!(matches!(
        run("/resume").as_slice(),
        [UserCommand::ListSessions]
    ));
    assert!(matches!(
        run("/mode auto").as_slice(),
        [UserCommand::SetMode { mode: Mode::Auto }]
    ));
    assert!(
        matches!(run("/model deepseek-reasoner").as_slice(), [UserCommand::SetModel { model }] if model == "deepseek-reasoner")
    );
    assert!(run("/mode sideways").is_empty());
    assert!(
        matches!(run("/compact the parser changes").as_slice(), [UserCommand::Compact { focus: Some(f) }] if f == "the parser changes")
    );
    assert!(matches!(
        run("/compact").as_slice(),
        [UserCommand::Compact { focus: None }]
    ));
    assert!(matches!(run("/cost").as_slice(), [UserCommand::ShowCost]));
    assert!(run("/diff").is_empty());
    assert_eq!(app.focus(), Focus::Diffs);
}

#[test]
fn the_resume_picker_sends_the_chosen_session() {
    let mut app = app(Instant::now());
    let session = |id: &str, prompt: &str| crate::bus::SessionSummary {
        id: crate::bus::SessionId(id.into()),
        started: "2026-01-02T03:04:05Z".into(),
        cwd: "/src/app".into(),
        first_prompt: prompt.into(),
        parent: None,
    };
    let mut elsewhere = session("far", "tune the db");
    elsewhere.cwd = "/src/other".into();
    app.apply(&AgentEvent::Report(ReportEvent::Sessions {
        sessions: vec![
            session("new", "fix the bug"),
            session("old", "write docs"),
            elsewhere,
        ],
        here: "/src/app".into(),
    }));
    let screen = screen_text(&app, 80, 24);
    assert!(screen.contains("write docs"), "{screen}");
    assert!(
        screen.contains("elsewhere: /src/other  tune the db"),
        "{screen}"
    );
    assert!(
        !screen.contains("/src/app"),
        "this directory goes without saying: {screen}"
    );
    app.handle_input(&key(KeyCode::Down));
    press(&mut app, KeyCode::Enter);
    assert!(
        matches!(app.take_commands().as_slice(), [UserCommand::Resume { session }] if session.0 == "old")
    );
}

#[test]
fn replay_is_read_only_and_says_so() {
    let mut opts = options();
    opts.read_only = true;
    let mut app = App::new(&opts, Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "old question".into(),
        images: vec![],
        files: vec![],
        typed: None,
    }));
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step: StepId(1),
            text: "old answer".into(),
            reasoning: String::new(),
        },
    ));
    type_text(&mut app, "new");
    app.handle_input(&key(KeyCode::Enter));
    assert!(app.take_commands().is_empty());
    let screen = screen_text(&app, 100, 20);
    assert!(screen.contains("replay"), "{screen}");
    assert!(screen.contains("old answer"));
}

#[test]
fn status_line_counts_tokens_and_shows_retry_countdown() {
    let t0 = Instant::now();
    let mut app = scripted_session(t0);
    app.set_now(t0);
    app.apply(&AgentEvent::Conversation(ConversationEvent::Retrying {
        attempt: 2,
        wait_ms: 4000,
        reason: "429 Too Many Requests".into(),
    }));
    app.set_now(t0 + Duration::from_millis(1500));
    let screen = screen_text(&app, 120, 30);
    assert!(screen.contains("retry 2 in 3s"), "{screen}");
    assert!(screen.contains("↑12.4k ↓380 cached 9.0k"), "{screen}");
    assert!(screen.contains("ctx 19%"), "{screen}");
}

#[test]
fn an_edit_card_points_to_the_diff_pane_and_brackets_step_through_edits() {
    let mut app = scripted_session(Instant::now());
    assert!(screen_text(&app, 120, 40).contains("edit #1"));
    app.handle_input(&key(KeyCode::Tab));
    press(&mut app, KeyCode::Char('['));
    assert_eq!(app.focus(), Focus::Diffs);
}

#[test]
fn a_turn_failure_is_shown_and_the_ui_stays_usable() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::Failed("401 invalid api key".into()),
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    assert!(screen_text(&app, 80, 24).contains("failed: 401 invalid api key"));
    type_text(&mut app, "again");
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.take_commands().len(), 1);
}

#[test]
fn enter_on_an_edit_card_opens_its_diff() {
    let mut app = scripted_session(Instant::now());
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Transcript);
    draw(&app, 120, 40);
    for _ in 0..10 {
        app.handle_input(&key(KeyCode::Up));
        if app
            .transcript
            .selected_card()
            .is_some_and(|c| c.diff_index.is_some())
        {
            break;
        }
    }
    assert!(
        screen_text(&app, 120, 40).contains("▌ ✓ edit_file"),
        "the selection is marked"
    );
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.focus(), Focus::Diffs);
}

#[test]
fn copy_sends_the_selected_entry_to_the_clipboard() {
    let mut app = scripted_session(Instant::now());
    app.handle_input(&ctrl('y'));
    let intents = app.take_intents();
    assert!(
        matches!(intents.as_slice(), [AppIntent::Copy(text)] if text.contains("```rust")),
        "with nothing selected, the last answer is copied: {intents:?}"
    );
}

#[test]
fn after_an_interrupt_queued_messages_stay_separate_and_wait_for_the_user() {
    let mut app = app(Instant::now());
    type_text(&mut app, "first");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "second");
    app.handle_input(&key(KeyCode::Enter));
    type_text(&mut app, "third");
    app.handle_input(&ctrl('q'));
    let second = match app.take_commands().as_slice() {
        [_, UserCommand::Steer { id, .. }] => id.clone(),
        other => panic!("{other:?}"),
    };
    type_text(&mut app, "draft");
    app.handle_input(&key(KeyCode::Esc));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Interrupt]
    ));
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::Interrupted,
    }));
    app.apply(&AgentEvent::Queue(QueueEvent::Returned {
        ids: vec![second],
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    assert!(
        app.take_commands().is_empty(),
        "nothing is sent behind the user's back"
    );
    assert_eq!(
        app.composer.text(),
        "draft",
        "nothing merged into the input"
    );
    let screen = screen_text(&app, 100, 24);
    assert!(
        screen.contains("queued: second") && screen.contains("queued: third"),
        "both wait, separately: {screen}"
    );
    // Ctrl+Q on an empty input sends the next one, alone.
    app.composer.clear();
    app.handle_input(&ctrl('q'));
    steer_id(&app.take_commands(), "second");
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    steer_id(&app.take_commands(), "third");
}

#[test]
fn bang_runs_a_shell_command_and_esc_stops_it_before_the_turn() {
    let mut app = app(Instant::now());
    type_text(&mut app, "!echo hi");
    app.handle_input(&key(KeyCode::Enter));
    let id = match app.take_commands().as_slice() {
        [
            UserCommand::Shell {
                id,
                command,
                context: true,
            },
        ] if command == "echo hi" => id.clone(),
        other => panic!("{other:?}"),
    };
    type_text(&mut app, "!!ls");
    app.handle_input(&key(KeyCode::Enter));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Shell { command, context: false, .. }] if command == "ls"
    ));
    app.apply(&AgentEvent::Shell(crate::bus::ShellEvent::Started {
        id: id.clone(),
        command: "echo hi".into(),
        context: true,
    }));
    app.apply(&AgentEvent::Shell(crate::bus::ShellEvent::Output {
        id: id.clone(),
        chunk: "hi\n".into(),
    }));
    let screen = screen_text(&app, 80, 24);
    assert!(
        screen.contains("echo hi") && screen.contains("hi"),
        "{screen}"
    );
    app.handle_input(&key(KeyCode::Esc));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Interrupt]
    ));
    // An empty command is an error the user can correct; nothing is sent.
    type_text(&mut app, "!  ");
    app.handle_input(&key(KeyCode::Enter));
    assert!(app.take_commands().is_empty());
    assert!(screen_text(&app, 100, 24).contains("type a command after !"));
}

#[test]
fn an_answer_cut_at_the_output_limit_is_flagged_and_continue_asks_for_the_rest() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::RequestEnded {
        last_step: StepId(1),
        reason: EndReason::OutputLimit,
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    let screen = screen_text(&app, 100, 24);
    assert!(
        screen.contains("answer cut at the output limit") && screen.contains("/continue"),
        "{screen}"
    );
    type_text(&mut app, "/continue");
    app.handle_input(&key(KeyCode::Enter));
    assert!(
        matches!(app.take_commands().as_slice(), [UserCommand::Submit { text, .. }] if text == crate::bus::CONTINUE_PROMPT)
    );
}

#[test]
fn ctrl_c_interrupts_but_keeps_the_draft() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step: StepId(1),
    }));
    type_text(&mut app, "half a thought");
    app.handle_input(&ctrl('c'));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Interrupt]
    ));
    assert_eq!(app.composer.text(), "half a thought");
    // Idle, nothing to stop: Ctrl+C clears the draft, Ctrl+Z brings it back.
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    app.take_commands();
    app.set_now(app.now + Duration::from_secs(5));
    app.handle_input(&ctrl('c'));
    assert_eq!(app.composer.text(), "");
    assert!(!app.should_quit());
    assert!(app.take_commands().is_empty());
    assert!(screen_text(&app, 80, 24).contains("input cleared (Ctrl+Z brings it back)"));
    app.handle_input(&ctrl('z'));
    assert_eq!(app.composer.text(), "half a thought");
    // A 600-line paste clears the same way.
    app.composer.clear();
    app.handle_input(&Event::Paste("line\n".repeat(600)));
    assert!(!app.composer.is_empty());
    app.set_now(app.now + Duration::from_secs(5));
    app.handle_input(&ctrl('c'));
    assert!(app.composer.is_empty());
}

#[test]
fn a_cancelled_call_looks_cancelled_not_done() {
    use crate::bus::{CallId, ToolEvent, ToolResult};
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Tool(ToolEvent::Requested {
        call: CallId::new("c1"),
        name: "bash".into(),
        args: serde_json::json!({"command": "touch build/a"}),
    }));
    app.apply(&AgentEvent::Tool(ToolEvent::Finished {
        call: CallId::new("c1"),
        name: "bash".into(),
        result: ToolResult::cancelled(),
    }));
    let screen = screen_text(&app, 80, 24);
    assert!(screen.contains("⊘ bash"), "{screen}");
    assert!(screen.contains("cancelled"), "{screen}");
    assert!(!screen.contains("✓"), "{screen}");
}
