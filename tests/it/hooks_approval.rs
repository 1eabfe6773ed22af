//! Hooks and the approval prompt, over the bus as the TUI drives the agent: an input a
//! `pre_tool` hook changes is put to the user as the new command (never run silently), and
//! a hook's `ask` holds a call the gate would run.
#![allow(clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use crate::hooks::{Scripts, hook_config};
use crate::support::agent::TestAgent;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, Decision, ToolEvent};
use cairn::config::HooksFile;
use cairn::hooks::{Hooks, RunSettings};
use cairn::testing::{MockLlm, Script};

fn hooks_from(toml_text: &str, ws: &Path, data: &Path) -> Arc<Hooks> {
    let table: toml::Table = toml_text.parse().unwrap();
    let file: HooksFile = table["hooks"].clone().try_into().unwrap();
    let ws = std::fs::canonicalize(ws).unwrap();
    let run = RunSettings {
        workspace: ws.clone(),
        ..RunSettings::default()
    };
    let trust = cairn::trust::ProcessTrust::new(data, &ws);
    let loaded = cairn::hooks::load(&file, Path::new("config.toml"), None, run, trust).unwrap();
    Arc::new(loaded.hooks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_input_is_put_to_the_user_as_the_new_command() {
    let (ws, data, scripts) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        Scripts::new(),
    );
    std::fs::create_dir_all(ws.path().join("build")).unwrap();
    let command = scripts.script(
        "rewrite.sh",
        "cat >/dev/null; echo '{\"updated_input\": {\"command\": \"rm -rf build\"}}'\n",
    );
    let hooks = hooks_from(
        &hook_config("pre_tool", &command, ""),
        ws.path(),
        data.path(),
    );
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "ls"})),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::with_hooks(ws.path(), data.path(), &llm.url(), Mode::AutoEdit, hooks).await;
    agent.submit("list").await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { call, subject, .. }) = agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await
    else {
        unreachable!()
    };
    assert_eq!(subject, "rm -rf build");
    agent
        .decide(&call.0, Decision::Deny { message: None })
        .await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(ws.path().join("build").exists());
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(result.contains("changed this call's input"), "{result}");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_asks_holds_a_call_the_gate_would_run() {
    let (ws, data, scripts) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        Scripts::new(),
    );
    let command = scripts.script(
        "ask.sh",
        "cat >/dev/null; echo '{\"decision\": \"ask\", \"reason\": \"a second look\"}'\n",
    );
    let hooks = hooks_from(
        &hook_config("pre_tool", &command, ""),
        ws.path(),
        data.path(),
    );
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "ls"})),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::with_hooks(ws.path(), data.path(), &llm.url(), Mode::Never, hooks).await;
    agent.submit("list").await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { call, why, .. }) = agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await
    else {
        unreachable!()
    };
    assert!(
        why.contains("hook pre_tool #1 asks: a second look"),
        "{why}"
    );
    agent.decide(&call.0, Decision::Approve).await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(!llm.tool_result(1, "c1").unwrap().starts_with("Error"));
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_hears_of_a_waiting_approval_and_pre_compact_runs_before_compact() {
    let (ws, data, scripts) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        Scripts::new(),
    );
    let heard = scripts.path("heard.txt");
    let append = scripts.script(
        "note.sh",
        &format!(
            "cat >> '{}'; echo >> '{}'\n",
            heard.display(),
            heard.display()
        ),
    );
    let config = format!(
        "{}{}",
        hook_config("notification", &append, ""),
        hook_config("pre_compact", &append, "")
    );
    let hooks = hooks_from(&config, ws.path(), data.path());
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch x"})),
        Script::text("done"),
        Script::text("the summary"),
    ])
    .await;
    let mut agent =
        TestAgent::with_hooks(ws.path(), data.path(), &llm.url(), Mode::AutoEdit, hooks).await;
    agent.submit("go").await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { call, .. }) = agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await
    else {
        unreachable!()
    };
    crate::support::cairn_cmd::eventually("the approval notification", || {
        std::fs::read_to_string(&heard)
            .unwrap_or_default()
            .contains("waits for your approval of bash: touch x")
    })
    .await;
    agent.decide(&call.0, Decision::Approve).await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    agent
        .send(cairn::bus::UserCommand::Compact { focus: None })
        .await;
    crate::support::cairn_cmd::eventually("the pre_compact hook", || {
        std::fs::read_to_string(&heard)
            .unwrap_or_default()
            .contains("\"trigger\":\"manual\"")
    })
    .await;
    agent.shutdown().await;
}
