//! Where the session's servers stand: each one's state (idle, starting, indexing, ready,
//! failed and why), the status line's indicator, and the listing of `cairn lsp list` and
//! `/lsp` with what a server may do in its sandbox and where its log lines go.

use std::path::Path;

use super::{Lsp, ServerPhase};
use crate::sync::MutexExt;

/// Where a server stands, for the status line, `/lsp` and `cairn lsp list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LspState {
    /// Configured or found; starts on the first file of its language.
    Idle,
    Starting,
    /// Running and reporting work in progress.
    Indexing,
    Ready,
    Failed(String),
}

impl LspState {
    pub fn label(&self) -> &str {
        match self {
            LspState::Idle => "idle",
            LspState::Starting => "starting",
            LspState::Indexing => "indexing",
            LspState::Ready => "ready",
            LspState::Failed(_) => "failed",
        }
    }
}

/// One line of the servers' listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: LspState,
    pub extensions: Vec<String>,
    pub command: String,
    pub pid: Option<u32>,
}

impl Lsp {
    /// Every server's state.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let slots = self.inner.slots.locked();
        let mut list: Vec<ServerStatus> = self
            .inner
            .settings
            .servers
            .iter()
            .map(|spec| {
                let (state, pid) = match slots.get(&spec.name).map(|s| s.phase.borrow().clone()) {
                    None => (LspState::Idle, None),
                    Some(ServerPhase::Starting) => (LspState::Starting, None),
                    Some(ServerPhase::Ready(server)) if server.busy() => {
                        (LspState::Indexing, Some(server.pid))
                    }
                    Some(ServerPhase::Ready(server)) => (LspState::Ready, Some(server.pid)),
                    Some(ServerPhase::Failed(why)) => (LspState::Failed(why), None),
                };
                ServerStatus {
                    name: spec.name.clone(),
                    state,
                    extensions: spec.extensions.clone(),
                    command: std::iter::once(spec.command.clone())
                        .chain(spec.args.iter().cloned())
                        .collect::<Vec<_>>()
                        .join(" "),
                    pid,
                }
            })
            .collect();
        list.extend(self.inner.settings.missing.iter().map(|m| ServerStatus {
            name: m.name.clone(),
            state: LspState::Failed(m.why.clone()),
            extensions: Vec::new(),
            command: String::new(),
            pid: None,
        }));
        list
    }

    /// The listing of `cairn lsp list` and `/lsp`: one line per server (name, state, files,
    /// command), what the servers may do, and where their log lines go.
    pub fn listing(&self, log: &Path) -> String {
        let statuses = self.statuses();
        if statuses.is_empty() {
            return "no language server is configured or found on PATH (built-ins: rust-analyzer, pyright-langserver, pylsp, typescript-language-server, gopls, clangd; or [lsp.NAME] in the config)\n".into();
        }
        let mut out = String::new();
        for status in &statuses {
            let state = match &status.state {
                LspState::Failed(why) => format!("failed: {why}"),
                other => other.label().to_string(),
            };
            let files = if status.extensions.is_empty() {
                String::new()
            } else {
                format!(
                    " [{}]",
                    status
                        .extensions
                        .iter()
                        .map(|e| format!(".{e}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            };
            let pid = status.pid.map(|p| format!(" pid {p}")).unwrap_or_default();
            let command = if status.command.is_empty() {
                String::new()
            } else {
                format!(" {}", status.command)
            };
            out.push_str(&format!("{}: {state}{pid}{files}{command}\n", status.name));
        }
        out.push_str(&format!(
            "Servers start on the first file of their language; {}.\nlog: {}\n",
            self.sandbox_note(),
            log.display()
        ));
        out
    }

    /// One short text for the status line: every started server's state (none before any
    /// started).
    pub fn indicator(&self) -> Option<String> {
        let started: Vec<String> = self
            .statuses()
            .into_iter()
            .filter(|s| s.state != LspState::Idle && !(s.pid.is_none() && s.command.is_empty()))
            .map(|s| format!("{} {}", s.name, s.state.label()))
            .collect();
        (!started.is_empty()).then(|| started.join(", "))
    }

    /// The indicator when it changed since last asked (`Some(None)`: it went away).
    pub fn indicator_changed(&self) -> Option<Option<String>> {
        let now = self.indicator();
        let mut last = self.inner.shown.locked();
        if *last == now {
            return None;
        }
        last.clone_from(&now);
        Some(now)
    }

    /// The log-facing description of the servers' sandbox: for `/lsp` and `cairn lsp list`.
    pub fn sandbox_note(&self) -> String {
        let sandboxed = self.inner.settings.process.sandbox.is_some();
        if sandboxed {
            format!(
                "servers run in the workspace-write sandbox with the network off; their cache is {}",
                self.inner.cache.path().display()
            )
        } else {
            "the sandbox is off: servers run without it (network off only by convention)".into()
        }
    }
}
