//! The tables about what commands and tools may touch: `[bash]` (secret-looking variables
//! commands may still see), `[sandbox]` (on/off, network, writable directories, Unix sockets, per-command limits) and
//! `[permissions]` (command-prefix rules, and the readable roots outside the workspace).

use std::path::PathBuf;

use serde::Deserialize;

/// The `[bash]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BashFile {
    /// Secret-looking variables the model's commands may still see.
    pub pass_env: Option<Vec<String>>,
}

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// Default true: commands run in the sandbox wherever Landlock works.
    pub enabled: Option<bool>,
    /// Default false: approved commands may not use the network either.
    pub network: Option<bool>,
    /// Directories approved commands may write in besides the workspace and temp dirs.
    pub writable: Option<Vec<PathBuf>>,
    /// Secret stores besides the defaults (`secret_stores::DEFAULT_STORES`): `~/.x` or `.x`
    /// in every home, or an absolute path. Layers add to each other; none removes a default.
    pub deny_read: Option<Vec<String>>,
    /// Unix sockets (or directories of them) sandboxed commands may connect to, e.g.
    /// Docker's; `~/` allowed. Default none: no server outside the workspace.
    pub allow_unix_sockets: Option<Vec<PathBuf>>,
    /// Processes one workspace-write command may have at once (default 4096; 0: no limit).
    pub max_processes: Option<u64>,
    /// Memory one workspace-write command may use, in MiB (default half the machine's).
    pub max_memory_mb: Option<u64>,
    /// The same for commands run unasked in the read-only sandbox (defaults 256 and 1024).
    pub read_only_max_processes: Option<u64>,
    pub read_only_max_memory_mb: Option<u64>,
}

/// The `[checkpoints]` table: the shadow store behind undo, redo, rewind and revert.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsFile {
    /// Default true: the workspace is checkpointed around every change (undo works).
    pub enabled: Option<bool>,
    /// Default true: what changed is learned from file notifications (inotify) where they
    /// work; false scans the workspace at each checkpoint instead.
    pub notifications: Option<bool>,
    /// Default 512: the store's size budget per workspace, in MiB; beyond it the oldest
    /// checkpoints are dropped (and cairn says so).
    pub max_store_mb: Option<u64>,
}

/// The `[permissions]` table: command-prefix rules.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsFile {
    pub allow: Option<Vec<String>>,
    pub ask: Option<Vec<String>>,
    pub deny: Option<Vec<String>>,
    /// Directories outside the workspace the file tools read without asking (`~/` allowed).
    pub readable: Option<Vec<PathBuf>>,
    /// Files the user's tools run later (`.envrc`, `.vscode/`): file-tool writes to them ask
    /// in `ask` and `auto-edit`. Replaces the built-in list.
    pub run_later: Option<Vec<String>>,
}
