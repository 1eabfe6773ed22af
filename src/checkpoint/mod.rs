//! Checkpoints of the workspace: a shadow git repository in cairn's data dir (see `store`)
//! records the workspace before and after the calls that may change it, so what a command
//! changed can be shown like an edit (`changes`) and a turn can be taken back
//! (`crate::time_travel`).

mod changes;
mod git;
mod maintain;
mod objects;
mod pack_read;
mod pack_write;
pub mod phases;
mod restore;
mod rules;
mod scan;
mod snapshot;
mod store;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hostile;
#[cfg(test)]
mod tests_snapshot;
#[cfg(test)]
mod tests_watch;
mod tree;
mod watch;

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
pub use maintain::{LOOSE_LIMIT, Pruned};
pub use store::{
    ChangeKind, CheckpointError, CheckpointId, CheckpointStore, DEFAULT_BUDGET_MB, PathChange,
    Skipped, Snapshot, StoreOptions,
};
