//! What went wrong touching a file, worded for the model: the tools report it as their error
//! (`tools::ToolError` has the same variants and the same words).

use super::confined;

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path}: not read in this session; call read_file on it first")]
    NotRead { path: String },
    #[error("{path}: changed on disk since it was last read; read it again before changing it")]
    Stale { path: String },
    #[error("{0}")]
    Failed(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl FileError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }
}

/// The error of a call whose target moved after the gate checked it.
pub fn changed(display: &str) -> FileError {
    FileError::Failed(format!(
        "{display}: the path changed since the call was checked (a directory on the way was \
         replaced, or it now leads outside what was allowed); nothing was done. Check the path \
         and send the call again"
    ))
}

/// Maps an error of opening beneath a root: a swapped-in symlink is `changed`.
pub fn open_error(display: &str, what: &str, err: std::io::Error) -> FileError {
    if confined::is_swap(&err) {
        changed(display)
    } else {
        FileError::io(format!("{what} {display}"), err)
    }
}

/// A read that would wait for data is a kernel or device file, not a text file.
pub fn would_block(display: &str, err: std::io::Error) -> FileError {
    if err.kind() == std::io::ErrorKind::WouldBlock {
        FileError::Failed(format!(
            "{display} is not a regular file (it waits for data, like a device or a kernel log); read_file reads files only"
        ))
    } else {
        FileError::io(format!("reading {display}"), err)
    }
}
