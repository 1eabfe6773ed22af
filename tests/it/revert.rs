//! Reverts from the diff pane, driven over the bus the way the TUI drives them: the preview is
//! the reverse patch against the file as it is now, a confirmation applies exactly that (or
//! nothing when the file moved since), the revert is logged and shown as a change of its own
//! (so it can be reverted again), the model is told in its next request, and the user's git
//! state stays byte-identical.
#![allow(clippy::unwrap_used)]

use crate::support::git_state::{files_under, git};
use cairn::bus::{ConversationEvent, TimeTravelEvent};

use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::agent::StartFrom;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, CallId, ChangeSource, RevertPlan, RevertTarget, UserCommand};
use cairn::testing::{MockLlm, Script};

pub(crate) fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// An edit with three hunks of a 40-line file, then a command that creates, changes and
/// deletes one file each.
fn session() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "read_file", json!({"path": "f.txt"})),
        Script::tool_call(
            "c2",
            "write_file",
            json!({"path": "f.txt", "content": numbered(40)
                .replace("line 3\n", "line three\n")
                .replace("line 20\n", "line twenty\n")
                .replace("line 37\n", "line thirty-seven\n")}),
        ),
        Script::tool_call(
            "c3",
            "bash",
            json!({"command": "echo made > made.txt && echo changed > keep.txt && rm gone.txt"}),
        ),
        Script::text("done"),
    ]
}

pub(crate) fn target(
    source: ChangeSource,
    file: Option<usize>,
    hunk: Option<usize>,
) -> RevertTarget {
    RevertTarget {
        source,
        file,
        hunk,
        shown: None,
    }
}

fn call(id: &str) -> ChangeSource {
    ChangeSource::Call(CallId::new(id))
}

/// Asks for the preview of `target` and returns its plan.
pub(crate) async fn preview(agent: &mut TestAgent, target: &RevertTarget) -> (String, RevertPlan) {
    agent
        .send(UserCommand::PreviewRevert {
            target: target.clone(),
        })
        .await;
    let AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview { what, plan, .. }) = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview { .. })
            )
        })
        .await
    else {
        unreachable!()
    };
    (what, plan)
}

/// Confirms the preview of `target` whose stamp is `stamp`; returns what the agent answered:
/// `Reverted`, or a new `RevertPreview` when the files moved since.
pub(crate) async fn confirm(
    agent: &mut TestAgent,
    target: &RevertTarget,
    stamp: String,
) -> AgentEvent {
    agent
        .send(UserCommand::Revert {
            target: target.clone(),
            stamp,
        })
        .await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::Reverted { .. })
                    | AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview { .. })
            )
        })
        .await
}

/// Previews and confirms `target`; returns the revert's id and its changes.
pub(crate) async fn revert(agent: &mut TestAgent, target: &RevertTarget) -> (String, Vec<String>) {
    let (_, plan) = preview(agent, target).await;
    let RevertPlan::Ready { stamp, .. } = plan else {
        panic!("not ready: {plan:?}")
    };
    let event = confirm(agent, target, stamp).await;
    let AgentEvent::TimeTravel(TimeTravelEvent::Reverted { id, changes, .. }) = event else {
        panic!("not applied: {event:?}")
    };
    (id, changes.into_iter().map(|c| c.diff).collect())
}

struct Setup {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    ws: std::path::PathBuf,
    sessions: std::path::PathBuf,
}

fn setup() -> Setup {
    let ws_dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    std::fs::write(ws.join("f.txt"), numbered(40)).unwrap();
    std::fs::write(ws.join("keep.txt"), "keep\n").unwrap();
    std::fs::write(ws.join("gone.txt"), "delete me\n").unwrap();
    let sessions = data.path().join("sessions");
    Setup {
        _dirs: (ws_dir, data),
        ws,
        sessions,
    }
}

