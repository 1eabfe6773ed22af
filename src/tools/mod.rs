//! The tool trait, the errors and context tools share, and the registry of all tools.
//! The agent asks the registry for a tool by name, feeds `access` to the permission gate and
//! the write queue, then `run`s it; the canonical `ToolOutput` goes to the log and the UI.

pub mod args;
pub mod bash;
pub mod edit_file;
mod edit_match;
pub mod exit_plan_mode;
pub mod glob;
pub mod grep;
pub mod image;
pub mod image_decode;
pub mod job_tools;
pub mod jobs;
pub mod list_dir;
pub mod lsp;
pub mod read_file;
pub mod read_image;
pub mod registry;
pub use registry::Registry;
pub mod runtime;
pub mod skill;
pub mod todo_write;
pub mod web_fetch;
pub mod web_search;
pub mod write_file;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::fs::confined::Beneath;
use crate::fs::paths::{self, RealPath};
use crate::fs::places::FilePolicy;
use crate::fs::read_state::ReadTracker;
use crate::fs::write_queue::{self, WriteQueue};
use crate::fs::{FileError, changed};
use crate::process::{self, TailSink};
use crate::tool_output::{FileChange, ToolOutput};

/// The model's face of a tool, a wire type of the request (`llm::wire`).
pub use crate::llm::wire::ToolSpec;

/// The tool that ends plan mode by proposing the plan (see `exit_plan_mode`).
pub use crate::bus::EXIT_PLAN_MODE;

/// What a call would touch. The gate decides on it; the runtime schedules by it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Reads only, inside the workspace or a readable root, nothing sensitive: may run
    /// concurrently with other reads of the same turn.
    Read,
    /// Reads a place the gate must look at: outside the workspace and the readable roots, or
    /// a sensitive one (`sensitive` says why: keys, cairn's own data, a process's `/proc`).
    /// A walk (list_dir, glob, grep) names its root.
    ReadGuarded {
        path: RealPath,
        display: String,
        sensitive: Option<String>,
    },
    /// Writes this file: serialised per real path by the write queue.
    Write { path: RealPath, display: String },
    /// Writes a file that makes programs run code later (`.git/config`, hooks, `.cairn/`,
    /// shell start-up files): asks in every mode but `never`. `why` says what it is.
    WriteProtected {
        path: RealPath,
        display: String,
        why: String,
    },
    /// Runs a shell command.
    Command { command: String, background: bool },
    /// Touches only session state (todos, job bookkeeping).
    Session,
    /// Reaches a web host through the egress client: the gate asks per host. `url` is the
    /// whole normalised URL (the approval prompt shows it).
    Network { host: String, url: String },
    /// Calls a tool of an MCP server. `name` is the tool's name as the model sees it
    /// (`mcp__server__tool`, what rules name); `read_only` is true only for a tool annotated
    /// read-only on a server of the user's own config (a project's hints are not trusted);
    /// `arguments` is what the approval prompt shows.
    Mcp {
        server: String,
        tool: String,
        name: String,
        read_only: bool,
        arguments: String,
    },
    /// Hands a task to a child agent (`subagent`): nothing is touched by the call itself;
    /// each of the child's own calls passes the same gate. Runs beside other delegations of
    /// the same reply.
    Delegate { agent: String, description: String },
}

/// Errors a tool reports to the model as an `is_error` result. Messages say what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    #[error("{path}: not read in this session; call read_file on it first")]
    NotRead { path: String },
    #[error("{path}: changed on disk since it was last read; read it again before changing it")]
    Stale { path: String },
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{path}: {reason}")]
    Refused { path: String, reason: String },
    #[error("{0}")]
    Failed(String),
    /// The user interrupted before the tool finished; the agent reports it as the one
    /// `ToolResult::cancelled()` marker. Writes are atomic: a cancelled write wrote nothing.
    #[error("{}", crate::tool_output::CANCELLED)]
    Cancelled,
    /// A bug or a lost worker thread, not something the model can fix by changing the call.
    #[error("internal error ({0}); the call may not have completed")]
    Internal(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// Runs blocking file-system work off the async threads. A worker that panicked or was lost
/// is a `ToolError::Internal` naming `what` was being done.
pub async fn blocking<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ToolError::Internal(format!("{what}: {err}")))?
}

/// A file error keeps its variant and its words as a tool's error.
impl From<FileError> for ToolError {
    fn from(err: FileError) -> Self {
        match err {
            FileError::NotRead { path } => Self::NotRead { path },
            FileError::Stale { path } => Self::Stale { path },
            FileError::Failed(message) => Self::Failed(message),
            FileError::Io { what, source } => Self::Io { what, source },
        }
    }
}

impl ToolError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }
}

impl Access {
    /// Whether the call only reads (it may run beside other reads).
    pub fn is_read(&self) -> bool {
        // A fetch changes nothing here: it runs beside reads and is dropped on interrupt.
        matches!(
            self,
            Access::Read
                | Access::ReadGuarded { .. }
                | Access::Network { .. }
                | Access::Mcp {
                    read_only: true,
                    ..
                }
        )
    }
    /// The path written, for a write.
    pub fn written(&self) -> Option<&RealPath> {
        match self {
            Access::Write { path, .. } | Access::WriteProtected { path, .. } => Some(path),
            _ => None,
        }
    }
}

