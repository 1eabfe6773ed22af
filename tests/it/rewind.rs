//! Rewinds and undos through the agent, as the TUI drives it: a conversation rewound with the
//! files kept tells the model the files may differ and forgets what the dropped part read
//! (an edit needs a fresh read); an undo is planned before it is applied, and the redo
//! slot empties once a new turn changes files; `cairn undo` after `/undo` goes one more turn
//! back. (The TUI end to end: tests/it/tui_pty/rewind.rs.)
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent, TimeTravelEvent};
use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, Restore, RewindPoint, UserCommand};
use cairn::testing::{MockLlm, Script};

fn idle(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::Conversation(ConversationEvent::Idle))
}

async fn points(agent: &mut TestAgent) -> Vec<RewindPoint> {
    agent.send(UserCommand::ListRewindPoints).await;
    match agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints { .. })
            )
        })
        .await
    {
        AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints { points }) => points,
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
    // Sent just now: the picker shows the local time of day.
    let when = points[0].when.clone().unwrap();
    assert!(when.contains(':'), "{when}");
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
    let AgentEvent::TimeTravel(TimeTravelEvent::Rewound { text, .. }) = agent
        .wait_for(|e| matches!(e, AgentEvent::TimeTravel(TimeTravelEvent::Rewound { .. })))
        .await
    else {
        unreachable!()
    };
    assert_eq!(text, "what does a.txt say?");
    agent
        .wait_for(|e| matches!(e, AgentEvent::TimeTravel(TimeTravelEvent::Restored { .. })))
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
    let AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan { plan, .. }) = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan { .. })
            )
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.files[0].path, "out/a.txt");
    assert!(ws.path().join("out/a.txt").exists());
    agent.restore(Restore::Undo).await;
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
                AgentEvent::Report(ReportEvent::Warning { .. })
                    | AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan { .. })
            )
        })
        .await;
    let AgentEvent::Report(ReportEvent::Warning { message }) = event else {
        panic!("the redo slot survived a new change: {event:?}");
    };
    assert!(message.contains("nothing to redo"), "{message}");
    assert!(!ws.path().join("out/a.txt").exists());
    assert!(ws.path().join("out/b.txt").exists());
    agent.shutdown().await;
}

async fn say(agent: &mut TestAgent, text: &str) {
    agent.submit(text).await;
    agent.wait_for(idle).await;
}

async fn rewind_conversation(agent: &mut TestAgent, text: &str) {
    let at = points(agent)
        .await
        .into_iter()
        .find(|p| p.text == text)
        .unwrap()
        .at;
    agent
        .restore(Restore::Rewind {
            at,
            files: false,
            conversation: true,
        })
        .await;
}

async fn compact(agent: &mut TestAgent) {
    agent.send(UserCommand::Compact { focus: None }).await;
    let AgentEvent::Report(ReportEvent::Compacted { before, after, .. }) = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Compacted { .. })))
        .await
    else {
        unreachable!()
    };
    assert!(after < before, "{before} -> {after}");
    agent.wait_for(idle).await;
}

fn messages(llm: &MockLlm, i: usize) -> Vec<serde_json::Value> {
    llm.request(i)["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forks_and_compactions_in_any_order_resume_byte_identical() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha line\n".repeat(300)).unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
        Script::text("r1"),
        Script::text("r2"),
        Script::text("r3"),
        Script::text("r4"),
        Script::text("r4 again"),
    ])
    .await;
    // Summary requests (no tools) get a summary, whenever they come.
    llm.respond_with(|body| {
        body.get("tools")
            .is_none()
            .then(|| Script::text("## Goal\nthe summary"))
    });
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.wait_for(idle).await;
    say(&mut agent, "one: read a.txt").await;
    say(&mut agent, "two").await;
    // A fork, then a compaction of the new branch.
    rewind_conversation(&mut agent, "two").await;
    say(&mut agent, "three").await;
    compact(&mut agent).await;
    say(&mut agent, "four").await;
    // A fork back past nothing compacted, after the compaction.
    rewind_conversation(&mut agent, "four").await;
    say(&mut agent, "four again").await;
    let log = agent.log.clone();
    agent.shutdown().await;

    let live: Vec<serde_json::Value> = (0..llm.recorded().len())
        .map(|i| llm.request(i))
        .filter(|r| r.get("tools").is_some())
        .map(|r| r["messages"].as_array().unwrap().clone().into())
        .collect();
    let last = live.last().unwrap().as_array().unwrap().clone();
    let text = serde_json::to_string(&last).unwrap();
    assert!(
        text.contains("the summary") && text.contains("four again") && !text.contains("\"four\""),
        "{text}"
    );
    assert!(!text.contains("\"two\""), "{text}");

    let resumed = MockLlm::start(vec![Script::text("five")]).await;
    let mut agent = TestAgent::spawn(
        ws.path(),
        data.path(),
        &resumed.url(),
        Mode::Never,
        cairn::agent::StartFrom::Resume(log),
    )
    .await;
    agent.wait_for(idle).await;
    say(&mut agent, "five").await;
    agent.shutdown().await;
    let again = messages(&resumed, 0);
    assert_eq!(
        again[..last.len()],
        last[..],
        "the resumed conversation is exactly the new branch as last sent"
    );
    assert_eq!(again[last.len()]["content"], "r4 again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cairn_undo_after_a_tui_undo_goes_one_more_turn_back() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("out")).unwrap();
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
    say(&mut agent, "make a").await;
    say(&mut agent, "make b").await;
    agent.restore(Restore::Undo).await;
    assert!(!ws.path().join("out/b.txt").exists());
    assert!(ws.path().join("out/a.txt").exists());
    let log = agent.log.clone();
    agent.shutdown().await;

    let data_dir = cairn::dirs::Dirs::for_sessions(data.path())
        .data()
        .to_path_buf();
    let report = cairn::time_travel::undo::undo_session(&log, &data_dir, false).unwrap();
    assert!(report.checkpoint.is_some(), "{report:?}");
    assert!(!ws.path().join("out/a.txt").exists(), "{report:?}");
    // And --redo puts back the turn that undo took, the first one.
    let report = cairn::time_travel::undo::undo_session(&log, &data_dir, true).unwrap();
    assert!(report.checkpoint.is_some(), "{report:?}");
    assert!(ws.path().join("out/a.txt").exists());
    assert!(!ws.path().join("out/b.txt").exists());
}