async fn ran_session(s: &Setup, llm: &MockLlm) -> TestAgent {
    let mut agent =
        TestAgent::spawn(&s.ws, &s.sessions, &llm.url(), Mode::Never, StartFrom::New).await;
    agent.submit("change things").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    assert!(!s.ws.join("gone.txt").exists(), "the session ran");
    agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revert_one_hunk_then_a_commands_effects_and_tell_the_model_with_git_untouched() {
    let s = setup();
    git(&s.ws, &["init", "-q"]);
    git(&s.ws, &["add", "f.txt", "keep.txt"]);
    git(&s.ws, &["commit", "-qm", "first"]);
    std::fs::write(s.ws.join("keep.txt"), "stashed\n").unwrap();
    git(&s.ws, &["stash", "-q"]);
    git(&s.ws, &["add", "gone.txt"]);
    let git_before = files_under(&s.ws.join(".git"));

    let llm = MockLlm::start(session()).await;
    let mut agent = ran_session(&s, &llm).await;
    let edited = std::fs::read_to_string(s.ws.join("f.txt")).unwrap();

    // The middle hunk only.
    let hunk = target(call("c2"), Some(0), Some(1));
    let (what, plan) = preview(&mut agent, &hunk).await;
    assert_eq!(what, "hunk 2 of 3 of the rewrite of f.txt");
    let RevertPlan::Ready { files, .. } = &plan else {
        panic!("{plan:?}")
    };
    assert!(
        files[0].change.diff.contains("-line twenty\n+line 20\n"),
        "{plan:?}"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("f.txt")).unwrap(),
        edited,
        "a preview writes nothing"
    );
    let (first, _) = revert(&mut agent, &hunk).await;
    assert_eq!(
        std::fs::read_to_string(s.ws.join("f.txt")).unwrap(),
        edited.replace("line twenty\n", "line 20\n")
    );

    // Everything the command did: created, changed, deleted.
    let (_, diffs) = revert(&mut agent, &target(call("c3"), None, None)).await;
    assert_eq!(diffs.len(), 3, "{diffs:?}");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("keep.txt")).unwrap(),
        "keep\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("gone.txt")).unwrap(),
        "delete me\n"
    );
    assert!(!s.ws.join("made.txt").exists());

    // The revert of the hunk, reverted again: the model's line is back (redo).
    revert(&mut agent, &target(ChangeSource::Revert(first), None, None)).await;
    assert_eq!(std::fs::read_to_string(s.ws.join("f.txt")).unwrap(), edited);

    // The next request tells the model what the user reverted.
    llm.push(Script::text("noted"));
    agent.submit("go on").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    let sent = llm.request(llm.requests().len() - 1).to_string();
    assert!(
        sent.contains("The user reverted hunk 2 of 3 of the rewrite of f.txt"),
        "{sent}"
    );
    assert!(sent.contains("-line twenty\\n+line 20"), "{sent}");
    assert!(sent.contains("the command `echo made > made.txt"), "{sent}");
    assert_eq!(
        files_under(&s.ws.join(".git")),
        git_before,
        "the user's .git changed"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revert_of_a_file_the_user_changed_since_is_a_conflict_and_changes_nothing() {
    let s = setup();
    let llm = MockLlm::start(session()).await;
    let mut agent = ran_session(&s, &llm).await;
    let mine = std::fs::read_to_string(s.ws.join("f.txt"))
        .unwrap()
        .replace("line twenty\n", "line twenty, mine\n");
    std::fs::write(s.ws.join("f.txt"), &mine).unwrap();

    let (_, plan) = preview(&mut agent, &target(call("c2"), Some(0), Some(1))).await;
    let RevertPlan::Conflict { conflicts } = plan else {
        panic!("{plan:?}")
    };
    assert_eq!(conflicts[0].path, "f.txt");
    assert_eq!(conflicts[0].lines[0].line, 20);
    assert_eq!(conflicts[0].lines[0].expected, "line twenty");
    assert_eq!(
        conflicts[0].lines[0].found.as_deref(),
        Some("line twenty, mine")
    );
    // Another hunk of the same change still applies.
    let (_, plan) = preview(&mut agent, &target(call("c2"), Some(0), Some(0))).await;
    assert!(matches!(plan, RevertPlan::Ready { .. }), "{plan:?}");

    // A confirmation of a preview the file has since moved away from applies nothing.
    let stale = target(call("c2"), Some(0), Some(2));
    let (_, plan) = preview(&mut agent, &stale).await;
    let RevertPlan::Ready { stamp, .. } = plan else {
        panic!()
    };
    let moved = format!("{mine}appended\n");
    std::fs::write(s.ws.join("f.txt"), &moved).unwrap();
    let event = confirm(&mut agent, &stale, stamp).await;
    assert!(
        matches!(
            event,
            AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview { moved: true, .. })
        ),
        "{event:?}"
    );
    assert_eq!(std::fs::read_to_string(s.ws.join("f.txt")).unwrap(), moved);

    // A created file the user changed since is not deleted.
    std::fs::write(s.ws.join("made.txt"), "made\nand more\n").unwrap();
    let (_, plan) = preview(&mut agent, &target(call("c3"), None, None)).await;
    let RevertPlan::Conflict { conflicts } = plan else {
        panic!("{plan:?}")
    };
    assert!(
        conflicts.iter().any(|c| c.path == "made.txt"),
        "{conflicts:?}"
    );
    assert!(s.ws.join("made.txt").exists() && !s.ws.join("gone.txt").exists());
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_its_reverts_and_can_revert_them_again() {
    let s = setup();
    let llm = MockLlm::start(session()).await;
    let mut agent = ran_session(&s, &llm).await;
    let (id, _) = revert(&mut agent, &target(call("c3"), None, None)).await;
    let log = agent.log.clone();
    agent.shutdown().await;

    let mut agent = TestAgent::spawn(
        &s.ws,
        &s.sessions,
        &llm.url(),
        Mode::Never,
        StartFrom::Resume(log),
    )
    .await;
    let event = agent
        .wait_for(|e| matches!(e, AgentEvent::TimeTravel(TimeTravelEvent::Reverted { .. })))
        .await;
    assert!(
        matches!(event, AgentEvent::TimeTravel(TimeTravelEvent::Reverted { id: ref got, .. }) if *got == id)
    );
    // Reverting the revert recreates what it deleted (from its checkpoint) and deletes what
    // it recreated.
    revert(&mut agent, &target(ChangeSource::Revert(id), None, None)).await;
    assert_eq!(
        std::fs::read_to_string(s.ws.join("made.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("keep.txt")).unwrap(),
        "changed\n"
    );
    assert!(!s.ws.join("gone.txt").exists());
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_cut_for_size_is_reverted_whole_from_the_checkpoint_only_while_unchanged() {
    let s = setup();
    let big: String = (0..60_000).map(|i| format!("row {i}\n")).collect();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "f.txt"})),
        Script::tool_call("c2", "write_file", json!({"path": "f.txt", "content": big})),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::spawn(&s.ws, &s.sessions, &llm.url(), Mode::Never, StartFrom::New).await;
    agent.submit("fill it").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    assert_eq!(std::fs::read_to_string(s.ws.join("f.txt")).unwrap(), big);

    // One hunk of a cut diff: refused, nothing to apply.
    let (_, plan) = preview(&mut agent, &target(call("c2"), Some(0), Some(0))).await;
    let RevertPlan::Conflict { conflicts } = plan else {
        panic!("{plan:?}")
    };
    assert!(
        conflicts[0].why.contains("only the whole change"),
        "{conflicts:?}"
    );

    // The whole change comes back from the checkpoint while the file is what it left.
    let whole = target(call("c2"), None, None);
    std::fs::write(s.ws.join("f.txt"), format!("{big}one more\n")).unwrap();
    let (_, plan) = preview(&mut agent, &whole).await;
    assert!(matches!(plan, RevertPlan::Conflict { .. }), "{plan:?}");
    std::fs::write(s.ws.join("f.txt"), &big).unwrap();
    revert(&mut agent, &whole).await;
    assert_eq!(
        std::fs::read_to_string(s.ws.join("f.txt")).unwrap(),
        numbered(40)
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_path_is_named_and_a_directory_swapped_for_a_symlink_is_not_written_through() {
    let s = setup();
    std::fs::create_dir_all(s.ws.join(".cairn")).unwrap();
    std::fs::create_dir_all(s.ws.join("sub")).unwrap();
    std::fs::write(s.ws.join(".cairn/notes.md"), "old\n").unwrap();
    std::fs::write(s.ws.join("sub/g.txt"), "old\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": ".cairn/notes.md"})),
        Script::tool_call("c2", "read_file", json!({"path": "sub/g.txt"})),
        Script::tool_call(
            "c3",
            "write_file",
            json!({"path": ".cairn/notes.md", "content": "new\n"}),
        ),
        Script::tool_call(
            "c4",
            "write_file",
            json!({"path": "sub/g.txt", "content": "new\n"}),
        ),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::spawn(&s.ws, &s.sessions, &llm.url(), Mode::Never, StartFrom::New).await;
    agent.submit("write them").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    assert_eq!(
        std::fs::read_to_string(s.ws.join("sub/g.txt")).unwrap(),
        "new\n"
    );

    // A revert into `.cairn/` says so before anything is written.
    let (_, plan) = preview(&mut agent, &target(call("c3"), None, None)).await;
    let RevertPlan::Ready { files, .. } = plan else {
        panic!("{plan:?}")
    };
    let warning = files[0].warning.clone().unwrap_or_default();
    assert!(warning.contains("cairn's project settings"), "{warning}");

    // Previewed, then `sub` becomes a link to a directory outside with the same file: the
    // confirmation does not write there; it shows the new situation instead.
    let swapped = target(call("c4"), None, None);
    let (_, plan) = preview(&mut agent, &swapped).await;
    let RevertPlan::Ready { stamp, .. } = plan else {
        panic!("{plan:?}")
    };
    std::fs::write(outside.path().join("g.txt"), "new\n").unwrap();
    std::fs::remove_dir_all(s.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.ws.join("sub")).unwrap();
    let event = confirm(&mut agent, &swapped, stamp).await;
    let AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview {
        moved: true,
        plan: RevertPlan::Ready { files, .. },
        ..
    }) = &event
    else {
        panic!("{event:?}")
    };
    let warning = files[0].warning.clone().unwrap_or_default();
    assert!(warning.contains("outside the workspace"), "{warning}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("g.txt")).unwrap(),
        "new\n",
        "nothing was written outside"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_utf16_file_is_reverted_in_its_own_encoding() {
    let s = setup();
    let utf16 = |text: &str| -> Vec<u8> {
        let mut out = vec![0xff, 0xfe];
        out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        out
    };
    let before = "one\r\ntwo\r\nthree\r\n";
    std::fs::write(s.ws.join("w.txt"), utf16(before)).unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "w.txt"})),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "w.txt", "old_string": "two", "new_string": "zwei"}),
        ),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::spawn(&s.ws, &s.sessions, &llm.url(), Mode::Never, StartFrom::New).await;
    agent.submit("translate").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    assert_eq!(
        std::fs::read(s.ws.join("w.txt")).unwrap(),
        utf16("one\r\nzwei\r\nthree\r\n")
    );
    revert(&mut agent, &target(call("c2"), Some(0), Some(0))).await;
    assert_eq!(std::fs::read(s.ws.join("w.txt")).unwrap(), utf16(before));
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_file_a_command_created_is_deleted_and_its_revert_recreates_it() {
    let s = setup();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch empty.txt"})),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::spawn(&s.ws, &s.sessions, &llm.url(), Mode::Never, StartFrom::New).await;
    agent.submit("touch it").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    assert!(s.ws.join("empty.txt").exists());
    let (id, diffs) = revert(&mut agent, &target(call("c1"), None, None)).await;
    assert!(!s.ws.join("empty.txt").exists());
    assert_eq!(diffs, ["--- a/empty.txt\n+++ /dev/null\n"]);
    revert(&mut agent, &target(ChangeSource::Revert(id), None, None)).await;
    assert_eq!(std::fs::read(s.ws.join("empty.txt")).unwrap(), b"");
    agent.shutdown().await;
}
