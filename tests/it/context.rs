//! The context window over a long session: every request extends the one before byte for byte
//! (todo updates, mode changes, a moved git branch and a resume included), so the provider's
//! prefix cache keeps hitting.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::agent::StartFrom;
use cairn::bus::{AgentEvent, UserCommand};
use cairn::permissions::Mode;
use cairn::testing::{MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::TurnEnded { .. })
}

/// The raw bytes of a request body up to the last byte of its last message (the `]` that
/// closes `messages` excluded). The body is `{"model":…,"messages":[…],"stream":…}`; a `"`
/// inside a string is escaped, so `],"stream":` only occurs where the array ends.
fn messages_prefix(raw: &[u8]) -> &[u8] {
    let end = raw
        .windows(11)
        .position(|w| w == b"],\"stream\":")
        .expect("a chat request body with messages then stream");
    &raw[..end]
}

/// Every request begins with exactly the bytes of the previous request's messages, followed
/// by at least one new message.
pub fn assert_append_only(bodies: &[Vec<u8>]) {
    for (i, pair) in bodies.windows(2).enumerate() {
        let (before, after) = (messages_prefix(&pair[0]), messages_prefix(&pair[1]));
        let shared = before.iter().zip(after).take_while(|(a, b)| a == b).count();
        assert!(
            after.starts_with(before) && after.get(before.len()) == Some(&b','),
            "request {} does not extend request {i}: they share {shared} of {} bytes; first difference:\n  before: {}\n  after:  {}",
            i + 1,
            before.len(),
            String::from_utf8_lossy(&before[shared..(shared + 200).min(before.len())]),
            String::from_utf8_lossy(&after[shared..(shared + 200).min(after.len())]),
        );
    }
}

fn todos(items: &[(&str, &str)]) -> serde_json::Value {
    json!({"todos": items.iter().map(|(c, s)| json!({"content": c, "status": s})).collect::<Vec<_>>()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_extends_the_previous_one_byte_for_byte_across_todos_modes_and_a_resume() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    std::fs::write(ws.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("t1", "todo_write", todos(&[("read a", "in_progress")])),
        Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call(
            "t2",
            "todo_write",
            todos(&[("read a", "completed"), ("edit a", "in_progress")]),
        ),
        Script::text("read it"),
        // After a mode change and a branch switch.
        Script::tool_call("b1", "bash", json!({"command": "echo hi"})),
        Script::tool_call(
            "t3",
            "todo_write",
            todos(&[("read a", "completed"), ("edit a", "completed")]),
        ),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.submit("read a.txt and plan").await;
    agent.wait_for(ended).await;
    agent.send(UserCommand::SetMode { mode: Mode::Auto }).await;
    std::fs::write(ws.path().join(".git/HEAD"), "ref: refs/heads/fix\n").unwrap();
    agent.submit("now finish").await;
    agent.wait_for(ended).await;
    let log = agent.log.clone();
    agent.shutdown().await;

    // Resumed in another mode: the old prompt goes out again, the new mode as a note.
    llm.push(Script::tool_call(
        "t4",
        "todo_write",
        todos(&[("wrap up", "in_progress")]),
    ));
    llm.push(Script::text("wrapped"));
    let mut resumed = TestAgent::spawn(
        ws.path(),
        data.path(),
        &llm.url(),
        Mode::AutoEdit,
        StartFrom::Resume(log),
    )
    .await;
    resumed.submit("wrap up").await;
    resumed.wait_for(ended).await;
    resumed.shutdown().await;

    let recorded = llm.recorded();
    assert_eq!(recorded.len(), 9);
    let bodies: Vec<Vec<u8>> = recorded.iter().map(|r| r.raw.clone()).collect();
    assert_append_only(&bodies);

    let last = &recorded[8].body["messages"];
    let system = last[0]["content"].as_str().unwrap();
    assert!(!system.contains("edit a"), "no todos in the system prompt");
    assert!(system.contains("Git branch: main") && system.contains("Permission mode: never"));
    let text = last.to_string();
    assert!(text.contains("the permission mode is now auto"), "{text}");
    assert!(
        text.contains("the git branch is now fix (was main)"),
        "{text}"
    );
    assert!(
        text.contains("the permission mode is now auto-edit"),
        "{text}"
    );
}
