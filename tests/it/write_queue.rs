//! The per-real-path write queue under load: many parallel edits of one file through
//! different spellings of its path all land, each on its predecessor's result, while a
//! change by someone else is still caught. And the agent's scheduling of one reply: writes to
//! different paths overlap, writes to one path keep their order, commands see earlier writes.
#![allow(clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use std::sync::Arc;

use cairn::tool_output::ToolOutput;
use cairn::tools::edit_file::EditFile;
use cairn::tools::read_file::ReadFile;
use cairn::tools::write_file::WriteFile;
use cairn::tools::{Tool, ToolCx};
use serde_json::json;

use super::tools_files::{Ws, call};
use crate::support::agent::TestAgent;
use cairn::bus::AgentEvent;
use cairn::bus::Mode;
use cairn::testing::{MockCall, MockLlm, Script};

const EDITS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_edits_through_different_spellings_all_land() {
    let original: String = (0..EDITS)
        .map(|i| format!("marker-{i:02} = old\n"))
        .collect();
    let ws = Ws::new().file("x", &original);
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    std::os::unix::fs::symlink(ws.root.join("x"), ws.root.join("link-to-x")).unwrap();
    std::os::unix::fs::symlink(&ws.root, ws.root.join("sub/ws")).unwrap();
    call(&ws, &ReadFile, json!({"path": "x"})).await.unwrap();

    let absolute = ws.root.join("x").to_string_lossy().into_owned();
    let spellings = [
        "x",
        "./x",
        absolute.as_str(),
        "link-to-x",
        "sub/../x",
        "sub/ws/x",
    ];
    let env = ws.env();
    let mut tasks = Vec::new();
    for i in 0..EDITS {
        let cx = ToolCx::new(Arc::clone(&env));
        let args = json!({
            "path": spellings[i % spellings.len()],
            "old_string": format!("marker-{i:02} = old"),
            "new_string": format!("marker-{i:02} = new"),
        });
        tasks.push(tokio::spawn(async move {
            EditFile.run(args, &cx).await.map_err(|e| e.to_string())
        }));
    }
    for task in tasks {
        let out = task.await.unwrap().unwrap();
        assert!(matches!(out, ToolOutput::FileChanged(_)));
    }
    let expected: String = (0..EDITS)
        .map(|i| format!("marker-{i:02} = new\n"))
        .collect();
    assert_eq!(ws.read("x"), expected);
    assert!(
        std::fs::symlink_metadata(ws.root.join("link-to-x"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        env.writes.busy_paths(),
        0,
        "the queue forgets finished paths"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_writes_to_different_files_all_land() {
    let ws = Ws::new();
    let env = ws.env();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let cx = ToolCx::new(Arc::clone(&env));
        let args = json!({"path": format!("out/{i}.txt"), "content": format!("file {i}")});
        tasks.push(tokio::spawn(async move {
            WriteFile.run(args, &cx).await.map_err(|e| e.to_string())
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    for i in 0..20 {
        assert_eq!(ws.read(&format!("out/{i}.txt")), format!("file {i}\n"));
    }
}

#[tokio::test]
async fn a_change_by_someone_else_between_queued_edits_is_caught() {
    let ws = Ws::new().file("f.txt", "a\nb\n");
    call(&ws, &ReadFile, json!({"path": "f.txt"}))
        .await
        .unwrap();
    call(
        &ws,
        &EditFile,
        json!({"path": "f.txt", "old_string": "a", "new_string": "A"}),
    )
    .await
    .unwrap();
    // Another program rewrites the file between the model's edits.
    ws.put("f.txt", "A\nb\nadded elsewhere\n");
    let err = call(
        &ws,
        &EditFile,
        json!({"path": "f.txt", "old_string": "b", "new_string": "B"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("changed on disk since it was last read"),
        "{err}"
    );
    assert_eq!(ws.read("f.txt"), "A\nb\nadded elsewhere\n");
}

#[tokio::test]
async fn a_cancelled_call_waiting_in_the_queue_changes_nothing() {
    let ws = Ws::new().file("f.txt", "a\n");
    call(&ws, &ReadFile, json!({"path": "f.txt"}))
        .await
        .unwrap();
    let real = cairn::fs::paths::resolve(&ws.root, "f.txt").unwrap();
    let turn = ws.cx.env.writes.lock(&real).await;
    let cx = ToolCx::new(ws.env());
    let cancel = cx.cancel.clone();
    let args = json!({"path": "f.txt", "old_string": "a", "new_string": "b"});
    let waiting =
        tokio::spawn(async move { EditFile.run(args, &cx).await.map_err(|e| e.to_string()) });
    cancel.cancel();
    let err = waiting.await.unwrap().unwrap_err();
    drop(turn);
    // The one cancelled marker; a cancelled write wrote nothing (checked below).
    assert_eq!(err, "[cancelled]");
    assert_eq!(ws.read("f.txt"), "a\n");
}

#[tokio::test]
async fn a_read_waits_for_a_running_write_of_the_same_file() {
    use futures_util::FutureExt;
    let ws = Ws::new().file("f.txt", "before\n");
    let real = cairn::fs::paths::resolve(&ws.root, "./f.txt").unwrap();
    let turn = ws.cx.env.writes.lock(&real).await;
    let mut reading = Box::pin(ReadFile.run(json!({"path": "f.txt"}), &ws.cx));
    assert!(
        (&mut reading).now_or_never().is_none(),
        "the read must wait for the write"
    );
    // The write lands while the read waits; the read then sees and stamps the new content.
    ws.put("f.txt", "after\n");
    drop(turn);
    let out = reading.await.unwrap();
    assert_eq!(out.model_text(), "     1\tafter\n");
    call(
        &ws,
        &EditFile,
        json!({"path": "f.txt", "old_string": "after", "new_string": "done"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("f.txt"), "done\n");
}

fn turn_ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

/// Polls `fact` until it holds; the deadline is only a guard.
async fn eventually(what: &str, fact: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !fact() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_to_different_paths_in_one_reply_overlap() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            MockCall::new("w1", "write_file", json!({"path": "a.txt", "content": "A"})),
            MockCall::new("w2", "write_file", json!({"path": "b.txt", "content": "B"})),
        ]),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(&root, data.path(), &llm.url(), Mode::AutoEdit).await;
    // A blocking hook: someone holds a.txt's turn, so the first write cannot finish.
    let a = cairn::fs::paths::resolve(&root, "a.txt").unwrap();
    let held = agent.tools.writes.lock(&a).await;
    agent.submit("write both").await;
    // The second write lands while the first still waits: they run at the same time.
    eventually("b.txt written while a.txt is held", || {
        std::fs::read_to_string(root.join("b.txt")).is_ok_and(|t| t == "B\n")
    })
    .await;
    assert!(!root.join("a.txt").exists(), "a.txt must still be waiting");
    drop(held);
    agent.wait_for(turn_ended).await;
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "A\n");
    for id in ["w1", "w2"] {
        let result = llm.tool_result(1, id).unwrap();
        assert!(result.starts_with("Created"), "{id}: {result}");
    }
}

/// Steps of the chain of edits of one file in one reply: each edit needs its predecessor's.
const STEPS: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_to_one_path_keep_their_order_among_other_writes() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("f.txt"), "v0\n").unwrap();
    let absolute = root.join("f.txt").to_string_lossy().into_owned();
    let spellings = ["f.txt", "./f.txt", "sub/../f.txt", absolute.as_str()];
    let mut calls = Vec::new();
    for i in 1..=STEPS {
        calls.push(MockCall::new(
            &format!("e{i}"),
            "edit_file",
            json!({
                "path": spellings[i % spellings.len()],
                "old_string": format!("v{}\n", i - 1),
                "new_string": format!("v{i}\n"),
            }),
        ));
        // Writes of another file in between, themselves in order.
        calls.push(MockCall::new(
            &format!("g{i}"),
            "write_file",
            json!({"path": "g.txt", "content": format!("g{i}")}),
        ));
    }
    let llm = MockLlm::start(vec![
        Script::tool_call("r", "read_file", json!({"path": "f.txt"})),
        Script::tool_calls(calls),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(&root, data.path(), &llm.url(), Mode::AutoEdit).await;
    agent.submit("edit in steps").await;
    agent.wait_for(turn_ended).await;
    for i in 1..=STEPS {
        for id in [format!("e{i}"), format!("g{i}")] {
            let result = llm.tool_result(2, &id).unwrap();
            assert!(
                result.starts_with("Updated") || result.starts_with("Created"),
                "{id}: {result}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(root.join("f.txt")).unwrap(),
        format!("v{STEPS}\n")
    );
    assert_eq!(
        std::fs::read_to_string(root.join("g.txt")).unwrap(),
        format!("g{STEPS}\n")
    );
    assert_eq!(agent.tools.writes.busy_paths(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_sees_the_writes_before_it_and_none_after_it() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            MockCall::new(
                "w1",
                "write_file",
                json!({"path": "a.txt", "content": "first"}),
            ),
            MockCall::new("c1", "bash", json!({"command": "cat a.txt; cat b.txt"})),
            MockCall::new(
                "w2",
                "write_file",
                json!({"path": "b.txt", "content": "later"}),
            ),
        ]),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(&root, data.path(), &llm.url(), Mode::Never).await;
    agent.submit("write then look").await;
    agent.wait_for(turn_ended).await;
    let seen = llm.tool_result(1, "c1").unwrap();
    assert!(seen.contains("first\n"), "{seen}");
    assert!(
        seen.contains("No such file"),
        "b.txt is written after: {seen}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "later\n"
    );
}