/// What all calls of a session share.
pub struct ToolEnv {
    pub workspace: PathBuf,
    pub reads: ReadTracker,
    /// Shared with the session's subagents: their writes queue with the parent's.
    pub writes: Arc<WriteQueue>,
    pub jobs: jobs::JobTable,
    pub bash: process::Settings,
    /// Commands the sandbox refused in this session: the next run of one asks, so the user
    /// can let it run without the sandbox.
    pub refused: process::SandboxRefusals,
    /// Sensitive and protected places, readable roots.
    pub files: FilePolicy,
    /// The egress client, settings and page cache of the web tools (none: they refuse).
    pub web: Option<Arc<crate::web::WebEnv>>,
    /// Where the `skill` tool finds skills on disk: the workspace and cairn's directories.
    pub skills: crate::skills::Sources,
    /// The session's language servers (none: no diagnostics after writes, no `lsp` tool).
    pub lsp: Option<crate::lsp::Lsp>,
    /// A front end that holds the files' text (an editor's buffers): the file tools read and
    /// write the text through it (none: the disk alone).
    pub buffers: Option<Arc<dyn crate::fs::buffers::Buffers>>,
}

impl ToolEnv {
    /// A session's environment in `workspace`: the file policy and the skill sources follow
    /// cairn's directories (`dirs`), no readable roots, no web tools until `with_web`.
    pub fn new(workspace: PathBuf, dirs: &crate::dirs::Dirs, bash: process::Settings) -> Self {
        let skills = crate::skills::Sources::with_dirs(&workspace, dirs);
        Self {
            workspace,
            reads: ReadTracker::default(),
            writes: Arc::default(),
            jobs: jobs::JobTable::default(),
            bash,
            refused: process::SandboxRefusals::default(),
            files: FilePolicy::with_dirs(dirs, &[]),
            web: None,
            skills,
            lsp: None,
            buffers: None,
        }
    }

    /// With a front end's buffers, through which the file tools read and write the text.
    pub fn with_buffers(self, buffers: Option<Arc<dyn crate::fs::buffers::Buffers>>) -> Self {
        Self { buffers, ..self }
    }

    /// With the session's language servers.
    pub fn with_lsp(self, lsp: crate::lsp::Lsp) -> Self {
        Self {
            lsp: Some(lsp),
            ..self
        }
    }

    /// With this file policy (readable roots, `[sandbox] deny_read`) instead of the default.
    pub fn with_files(self, files: FilePolicy) -> Self {
        Self { files, ..self }
    }

    /// With the web tools' egress client and page cache.
    pub fn with_web(self, web: Arc<crate::web::WebEnv>) -> Self {
        Self {
            web: Some(web),
            ..self
        }
    }

    /// The environment of a new session in the same place: fresh read stamps, jobs and
    /// refusals and a new page cache; the settings, file policy, skill sources and the front
    /// end's buffers stay.
    pub fn fresh(&self) -> Self {
        Self {
            workspace: self.workspace.clone(),
            reads: ReadTracker::default(),
            writes: Arc::default(),
            jobs: jobs::JobTable::default(),
            bash: self.bash.clone(),
            refused: process::SandboxRefusals::default(),
            files: self.files.clone(),
            web: self.web.as_ref().map(|web| web.fresh()),
            skills: self.skills.clone(),
            lsp: self.lsp.clone(),
            buffers: self.buffers.clone(),
        }
    }

    /// The environment of a subagent of this session: its own read stamps, jobs and
    /// refusals (its jobs die with it), the same write queue (writes of one path by parent
    /// and children keep their order), settings, file policy and web client; no language
    /// servers (the parent's stay the parent's to stop).
    pub fn for_child(&self) -> Self {
        Self {
            writes: Arc::clone(&self.writes),
            lsp: None,
            ..self.fresh()
        }
    }
}

/// The context of one call.
#[derive(Clone)]
pub struct ToolCx {
    pub env: Arc<ToolEnv>,
    /// Cancelled when the user interrupts; tools stop and report `[cancelled]`.
    pub cancel: CancellationToken,
    pub tail: Option<TailSink>,
    /// How much the sandbox allows a command of this call (the gate and the user decide).
    pub grant: process::Grant,
    /// The access the permission gate passed for this call. A path outside the workspace and
    /// the readable roots is only touched when it is the one passed here, so a symlink swapped
    /// in after the check cannot turn an unasked call into one that reaches outside.
    pub passed: Option<Access>,
    /// Whether the gate would let a fetch of this host run unasked now: a redirect to a host
    /// it would not is returned to the model instead of followed. None: no host is.
    pub hosts: Option<HostCheck>,
    /// The id of the call being run (none for a call typed by hand): a subagent names its
    /// live card by it.
    pub call: Option<crate::bus::CallId>,
}

/// Asks the gate (with the call's mode) whether a host may be fetched without asking.
pub type HostCheck = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

