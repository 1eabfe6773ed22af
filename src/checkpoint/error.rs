//! What can go wrong with the checkpoint store: one error type for the whole room.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot run git (checkpoints need it): {0}")]
    NoGit(#[source] std::io::Error),
    #[error("git {command} failed: {stderr}")]
    Git { command: String, stderr: String },
    #[error("checkpoint store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("unexpected output from git {0}")]
    Parse(&'static str),
    #[error("refusing to write {0}: a parent directory is a symbolic link")]
    SymlinkParent(String),
    #[error(
        "checkpoint {0} is no longer in the store (the oldest checkpoints are dropped to keep the store within its size budget, [checkpoints] max_store_mb)"
    )]
    Missing(String),
}

pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}
