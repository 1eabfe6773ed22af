//! Language servers (SPEC §11.10): the model hears the compiler after every edit and can
//! navigate like an IDE. `Lsp` is the session's set of servers: each starts lazily, in the
//! background, on the first file of its language (`servers` says which exist), runs on the
//! process service in the workspace-write sandbox with the network off and a private cache,
//! is restarted at most twice after a crash and then left off, and is stopped with
//! `shutdown`/`exit` and its process group at the session's end.
//!
//! After a write (`after_write`) the file's new content goes to its server as the next
//! version, and the result waits at most `wait` for *that version's* diagnostics (`diagnose`):
//! pulled when the server offers `textDocument/diagnostic`, else the `publishDiagnostics` that
//! names the version, or for a server that names none, what arrives after the change once it
//! settled. What the edit introduced (new against the diagnostics before it) is appended to
//! the result; a server not ready in time makes it say "diagnostics pending", and what comes
//! later is handed to the agent as a note for the next step (`take_late_notes`).
//!
//! Here: the settings and the session's facade. `lifecycle`: starting, restarting and
//! stopping servers; `diagnose`: one write's diagnostics; `late`: the pending ones' notes;
//! `status`: what the status line and `cairn lsp list` show; `ops`: the `lsp` tool.
//!
//! The JSON-RPC layer is cairn's own (`rpc`, over tokio on `process::serve`'s pipes) with
//! `lsp-types` for the answers the `lsp` tool reads (`ops`): async-lsp would bring a tower
//! stack and its own child management for the dozen messages cairn sends.

mod diagnose;
mod late;
mod lifecycle;
pub mod ops;
pub mod rpc;
mod server;
pub mod servers;
mod status;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::process;
use crate::sync::MutexExt;

pub use diagnose::DiagOutcome;
use late::Late;
use lifecycle::{ServerPhase, ServerSlot};
pub use server::{LanguageServer, file_uri, uri_path};
pub use servers::{FoundServers, Missing, ServerOrigin, ServerSpec};
pub use status::{LspState, ServerStatus};

/// The default wait for an edit's diagnostics.
pub const WAIT_MS: u64 = 1500;
/// Restarts after crashes before a server is left off.
pub const MAX_RESTARTS: u32 = 2;
/// How long the diagnostics of a pending edit are still waited for in the background.
const LATE_LIMIT: Duration = Duration::from_secs(120);

/// How the session's servers run.
#[derive(Debug, Clone)]
pub struct LspSettings {
    pub workspace: PathBuf,
    /// The session's process settings (the servers' own are derived: network off, a cache).
    pub process: process::Settings,
    pub wait: Duration,
    pub warnings: bool,
    pub servers: Vec<Arc<ServerSpec>>,
    /// Configured servers that do not run, and why.
    pub missing: Vec<Missing>,
}

struct LspInner {
    settings: LspSettings,
    /// The servers' private writable cache (`XDG_CACHE_HOME`, `CARGO_TARGET_DIR`, ...),
    /// removed at the end of the session.
    cache: tempfile::TempDir,
    slots: std::sync::Mutex<HashMap<String, ServerSlot>>,
    late: std::sync::Mutex<Vec<Late>>,
    /// The latest write per file: a write's diagnostics are dropped once a newer one came.
    edits: std::sync::Mutex<HashMap<PathBuf, u64>>,
    /// The status line's indicator as last published.
    shown: std::sync::Mutex<Option<String>>,
}

/// The session's language servers.
#[derive(Clone)]
pub struct Lsp {
    inner: Arc<LspInner>,
}

impl Lsp {
    pub fn new(settings: LspSettings) -> std::io::Result<Self> {
        let cache = tempfile::Builder::new().prefix("cairn-lsp-").tempdir()?;
        Ok(Self {
            inner: Arc::new(LspInner {
                settings,
                cache,
                slots: Default::default(),
                late: Default::default(),
                edits: Default::default(),
                shown: Default::default(),
            }),
        })
    }

    /// Whether any server is configured or found (the `lsp` tool is offered then).
    pub fn offered(&self) -> bool {
        !self.inner.settings.servers.is_empty()
    }

    pub fn settings(&self) -> &LspSettings {
        &self.inner.settings
    }

