//! Background jobs stand still while the workspace is restored: a job that keeps writing into
//! the workspace is stopped (SIGSTOP to its process group) before `/undo` puts files back and
//! continued (SIGCONT) after, also when the restore fails. The job's shell leaves a mark when
//! it is continued (`trap … CONT`), so the test sees the pause without timing anything.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use std::path::Path;

use serde_json::json;

use crate::support::agent::TestAgent;
use crate::support::cairn_cmd::eventually;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, Restore, UserCommand};
use cairn::testing::{MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

/// A session that starts a job rewriting `busy.txt` forever, then edits `a.txt`.
async fn session_with_a_busy_job(ws: &Path, data: &Path, marks: &Path) -> (MockLlm, TestAgent) {
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    let job = format!(
        "trap 'echo continued >> {marks}' CONT; i=0; while :; do i=$((i+1)); echo $i > busy.txt; done",
        marks = marks.display()
    );
    let llm = MockLlm::start(vec![
        Script::tool_call("j1", "bash", json!({"command": job, "background": true})),
        Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call(
            "e1",
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"}),
        ),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws, data, &llm.url(), Mode::Never).await;
    agent.submit("start a job, then edit").await;
    agent.wait_for(ended).await;
    eventually("the job writes", || ws.join("busy.txt").exists()).await;
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "ONE\n");
    (llm, agent)
}

/// The job is running and writing again: `busy.txt` changes.
async fn the_job_goes_on(ws: &Path) {
    let read = || std::fs::read_to_string(ws.join("busy.txt")).unwrap_or_default();
    let seen = read();
    eventually("the job writes again after the restore", || read() != seen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_is_paused_while_undo_restores_and_goes_on_after() {
    let (ws, data, marks) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let mark = marks.path().join("continued");
    let (_llm, mut agent) = session_with_a_busy_job(ws.path(), data.path(), &mark).await;
    assert!(!mark.exists(), "nothing paused the job yet");

    agent.restore(Restore::Undo).await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "one\n"
    );
    eventually("the job is continued after the restore", || mark.exists()).await;
    the_job_goes_on(ws.path()).await;
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_restore_lets_the_paused_job_go_on() {
    let (ws, data, marks) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let mark = marks.path().join("continued");
    let (_llm, mut agent) = session_with_a_busy_job(ws.path(), data.path(), &mark).await;
    // The store can no longer be locked (its lock file is a directory now): the restore fails.
    let stores = data.path().join("checkpoints");
    let store = std::fs::read_dir(&stores)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let lock = store.join("cairn.lock");
    // The turn's own checkpoint may be taking the lock right now and make the file again
    // between the two calls: try until the directory stands.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let _ = std::fs::remove_file(&lock);
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(err)
                if err.kind() == std::io::ErrorKind::AlreadyExists
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::yield_now();
            }
            Err(err) => panic!("the lock cannot be made a directory: {err}"),
        }
    }

    agent
        .send(UserCommand::Restore {
            what: Restore::Undo,
            apply: true,
        })
        .await;
    let warning = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Warning { message }) if message.contains("could not be restored")))
        .await;
    assert!(matches!(
        warning,
        AgentEvent::Report(ReportEvent::Warning { .. })
    ));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "ONE\n",
        "nothing was restored"
    );
    eventually("the job is continued after the failed restore", || {
        mark.exists()
    })
    .await;
    the_job_goes_on(ws.path()).await;
    agent.shutdown().await;
}
