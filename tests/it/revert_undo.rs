//! A revert from the diff pane and `/undo` of the same turn, in both orders: cairn made every
//! change since the turn (the turn, then the revert), so the undo takes both files back to
//! before the turn with no conflict, and `/redo` puts back what the undo took away (the turn
//! with the hunk still reverted). An undo first, then a revert of the revert entry, applies
//! cleanly. A file the user edited by hand is still a conflict. `cairn undo` agrees.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent, TimeTravelEvent};
use serde_json::json;

use crate::revert::{numbered, revert, target};
use crate::support::agent::TestAgent;
use cairn::agent::StartFrom;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, CallId, ChangeSource, Restore, RestorePlan, UserCommand};
use cairn::testing::{MockLlm, Script};

const G: &str = "alpha\nbeta\n";

/// One turn: f.txt gets two hunks (lines 3 and 37), g.txt one edit.
fn session() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "read_file", json!({"path": "f.txt"})),
        Script::tool_call(
            "c2",
            "write_file",
            json!({"path": "f.txt", "content": edited()}),
        ),
        Script::tool_call("c3", "read_file", json!({"path": "g.txt"})),
        Script::tool_call(
            "c4",
            "edit_file",
            json!({"path": "g.txt", "old_string": "beta", "new_string": "BETA"}),
        ),
        Script::text("done"),
    ]
}

fn edited() -> String {
    numbered(40)
        .replace("line 3\n", "line three\n")
        .replace("line 37\n", "line thirty-seven\n")
}

struct Setup {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    ws: std::path::PathBuf,
    sessions: std::path::PathBuf,
    agent: TestAgent,
}

impl Setup {
    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.ws.join(path)).unwrap()
    }
}

async fn ran_turn() -> (Setup, MockLlm) {
    let ws_dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    std::fs::write(ws.join("f.txt"), numbered(40)).unwrap();
    std::fs::write(ws.join("g.txt"), G).unwrap();
    let llm = MockLlm::start(session()).await;
    let sessions = data.path().join("sessions");
    let mut agent = TestAgent::spawn(&ws, &sessions, &llm.url(), Mode::Never, StartFrom::New).await;
    agent.submit("change things").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    let s = Setup {
        _dirs: (ws_dir, data),
        ws,
        sessions,
        agent,
    };
    assert_eq!(s.read("f.txt"), edited(), "the turn ran");
    assert_eq!(s.read("g.txt"), "alpha\nBETA\n");
    (s, llm)
}

/// Applies an undo or redo and returns what it did.
async fn restore(agent: &mut TestAgent, what: Restore) -> RestorePlan {
    agent.send(UserCommand::Restore { what, apply: true }).await;
    let event = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::Restored { .. })
                    | AgentEvent::Report(ReportEvent::Warning { .. })
            )
        })
        .await;
    let AgentEvent::TimeTravel(TimeTravelEvent::Restored { done, .. }) = event else {
        panic!("not restored: {event:?}")
    };
    done
}

