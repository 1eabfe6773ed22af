//! A subagent's card opens the child's own transcript (live while it runs, read-only), Esc or
//! q comes back; a parent's approval shows over it; the child's tokens count in the status
//! line while it runs and once, not twice, after.

#![allow(clippy::unwrap_used)]

use std::time::Instant;

use crossterm::event::KeyCode;
use serde_json::json;

use super::{app, draw, key, press, screen_text, tool, type_text};
use crate::bus::{
    AgentEvent, CallId, ConversationEvent, DecisionKind, Mode, ReportEvent, SessionId, StepId,
    SubagentStatus, ToolEvent, ToolResult, Usage,
};
use crate::tool_output::{FileChange, SubagentRun, ToolOutput};
use crate::tui::app::{App, Focus};

const CALL: &str = "call_sub";

fn child(app: &mut App, inner: AgentEvent) {
    app.apply(&tool(ToolEvent::ChildEvent {
        call: CallId::new(CALL),
        inner: Box::new(inner),
    }));
}

fn status(step: u64, tool: Option<&str>, tokens: u64) -> SubagentStatus {
    SubagentStatus {
        agent: "explore".into(),
        description: "find the parser".into(),
        session: "child-session".into(),
        step,
        tool: tool.map(str::to_string),
        tokens,
        waiting: false,
    }
}

fn usage(prompt: u64, completion: u64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: 0,
    }
}

/// A parent that called `subagent`, whose child started, read a file and is writing its
/// answer.
fn running_child() -> App {
    let mut app = app(Instant::now());
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new(CALL),
        name: "subagent".into(),
        args: json!({"description": "find the parser", "prompt": "where is the parser?", "agent": "explore"}),
    }));
    app.apply(&tool(ToolEvent::Started {
        call: CallId::new(CALL),
    }));
    app.apply(&tool(ToolEvent::Subagent {
        call: CallId::new(CALL),
        status: status(2, Some("read_file"), 1_500),
    }));
    child(
        &mut app,
        AgentEvent::Conversation(ConversationEvent::SessionStarted {
            session: SessionId("child-session".into()),
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode: Mode::AutoEdit,
            context_window: 64_000,
            resumed: false,
        }),
    );
    child(
        &mut app,
        AgentEvent::Conversation(ConversationEvent::UserMessage {
            text: "where is the parser?".into(),
            images: Vec::new(),
            files: Vec::new(),
            typed: None,
        }),
    );
    child(
        &mut app,
        tool(ToolEvent::Requested {
            call: CallId::new("child_1"),
            name: "read_file".into(),
            args: json!({"path": "src/parser/mod.rs"}),
        }),
    );
    child(
        &mut app,
        tool(ToolEvent::Finished {
            call: CallId::new("child_1"),
            name: "read_file".into(),
            result: ToolResult {
                is_error: false,
                text: "pub fn parse() {}".into(),
                output: None,
            },
        }),
    );
    child(
        &mut app,
        AgentEvent::Conversation(ConversationEvent::TextDelta {
            step: StepId(2),
            text: "CHILD-ANSWER-SO-FAR: the parser lives in src/parser".into(),
        }),
    );
    child(
        &mut app,
        AgentEvent::Report(ReportEvent::SessionUsage {
            totals: usage(1_200, 300),
            requests: 2,
        }),
    );
    app
}

fn open_card(app: &mut App) {
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Transcript);
    draw(app, 100, 40);
    app.handle_input(&key(KeyCode::Up));
    assert!(app.transcript.selected_card().is_some());
    app.handle_input(&key(KeyCode::Enter));
}

fn finish(app: &mut App) {
    finish_with(app, Vec::new());
}

/// The child ends with `changes` (what the parent's checkpoints saw it change).
fn finish_with(app: &mut App, changes: Vec<FileChange>) {
    app.apply(&AgentEvent::Report(ReportEvent::SessionUsage {
        totals: usage(1_200 + 100, 300 + 10),
        requests: 3,
    }));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new(CALL),
        name: "subagent".into(),
        result: ToolResult::ok(ToolOutput::Subagent(SubagentRun {
            agent: "explore".into(),
            description: "find the parser".into(),
            session: "child-session".into(),
            ended: "completed".into(),
            finished: true,
            steps: 2,
            prompt_tokens: 1_200,
            completion_tokens: 300,
            requests: 2,
            files_changed: changes.len() as u64,
            duration_ms: 4_000,
            text: "the parser lives in src/parser".into(),
            changes,
            ..SubagentRun::default()
        })),
    }));
}

