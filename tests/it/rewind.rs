//! Rewinds and undos through the agent, as the TUI drives it: a conversation rewound with the
//! files kept tells the model the files may differ and forgets what the dropped part read
//! (an edit needs a fresh read); an undo is planned before it is applied, and the redo
//! slot empties once a new turn changes files. (The TUI end to end: tests/it/tui_pty/rewind.rs.)
#![allow(clippy::unwrap_used)]

use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::bus::{AgentEvent, Restore, RewindPoint, UserCommand};
use cairn::permissions::Mode;
use cairn::testing::{MockLlm, Script};

fn idle(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::Idle)
}

async fn points(agent: &mut TestAgent) -> Vec<RewindPoint> {
    agent.send(UserCommand::ListRewindPoints).await;
    match agent
        .wait_for(|e| matches!(e, AgentEvent::RewindPoints { .. }))
        .await
    {
        AgentEvent::RewindPoints { points } => points,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_rewind_keeping_the_files_tells_the_model_and_forgets_its_reads() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "a.txt"})),
        Script::text("It says hello."),
        // In the new branch the model has not read a.txt: its edit must be refused.
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "a.txt", "old_string": "hello", "new_string": "bye"}),
        ),
        Script::text("I will read it first."),
    ])
    .await;
    let mut agent =
        TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::AutoEdit).await;
    agent.wait_for(idle).await;
    agent.submit("what does a.txt say?").await;
    agent.wait_for(idle).await;

    let points = points(&mut agent).await;
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].text, "what does a.txt say?");
    assert_eq!(points[0].changes, 0);
    agent
        .send(UserCommand::Restore {
            what: Restore::Rewind {
                at: points[0].at,
                files: false,
                conversation: true,
            },
            apply: true,
        })
        .await;
    let AgentEvent::Rewound { text, .. } = agent
        .wait_for(|e| matches!(e, AgentEvent::Rewound { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(text, "what does a.txt say?");
    agent
        .wait_for(|e| matches!(e, AgentEvent::Restored { .. }))
        .await;

    agent.submit("change hello to bye").await;
    agent.wait_for(idle).await;
    let sent = llm.request(2);
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    let told = messages[1]["content"].as_str().unwrap();
    assert!(
        told.contains("files may differ") && told.ends_with("change hello to bye"),
        "{told}"
    );
    assert!(!sent.to_string().contains("It says hello."));
    let refused = llm.tool_result(3, "c2").unwrap();
    assert!(refused.contains("not read in this session"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "hello\n"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_change_after_an_undo_empties_the_redo_slot() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("out")).unwrap();
    // Not empty: an undo prunes directories its removals leave empty.
    std::fs::write(ws.path().join("out/.keep"), "").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "echo one > out/a.txt"})),
        Script::text("made a"),
        Script::tool_call("c2", "bash", json!({"command": "echo two > out/b.txt"})),
        Script::text("made b"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.wait_for(idle).await;
    agent.submit("make a").await;
    agent.wait_for(idle).await;
    // The plan first: nothing moves until it is applied.
    agent
        .send(UserCommand::Restore {
            what: Restore::Undo,
            apply: false,
        })
        .await;
    let AgentEvent::RestorePlan { plan, .. } = agent
        .wait_for(|e| matches!(e, AgentEvent::RestorePlan { .. }))
        .await
    else {
        unreachable!()
    };
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.files[0].path, "out/a.txt");
    assert!(ws.path().join("out/a.txt").exists());
    agent
        .send(UserCommand::Restore {
            what: Restore::Undo,
            apply: true,
        })
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Restored { .. }))
        .await;
    assert!(!ws.path().join("out/a.txt").exists());

    agent.submit("make b instead").await;
    agent.wait_for(idle).await;
    agent
        .send(UserCommand::Restore {
            what: Restore::Redo,
            apply: false,
        })
        .await;
    let event = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Warning { .. } | AgentEvent::RestorePlan { .. }
            )
        })
        .await;
    let AgentEvent::Warning { message } = event else {
        panic!("the redo slot survived a new change: {event:?}");
    };
    assert!(message.contains("nothing to redo"), "{message}");
    assert!(!ws.path().join("out/a.txt").exists());
    assert!(ws.path().join("out/b.txt").exists());
    agent.shutdown().await;
}