fn paths(plan: &RestorePlan) -> Vec<&str> {
    let mut paths: Vec<&str> = plan.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    paths
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_a_hunk_revert_takes_both_files_back_and_redo_keeps_the_revert() {
    let (mut s, _llm) = ran_turn().await;
    std::fs::write(s.ws.join("notes.txt"), "mine\n").unwrap();
    revert(
        &mut s.agent,
        &target(ChangeSource::Call(CallId::new("c2")), Some(0), Some(0)),
    )
    .await;
    let reverted = edited().replace("line three\n", "line 3\n");
    assert_eq!(s.read("f.txt"), reverted);

    let done = restore(&mut s.agent, Restore::Undo).await;
    assert!(done.conflicts.is_empty(), "{:?}", done.conflicts);
    assert_eq!(paths(&done), ["f.txt", "g.txt"]);
    assert_eq!(s.read("f.txt"), numbered(40));
    assert_eq!(s.read("g.txt"), G);

    // The redo puts back what the undo took away: the turn, its hunk still reverted.
    let done = restore(&mut s.agent, Restore::Redo).await;
    assert!(done.conflicts.is_empty(), "{:?}", done.conflicts);
    assert_eq!(s.read("f.txt"), reverted);
    assert_eq!(s.read("g.txt"), "alpha\nBETA\n");

    // A file of the user's, not the turn's (in the revert's checkpoint): a redo leaves it
    // alone (no conflict either), though it differs from what cairn had left at the undo.
    restore(&mut s.agent, Restore::Undo).await;
    std::fs::write(s.ws.join("notes.txt"), "mine, later\n").unwrap();
    let done = restore(&mut s.agent, Restore::Redo).await;
    assert!(done.conflicts.is_empty(), "{:?}", done.conflicts);
    assert_eq!(paths(&done), ["f.txt", "g.txt"]);
    assert_eq!(s.read("notes.txt"), "mine, later\n");

    // Undo and redo again: the same, both ways.
    restore(&mut s.agent, Restore::Undo).await;
    assert_eq!(s.read("f.txt"), numbered(40));
    restore(&mut s.agent, Restore::Redo).await;
    assert_eq!(s.read("f.txt"), reverted);
    s.agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_after_a_revert_still_leaves_a_file_the_user_edited_by_hand() {
    let (mut s, _llm) = ran_turn().await;
    revert(
        &mut s.agent,
        &target(ChangeSource::Call(CallId::new("c2")), Some(0), Some(0)),
    )
    .await;
    // The user's own edit after the revert: not what cairn left.
    let mine = s.read("f.txt").replace("line 20\n", "line 20, mine\n");
    std::fs::write(s.ws.join("f.txt"), &mine).unwrap();

    let done = restore(&mut s.agent, Restore::Undo).await;
    assert_eq!(paths(&done), ["g.txt"]);
    assert_eq!(done.conflicts.len(), 1, "{:?}", done.conflicts);
    assert_eq!(done.conflicts[0].path, "f.txt");
    assert_eq!(s.read("f.txt"), mine, "the user's edit is left alone");
    assert_eq!(s.read("g.txt"), G);
    s.agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revert_of_a_whole_file_then_undo_takes_the_other_file_back() {
    let (mut s, _llm) = ran_turn().await;
    // The whole edit of g.txt reverted: g.txt is already as before the turn.
    revert(
        &mut s.agent,
        &target(ChangeSource::Call(CallId::new("c4")), None, None),
    )
    .await;
    assert_eq!(s.read("g.txt"), G);

    let done = restore(&mut s.agent, Restore::Undo).await;
    assert!(done.conflicts.is_empty(), "{:?}", done.conflicts);
    assert_eq!(paths(&done), ["f.txt"]);
    assert_eq!(s.read("f.txt"), numbered(40));
    assert_eq!(s.read("g.txt"), G);
    s.agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_then_a_revert_of_the_revert_entry_applies_on_the_undone_files() {
    let (mut s, _llm) = ran_turn().await;
    let (first, _) = revert(
        &mut s.agent,
        &target(ChangeSource::Call(CallId::new("c2")), Some(0), Some(0)),
    )
    .await;
    restore(&mut s.agent, Restore::Undo).await;
    assert_eq!(s.read("f.txt"), numbered(40));

    // The revert's own change taken back: the model's line 3 returns, on the undone file.
    revert(
        &mut s.agent,
        &target(ChangeSource::Revert(first), None, None),
    )
    .await;
    assert_eq!(
        s.read("f.txt"),
        numbered(40).replace("line 3\n", "line three\n")
    );
    assert_eq!(s.read("g.txt"), G);

    // That revert is a new change: the undone turn cannot be redone on top of it.
    s.agent
        .send(UserCommand::Restore {
            what: Restore::Redo,
            apply: true,
        })
        .await;
    let event = s
        .agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::Restored { .. })
                    | AgentEvent::Report(ReportEvent::Warning { .. })
            )
        })
        .await;
    let AgentEvent::Report(ReportEvent::Warning { message }) = event else {
        panic!("a redo over a newer revert: {event:?}")
    };
    assert!(message.contains("nothing to redo"), "{message}");
    s.agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cairn_undo_after_a_hunk_revert_takes_both_files_back_and_redo_keeps_the_revert() {
    let (mut s, _llm) = ran_turn().await;
    revert(
        &mut s.agent,
        &target(ChangeSource::Call(CallId::new("c2")), Some(0), Some(0)),
    )
    .await;
    let log = s.agent.log.clone();
    let Setup {
        _dirs,
        ws,
        sessions,
        agent,
    } = s;
    agent.shutdown().await;
    let data = cairn::dirs::Dirs::for_sessions(&sessions)
        .data()
        .to_path_buf();
    let read = |path: &str| std::fs::read_to_string(ws.join(path)).unwrap();

    let report = cairn::time_travel::undo::undo_session(&log, &data, false).unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(report.reverted.len(), 2, "{report:?}");
    assert_eq!(read("f.txt"), numbered(40));
    assert_eq!(read("g.txt"), G);

    let report = cairn::time_travel::undo::undo_session(&log, &data, true).unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(read("f.txt"), edited().replace("line three\n", "line 3\n"));
    assert_eq!(read("g.txt"), "alpha\nBETA\n");
}
