//! The checkpoint store as a wall: a change that could not be checkpointed does not run
//! unasked, and cairn's own settings are not undone with the model's changes.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, TimeTravelEvent};
use serde_json::json;

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// The text of the tool result for call `id` in any of the sandbox's session logs (two
/// sessions started in one second do not sort by time).
fn result_text(sb: &Sandbox, id: &str) -> String {
    let mut records = Vec::new();
    for log in std::fs::read_dir(sb.sessions_dir()).unwrap().flatten() {
        if log.path().extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(log.path()).unwrap();
            records.extend(
                text.lines()
                    .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()),
            );
        }
    }
    records
        .iter()
        .filter(|r| r["type"] == "tool_result" && r["call"] == id)
        .map(|r| r["result"]["text"].as_str().unwrap_or_default().to_string())
        .next()
        .unwrap_or_else(|| panic!("no result for {id}: {records:#?}"))
}

/// The one shadow repository the sandbox's data dir holds.
fn store_dir(sb: &Sandbox) -> std::path::PathBuf {
    let stores: Vec<_> = std::fs::read_dir(sb.data_dir().join("checkpoints"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(stores.len(), 1, "{stores:?}");
    stores[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_whose_checkpoint_failed_is_not_run_unasked() {
    let sb = Sandbox::new().file("a.txt", "one\n");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "w1",
            "write_file",
            json!({"path": "b.txt", "content": "two\n"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "first"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The store can no longer be written (its lock file is a directory now).
    let lock = store_dir(&sb).join("cairn.lock");
    let _ = std::fs::remove_file(&lock);
    std::fs::create_dir(&lock).unwrap();

    let llm = MockLlm::start(vec![
        Script::tool_call(
            "w2",
            "write_file",
            json!({"path": "c.txt", "content": "three\n"}),
        ),
        Script::tool_call("c2", "bash", json!({"command": "echo made > made.txt"})),
        Script::text("done"),
    ])
    .await;
    let _ = sb.exec(&llm.url(), &["--mode", "auto", "second"]).await;
    let text = result_text(&sb, "w2");
    assert!(
        text.contains("checkpoint before this change failed") && text.contains("not run"),
        "{text}"
    );
    assert_eq!(sb.read("b.txt"), "two\n");
    assert!(
        !sb.path("c.txt").exists(),
        "the uncheckpointed write did not run"
    );
    assert!(!sb.path("made.txt").exists(), "nor the command");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_saving_a_project_rule_keeps_the_rule() {
    use cairn::bus::Mode;
    use cairn::bus::{AgentEvent, Decision, Restore, ToolEvent};

    use crate::support::agent::TestAgent;

    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch a.txt"})),
        Script::text("done"),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = TestAgent::new_session(ws.path(), &sessions, &llm.url(), Mode::AutoEdit).await;
    agent.submit("make it").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await;
    let decision = Decision::ApproveForProject {
        prefix: "touch".into(),
    };
    agent.decide("c1", decision).await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    let config = ws.path().join(".cairn/config.toml");
    let saved = std::fs::read_to_string(&config).unwrap();
    assert!(ws.path().join("a.txt").exists());
    agent.restore(Restore::Undo).await;
    assert!(
        !ws.path().join("a.txt").exists(),
        "the model's change is undone"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        saved,
        "the rule the user saved with `p` stays"
    );
    agent.shutdown().await;
}

/// The rule saved with `p` while a command was held is not the command's change (its card's
/// diff does not list it) and no restore takes it back: not `/undo`, not `/redo`, not a
/// rewind of the files; the file stays trusted for the next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_restore_takes_back_a_rule_saved_with_p() {
    use cairn::bus::Mode;
    use cairn::bus::{AgentEvent, Decision, Restore, ToolEvent, UserCommand};
    use cairn::permissions::trust::TrustStore;
    use cairn::tool_output::ToolOutput;

    use crate::support::agent::TestAgent;

    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch a.txt"})),
        Script::text("done"),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = TestAgent::new_session(ws.path(), &sessions, &llm.url(), Mode::AutoEdit).await;
    agent.submit("make it").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await;
    let decision = Decision::ApproveForProject {
        prefix: "touch".into(),
    };
    agent.decide("c1", decision).await;
    let finished = agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::Finished { .. })))
        .await;
    let AgentEvent::Tool(ToolEvent::Finished { result, .. }) = finished else {
        unreachable!()
    };
    let Some(ToolOutput::Command(run)) = &result.output else {
        panic!("{result:?}")
    };
    let changed: Vec<&str> = run.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(changed, ["a.txt"], "the rule is not the command's change");
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    let config = ws.path().join(".cairn/config.toml");
    let saved = std::fs::read_to_string(&config).unwrap();
    assert!(saved.contains("touch"), "{saved}");
    let ws_real = std::fs::canonicalize(ws.path()).unwrap();
    let trust = TrustStore::in_data_dir(data.path());
    assert!(
        trust.current_trusted(&ws_real),
        "the user's own rule is trusted"
    );

    for what in [
        Restore::Undo,
        Restore::Redo,
        Restore::Rewind {
            at: 0,
            files: true,
            conversation: false,
        },
    ] {
        agent
            .send(UserCommand::Restore {
                what: what.clone(),
                apply: true,
            })
            .await;
        let done = agent
            .wait_for(|e| matches!(e, AgentEvent::TimeTravel(TimeTravelEvent::Restored { .. })))
            .await;
        let AgentEvent::TimeTravel(TimeTravelEvent::Restored { done, .. }) = done else {
            unreachable!()
        };
        assert!(
            done.files.iter().all(|f| !f.path.starts_with(".cairn")),
            "{what:?}: {done:?}"
        );
        let model_change_there = matches!(what, Restore::Redo);
        assert_eq!(
            ws.path().join("a.txt").exists(),
            model_change_there,
            "{what:?} moved the model's change"
        );
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            saved,
            "{what:?} left the rule saved with `p` as it was"
        );
        assert!(trust.current_trusted(&ws_real), "{what:?}: still trusted");
    }
    agent.shutdown().await;
}
