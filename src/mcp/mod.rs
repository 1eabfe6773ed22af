//! MCP servers (SPEC §11.3): the user's own tools, inside cairn's trust model and cache
//! discipline. `McpHub` starts every configured server in the background at session start;
//! the first request waits for them at most `FIRST_REQUEST_WAIT` (`McpHub::settle`), and a
//! server late or failed by then is shown (`McpHub::states`), never a crash or a hang. The
//! tools of the servers ready by then join the tools array, sorted, for the whole session
//! (`tool::McpTool`, named by `names`). A call goes through the hub: a server that died is
//! started again once, on the next call. `client` speaks the protocol (`rmcp`), `result`
//! turns an answer into what the model reads.

pub mod client;
pub mod http;
pub mod late;
pub mod names;
pub mod oauth;
pub mod offerings;
pub mod project;
pub mod result;
pub mod search;
mod start;
pub mod tool;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::{McpServerFile, McpServersFile, TOOL_TIMEOUT_SECS};
use crate::process::{self, Served};
use crate::sync::MutexExt;
use crate::trust::{ProcessTrust, ProjectProcess, Standing};
use client::{CallError, ListedTool, McpConnection, ProgressSink, Signals};
use project::ProjectServers;
use start::{connect, stop_live};

/// The longest the first request waits for servers still starting.
pub const FIRST_REQUEST_WAIT: Duration = Duration::from_secs(3);
/// How long a server whose stdin closed may take to leave before it is stopped.
const LEAVE_WAIT: Duration = Duration::from_millis(300);
/// The longest shutdown waits for calls under way to end.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(1);
/// How often a server that died is started again in one session.
const RESTARTS: u32 = 1;

/// How servers run: in the workspace, with the process settings of commands (the scrubbed
/// environment, limits); HTTP servers on the run's HTTP stack.
#[derive(Debug, Clone)]
pub struct McpRunSettings {
    pub workspace: PathBuf,
    pub process: process::Settings,
    /// The run's HTTP stack, for streamable-HTTP servers.
    pub network: Option<crate::net::Network>,
    /// The data directory: where `cairn mcp login` keeps the OAuth tokens (none: no OAuth).
    pub data: Option<PathBuf>,
}

/// Where a server stands, for the status line and `cairn mcp list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    Starting,
    Ready {
        tools: usize,
        protocol: String,
    },
    Failed {
        why: String,
    },
    TimedOut {
        secs: u64,
    },
    /// It was up and exited (or broke the connection).
    Exited {
        why: String,
    },
    /// A project's server not trusted in its current content: not started (SPEC §11.3).
    AwaitingTrust {
        changed: bool,
    },
    /// An HTTP server that asks for authorization and has no (valid) login: `command` logs in.
    NeedsLogin {
        command: String,
    },
}

impl ServerState {
    pub fn describe(&self) -> String {
        match self {
            ServerState::Starting => "starting".into(),
            ServerState::Ready { tools, protocol } => format!("ready, {tools} tools ({protocol})"),
            ServerState::Failed { why } => format!("failed: {why}"),
            ServerState::TimedOut { secs } => format!("timed out (no answer in {secs} s)"),
            ServerState::Exited { why } => format!("exited: {why}"),
            ServerState::AwaitingTrust { changed: false } => {
                "not started: the project's server is not trusted yet (trust it when cairn asks, or pass --trust-project)".into()
            }
            ServerState::NeedsLogin { command } => format!("needs login: run `{command}`"),
            ServerState::AwaitingTrust { changed: true } => {
                "not started: the project's server changed since you trusted it (trust it again when cairn asks, or pass --trust-project)".into()
            }
        }
    }
}

/// A server as the user configured it, and where it stands.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    pub name: String,
    pub transport: &'static str,
    /// `user` (the user's own config) or `project` (the workspace's `.cairn/config.toml`).
    pub origin: &'static str,
    #[serde(flatten)]
    pub state: ServerState,
    /// Its tools as the model sees them (offered ones only).
    pub tools: Vec<String>,
}

/// A running connection with the process behind it.
struct LiveServer {
    connection: McpConnection,
    served: Option<Served>,
}

/// One configured server.
struct Slot {
    name: String,
    file: McpServerFile,
    /// A project's server: what it is trusted as (judged right before each start).
    project: Option<ProjectProcess>,
    state: Mutex<ServerState>,
    /// Its tools from the first listing (the session's; later changes are not offered).
    tools: Mutex<Vec<ListedTool>>,
    /// Its tools as last listed (after `tools/list_changed`, or a server ready late): what
    /// `mcp_search` and `mcp_call` reach.
    catalog: Mutex<Vec<ListedTool>>,
    /// It announced `tools.listChanged`.
    changes: std::sync::atomic::AtomicBool,
    live: tokio::sync::Mutex<Option<LiveServer>>,
    /// True once the first start ended, either way.
    started: watch::Sender<bool>,
    restarts: AtomicU32,
}

