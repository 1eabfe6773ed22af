//! A logged session shown again (`cairn replay`, a resume): its events, and under each
//! `subagent` call the child's own transcript read from the child's log, wrapped as
//! `ToolEvent::ChildEvent` so its card opens it as it did live.

use std::path::{Path, PathBuf};

use crate::agent::history;
use crate::bus::{AgentEvent, ConversationEvent, Mode, ReportEvent, SessionId, ToolEvent};
use crate::session_log::{self, LogError, ParentRef, Record};
use crate::tool_output::ToolOutput;
use crate::visible;

/// How deep transcripts nest: the deepest delegation `[subagents] max_depth` allows.
const MAX_NESTING: u32 = crate::config::MAX_DEPTH_CEILING;

/// A logged session as a replay shows it.
pub struct Replayed {
    pub provider: String,
    pub model: String,
    /// The mode it started in; the switches follow as events where they happened.
    pub mode: Mode,
    /// The session and call that started it, when it is a subagent's.
    pub parent: Option<ParentRef>,
    pub events: Vec<AgentEvent>,
}

/// Every branch of the session at `path` (what a rewind left stays visible, marked), its
/// start first, with the line naming its parent when it is a subagent's, and its children's
/// transcripts.
pub fn replay(path: &Path) -> Result<Replayed, LogError> {
    replay_at(path, 0)
}

fn replay_at(path: &Path, depth: u32) -> Result<Replayed, LogError> {
    let loaded = session_log::read_log(path)?;
    let Some(Record::Meta {
        id,
        provider,
        model,
        parent,
        ..
    }) = loaded.records.first().cloned()
    else {
        return Err(LogError::NoMeta {
            path: path.to_path_buf(),
        });
    };
    let rebuilt = history::rebuild_all(&loaded.records);
    let mode = history::start_mode(&loaded.records).unwrap_or_default();
    let mut events = vec![AgentEvent::Conversation(
        ConversationEvent::SessionStarted {
            session: id.clone(),
            provider: provider.clone(),
            model: model.clone(),
            mode,
            context_window: 0,
            resumed: true,
        },
    )];
    if let Some(parent) = &parent {
        // A subagent's transcript says whose it is, and how to get back there.
        let message = format!(
            "subagent {} ({}) of session {} (call {}): `cairn replay {}` shows the parent",
            visible::name(&parent.agent),
            visible::name(&parent.description),
            parent.session,
            parent.call,
            parent.session
        );
        events.push(AgentEvent::Report(ReportEvent::Warning { message }));
    }
    events.extend(
        loaded
            .warnings
            .into_iter()
            .map(|message| AgentEvent::Report(ReportEvent::Warning { message })),
    );
    let sessions = path.parent().unwrap_or(Path::new("."));
    events.extend(with_children_at(sessions, &id, rebuilt.events, depth));
    events.push(AgentEvent::Conversation(ConversationEvent::Idle));
    Ok(Replayed {
        provider,
        model,
        mode,
        parent,
        events,
    })
}

/// `events` of `session`, whose log is in `sessions` with its children's, each finished
/// `subagent` call followed by its child's transcript. A child whose log is gone, unreadable
/// or not this call's has none: its card says so when opened.
pub fn with_children(
    sessions: &Path,
    session: &SessionId,
    events: Vec<AgentEvent>,
) -> Vec<AgentEvent> {
    with_children_at(sessions, session, events, 0)
}

fn with_children_at(
    sessions: &Path,
    session: &SessionId,
    events: Vec<AgentEvent>,
    depth: u32,
) -> Vec<AgentEvent> {
    if depth >= MAX_NESTING {
        return events;
    }
    let mut out = Vec::with_capacity(events.len());
    for event in events {
        let child = match &event {
            AgentEvent::Tool(ToolEvent::Finished { call, result, .. }) => match &result.output {
                Some(ToolOutput::Subagent(run)) => Some((call.clone(), run.session.clone())),
                _ => None,
            },
            _ => None,
        };
        out.push(event);
        let Some((call, child)) = child else {
            continue;
        };
        let ours = |p: &ParentRef| p.call == call && p.session == *session;
        let Some(replayed) = child_log(sessions, &child)
            .and_then(|path| replay_at(&path, depth + 1).ok())
            .filter(|child| child.parent.as_ref().is_some_and(ours))
        else {
            continue;
        };
        out.extend(replayed.events.into_iter().map(|inner| {
            AgentEvent::Tool(ToolEvent::ChildEvent {
                call: call.clone(),
                inner: Box::new(inner),
            })
        }));
    }
    out
}

/// The log of the child session `id`: only a plain id names a file, and only in `sessions`
/// (a log's words never lead elsewhere).
fn child_log(sessions: &Path, id: &str) -> Option<PathBuf> {
    let plain = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let path = sessions.join(format!("{id}.jsonl"));
    (plain && path.is_file()).then_some(path)
}

#[cfg(test)]
#[path = "replayed_tests.rs"]
mod tests;
