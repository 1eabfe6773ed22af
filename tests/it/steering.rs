//! Steering and the user's own commands, over the bus as the TUI sends them: a `!cmd` is in the
//! next request and again after a resume (a `!!cmd` never), one sent while a call runs waits
//! for the step boundary, a message sent during the last answer extends the request, and an
//! interrupt gives undelivered messages back; the log records every fate.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, QueueEvent};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::agent::TestAgent;
use cairn::agent::StartFrom;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, EndReason, ShellEvent, ToolEvent, UserCommand};
use cairn::testing::{MockLlm, Script};

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("ws");
    let sessions = root.path().join("sessions");
    std::fs::create_dir_all(&workspace).unwrap();
    (root, workspace, sessions)
}

fn shell(id: &str, command: &str, context: bool) -> UserCommand {
    UserCommand::Shell {
        id: id.into(),
        command: command.into(),
        context,
    }
}

fn steer(id: &str, text: &str) -> UserCommand {
    UserCommand::Steer {
        id: id.into(),
        text: text.into(),
        attach: Vec::new(),
    }
}

fn finished(id: &str) -> impl Fn(&AgentEvent) -> bool + '_ {
    move |e| matches!(e, AgentEvent::Shell(ShellEvent::Finished { id: i, .. }) if i == id)
}

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

/// The request's messages as compact JSON texts, for order and content checks.
fn messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect()
}