#[test]
fn enter_on_a_running_subagent_opens_its_transcript_and_esc_comes_back() {
    let mut app = running_child();
    let parent = screen_text(&app, 100, 40);
    assert!(
        parent.contains("agent explore · step 2 · read_file"),
        "{parent}"
    );
    assert!(!parent.contains("CHILD-ANSWER-SO-FAR"), "{parent}");
    open_card(&mut app);
    let view = screen_text(&app, 100, 40);
    assert!(
        view.contains("subagent explore (find the parser) · read-only · Esc: back"),
        "{view}"
    );
    assert!(view.contains("where is the parser?"), "{view}");
    assert!(view.contains("src/parser/mod.rs"), "{view}");
    assert!(view.contains("CHILD-ANSWER-SO-FAR"), "{view}");
    // Live: what the child does next shows in the open view.
    child(
        &mut app,
        tool(ToolEvent::Requested {
            call: CallId::new("child_2"),
            name: "grep".into(),
            args: json!({"pattern": "LIVE-PATTERN"}),
        }),
    );
    let view = screen_text(&app, 100, 40);
    assert!(view.contains("LIVE-PATTERN"), "{view}");
    press(&mut app, KeyCode::Esc);
    let back = screen_text(&app, 100, 40);
    assert!(!back.contains("read-only · Esc: back"), "{back}");
    assert!(back.contains("agent explore · step 2"), "{back}");
    assert!(
        app.take_commands().is_empty(),
        "Esc came back, it interrupted nothing"
    );
}

#[test]
fn typing_in_the_childs_transcript_goes_on_into_the_parents_input_and_sends_nothing() {
    let mut app = running_child();
    open_card(&mut app);
    type_text(&mut app, "hello there");
    app.handle_input(&crossterm::event::Event::Paste(" and more".into()));
    app.set_now(app.now + std::time::Duration::from_secs(1));
    app.expire();
    let screen = screen_text(&app, 100, 40);
    assert!(!screen.contains("read-only · Esc: back"), "{screen}");
    assert_eq!(app.composer.text(), "hello there and more");
    assert_eq!(app.focus(), Focus::Input);
    assert!(app.take_commands().is_empty(), "nothing is sent");
}

#[test]
fn q_in_the_childs_transcript_comes_back_and_the_parent_goes_on() {
    let mut app = running_child();
    open_card(&mut app);
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.should_quit(), "q leaves the child's view, not cairn");
    let back = screen_text(&app, 100, 40);
    assert!(!back.contains("read-only · Esc: back"), "{back}");
    // Opened again after it finished: the same transcript, with its end.
    child(
        &mut app,
        AgentEvent::Conversation(ConversationEvent::AssistantMessage {
            step: StepId(2),
            text: "FINAL-CHILD-TEXT".into(),
            reasoning: String::new(),
        }),
    );
    finish(&mut app);
    app.handle_input(&key(KeyCode::Enter));
    let view = screen_text(&app, 100, 40);
    assert!(view.contains("FINAL-CHILD-TEXT"), "{view}");
}

#[test]
fn an_approval_of_the_parent_shows_over_the_childs_transcript_and_is_answered_there() {
    let mut app = running_child();
    open_card(&mut app);
    app.apply(&tool(ToolEvent::AwaitingApproval {
        call: CallId::new("call_sub~child_3"),
        name: "bash".into(),
        subject: "rm -rf build".into(),
        why: "agent explore (find the parser) asks: deletes files".into(),
        sandboxed: true,
        reach: None,
        prefix: "rm".into(),
        decisions: vec![DecisionKind::Approve, DecisionKind::Deny],
        dangers: Vec::new(),
        diff: None,
    }));
    let screen = screen_text(&app, 100, 40);
    assert!(
        screen.contains("agent explore (find the parser) asks"),
        "{screen}"
    );
    press(&mut app, KeyCode::Char('n'));
    let commands = app.take_commands();
    assert!(
        commands.iter().any(|c| matches!(c,
            crate::bus::UserCommand::Decide { call, .. } if call.0 == "call_sub~child_3")),
        "{commands:?}"
    );
    // The view is still the child's once the prompt is answered.
    let after = screen_text(&app, 100, 40);
    assert!(after.contains("read-only · Esc: back"), "{after}");
}

