//! Landlock sandbox for `bash`, applied in the child before exec.

use std::path::PathBuf;

/// What a sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Directories the command may write in (the workspace, the temp dir, configured paths).
    pub writable: Vec<PathBuf>,
    /// Whether the command may open network connections.
    pub network: bool,
}
