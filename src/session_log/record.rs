//! What one line of the log holds: the records, and the facts the model was last told.

use serde::{Deserialize, Serialize};

use crate::bus::Mode;
use crate::bus::{CallId, Decision, EndReason, RevertTarget, SessionId, ToolResult, Usage};
use crate::content::{Part, ReasoningPart};

/// A tool call as the model made it, arguments as raw JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedCall {
    pub id: CallId,
    pub name: String,
    pub arguments: String,
}

/// Where a subagent's session comes from: its parent session, the parent's call that
/// started it, and the agent it ran as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentRef {
    pub session: SessionId,
    pub call: CallId,
    pub agent: String,
    pub description: String,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Meta {
        id: SessionId,
        cwd: String,
        provider: String,
        model: String,
        version: String,
        started: String,
        /// A subagent's log: the session and call that started it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<ParentRef>,
    },
    User {
        text: String,
        /// When it was sent (RFC 3339, UTC); logs written before it was recorded have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time: Option<String>,
        /// What follows the typed text: attached files (`@path`) as text parts, images named
        /// by hash (their bytes are in the session's image store). Old logs have none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
        /// What the user typed when `text` is its expansion (`/name args`, `/init`): what the
        /// transcript shows and the session is titled by.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        typed: Option<String>,
    },
    /// Written before any of its tool calls runs, so a crash leaves a record of what ran.
    Assistant {
        text: String,
        /// The reasoning part: its text and what the provider sent with it to be sent back
        /// (`thinking_blocks` / `reasoning_details` and the like), kept so a resumed session
        /// sends them back. Written as the same top-level fields logs always had.
        #[serde(flatten)]
        reasoning: ReasoningPart,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<LoggedCall>,
    },
    ToolResult {
        call: CallId,
        name: String,
        result: ToolResult,
    },
    Approval {
        call: CallId,
        decision: Decision,
    },
    /// "Approve this prefix for the session".
    SessionRule {
        prefix: String,
    },
    Usage(Usage),
    Mode {
        mode: Mode,
    },
    Model {
        model: String,
    },
    /// How a user request ended, when it did not simply complete.
    Ended {
        reason: EndReason,
    },
    /// The system prompt of the session, written before its first request. It never changes
    /// within a session (so the provider's prefix cache keeps hitting); a resume sends it
    /// again byte for byte. `told` is the changing state the prompt describes.
    System {
        prompt: String,
        told: ToldState,
    },
    /// State that changed since the model was last told (mode, git branch), told as a short
    /// user-role note at the end of the conversation instead of an edit of the system prompt.
    Note {
        text: String,
        told: ToldState,
        /// Parts after the text: the images `read_image` read in a step.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
    },
    /// The workspace was recorded in the checkpoint store: before or after a batch of calls
    /// that may change it, or a turn was undone back to `commit`.
    Checkpoint {
        commit: crate::checkpoint::CheckpointId,
        kind: crate::checkpoint::CheckpointKind,
    },
    /// An `/undo`, `/redo` or `/rewind` was done: what it did (after its `Checkpoint` and
    /// `Fork` records), so a resume and `cairn replay` show the line the user saw.
    Restored {
        what: crate::bus::Restore,
        done: crate::bus::RestorePlan,
    },
    /// `/rewind` forked the conversation: from here on it is what it was just before the user
    /// message `at` (its ordinal among all user records of the log, 0 first). The records of
    /// the branch left stay in the log (`cairn replay` shows them); a resume continues here.
    Fork {
        at: usize,
    },
    /// The user reverted a change from the diff pane. `changes` are the revert's own diffs
    /// (the diff pane shows them, and they can be reverted in turn); `before` and `after` are
    /// checkpoints around it (when checkpoints are on), where whole contents are found again.
    Revert {
        id: String,
        target: RevertTarget,
        what: String,
        changes: Vec<crate::tool_output::FileChange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<crate::checkpoint::CheckpointId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<crate::checkpoint::CheckpointId>,
    },
    /// The provider refused an image (too large, a format it does not take, a model without
    /// vision): from here on every message holding the image with `hash` holds `note` in its
    /// place, so neither the retry nor any resume sends it again.
    ImageRemoved {
        hash: String,
        note: String,
    },
    /// A skill was loaded (the model's `skill` call, or the user's `/name`): what the model was
    /// given, so a compaction can attach it again and a resume knows it (its directory stays
    /// readable for the session).
    SkillLoaded {
        name: String,
        dir: String,
        text: String,
    },
    /// The user's own command (`!cmd`, `!!cmd`) and how it ended. `told` is what the
    /// conversation got of it (`!cmd` only): a user-role message, sent again on resume.
    Shell {
        id: String,
        command: String,
        context: bool,
        result: ToolResult,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        told: Option<String>,
    },
    /// A queued message entered the conversation (the user record before this one) after
    /// model step `step` of the session.
    Delivered {
        id: String,
        step: u64,
    },
    /// The request of the last user message failed before the model answered it: the message
    /// leaves the conversation (the next one, a retry or another, takes its place; it is never
    /// joined to it). The user record stays, for the transcript.
    Unanswered {
        /// How many messages leave: the user's, and its hooks' context if there was one.
        #[serde(default = "one")]
        messages: usize,
    },
    /// A queued message or command was taken back before delivery; `text` is what it said.
    Withdrawn {
        id: String,
        text: String,
    },
    /// A queued message the request ended without: it went back to the user undelivered.
    Returned {
        id: String,
        text: String,
    },
    /// A hook ran (`crate::hooks`): which, at what point, what it decided (`none`, `allow`,
    /// `ask`, `deny`, `failed`), why, and how long it took.
    Hook {
        hook: String,
        event: String,
        decision: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        changed_input: bool,
        millis: u64,
    },
    /// The conversation was compacted: the tool results at the `stubs` indices were replaced
    /// by the stub text, then messages `..summarized` by one user message, `summary`. Kept as
    /// a change, not the result, so a long session's log grows by the stubs only. `usage` is
    /// what the summary request cost.
    Compacted {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stubs: Vec<(usize, String)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default)]
        summarized: usize,
        before: u64,
        after: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
}

impl Record {
    /// A user message sent now.
    pub fn user(text: impl Into<String>) -> Self {
        Self::user_with(text, Vec::new())
    }

    /// A user message sent now, with attached parts after its text.
    pub fn user_with(text: impl Into<String>, parts: Vec<Part>) -> Self {
        Self::user_typed(text, parts, None)
    }

    /// A user message sent now whose text expands what the user typed (`typed`).
    pub fn user_typed(text: impl Into<String>, parts: Vec<Part>, typed: Option<String>) -> Self {
        Record::User {
            text: text.into(),
            time: Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()),
            parts,
            typed,
        }
    }
}

/// The changing facts the model was last told about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToldState {
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
}

fn one() -> usize {
    1
}