impl ToolCx {
    pub fn new(env: Arc<ToolEnv>) -> Self {
        Self {
            env,
            cancel: CancellationToken::new(),
            tail: None,
            grant: process::Grant::default(),
            passed: None,
            hosts: None,
            call: None,
        }
    }
    /// The same context with `access` as what the gate passed.
    pub fn passing(mut self, access: Access) -> Self {
        self.passed = Some(access);
        self
    }
    pub fn workspace(&self) -> &std::path::Path {
        &self.env.workspace
    }
    /// The access of a call that writes `raw`: its real path, and how people see it.
    pub fn write_access(&self, raw: &str) -> Result<Access, ToolError> {
        let path = self.resolve(raw)?;
        let display = path.display_in(self.workspace());
        Ok(
            match self
                .env
                .files
                .protected_write_in(self.workspace(), path.as_path())
            {
                Some(why) => Access::WriteProtected { path, display, why },
                None => Access::Write { path, display },
            },
        )
    }

    /// The access of a call that reads `raw` (a file, or the root of a walk).
    pub fn read_access(&self, raw: &str) -> Result<Access, ToolError> {
        let path = self.resolve(raw)?;
        Ok(self.read_access_of(path))
    }

    pub fn read_access_of(&self, path: RealPath) -> Access {
        let sensitive = self.env.files.sensitive_read(path.as_path());
        let readable =
            path.inside_workspace() || self.env.files.readable_root(path.as_path()).is_some();
        if readable && sensitive.is_none() {
            return Access::Read;
        }
        let display = path.display_in(self.workspace());
        Access::ReadGuarded {
            path,
            display,
            sensitive,
        }
    }

    /// Where a read of `real` is opened from: beneath the workspace or a readable root, or —
    /// for any other place — only the exact path the gate passed (opened from `/` with
    /// symlinks refused). Anything else means the tree changed since the check.
    pub fn read_place(&self, real: &RealPath, display: &str) -> Result<Beneath, ToolError> {
        let guarded =
            matches!(&self.passed, Some(Access::ReadGuarded { path, .. }) if path == real);
        if self.env.files.sensitive_read(real.as_path()).is_none() || guarded {
            if real.inside_workspace()
                && let Some(place) =
                    Beneath::new(&paths::workspace_root(self.workspace()), real.as_path())
            {
                return Ok(place);
            }
            if let Some(root) = self.env.files.readable_root(real.as_path())
                && let Some(place) = Beneath::new(root, real.as_path())
            {
                return Ok(place);
            }
        }
        if guarded && let Some(place) = Beneath::new(std::path::Path::new("/"), real.as_path()) {
            return Ok(place);
        }
        Err(changed(display).into())
    }

    /// Where the approval prompt's preview reads `real` from (it shows the user, not the
    /// model, what a held write would change): beneath the workspace, else from `/`.
    pub fn preview_place(&self, real: &RealPath) -> Option<Beneath> {
        let root = paths::workspace_root(self.workspace());
        Beneath::new(&root, real.as_path())
            .filter(|_| real.inside_workspace())
            .or_else(|| Beneath::new(std::path::Path::new("/"), real.as_path()))
    }

    /// Where a write of `real` is opened from: beneath the workspace, or — outside it — only
    /// the exact path the gate passed.
    pub fn write_place(&self, real: &RealPath, display: &str) -> Result<Beneath, ToolError> {
        let passed = self.passed.as_ref().and_then(Access::written) == Some(real);
        let protected = self.env.files.protected_write(real.as_path()).is_some();
        if real.inside_workspace()
            && (passed || !protected)
            && let Some(place) =
                Beneath::new(&paths::workspace_root(self.workspace()), real.as_path())
        {
            return Ok(place);
        }
        if passed && let Some(place) = Beneath::new(std::path::Path::new("/"), real.as_path()) {
            return Ok(place);
        }
        Err(changed(display).into())
    }

    /// Waits for `path`'s turn in the write queue; `None` when the call is cancelled first.
    pub async fn write_turn(&self, path: &RealPath) -> Option<write_queue::WriteTurn<'_>> {
        tokio::select! {
            turn = self.env.writes.lock(path) => Some(turn),
            () = self.cancel.cancelled() => None,
        }
    }

    /// Resolves a path argument against the workspace.
    pub fn resolve(&self, raw: &str) -> Result<RealPath, ToolError> {
        if raw.trim().is_empty() {
            return Err(ToolError::InvalidArgs("`path` must not be empty".into()));
        }
        paths::resolve_in(&self.env.workspace, raw, self.env.files.home.as_deref())
            .map_err(|err| ToolError::io(format!("resolving {raw}"), err))
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// What a call would touch; invalid arguments are reported here, before the gate.
    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError>;
    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError>;
    /// The change a write would make, shown in the approval prompt when the call is held.
    fn preview(&self, _args: &serde_json::Value, _cx: &ToolCx) -> Option<FileChange> {
        None
    }
}

/// Parses a tool's argument struct, turning serde's message into a correctable error.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    args: &serde_json::Value,
) -> Result<T, ToolError> {
    T::deserialize(args).map_err(|err| ToolError::InvalidArgs(err.to_string()))
}
