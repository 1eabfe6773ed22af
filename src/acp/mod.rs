//! `cairn acp`: cairn as an editor's agent over the Agent Client Protocol (JSON-RPC on stdio;
//! SPEC §11.11), on the official SDK (`agent-client-protocol`, protocol version 1). A third
//! front end on the bus beside the TUI and `exec`: each ACP session is an engine started for
//! the editor's workspace; its `AgentEvent`s become `session/update`s (`updates`), held calls
//! `session/request_permission` (`permission`), and the editor's requests `UserCommand`s
//! (`prompt`, `session`). The engine learns nothing of ACP.
//!
//! Nothing but protocol frames reaches stdout (`stdout`); logs go to the log file.

mod files;
mod permission;
mod prompt;
mod session;
mod stdout;
mod terminal;
mod tool_calls;
mod updates;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, Implementation, InitializeRequest,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Error};
use color_eyre::eyre::{Result, eyre};
use futures_util::FutureExt as _;
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use crate::cli::RunArgs;
use crate::dirs::Dirs;
use crate::sync::MutexExt as _;
use session::{AcpSession, TurnEnd};

/// What every handler shares: the sessions of this connection and what the editor offered.
#[derive(Clone)]
struct AcpServer {
    dirs: Dirs,
    args: RunArgs,
    sessions: Arc<Mutex<HashMap<String, Arc<AcpSession>>>>,
    client: Arc<Mutex<ClientCapabilities>>,
}

/// Serves the editor on stdin/stdout until it closes the connection; every session's engine
/// is shut down before returning.
pub async fn run(dirs: &Dirs, args: RunArgs) -> Result<i32> {
    let frames = stdout::Frames::take()?;
    let hung_up = frames.hung_up();
    let server = AcpServer {
        dirs: dirs.clone(),
        args,
        sessions: Arc::default(),
        client: Arc::default(),
    };
    let transport = ByteStreams::new(frames.compat_write(), tokio::io::stdin().compat());
    tracing::info!("acp: serving ACP protocol version {}", ProtocolVersion::V1);
    let served = server.serve(transport).await;
    let sessions: Vec<Arc<AcpSession>> = server.sessions.locked().drain().map(|(_, s)| s).collect();
    for session in sessions {
        session.shutdown().await;
    }
    match served {
        Ok(()) => Ok(crate::exec::status::OK),
        // The editor went away while something was still on its way to it: its hanging up
        // is how a connection ends, not a failure.
        Err(err) if hung_up.load(std::sync::atomic::Ordering::Relaxed) => {
            tracing::info!("acp: the editor hung up ({err})");
            Ok(crate::exec::status::OK)
        }
        Err(err) => Err(eyre!("the ACP connection failed: {err}")),
    }
}

/// A handler's panic as the request's error, not a dead connection.
async fn guarded<T>(
    what: &str,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match std::panic::AssertUnwindSafe(work).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let text = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            tracing::error!("acp: {what} panicked: {text}");
            Err(Error::new(
                agent_client_protocol::ErrorCode::INTERNAL_ERROR,
                format!("cairn failed on {what}: {text}"),
            ))
        }
    }
}

fn failed(message: impl std::fmt::Display) -> Error {
    Error::new(
        agent_client_protocol::ErrorCode::INTERNAL_ERROR,
        message.to_string(),
    )
}

impl AcpServer {
    fn session(&self, id: &str) -> Result<Arc<AcpSession>, Error> {
        self.sessions.locked().get(id).cloned().ok_or_else(|| {
            agent_client_protocol::v1::schema::Error::session_not_found(id.to_string()).into()
        })
    }

    /// Starts an engine for `cwd` (a new session, or `resume`'s).
    fn launch(
        &self,
        cwd: &std::path::Path,
        resume: Option<String>,
        cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Client>,
    ) -> Result<crate::launch::Launched, Error> {
        if !cwd.is_absolute() {
            return Err(Error::invalid_params().data(serde_json::json!("cwd must be absolute")));
        }
        let workspace = std::fs::canonicalize(cwd)
            .map_err(|err| failed(format!("the workspace {}: {err}", cwd.display())))?;
        let mut args = self.args.clone();
        args.r#continue = false;
        args.resume = resume;
        let files = files::EditorFiles::offered(&self.client.locked(), cx);
        let front = crate::launch::Front {
            interactive: true,
            // The editor has no trust prompt: untrusted project rules and processes are left
            // out and a warning says so, as in `exec` (`--trust-project` trusts them).
            asks_trust: false,
            buffers: files.as_ref().map(|(buffers, _)| Arc::clone(buffers)),
        };
        let launched = crate::launch::start_in(&self.dirs, &args, front, workspace)
            .map_err(|err| failed(format!("{err:#}")))?;
        if let Some((_, session)) = files {
            let id = launched.agent.session_id().0.clone();
            let _ = session.set(agent_client_protocol::v1::schema::SessionId::new(id));
        }
        Ok(launched)
    }

