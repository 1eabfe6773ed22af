//! Time travel: taking the workspace back (and forward) in time. The undo ledger (which turn
//! an undo or a redo takes, what a rewind undoes) and the moves of files between checkpoints
//! (`undo`), finding a change in the session log (`locate`), planning and applying a revert
//! from the diff pane (`revert_plan`, `revert_files`) and the reverse patches it is made of
//! (`patch`). The shadow-git store itself is `checkpoint`'s; the agent's handlers call in here.

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
