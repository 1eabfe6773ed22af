//! Time travel: taking the workspace back (and forward) in time over the checkpoints.
//! `ledger`: what a session's checkpoint records add up to (which turn an undo or a redo
//! takes, what a rewind undoes); `moves`: files moved between two checkpoints where they are
//! still what cairn left; `restore`: the files of an undo, a redo or a rewind; `undo`: `cairn
//! undo`'s prepare and finish; `locate`: a change found in the session log; `revert_plan`,
//! `revert_files` and `patch`: a revert from the diff pane planned, applied and its reverse
//! patches; `notes`: what the model is told. The shadow-git store itself is `checkpoint`'s;
//! the agent's handlers and `subcommands::undo` call in here.

mod error;
pub mod ledger;
pub mod locate;
pub mod moves;
pub mod notes;
pub mod patch;
pub mod restore;
pub mod revert_files;
pub mod revert_plan;
pub mod undo;

pub use error::TimeTravelError;
