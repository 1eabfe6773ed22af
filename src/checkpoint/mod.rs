//! Checkpoints of the workspace: a shadow git repository in cairn's data dir (see `store`)
//! records the workspace before and after the calls that may change it, so what a command
//! changed can be shown like an edit (`changes`) and a turn can be taken back
//! (`crate::time_travel`).

mod changes;
mod error;
mod git;
#[cfg(test)]
mod hostile_tests;
mod maintain;
mod objects;
pub mod phases;
mod restore;
mod rules;
mod scan;
#[cfg(test)]
mod snapshot_tests;
mod store;
#[cfg(test)]
#[path = "checkpoint_tests.rs"]
mod tests;
mod tree;
mod watch;
#[cfg(test)]
mod watch_tests;

/// Why a checkpoint was taken (kept in the session log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointKind {
    /// Before a batch of calls that may change the workspace.
    Before,
    /// After that batch.
    After,
    /// `cairn undo` (or `/undo`, or a rewind of the files) put the workspace back to this
    /// checkpoint (the `before` of a turn).
    Undone,
    /// `/redo` put back what undoing the turn that starts at this checkpoint took away.
    Redone,
}

pub use changes::{MAX_FILES, file_changes};
pub use error::CheckpointError;
pub use maintain::{LOOSE_LIMIT, Pruned};
pub use store::{
    ChangeKind, CheckpointId, CheckpointStore, DEFAULT_BUDGET_MB, PathChange, Skipped, Snapshot,
    StoreOptions,
};
