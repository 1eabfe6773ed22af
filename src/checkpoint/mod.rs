//! Checkpoints of the workspace: a shadow git repository in cairn's data dir (see `store`)
//! records the workspace before and after the calls that may change it, so what a command
//! changed can be shown like an edit (`changes`) and a turn can be taken back (`undo`).

mod changes;
mod git;
mod store;
#[cfg(test)]
mod tests;

pub use changes::{MAX_FILES, file_changes};
pub use store::{
    ChangeKind, CheckpointError, CheckpointId, CheckpointStore, PathChange, Skipped, Snapshot,
};