#[test]
fn the_status_line_counts_a_running_childs_tokens_and_once_after_it_ends() {
    let mut app = running_child();
    app.apply(&AgentEvent::Report(ReportEvent::SessionUsage {
        totals: usage(100, 10),
        requests: 1,
    }));
    // The parent's 100 in plus the child's 1,200 so far.
    let running = screen_text(&app, 160, 30);
    assert!(running.contains("↑1.3k ↓310"), "{running}");
    finish(&mut app);
    let done = screen_text(&app, 160, 30);
    assert!(done.contains("↑1.3k ↓310"), "{done}");
}

#[test]
fn a_subagent_card_without_a_transcript_says_where_its_log_is() {
    let mut app = app(Instant::now());
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new(CALL),
        name: "subagent".into(),
        args: json!({"description": "find the parser", "prompt": "p"}),
    }));
    finish(&mut app);
    open_card(&mut app);
    let screen = screen_text(&app, 120, 40);
    assert!(!screen.contains("read-only · Esc: back"), "{screen}");
    assert!(
        screen.contains("cairn replay child-session"),
        "the flash names the log: {screen}"
    );
}

#[test]
fn snapshots_of_a_running_childs_card_its_open_transcript_and_its_finished_card() {
    let mut app = running_child();
    insta::assert_snapshot!("subagent_card_running", draw(&app, 100, 16));
    open_card(&mut app);
    insta::assert_snapshot!("subagent_transcript_open", draw(&app, 100, 16));
    press(&mut app, KeyCode::Esc);
    finish(&mut app);
    insta::assert_snapshot!("subagent_card_finished", draw(&app, 100, 16));
}

#[test]
fn what_a_child_changed_browses_in_the_parents_diff_pane() {
    let mut app = running_child();
    finish_with(
        &mut app,
        vec![FileChange {
            path: "src/made_by_child.rs".into(),
            created: true,
            diff: "--- /dev/null\n+++ b/src/made_by_child.rs\n@@ -0,0 +1 @@\n+CHILD-LINE\n".into(),
            added: 1,
            removed: 0,
            first_line: 1,
            last_line: 1,
            replacements: 1,
        }],
    );
    let screen = screen_text(&app, 140, 30);
    assert!(screen.contains("src/made_by_child.rs"), "{screen}");
    assert!(screen.contains("CHILD-LINE"), "{screen}");
}

/// A word typed fast in the child's view is text, whatever its letters: `q` (back) and `j`
/// (scroll) in it act on nothing, and every letter reaches the parent's input in order.
#[test]
fn a_word_with_the_views_keys_in_it_is_text_for_the_parents_input() {
    let mut app = running_child();
    open_card(&mut app);
    app.set_now(app.now + std::time::Duration::from_secs(1));
    for c in "quiq jog".chars() {
        app.handle_input(&key(KeyCode::Char(c)));
        app.set_now(app.now + std::time::Duration::from_millis(30));
    }
    app.set_now(app.now + std::time::Duration::from_secs(1));
    app.expire();
    assert!(!app.should_quit());
    assert_eq!(app.composer.text(), "quiq jog");
    assert!(app.take_commands().is_empty());
}

/// A key used in the child's view a moment before a parent's approval opens counts as typing:
/// the `y` right after is text, not an answer.
#[test]
fn a_key_in_the_childs_view_just_before_an_approval_answers_nothing() {
    let mut app = running_child();
    open_card(&mut app);
    press(&mut app, KeyCode::Char('j'));
    app.apply(&tool(ToolEvent::AwaitingApproval {
        call: CallId::new("call_sub~child_9"),
        name: "bash".into(),
        subject: "rm -rf build".into(),
        why: "agent explore (find the parser) asks: deletes files".into(),
        sandboxed: true,
        reach: None,
        prefix: "rm".into(),
        decisions: vec![DecisionKind::Approve, DecisionKind::Deny],
        dangers: Vec::new(),
        diff: None,
    }));
    app.set_now(app.now + std::time::Duration::from_millis(100));
    app.handle_input(&key(KeyCode::Char('y')));
    app.set_now(app.now + std::time::Duration::from_secs(1));
    app.expire();
    let sent = app.take_commands();
    assert!(
        !sent
            .iter()
            .any(|c| matches!(c, crate::bus::UserCommand::Decide { .. })),
        "{sent:?}"
    );
}