fn records(log: &std::path::Path, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["type"] == kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_command_is_in_the_next_request_and_again_after_a_resume() {
    let (_root, workspace, sessions) = dirs();
    let llm = MockLlm::start(vec![Script::text("seen"), Script::text("still seen")]).await;
    let mut agent = TestAgent::new_session(&workspace, &sessions, &llm.url(), Mode::AutoEdit).await;
    agent.send(shell("s1", "echo hi", true)).await;
    agent.wait_for(finished("s1")).await;
    agent.send(shell("s2", "echo private-bits", false)).await;
    agent.wait_for(finished("s2")).await;
    agent.submit("what did it say?").await;
    agent.wait_for(ended).await;
    let first = messages(&llm.request(0));
    let told = first
        .iter()
        .filter(|m| m.contains("$ echo hi\\nhi"))
        .count();
    assert_eq!(told, 1, "{first:#?}");
    assert!(
        !first.iter().any(|m| m.contains("private-bits")),
        "{first:#?}"
    );
    let log = agent.log.clone();
    agent.shutdown().await;
    let mut resumed = TestAgent::spawn(
        &workspace,
        &sessions,
        &llm.url(),
        Mode::AutoEdit,
        StartFrom::Resume(log.clone()),
    )
    .await;
    // The replay shows both cards again.
    let mut cards = Vec::new();
    while cards.len() < 2 {
        if let AgentEvent::Shell(ShellEvent::Finished { id, .. }) = resumed
            .wait_for(|e| matches!(e, AgentEvent::Shell(ShellEvent::Finished { .. })))
            .await
        {
            cards.push(id);
        }
    }
    assert_eq!(cards, ["s1", "s2"]);
    resumed.submit("and now?").await;
    resumed.wait_for(ended).await;
    let second = messages(&llm.request(1));
    assert_eq!(
        second[..first.len()],
        first[..],
        "the resumed conversation starts with what was sent before, the command's note in it"
    );
    assert!(!second.iter().any(|m| m.contains("private-bits")));
    assert_eq!(records(&log, "shell").len(), 2);
    resumed.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_sent_while_a_call_runs_waits_for_the_step_boundary() {
    let (_root, workspace, sessions) = dirs();
    let wait = "while [ ! -f go ]; do sleep 0.05; done; echo tool-done";
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": wait})),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(&workspace, &sessions, &llm.url(), Mode::Never).await;
    agent.submit("run it").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::Started { .. })))
        .await;
    agent
        .send(shell("s1", "ls go || echo no-go-yet", true))
        .await;
    std::fs::write(workspace.join("go"), "").unwrap();
    agent.wait_for(ended).await;
    // The command ran after the call's result and before the next request.
    let order: Vec<&str> = agent
        .seen
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Tool(ToolEvent::Finished { .. }) => Some("result"),
            AgentEvent::Shell(ShellEvent::Started { .. }) => Some("shell"),
            AgentEvent::Conversation(ConversationEvent::StepStarted { .. }) => Some("step"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["step", "result", "shell", "step"]);
    let second = messages(&llm.request(1));
    let n = second.len();
    assert!(second[n - 2].contains("\"role\":\"tool\"") && second[n - 2].contains("tool-done"));
    assert!(
        second[n - 1].contains("own shell")
            && second[n - 1].contains("$ ls go || echo no-go-yet\\ngo\\n"),
        "the command saw the call's world, after it: {}",
        second[n - 1]
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_during_the_last_answer_extends_the_request() {
    let (_root, workspace, sessions) = dirs();
    let words = "one two three four five six seven eight nine ten eleven twelve";
    let llm = MockLlm::start(vec![
        Script::text(words).chunk_delay(Duration::from_millis(80)),
        Script::text("about the extra thing"),
    ])
    .await;
    let mut agent = TestAgent::new_session(&workspace, &sessions, &llm.url(), Mode::AutoEdit).await;
    agent.submit("tell me").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::TextDelta { .. })
            )
        })
        .await;
    agent.send(steer("m1", "and one more thing")).await;
    let delivered = agent
        .wait_for(|e| matches!(e, AgentEvent::Queue(QueueEvent::Delivered { .. })))
        .await;
    assert_eq!(
        delivered,
        AgentEvent::Queue(QueueEvent::Delivered {
            id: "m1".into(),
            step: 1
        })
    );
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) if text == "about the extra thing"))
        .await;
    let second = messages(&llm.request(1));
    let n = second.len();
    assert!(second[n - 2].contains("\"role\":\"assistant\"") && second[n - 2].contains("twelve"));
    assert!(second[n - 1].contains("and one more thing"), "{second:#?}");
    let log = agent.log.clone();
    agent.shutdown().await;
    let delivered = records(&log, "delivered");
    assert_eq!(delivered.len(), 1);
    assert_eq!(
        (delivered[0]["id"].as_str(), delivered[0]["step"].as_u64()),
        (Some("m1"), Some(1))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_gives_undelivered_messages_back_and_a_withdrawn_one_is_never_sent() {
    let (_root, workspace, sessions) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "sleep 30"})),
        Script::text("unused"),
    ])
    .await;
    let mut agent = TestAgent::new_session(&workspace, &sessions, &llm.url(), Mode::Never).await;
    agent.submit("wait").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::Started { .. })))
        .await;
    agent.send(steer("m1", "keep this")).await;
    agent.send(steer("m2", "take this back")).await;
    agent
        .send(UserCommand::Withdraw {
            id: "m2".into(),
            text: "take this back".into(),
            sent: true,
        })
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Queue(QueueEvent::Withdrawn { id }) if id == "m2"))
        .await;
    agent.send(UserCommand::Interrupt).await;
    let returned = agent
        .wait_for(|e| matches!(e, AgentEvent::Queue(QueueEvent::Returned { .. })))
        .await;
    assert_eq!(
        returned,
        AgentEvent::Queue(QueueEvent::Returned {
            ids: vec!["m1".into()]
        })
    );
    assert!(agent.seen.iter().any(|e| matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded {
            reason: EndReason::Interrupted,
            ..
        })
    )));
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    assert_eq!(
        llm.requests().len(),
        1,
        "nothing was sent after the interrupt"
    );
    let log = agent.log.clone();
    agent.shutdown().await;
    let withdrawn = records(&log, "withdrawn");
    assert_eq!(withdrawn.len(), 1);
    assert_eq!(withdrawn[0]["text"], "take this back");
    let back = records(&log, "returned");
    assert_eq!(
        (back.len(), back[0]["text"].as_str()),
        (1, Some("keep this"))
    );
    assert!(records(&log, "delivered").is_empty());
}