impl Slot {
    fn set(&self, state: ServerState) {
        *self.state.locked() = state;
    }

    /// Its tools as offered: `enabled_tools`/`disabled_tools`, and a project's server's
    /// read-only hints dropped (trusted only for the user's own servers).
    fn offered(&self, tools: Vec<ListedTool>) -> Vec<ListedTool> {
        tools
            .into_iter()
            .filter(|t| self.file.offers(&t.name))
            .map(|mut t| {
                t.read_only &= self.project.is_none();
                t
            })
            .collect()
    }
}

/// The session's MCP servers.
pub struct McpHub {
    slots: Vec<Arc<Slot>>,
    settings: McpRunSettings,
    /// The trust a project's servers are judged by.
    trust: Option<ProcessTrust>,
    /// Cancelled at shutdown: servers still starting give up at once.
    closing: CancellationToken,
    /// Calls under way (shutdown lets them say their cancellation first).
    inflight: Arc<watch::Sender<usize>>,
    /// The servers' prompts and resources, listed once (`offerings`).
    offerings: tokio::sync::OnceCell<offerings::Offerings>,
}

/// One call under way, counted while it lives.
struct InFlight(Arc<watch::Sender<usize>>);

impl InFlight {
    fn enter(count: &Arc<watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl McpHub {
    /// Starts every enabled server of `servers` (the user's) and of `project` (those trusted
    /// in their current content) in the background (needs a tokio runtime).
    pub fn start(
        servers: &McpServersFile,
        project: Option<ProjectServers>,
        settings: McpRunSettings,
    ) -> Arc<Self> {
        let own = servers
            .iter()
            .filter(|(_, file)| file.is_enabled())
            .map(|(name, file)| (name.clone(), file.clone(), None));
        let theirs: Vec<(String, McpServerFile, Option<ProjectProcess>)> = project
            .as_ref()
            .map(|p| {
                p.servers
                    .iter()
                    .map(|(name, file)| (name.clone(), file.clone(), Some(p.process(name, file))))
                    .collect()
            })
            .unwrap_or_default();
        let slots: Vec<Arc<Slot>> = own
            .chain(theirs)
            .map(|(name, file, process)| {
                Arc::new(Slot {
                    name,
                    file,
                    project: process,
                    state: Mutex::new(ServerState::Starting),
                    tools: Mutex::default(),
                    catalog: Mutex::default(),
                    changes: std::sync::atomic::AtomicBool::new(false),
                    live: tokio::sync::Mutex::new(None),
                    started: watch::channel(false).0,
                    restarts: AtomicU32::new(0),
                })
            })
            .collect();
        let hub = Arc::new(Self {
            slots,
            settings,
            trust: project.map(|p| p.trust),
            closing: CancellationToken::new(),
            inflight: Arc::new(watch::channel(0).0),
            offerings: tokio::sync::OnceCell::new(),
        });
        for slot in &hub.slots {
            let (slot, settings) = (slot.clone(), hub.settings.clone());
            let (closing, trust) = (hub.closing.clone(), hub.trust.clone());
            tokio::spawn(async move {
                let mut live = slot.live.lock().await;
                if trusted_now(&slot, trust.as_ref()) {
                    let started = connect(&slot, &settings, &closing).await;
                    if let Ok((new, tools)) = started {
                        slot.changes
                            .store(new.connection.announces_changes, Ordering::SeqCst);
                        *slot.catalog.locked() = tools.clone();
                        *slot.tools.locked() = tools;
                        *live = Some(new);
                    }
                }
                drop(live);
                slot.started.send_replace(true);
            });
        }
        hub
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Waits until every server's start ended, or `limit` passed.
    pub async fn settle(&self, limit: Duration) {
        let waits = self.slots.iter().map(|slot| {
            let mut started = slot.started.subscribe();
            async move {
                let _ = started.wait_for(|done| *done).await;
            }
        });
        let _ = tokio::time::timeout(limit, futures_util::future::join_all(waits)).await;
    }

    /// Where each server stands now.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.slots
            .iter()
            .map(|slot| ServerReport {
                name: slot.name.clone(),
                transport: if slot.file.url.is_some() {
                    "http"
                } else {
                    "stdio"
                },
                origin: if slot.project.is_some() {
                    "project"
                } else {
                    "user"
                },
                state: slot.state.locked().clone(),
                tools: {
                    let mut names: Vec<String> = slot
                        .tools
                        .locked()
                        .iter()
                        .map(|t| names::tool_name(&slot.name, &t.name))
                        .collect();
                    names.sort();
                    names
                },
            })
            .collect()
    }

    /// The offered tools of the servers that are ready now: (server, tool), sorted by the
    /// name the model sees.
    pub fn ready_tools(&self) -> Vec<(String, ListedTool)> {
        let mut all: Vec<(String, ListedTool)> = self
            .slots
            .iter()
            .filter(|slot| matches!(*slot.state.locked(), ServerState::Ready { .. }))
            .flat_map(|slot| {
                let tools = slot.tools.locked().clone();
                tools.into_iter().map(|t| (slot.name.clone(), t))
            })
            .collect();
        all.sort_by_cached_key(|(server, tool)| names::tool_name(server, &tool.name));
        all
    }

    /// Whether every server was ready when asked (the first request).
    pub fn all_ready(&self) -> bool {
        self.slots
            .iter()
            .all(|slot| matches!(*slot.state.locked(), ServerState::Ready { .. }))
    }

    /// The project's servers not trusted (yet) as they are now.
    pub fn awaiting_trust(&self) -> Vec<String> {
        self.slots
            .iter()
            .filter(|slot| matches!(*slot.state.locked(), ServerState::AwaitingTrust { .. }))
            .map(|slot| slot.name.clone())
            .collect()
    }

    /// Whether a server announced that its tools change (`tools.listChanged`).
    pub fn announces_changes(&self) -> bool {
        self.slots
            .iter()
            .any(|slot| slot.changes.load(Ordering::SeqCst))
    }

    /// The read-only hint of `tool` of `server` as last listed (false when unknown).
    pub fn read_only_hint(&self, server: &str, tool: &str) -> bool {
        self.slots.iter().filter(|s| s.name == server).any(|slot| {
            slot.catalog
                .locked()
                .iter()
                .any(|t| t.name == tool && t.read_only)
        })
    }

    /// Every tool the servers offer now, for `mcp_search`/`mcp_call`: a server whose tools
    /// changed, or that announces they may, is asked again (a notification can trail the
    /// answer it follows), a server ready late is included. Sorted by name.
    pub async fn catalog(&self) -> Vec<(String, ListedTool)> {
        let mut all = Vec::new();
        for slot in &self.slots {
            if matches!(*slot.state.locked(), ServerState::AwaitingTrust { .. }) {
                // Trusted since the start (the session's trust prompt): it starts now.
                let mut live = slot.live.lock().await;
                if let Err(why) = self.start_once_trusted(slot, &mut live).await {
                    tracing::debug!(server = %slot.name, %why, "MCP server not started");
                }
            }
            let live = slot.live.try_lock();
            if let Ok(live) = live
                && let Some(up) = live.as_ref()
                && (up
                    .connection
                    .signals
                    .tools_changed
                    .swap(false, Ordering::SeqCst)
                    || up.connection.announces_changes)
            {
                match client::list_tools(&up.connection.peer()).await {
                    Ok(tools) => *slot.catalog.locked() = slot.offered(tools),
                    Err(why) => tracing::warn!(server = %slot.name, %why, "MCP list failed"),
                }
            }
            if !matches!(*slot.state.locked(), ServerState::Ready { .. }) {
                continue;
            }
            let catalog = slot.catalog.locked().clone();
            all.extend(catalog.into_iter().map(|t| (slot.name.clone(), t)));
        }
        all.sort_by_cached_key(|(server, tool)| names::tool_name(server, &tool.name));
        all
    }

    /// Calls `tool` of `server`. A server found dead is started again (once a session); a
    /// server that dies during the call gives an error saying so.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<serde_json::Value, String> {
        let Some(slot) = self.slots.iter().find(|s| s.name == server) else {
            return Err(format!("no MCP server `{server}` is configured"));
        };
        let (peer, signals) = self.connection_of(slot).await?;
        let timeout = Duration::from_secs(slot.file.tool_timeout_secs.unwrap_or(TOOL_TIMEOUT_SECS));
        // On its own task: an interrupted call's future is dropped by the runtime, and the
        // task still tells the server (`notifications/cancelled`) when `cancel` fires.
        let (cancel, name) = (cancel.clone(), tool.to_string());
        let inflight = InFlight::enter(&self.inflight);
        let task = tokio::spawn(async move {
            let _inflight = inflight;
            client::call(
                &peer, &signals, &name, arguments, timeout, &cancel, progress,
            )
            .await
        });
        let outcome = task.await.unwrap_or(Err(CallError::Closed));
        match outcome {
            Ok(result) => Ok(result),
            Err(CallError::Closed) => {
                let why = self.bury(slot).await;
                Err(format!(
                    "the MCP server `{server}` exited during the call ({why}); it is started again on the next call"
                ))
            }
            Err(err) => Err(format!("MCP server `{server}`, tool `{tool}`: {err}")),
        }
    }

    /// The live connection of `slot`, starting it again when it died (at most `RESTARTS`
    /// times); a server that never came up is reported as it stands.
    async fn connection_of(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<(rmcp::service::Peer<rmcp::service::RoleClient>, Arc<Signals>), String> {
        let mut live = slot.live.lock().await;
        if let Some(up) = live.as_ref()
            && !up.connection.is_closed()
        {
            return Ok((up.connection.peer(), up.connection.signals.clone()));
        }
        if let Some(dead) = live.take() {
            let why = stop_live(dead).await;
            slot.set(ServerState::Exited { why });
        }
        if matches!(*slot.state.locked(), ServerState::AwaitingTrust { .. }) {
            self.start_once_trusted(slot, &mut live).await?;
            if let Some(up) = live.as_ref() {
                return Ok((up.connection.peer(), up.connection.signals.clone()));
            }
        }
        let state = slot.state.locked().clone();
        let may_restart = matches!(state, ServerState::Exited { .. })
            && slot.restarts.fetch_add(1, Ordering::SeqCst) < RESTARTS;
        if !may_restart {
            return Err(format!(
                "the MCP server `{}` is not available: {}",
                slot.name,
                state.describe()
            ));
        }
        tracing::warn!(server = %slot.name, "starting the MCP server again");
        let (new, _tools) = connect(slot, &self.settings, &self.closing)
            .await
            .map_err(|why| {
                format!(
                    "the MCP server `{}` could not be started again: {why}",
                    slot.name
                )
            })?;
        let ends = (new.connection.peer(), new.connection.signals.clone());
        *live = Some(new);
        Ok(ends)
    }

    /// Starts a project's server that waited for trust, when it is trusted now (the user
    /// trusted it during the session); its tools are reached through `mcp_search`/`mcp_call`.
    async fn start_once_trusted(
        &self,
        slot: &Slot,
        live: &mut Option<LiveServer>,
    ) -> Result<(), String> {
        if !trusted_now(slot, self.trust.as_ref()) {
            return Err(format!(
                "the MCP server `{}` is not available: {}",
                slot.name,
                slot.state.locked().describe()
            ));
        }
        let (new, tools) = connect(slot, &self.settings, &self.closing).await?;
        slot.changes
            .store(new.connection.announces_changes, Ordering::SeqCst);
        *slot.catalog.locked() = tools;
        *live = Some(new);
        Ok(())
    }

    /// Takes down the connection of `slot` after it closed; says why it ended.
    async fn bury(&self, slot: &Slot) -> String {
        let mut live = slot.live.lock().await;
        let why = match live.take() {
            Some(dead) => stop_live(dead).await,
            None => "the connection closed".into(),
        };
        tracing::warn!(server = %slot.name, %why, "MCP server exited");
        slot.set(ServerState::Exited { why: why.clone() });
        why
    }

    /// Stops every server and its whole process group.
    pub async fn shutdown(&self) {
        self.closing.cancel();
        // Interrupted calls send their `notifications/cancelled` before the servers stop.
        let mut calls = self.inflight.subscribe();
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, calls.wait_for(|n| *n == 0)).await;
        let stops = self.slots.iter().map(|slot| async move {
            if let Some(live) = slot.live.lock().await.take() {
                stop_live(live).await;
            }
        });
        futures_util::future::join_all(stops).await;
    }
}

/// Whether `slot` may start: the user's own always; a project's only when it is trusted in
/// its content as the files are now (else its state says it waits for trust).
fn trusted_now(slot: &Slot, trust: Option<&ProcessTrust>) -> bool {
    let Some(process) = &slot.project else {
        return true;
    };
    let judged = match trust.map(|t| t.judge(process)) {
        Some(Ok(judged)) => judged,
        Some(Err(err)) => {
            slot.set(ServerState::Failed {
                why: err.to_string(),
            });
            return false;
        }
        None => {
            slot.set(ServerState::AwaitingTrust { changed: false });
            return false;
        }
    };
    if judged.trusted() {
        return true;
    }
    slot.set(ServerState::AwaitingTrust {
        changed: judged.standing == Standing::Changed,
    });
    false
}

/// The variables the servers' secrets are in (`bearer_token_env`, the names of `env`): kept
/// out of commands' environment like the provider key, whatever their names look like.
pub fn secret_names(servers: &McpServersFile) -> Vec<String> {
    let mut names: Vec<String> = servers
        .values()
        .flat_map(|file| {
            file.bearer_token_env
                .iter()
                .cloned()
                .chain(file.env.keys().cloned())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Remembers the values of the servers' `env` that look secret (by name or value) as secrets:
/// redacted by name wherever a tool's output shows them. (Bearer tokens are remembered when
/// they are read, at the server's start.)
pub fn remember_secrets(servers: &McpServersFile) {
    for file in servers.values() {
        for (name, value) in &file.env {
            if crate::secrets::looks_secret(name, value) {
                crate::secrets::remember(name, value);
            }
        }
    }
}
