//! Taking changes back over the bus: which change or part of one to revert and what a revert
//! would do, and what `/undo`, `/redo` and `/rewind` take back and change.

use serde::{Deserialize, Serialize};

use super::CallId;
use crate::tool_output::FileChange;

/// A change the diff pane shows: what a tool call did, or what an earlier revert did.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum ChangeSource {
    Call(CallId),
    Revert(String),
}

/// What to take back: one hunk of one file, one file, or every file of a change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RevertTarget {
    pub source: ChangeSource,
    /// Index among the change's files (a command's change has several); None: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<usize>,
    /// Index among that file's hunks; None: the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunk: Option<usize>,
    /// The entry the user was looking at: its file index and `diff_fingerprint`. Call ids
    /// can repeat within a session (a provider's ids after a resume), so this tells which
    /// call of that id is meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<(usize, String)>,
}

/// Names a diff text (FNV-1a), so both ends of the bus can tell the same change apart.
pub fn diff_fingerprint(diff: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in diff.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// One file a revert would change, and how (the diff is against the file as it is now).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertFile {
    pub change: FileChange,
    /// Set when the path needs the user's attention: outside the workspace, or a file that
    /// makes programs run code (`.git/config`, hooks, `.cairn/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A line a revert expected and what the file has now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertMismatch {
    pub line: usize,
    pub expected: String,
    /// None past the end of the file.
    pub found: Option<String>,
}

/// A file a revert cannot take back cleanly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertConflict {
    pub path: String,
    pub why: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<RevertMismatch>,
}

/// What a revert would do now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "plan", rename_all = "snake_case")]
pub enum RevertPlan {
    /// Applies cleanly; `stamp` names the files' current contents, so a confirmation applies
    /// exactly what was shown (or is shown again when a file moved meanwhile).
    Ready {
        files: Vec<RevertFile>,
        stamp: String,
    },
    /// Nothing will change: these files moved on since.
    Conflict { conflicts: Vec<RevertConflict> },
    /// Cannot be reverted at all (the change is unknown, checkpoints are missing, …).
    Refused { reason: String },
}

/// What `/undo`, `/redo` and `/rewind` take back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Restore {
    /// The workspace changes of the last turn not undone yet.
    Undo,
    /// What the last undo took away (until a later turn changed files).
    Redo,
    /// Back to just before the user message `at` (its ordinal among the log's user records):
    /// the files, the conversation (a fork), or both.
    Rewind {
        at: usize,
        files: bool,
        conversation: bool,
    },
}

/// An earlier user message `/rewind` can go back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPoint {
    pub at: usize,
    /// Model steps of the session before it.
    pub step: u64,
    pub text: String,
    /// Turns from this message on that changed files (and are not undone).
    pub changes: usize,
    /// When it was sent, in local time: "14:05" today, "2026-11-29 14:05" before; None
    /// for a message of a log that did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

/// The files an undo, redo or rewind changes (or changed), as diffs from the current content
/// to the restored one, and the files it leaves alone because they moved on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RestorePlan {
    pub files: Vec<FileChange>,
    pub conflicts: Vec<FileConflict>,
    /// Said when not every file is shown (thousands changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A file left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileConflict {
    pub path: String,
    pub why: String,
}

/// Rewind, restore and revert: what they would do and what they did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TimeTravelEvent {
    /// Answer to `UserCommand::ListRewindPoints`: the current branch's user messages, newest
    /// first.
    RewindPoints { points: Vec<RewindPoint> },
    /// What a `Restore` would do, for the user to confirm.
    RestorePlan { what: Restore, plan: RestorePlan },
    /// A `Restore` was done: the files it changed and the ones it left alone.
    Restored { what: Restore, done: RestorePlan },
    /// The conversation was rewound to just before the user message `at` (whose text
    /// follows); live, the transcript of the new branch was replayed after a `Reset`. In a
    /// replay it marks where a branch was left.
    Rewound { at: usize, text: String },
    /// Answer to `PreviewRevert` (and to a `Revert` whose files moved since the preview:
    /// then `moved` is true and nothing was changed).
    RevertPreview {
        target: RevertTarget,
        /// What is reverted, in words: "hunk 2 of the edit of src/lib.rs".
        what: String,
        plan: RevertPlan,
        #[serde(default)]
        moved: bool,
    },
    /// The user reverted a change (also replayed on resume). `changes` are the revert's own
    /// diffs: the diff pane shows them as a change of source `Revert(id)`.
    Reverted {
        id: String,
        target: RevertTarget,
        what: String,
        changes: Vec<FileChange>,
    },
}