    /// Serves the connection until the editor closes it.
    async fn serve(
        &self,
        transport: impl agent_client_protocol::ConnectTo<Agent> + 'static,
    ) -> Result<(), Error> {
        let (init, new, load, prompt, mode, cancel) = (
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
        );
        Agent
            .v1()
            .name("cairn")
            .on_receive_request(
                async move |request: InitializeRequest, responder, _cx| {
                    *init.client.locked() = request.client_capabilities.clone();
                    let version = request.protocol_version.min(ProtocolVersion::V1);
                    responder.respond(
                        InitializeResponse::new(version)
                            .agent_capabilities(
                                AgentCapabilities::new()
                                    .load_session(true)
                                    .prompt_capabilities(
                                        PromptCapabilities::new()
                                            .image(true)
                                            .embedded_context(true),
                                    )
                                    .mcp_capabilities(McpCapabilities::new()),
                            )
                            .agent_info(Some(
                                Implementation::new("cairn", env!("CARGO_PKG_VERSION"))
                                    .title(Some("cairn".to_string())),
                            )),
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: NewSessionRequest, responder, cx| {
                    let server = new.clone();
                    let started = guarded("session/new", async {
                        let launched = server.launch(&request.cwd, None, &cx)?;
                        let mirror = terminal::offered(&server.client.locked());
                        Ok(AcpSession::start(launched, cx.clone(), mirror))
                    })
                    .await;
                    let (session, _ready) = match started {
                        Ok(started) => started,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    server
                        .sessions
                        .locked()
                        .insert(session.id.clone(), Arc::clone(&session));
                    responder.respond(
                        NewSessionResponse::new(session.id.clone())
                            .modes(Some(session::modes(session.mode))),
                    )?;
                    cx.send_notification(session.commands_update(&server.dirs))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: LoadSessionRequest, responder, cx| {
                    let server = load.clone();
                    let id = request.session_id.0.to_string();
                    let started = guarded("session/load", async {
                        let launched = server.launch(&request.cwd, Some(id), &cx)?;
                        let mirror = terminal::offered(&server.client.locked());
                        Ok(AcpSession::start(launched, cx.clone(), mirror))
                    })
                    .await;
                    let (session, ready) = match started {
                        Ok(started) => started,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    server
                        .sessions
                        .locked()
                        .insert(session.id.clone(), Arc::clone(&session));
                    // The history goes out as updates first; the answer follows it.
                    tokio::spawn(async move {
                        let _ = ready.await;
                        let answer = responder.respond(
                            LoadSessionResponse::new().modes(Some(session::modes(session.mode))),
                        );
                        if answer.is_ok() {
                            let _ = cx.send_notification(session.commands_update(&server.dirs));
                        }
                    });
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: PromptRequest, responder, _cx| {
                    let session = match prompt.session(&request.session_id.0) {
                        Ok(session) => session,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    // The prompt runs beside the dispatch loop: permission answers and
                    // cancels must get through while it runs.
                    tokio::spawn(async move {
                        let end = guarded("session/prompt", async {
                            Ok(session.prompt(&request.prompt).await)
                        })
                        .await;
                        let _ = match end {
                            Ok(TurnEnd::Stopped(reason)) => {
                                responder.respond(PromptResponse::new(reason))
                            }
                            Ok(TurnEnd::Failed(message)) => {
                                responder.respond_with_error(failed(message))
                            }
                            Err(err) => responder.respond_with_error(err),
                        };
                    });
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: SetSessionModeRequest, responder, _cx| {
                    let session = match mode.session(&request.session_id.0) {
                        Ok(session) => session,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    let Ok(picked) = request.mode_id.0.parse::<crate::bus::Mode>() else {
                        return responder.respond_with_error(Error::invalid_params().data(
                            serde_json::json!("modes: ask, auto-edit, auto, plan, never"),
                        ));
                    };
                    session.set_mode(picked).await;
                    responder.respond(SetSessionModeResponse::new())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |notification: CancelNotification, _cx| {
                    if let Ok(session) = cancel.session(&notification.session_id.0) {
                        session.cancel().await;
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_to(transport)
            .await
    }
}
