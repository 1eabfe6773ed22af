//! A parent's replay finds under each `subagent` card only that call's child: a log naming
//! another call or another session, or an id that is no plain file name, shows nothing.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::{replay, with_children};
use crate::bus::{AgentEvent, CallId, ConversationEvent, SessionId, ToolEvent, ToolResult};
use crate::session_log::{LoggedCall, ParentRef, Record, SessionLog};
use crate::tool_output::{SubagentRun, ToolOutput};

fn meta(id: &SessionId, parent: Option<ParentRef>) -> Record {
    Record::Meta {
        id: id.clone(),
        cwd: "/w".into(),
        provider: "mock".into(),
        model: "m".into(),
        version: "0".into(),
        started: "2026-12-07T00:00:00Z".into(),
        parent,
    }
}

fn log(dir: &Path, id: &str, records: &[Record]) {
    let mut log = SessionLog::create(dir, &SessionId(id.into())).unwrap();
    for record in records {
        log.append(record).unwrap();
    }
}

fn run(session: &str) -> ToolResult {
    ToolResult::ok(ToolOutput::Subagent(SubagentRun {
        agent: "general".into(),
        description: "d".into(),
        session: session.into(),
        ended: "completed".into(),
        finished: true,
        steps: 1,
        prompt_tokens: 1,
        completion_tokens: 1,
        cached_tokens: 0,
        requests: 1,
        files_changed: 0,
        uncounted: 0,
        duration_ms: 1,
        text: "answer".into(),
        changes: Vec::new(),
    }))
}

/// A parent whose call `s1` ran the child `child_id`.
fn parent(dir: &Path, child_id: &str) {
    let id = SessionId("parent".into());
    log(
        dir,
        "parent",
        &[
            meta(&id, None),
            Record::user("go"),
            Record::Assistant {
                text: String::new(),
                reasoning: Default::default(),
                tool_calls: vec![LoggedCall {
                    id: CallId::new("s1"),
                    name: "subagent".into(),
                    arguments: "{}".into(),
                }],
            },
            Record::ToolResult {
                call: CallId::new("s1"),
                name: "subagent".into(),
                result: run(child_id),
            },
        ],
    );
}

fn child(dir: &Path, id: &str, session: &str, call: &str) {
    let parent = ParentRef {
        session: SessionId(session.into()),
        call: CallId::new(call),
        agent: "general".into(),
        description: "d".into(),
    };
    log(
        dir,
        id,
        &[
            meta(&SessionId(id.into()), Some(parent)),
            Record::user("CHILD-PROMPT"),
        ],
    );
}

fn child_prompts(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(e, AgentEvent::Tool(ToolEvent::ChildEvent { call, inner })
                if call.0 == "s1" && matches!(inner.as_ref(),
                    AgentEvent::Conversation(ConversationEvent::UserMessage { text, .. }) if text == "CHILD-PROMPT"))
        })
        .count()
}

#[test]
fn the_childs_transcript_follows_its_call() {
    let dir = tempfile::tempdir().unwrap();
    parent(dir.path(), "kid");
    child(dir.path(), "kid", "parent", "s1");
    let replayed = replay(&dir.path().join("parent.jsonl")).unwrap();
    assert_eq!(child_prompts(&replayed.events), 1);
    // The same for a resume's events.
    let plain: Vec<AgentEvent> = replayed
        .events
        .into_iter()
        .filter(|e| !matches!(e, AgentEvent::Tool(ToolEvent::ChildEvent { .. })))
        .collect();
    let resumed = with_children(dir.path(), &SessionId("parent".into()), plain);
    assert_eq!(child_prompts(&resumed), 1);
}

#[test]
fn a_log_of_another_call_or_session_is_not_this_cards_child() {
    for (session, call) in [("parent", "s2"), ("other", "s1")] {
        let dir = tempfile::tempdir().unwrap();
        parent(dir.path(), "kid");
        child(dir.path(), "kid", session, call);
        let replayed = replay(&dir.path().join("parent.jsonl")).unwrap();
        assert_eq!(child_prompts(&replayed.events), 0, "{session} {call}");
    }
}

#[test]
fn a_childs_id_never_leads_out_of_the_sessions_directory() {
    for id in ["../kid", "", "ki", "kid/.", "..", "/kid"] {
        let top = tempfile::tempdir().unwrap();
        let sessions = top.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        // A log beside the sessions directory that would fit, reached only by `..`.
        child(top.path(), "kid", "parent", "s1");
        parent(&sessions, id);
        let replayed = replay(&sessions.join("parent.jsonl")).unwrap();
        assert_eq!(child_prompts(&replayed.events), 0, "{id:?}");
    }
}