    /// The server for `path`'s language, if any.
    pub fn spec_for(&self, path: &Path) -> Option<Arc<ServerSpec>> {
        self.inner
            .settings
            .servers
            .iter()
            .find(|spec| spec.serves(path))
            .cloned()
    }

    /// The server of `spec`, started (in the background) if it is not yet, waited for until
    /// `deadline`. `Err` says why there is none (yet).
    pub async fn server(
        &self,
        spec: &Arc<ServerSpec>,
        file: &Path,
        deadline: Instant,
    ) -> Result<Arc<LanguageServer>, String> {
        let mut phase = self.inner.ensure(spec, file);
        loop {
            let now = phase.borrow_and_update().clone();
            match now {
                ServerPhase::Ready(server) => return Ok(server),
                ServerPhase::Failed(why) => return Err(format!("{} is off: {why}", spec.name)),
                ServerPhase::Starting => {}
            }
            match tokio::time::timeout_at(deadline.into(), phase.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(format!("{} is off", spec.name)),
                Err(_) => return Err(format!("{} is still starting", spec.name)),
            }
        }
    }

    /// After a write of `path` (`before`: its text before, when it existed; `after`: now):
    /// the diagnostics block for the result, or none when no server serves the file.
    pub async fn after_write(
        &self,
        path: &Path,
        display: &str,
        before: Option<String>,
        after: String,
    ) -> Option<String> {
        let spec = self.spec_for(path)?;
        let edit = {
            let mut edits = self.inner.edits.locked();
            let n = edits.entry(path.to_path_buf()).or_default();
            *n += 1;
            *n
        };
        let (tx, mut rx) = oneshot::channel();
        let job = diagnose::DiagnoseJob {
            lsp: self.clone(),
            spec: spec.clone(),
            path: path.to_path_buf(),
            display: display.to_string(),
            before,
            after,
            edit,
        };
        tokio::spawn(async move {
            let outcome = job.run().await;
            let _ = tx.send(outcome);
        });
        let wait = self.inner.settings.wait;
        match tokio::time::timeout(wait, &mut rx).await {
            Ok(Ok(outcome)) => outcome.block(self.inner.settings.warnings),
            Ok(Err(_)) => None,
            Err(_) => {
                let why = match self.statuses().into_iter().find(|s| s.name == spec.name) {
                    Some(ServerStatus {
                        state: LspState::Starting,
                        ..
                    }) => format!("{} is starting", spec.name),
                    Some(ServerStatus {
                        state: LspState::Indexing,
                        ..
                    }) => format!("{} is indexing", spec.name),
                    _ => format!("{} has not reported on this version yet", spec.name),
                };
                let outcome = Arc::new(std::sync::Mutex::new(None));
                let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
                self.inner.late.locked().push(Late {
                    display: display.to_string(),
                    outcome: outcome.clone(),
                    done: done.clone(),
                });
                tokio::spawn(async move {
                    if let Ok(came) = rx.await {
                        *outcome.locked() = Some(came);
                    }
                    done.store(true, std::sync::atomic::Ordering::Release);
                });
                Some(format!(
                    "\n\n[diagnostics pending: {why}; they follow as a note when they arrive]"
                ))
            }
        }
    }

    /// After a command that may have changed files (a formatter, a code generator): every
    /// open document whose file changed on disk is sent as its next version (`didChange`), a
    /// deleted one is closed. Nothing waits for diagnostics.
    pub async fn files_changed(&self) {
        let running: Vec<Arc<LanguageServer>> = {
            let slots = self.inner.slots.locked();
            slots
                .values()
                .filter_map(|slot| match &*slot.phase.borrow() {
                    ServerPhase::Ready(server) => Some(server.clone()),
                    _ => None,
                })
                .collect()
        };
        for server in running {
            let open: Vec<String> = server.docs.lock().await.keys().cloned().collect();
            for uri in open {
                let Some(path) = uri_path(&uri) else { continue };
                match tokio::fs::read(&path).await {
                    Ok(bytes) => {
                        let text = String::from_utf8_lossy(&bytes);
                        server.sync(&uri, &servers::language_id(&path), &text).await;
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                        server.close(&uri).await;
                    }
                    Err(_) => {}
                }
            }
        }
    }
}
