//! Why an undo, a redo, a rewind or a revert could not be worked out or done. The words are
//! what the user reads (a warning, the revert confirmation's refusal, `cairn undo`'s error).

use crate::checkpoint::CheckpointError;
use crate::session_log::LogError;
use crate::tools::ToolError;

#[derive(Debug, thiserror::Error)]
pub enum TimeTravelError {
    /// The session log could not be read or written.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The checkpoint store failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A file of a revert could not be reached, read or written.
    #[error(transparent)]
    File(#[from] ToolError),
    #[error("that revert is not in this session's log any more")]
    RevertNotLogged,
    #[error("that change is not in this session's log any more (it may be from a rewound branch)")]
    ChangeNotLogged,
    #[error("the change has no such file")]
    NoSuchFile,
    /// The blocking task the work ran on failed (it panicked).
    #[error("internal error: {0}")]
    Task(#[from] tokio::task::JoinError),
}
