//! One connection to one MCP server, on the official SDK (`rmcp`): a stdio server started by
//! the process service (`process::serve`: its own process group, the scrubbed environment plus
//! the server's `env`, stopped whole at the end) with JSON-RPC over its pipes. The protocol
//! revision is negotiated from the newest: a `server/discover` probe (2026-07-28, stateless),
//! and `initialize` (2025-11-25, 2025-06-18) when the server answers the probe with an error.
//! Pings are answered by the SDK; progress notifications reach the sink registered for the
//! call; `tools/list_changed` is remembered (the tools array never changes).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientRequest, Implementation,
    InitializeRequestParams, ProgressNotificationParam, ProtocolVersion, ServerResult,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt as _, NotificationContext, Peer, PeerRequestOptions,
    RoleClient, RunningService,
};
use tokio_util::sync::CancellationToken;

use crate::sync::MutexExt;

/// Progress notifications kept for calls whose sink is not registered yet.
const EARLY_PROGRESS: usize = 64;

/// What a progress notification says, for the call's card.
pub type ProgressSink = Arc<dyn Fn(McpProgress) + Send + Sync>;

/// One progress notification of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct McpProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// What the SDK tells cairn about a server outside the calls.
#[derive(Default)]
pub struct Signals {
    /// Progress sinks by progress token (as JSON text).
    progress: Mutex<HashMap<String, ProgressSink>>,
    /// Progress that came before its call's sink was registered (the request is out before
    /// its token is known here), replayed on registration; bounded.
    early: Mutex<Vec<(String, McpProgress)>>,
    /// The server said its tools changed.
    pub tools_changed: AtomicBool,
}

/// The client side of a connection: cairn's name, the capabilities it has (none beyond the
/// basics) and where notifications go.
#[derive(Clone)]
struct Handler {
    signals: Arc<Signals>,
    info: InitializeRequestParams,
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> InitializeRequestParams {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = token_key(&params.progress_token);
        let progress = McpProgress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        let sink = self.signals.progress.locked().get(&key).cloned();
        match sink {
            Some(sink) => sink(progress),
            None => {
                let mut early = self.signals.early.locked();
                if early.len() >= EARLY_PROGRESS {
                    early.remove(0);
                }
                early.push((key, progress));
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.signals.tools_changed.store(true, Ordering::SeqCst);
    }
}

fn token_key(token: &rmcp::model::ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// A server's tool as it listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    /// Its `inputSchema`, as sent.
    pub schema: serde_json::Value,
    /// `annotations.readOnlyHint`: a hint, trusted only for the user's own servers.
    pub read_only: bool,
}

/// A connection that is up: the SDK's service and what the server announced.
pub struct McpConnection {
    service: RunningService<RoleClient, Handler>,
    pub signals: Arc<Signals>,
    /// The revision agreed on.
    pub protocol: String,
    /// The server announced `tools.listChanged`.
    pub announces_changes: bool,
    /// The server announced prompts (`capabilities.prompts`).
    pub announces_prompts: bool,
    /// The server announced resources (`capabilities.resources`).
    pub announces_resources: bool,
}

/// Why a call did not give a result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the call was cancelled")]
    Cancelled,
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    #[error("the connection to the server closed")]
    Closed,
    #[error("the server answered with an error: {0}")]
    Server(String),
}

impl McpConnection {
    /// Speaks MCP over `read`/`write` (a stdio server's stdout and stdin): negotiates the
    /// revision and lists its tools.
    pub async fn open<R, W>(read: R, write: W) -> Result<(Self, Vec<ListedTool>), String>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        Self::over((read, write)).await
    }

    /// Speaks MCP over `transport` (pipes, or the streamable-HTTP transport): negotiates the
    /// revision and lists its tools.
    pub async fn over<T, E, A>(transport: T) -> Result<(Self, Vec<ListedTool>), String>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let signals = Arc::new(Signals::default());
        let info = InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let handler = Handler {
            signals: signals.clone(),
            info,
        };
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let service = handler
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|err| err.to_string())?;
        let info = service
            .peer()
            .peer_info()
            .and_then(|info| serde_json::to_value(&*info).ok())
            .unwrap_or_default();
        let protocol = info["protocolVersion"].as_str().unwrap_or("").to_string();
        let announces_changes = info["capabilities"]["tools"]["listChanged"] == true;
        let announces_prompts = info["capabilities"]["prompts"].is_object();
        let announces_resources = info["capabilities"]["resources"].is_object();
        let tools = list_tools(service.peer()).await?;
        Ok((
            Self {
                service,
                signals,
                protocol,
                announces_changes,
                announces_prompts,
                announces_resources,
            },
            tools,
        ))
    }

    /// The peer to send requests on (cheap to clone; calls may run side by side).
    pub fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    /// Whether the connection closed (the server exited or broke the protocol).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Closes the connection (the process, if any, is stopped by its owner).
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// Calls `tool` with `arguments` on `peer`: progress goes to `progress`, Esc (`cancel`) and the
/// timeout send `notifications/cancelled`. The result as the server sent it (JSON).
pub async fn call(
    peer: &Peer<RoleClient>,
    signals: &Signals,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    timeout: Duration,
    cancel: &CancellationToken,
    progress: Option<ProgressSink>,
) -> Result<serde_json::Value, CallError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new(tool.to_string()).with_arguments(arguments),
    ));
    let mut handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(|_| CallError::Closed)?;
    let key = token_key(&handle.progress_token);
    if let Some(sink) = progress {
        signals.progress.locked().insert(key.clone(), sink.clone());
        let early: Vec<McpProgress> = {
            let mut early = signals.early.locked();
            let (mine, rest): (Vec<_>, Vec<_>) = early.drain(..).partition(|(k, _)| *k == key);
            *early = rest;
            mine.into_iter().map(|(_, p)| p).collect()
        };
        for progress in early {
            sink(progress);
        }
    }
    let outcome = tokio::select! {
        answer = &mut handle.rx => Some(answer),
        () = cancel.cancelled() => None,
        () = tokio::time::sleep(timeout) => {
            signals.progress.locked().remove(&key);
            let _ = handle.cancel(Some("timed out".into())).await;
            return Err(CallError::TimedOut(timeout));
        }
    };
    signals.progress.locked().remove(&key);
    let Some(answer) = outcome else {
        let _ = handle.cancel(Some("cancelled by the user".into())).await;
        return Err(CallError::Cancelled);
    };
    match answer {
        Err(_) | Ok(Err(rmcp::ServiceError::TransportClosed)) => Err(CallError::Closed),
        Ok(Err(rmcp::ServiceError::McpError(err))) => {
            Err(CallError::Server(err.message.to_string()))
        }
        Ok(Err(err)) => Err(CallError::Server(err.to_string())),
        Ok(Ok(ServerResult::CallToolResult(result))) => {
            Ok(serde_json::to_value(result).unwrap_or_default())
        }
        Ok(Ok(other)) => Err(CallError::Server(format!(
            "an answer that is no tool result: {}",
            serde_json::to_string(&other).unwrap_or_default()
        ))),
    }
}

/// Every tool the server lists now (following its pages).
pub async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<ListedTool>, String> {
    let tools = peer
        .list_all_tools()
        .await
        .map_err(|err| format!("listing its tools: {err}"))?;
    Ok(tools.iter().map(listed).collect())
}

fn listed(tool: &rmcp::model::Tool) -> ListedTool {
    ListedTool {
        name: tool.name.to_string(),
        description: tool.description.as_deref().unwrap_or_default().to_string(),
        schema: serde_json::Value::Object((*tool.input_schema).clone()),
        read_only: tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false),
    }
}
