//! MCP in the UI: an MCP call's card with the server's progress while it runs and its server,
//! tool and time when it is done; a server's prompts in the `/` palette and its resources in
//! the `@` finder, once the agent said what the servers offer: `/mcp:server:name` with its
//! arguments, Enter waiting for a required argument, then the line going to the agent (which
//! runs the prompt); the resource picked as `@server:uri`.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::{app, key, screen_text, tool, type_text};
use crate::bus::{
    AgentEvent, CallId, McpPromptLine, McpResourceLine, ReportEvent, ToolEvent, ToolResult,
    UserCommand,
};
use crate::tool_output::{McpCall, ToolOutput};

#[test]
fn an_mcp_call_s_card_shows_its_progress_then_its_server_tool_and_time() {
    let t0 = Instant::now();
    let mut app = app(t0);
    let call = CallId::new("m1");
    app.apply(&tool(ToolEvent::Requested {
        call: call.clone(),
        name: "mcp__demo__slow".into(),
        args: serde_json::json!({"text": "hi"}),
    }));
    app.apply(&tool(ToolEvent::Started { call: call.clone() }));
    // What `mcp::tool` makes of the server's progress notifications.
    for line in ["progress 1/4: step 1\n", "progress 2/4: step 2\n"] {
        app.apply(&tool(ToolEvent::OutputTail {
            call: call.clone(),
            chunk: line.into(),
        }));
    }
    app.set_now(t0 + Duration::from_millis(2_300));
    let screen = screen_text(&app, 80, 20);
    assert!(screen.contains("mcp__demo__slow"), "{screen}");
    assert!(screen.contains("progress 2/4: step 2"), "{screen}");
    app.apply(&tool(ToolEvent::Finished {
        call,
        name: "mcp__demo__slow".into(),
        result: ToolResult::ok(ToolOutput::Mcp(McpCall {
            server: "demo".into(),
            tool: "slow".into(),
            text: "slow done".into(),
            duration_ms: 2_412,
            ..McpCall::default()
        })),
    }));
    let screen = screen_text(&app, 80, 20);
    assert!(screen.contains("demo · slow (2412 ms)"), "{screen}");
}

fn offerings() -> AgentEvent {
    AgentEvent::Report(ReportEvent::McpOfferings {
        prompts: vec![McpPromptLine {
            command: "/mcp:demo:review".into(),
            args: "<file> [focus]".into(),
            description: "Reviews a file.".into(),
            server: "demo".into(),
        }],
        resources: vec![McpResourceLine {
            mention: "demo:test://notes/one".into(),
            name: "notes".into(),
        }],
    })
}

#[test]
fn a_prompt_runs_from_the_palette_with_its_arguments() {
    let mut app = app(Instant::now());
    app.apply(&offerings());
    type_text(&mut app, "/mcp:dem");
    let screen = screen_text(&app, 100, 30);
    assert!(
        screen.contains("/mcp:demo:review <file> [focus]"),
        "{screen}"
    );
    assert!(
        screen.contains("Reviews a file. (MCP server demo)"),
        "{screen}"
    );
    // A required argument: Enter completes the name and waits for it.
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "/mcp:demo:review ");
    assert!(app.take_commands().is_empty());
    type_text(&mut app, "src/a.rs speed");
    app.handle_input(&key(KeyCode::Enter));
    match app.take_commands().as_slice() {
        [UserCommand::Submit { text, attach }] => {
            assert_eq!(text, "/mcp:demo:review src/a.rs speed");
            assert!(attach.is_empty());
        }
        other => panic!("one submit expected: {other:?}"),
    }
}

#[test]
fn a_resource_is_listed_in_the_at_finder_and_picked_as_a_mention() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("readme.txt"), "").unwrap();
    let mut app = app(Instant::now());
    app.mention_finder = crate::tui::modals::mention_finder::MentionFinder::over(
        crate::finder::FileIndex::start(dir.path()),
    );
    app.apply(&offerings());
    type_text(&mut app, "see @notes");
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.mention_finder.waiting_for_index() {
        assert!(Instant::now() < deadline, "the walk never ended");
        std::thread::yield_now();
        app.mention_finder
            .follow_index(app.composer.text(), app.composer.cursor());
    }
    let screen = screen_text(&app, 100, 30);
    assert!(screen.contains("demo:test://notes/one"), "{screen}");
    assert!(screen.contains("@ files and MCP resources"), "{screen}");
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "see @demo:test://notes/one ");
    assert!(
        app.take_commands().is_empty(),
        "Enter picked, it did not send"
    );
}
