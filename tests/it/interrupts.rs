//! An interrupt keeps its context: what the user saw of the reply stays in the transcript, the
//! log and the next request, marked as interrupted, and the model is told the user stopped it;
//! cancelled calls keep valid `[cancelled]` results; a resume shows it all again.
#![allow(clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::agent::TestAgent;
use cairn::agent::{INTERRUPTED_MARK, INTERRUPTED_NOTE, StartFrom};
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, EndReason, UserCommand};
use cairn::testing::{MockCall, MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

/// The messages of request `i` without the system prompt, as (role, content) pairs.
fn roles_and_text(llm: &MockLlm, i: usize) -> Vec<(String, String)> {
    llm.request(i)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Interrupts once `text` has streamed; returns the streamed text the agent reported.
async fn interrupt_after(agent: &mut TestAgent, text: &str) -> String {
    let mut streamed = String::new();
    loop {
        let event = agent
            .wait_for(|e| {
                matches!(
                    e,
                    AgentEvent::Conversation(ConversationEvent::TextDelta { .. })
                )
            })
            .await;
        if let AgentEvent::Conversation(ConversationEvent::TextDelta { text: delta, .. }) = event {
            streamed.push_str(&delta);
        }
        if streamed.contains(text) {
            break;
        }
    }
    agent.send(UserCommand::Interrupt).await;
    streamed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_answer_is_kept_marked_and_is_in_the_next_request() {
    let (ws, data) = dirs();
    let llm = MockLlm::start_strict(vec![
        Script::endless_text("step ").chunk_delay(Duration::from_millis(10)),
        Script::text("Starting over from the plan."),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("write the plan").await;
    interrupt_after(&mut agent, "step step step").await;
    let end = agent.wait_for(ended).await;
    assert!(
        matches!(
            &end,
            AgentEvent::Conversation(ConversationEvent::RequestEnded {
                reason: EndReason::Interrupted,
                ..
            })
        ),
        "{end:?}"
    );
    let kept = agent
        .seen
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) => {
                Some(text.clone())
            }
            _ => None,
        })
        .expect("the partial answer is published, marked");
    assert!(
        kept.starts_with("step step step") && kept.ends_with(INTERRUPTED_MARK),
        "{kept}"
    );
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent.submit("shorter please").await;
    agent.wait_for(ended).await;

    let messages = roles_and_text(&llm, 1);
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    // The interrupted exchange, then the note saying so ahead of the new message (two user
    // messages in a row go as one: the note is what keeps them apart).
    assert_eq!(roles, ["user", "assistant", "user"], "{messages:?}");
    assert_eq!(messages[0].1, "write the plan");
    assert_eq!(messages[1].1, kept, "the model sees what the user saw");
    let (note, next) = messages[2].1.rsplit_once("\n\n").unwrap();
    assert!(
        note.starts_with(INTERRUPTED_NOTE) && note.contains("marked as interrupted"),
        "{note}"
    );
    assert_eq!(next, "shorter please");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_before_any_text_still_tells_the_model() {
    let (ws, data) = dirs();
    // A server that sends nothing but keep-alive comments: the user gives up first.
    let llm = MockLlm::start_strict(vec![
        Script::keep_alive_only(Duration::from_millis(50)),
        Script::text("ok"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("first").await;
    llm.wait_for_requests(1, Duration::from_secs(10)).await;
    agent.send(UserCommand::Interrupt).await;
    agent.wait_for(ended).await;
    assert!(
        !agent.seen.iter().any(|e| matches!(
            e,
            AgentEvent::Conversation(ConversationEvent::AssistantMessage { .. })
        )),
        "nothing was shown, so no answer is made up"
    );
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent.submit("second").await;
    agent.wait_for(ended).await;
    let messages = roles_and_text(&llm, 1);
    assert_eq!(messages.len(), 1, "{messages:?}");
    let parts: Vec<&str> = messages[0].1.split("\n\n").collect();
    assert_eq!(parts.len(), 3, "{messages:?}");
    assert_eq!(parts[0], "first");
    assert!(
        parts[1].starts_with(INTERRUPTED_NOTE) && parts[1].contains("before you replied"),
        "the two messages are not merged silently: {messages:?}"
    );
    assert_eq!(parts[2], "second");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_calls_keep_valid_results_and_the_model_is_told_of_the_interrupt() {
    let (ws, data) = dirs();
    let llm = MockLlm::start_strict(vec![
        Script::tool_calls([
            MockCall::new("c1", "bash", json!({"command": "touch one"})),
            MockCall::new("c2", "read_file", json!({"path": "nothing"})),
        ])
        .with_preface("Let me set that up."),
        Script::text("after"),
    ])
    .await;
    let mut agent =
        TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::AutoEdit).await;
    agent.submit("go").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Tool(cairn::bus::ToolEvent::AwaitingApproval { .. })
            )
        })
        .await;
    agent.send(UserCommand::Interrupt).await;
    agent.wait_for(ended).await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent.submit("never mind").await;
    agent.wait_for(ended).await;
    assert_eq!(llm.tool_result(1, "c1").as_deref(), Some("[cancelled]"));
    assert_eq!(llm.tool_result(1, "c2").as_deref(), Some("[cancelled]"));
    let messages: Vec<Value> = llm.request(1)["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "user"],
        "{messages:?}"
    );
    let (note, next) = messages[5]["content"]
        .as_str()
        .unwrap()
        .rsplit_once("\n\n")
        .unwrap();
    assert!(
        note.starts_with(INTERRUPTED_NOTE) && note.contains("[cancelled]"),
        "{note}"
    );
    assert_eq!(next, "never mind");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_shows_the_interrupted_answer_and_sends_it_marked() {
    let (ws, data) = dirs();
    let llm = MockLlm::start_strict(vec![
        Script::endless_text("draft ").chunk_delay(Duration::from_millis(10)),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("draft it").await;
    interrupt_after(&mut agent, "draft draft").await;
    agent.wait_for(ended).await;
    let log = agent.log.clone();
    agent.shutdown().await;

    let llm = MockLlm::start_strict(vec![Script::text("resumed")]).await;
    let mut agent = TestAgent::spawn(
        ws.path(),
        data.path(),
        &llm.url(),
        Mode::Ask,
        StartFrom::Resume(log),
    )
    .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    let replayed = agent
        .seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) => {
                Some(text.clone())
            }
            _ => None,
        })
        .expect("the resume shows the interrupted answer");
    assert!(
        replayed.starts_with("draft draft") && replayed.ends_with(INTERRUPTED_MARK),
        "{replayed}"
    );
    assert!(
        agent.seen.iter().any(|e| matches!(
            e,
            AgentEvent::Conversation(ConversationEvent::RequestEnded {
                reason: EndReason::Interrupted,
                ..
            })
        )),
        "the resume says it was interrupted"
    );
    agent.submit("go on").await;
    agent.wait_for(ended).await;
    let messages = roles_and_text(&llm, 0);
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[0].1, "draft it");
    assert_eq!(messages[1], ("assistant".to_string(), replayed.clone()));
    assert!(
        messages[2].1.starts_with(INTERRUPTED_NOTE) && messages[2].1.ends_with("\n\ngo on"),
        "{messages:?}"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_after_a_retry_keeps_only_what_the_retry_showed() {
    let (ws, data) = dirs();
    let llm = MockLlm::start_strict(vec![
        Script::text("lost lost lost lost").cut_after_chunks(3),
        Script::endless_text("again ").chunk_delay(Duration::from_millis(10)),
        Script::text("ok"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("go").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::Retrying { .. })
            )
        })
        .await;
    interrupt_after(&mut agent, "again again").await;
    agent.wait_for(ended).await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent.submit("next").await;
    agent.wait_for(ended).await;
    let messages = roles_and_text(&llm, 2);
    let (role, kept) = &messages[1];
    assert_eq!(role, "assistant", "{messages:?}");
    assert!(
        kept.starts_with("again again")
            && !kept.contains("lost")
            && kept.ends_with(INTERRUPTED_MARK),
        "{kept}"
    );
    agent.shutdown().await;
}
