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

#[test]
fn what_a_command_sent_and_a_compactions_summary_open_from_the_transcript() {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "You are asked to write AGENTS.md for this repository.\nRead the build files first.\nKeep it short."
            .into(),
        images: vec![],
        files: vec![],
        typed: Some("/init keep it short".into()),
    }));
    app.apply(&AgentEvent::Report(crate::bus::ReportEvent::Compacted {
        before: 51_200,
        after: 12_300,
        pruned: 3,
        summarized: 12,
        summary: Some("[summary] The user asked for AGENTS.md; it was written.".into()),
    }));
    let folded = screen_text(&app, 80, 24);
    assert!(folded.contains("/init keep it short"), "{folded}");
    assert!(!folded.contains("Read the build files"), "{folded}");
    assert!(
        folded.contains("▸ what the model was sent: 3 lines"),
        "{folded}"
    );
    assert!(folded.contains("▸ the summary: 1 line"), "{folded}");
    // The transcript, the compaction's line (the last entry), Enter: the summary opens.
    app.set_focus(crate::tui::app::Focus::Transcript);
    app.handle_input(&key(KeyCode::Up));
    app.handle_input(&key(KeyCode::Enter));
    // The message before it, Enter: what /init sent opens too.
    app.handle_input(&key(KeyCode::Up));
    app.handle_input(&key(KeyCode::Enter));
    let open = screen_text(&app, 80, 24);
    assert!(open.contains("Read the build files first."), "{open}");
    assert!(open.contains("The user asked for AGENTS.md"), "{open}");
    insta::assert_snapshot!("details_open_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("details_open_160x30", draw(&app, 160, 30));
    // Enter again folds it.
    app.handle_input(&key(KeyCode::Enter));
    assert!(!screen_text(&app, 80, 24).contains("Read the build files first."));
}

#[test]
fn the_todo_pane_shows_a_new_list_while_the_steps_approval_is_open() {
    let mut app = app(Instant::now());
    let list = serde_json::json!({"todos": [
        {"content": "Read the failing test", "status": "completed"},
        {"content": "Fix the parser", "status": "in_progress"},
        {"content": "Run the suite", "status": "pending"},
    ]});
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("t1"),
        name: "todo_write".into(),
        args: list,
    }));
    // The step's other call waits for its approval; todo_write has not run yet.
    app.apply(&super::held_rm());
    for (width, height) in [(80, 24), (160, 30)] {
        let screen = screen_text(&app, width, height);
        assert!(screen.contains("Fix the parser"), "{width}: {screen}");
        insta::assert_snapshot!(
            format!("todos_with_approval_{width}"),
            draw(&app, width, height)
        );
    }
    // A list the call then fails to set gives way to the one before (none).
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("t1"),
        name: "todo_write".into(),
        result: crate::bus::ToolResult::error("item 2: `content` is empty"),
    }));
    assert!(!screen_text(&app, 160, 30).contains("Fix the parser"));
}

#[test]
fn undo_and_a_revert_update_the_diff_panes_counts_and_are_no_edits() {
    use crate::bus::{ChangeSource, Restore, RestorePlan, RevertTarget, TimeTravelEvent};
    let mut app = app(Instant::now());
    let edit = super::lib_change();
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("e1"),
        name: "edit_file".into(),
        args: serde_json::json!({"path": "src/lib.rs"}),
    }));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("e1"),
        name: "edit_file".into(),
        result: crate::bus::ToolResult::ok(crate::tool_output::ToolOutput::FileChanged(
            edit.clone(),
        )),
    }));
    app.set_focus(crate::tui::app::Focus::Diffs);
    assert!(screen_text(&app, 160, 30).contains("1 edit · 1 file · +4 -0"));
    // /undo took the edit back: the counts follow the file, and no edit was added.
    let back = crate::tool_output::FileChange {
        added: 0,
        removed: 4,
        ..edit.clone()
    };
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::Restored {
        what: Restore::Undo,
        done: RestorePlan {
            files: vec![back.clone()],
            ..RestorePlan::default()
        },
    }));
    let screen = screen_text(&app, 160, 30);
    assert!(
        screen.contains("1 edit · 1 restore · 1 file · +4 -4"),
        "{screen}"
    );
    // A revert from the pane is a revert, not an edit.
    app.apply(&AgentEvent::TimeTravel(TimeTravelEvent::Reverted {
        id: "r1".into(),
        target: RevertTarget {
            source: ChangeSource::Call(CallId::new("e1")),
            file: None,
            hunk: None,
            shown: None,
        },
        what: "the edit of src/lib.rs".into(),
        changes: vec![back],
    }));
    for (width, height) in [(80, 24), (160, 30)] {
        let screen = screen_text(&app, width, height);
        assert!(
            width < 160 || screen.contains("1 edit · 1 revert · 1 restore"),
            "{width}: {screen}"
        );
        insta::assert_snapshot!(format!("diff_counts_{width}"), draw(&app, width, height));
    }
}

#[test]
fn a_commands_earlier_lines_open_from_its_card_and_a_truncated_one_names_its_whole_output() {
    let mut app = app(Instant::now());
    let call = CallId::new("c1");
    app.apply(&tool(ToolEvent::Requested {
        call: call.clone(),
        name: "bash".into(),
        args: serde_json::json!({"command": "cargo test"}),
    }));
    let stdout: String = (1..=12)
        .map(|i| format!("test case_{i:02} ... ok\n"))
        .collect();
    let crate::bus::ToolResult {
        output: Some(crate::tool_output::ToolOutput::Command(mut run)),
        ..
    } = command("cargo test", &stdout, 0, 900)
    else {
        panic!("a command");
    };
    run.truncated = true;
    run.spill_path = Some("/tmp/cairn-spill/c1.stdout".into());
    app.apply(&tool(ToolEvent::Finished {
        call,
        name: "bash".into(),
        result: crate::bus::ToolResult::ok(crate::tool_output::ToolOutput::Command(run)),
    }));
    let folded = screen_text(&app, 160, 30);
    assert!(!folded.contains("case_01"), "{folded}");
    assert!(folded.contains("6 earlier lines"), "{folded}");
    assert!(
        folded.contains("all of it: /tmp/cairn-spill/c1.stdout"),
        "{folded}"
    );
    app.set_focus(crate::tui::app::Focus::Transcript);
    app.handle_input(&key(KeyCode::Up));
    app.handle_input(&key(KeyCode::Enter));
    let open = screen_text(&app, 160, 30);
    assert!(
        open.contains("case_01") && open.contains("case_12"),
        "{open}"
    );
    insta::assert_snapshot!("command_opened_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("command_opened_160x30", draw(&app, 160, 30));
}
