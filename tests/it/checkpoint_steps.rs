//! Checkpoints off the critical path, through the agent: a batch of edits is checkpointed
//! without starting a single process (counted by a seccomp filter on every thread the session
//! runs on), and a change the user makes between two commands is in the second command's
//! "before" state, whether the store learns of it by notifications or by a scan.
#![allow(clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::agent::CheckpointSettings;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, Decision, ToolEvent};
use cairn::testing::{ExecCounter, MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

fn checkpoint_kinds(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "checkpoint")
        .map(|r| r["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_batch_of_edits_is_checkpointed_without_starting_a_process() {
    // The filter binds this thread and every thread it starts from now on: the runtime's
    // workers and its blocking pool, where snapshots run.
    std::thread::spawn(|| {
        let counter = ExecCounter::install_on_this_thread().unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let ws = tempfile::tempdir().unwrap();
            let data = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(ws.path().join("src")).unwrap();
            std::fs::write(ws.path().join("src/a.rs"), "fn one() {}\n").unwrap();
            let llm = MockLlm::start(vec![
                Script::tool_call(
                    "w1",
                    "write_file",
                    json!({"path": "src/new.rs", "content": "fn new() {}\n"}),
                ),
                Script::tool_call("r1", "read_file", json!({"path": "src/a.rs"})),
                Script::tool_call(
                    "e1",
                    "edit_file",
                    json!({"path": "src/a.rs", "old_string": "one", "new_string": "two"}),
                ),
                Script::text("edited"),
            ])
            .await;
            let mut agent =
                TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
            agent.submit("edit").await;
            agent.wait_for(ended).await;
            assert_eq!(
                counter.programs(),
                Vec::<String>::new(),
                "the edits' checkpoints started programs"
            );
            assert_eq!(
                checkpoint_kinds(&agent.log),
                ["before", "after", "before", "after"],
                "both write batches were checkpointed"
            );
            assert_eq!(
                std::fs::read_to_string(ws.path().join("src/a.rs")).unwrap(),
                "fn two() {}\n"
            );

            // The counter sees what the session starts: a command is one bash.
            llm.push(Script::tool_call(
                "b1",
                "bash",
                json!({"command": "echo hi"}),
            ));
            llm.push(Script::text("ran"));
            agent.submit("run").await;
            agent.wait_for(ended).await;
            let programs = counter.programs();
            assert!(
                programs.len() == 1 && programs[0].ends_with("bash"),
                "{programs:?}"
            );
            agent.shutdown().await;
        });
    })
    .join()
    .unwrap();
}

/// Two commands, each approved; between the approval of the second and its run the user
/// changes files. The second command's changes must not include the user's.
async fn a_users_change_between_two_commands_is_not_the_second_commands(notifications: bool) {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "the user's notes\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "echo one > one.txt"})),
        Script::tool_call("c2", "bash", json!({"command": "echo two > two.txt"})),
        Script::text("both"),
    ])
    .await;
    let settings = CheckpointSettings {
        notifications,
        ..CheckpointSettings::default()
    };
    let mut agent = TestAgent::new_session_checkpoints(
        ws.path(),
        data.path(),
        &llm.url(),
        Mode::AutoEdit,
        settings,
    )
    .await;
    let is_approval =
        |e: &AgentEvent| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. }));
    agent.submit("two commands").await;
    agent.wait_for(is_approval).await;
    agent.decide("c1", Decision::Approve).await;
    agent.wait_for(is_approval).await;
    // The first command ran and was checkpointed; the second waits for the user, who edits.
    assert!(ws.path().join("one.txt").exists());
    std::fs::write(ws.path().join("notes.txt"), "the user's notes, edited\n").unwrap();
    std::fs::write(ws.path().join("user.txt"), "made by the user\n").unwrap();
    agent.decide("c2", Decision::Approve).await;
    agent.wait_for(ended).await;

    let first = llm.tool_result(1, "c1").unwrap();
    assert!(first.contains("one.txt (created)"), "{first}");
    let second = llm.tool_result(2, "c2").unwrap();
    assert!(
        second.contains("[files changed by this command: two.txt (created)]"),
        "{second}"
    );
    assert!(
        !second.contains("user.txt") && !second.contains("notes.txt"),
        "{second}"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_notifications_a_users_change_between_commands_is_in_the_next_before() {
    a_users_change_between_two_commands_is_not_the_second_commands(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_scan_fallback_a_users_change_between_commands_is_in_the_next_before() {
    a_users_change_between_two_commands_is_not_the_second_commands(false).await;
}
