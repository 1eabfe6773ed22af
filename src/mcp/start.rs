//! Starting one server and stopping it: a stdio server on the process service (the user's
//! own run as the user, a project's in the workspace-write sandbox) or a streamable-HTTP one
//! on the run's HTTP stack (`http`), within its start-up timeout; what it said last when it
//! went.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::client::{ListedTool, McpConnection};
use super::{LEAVE_WAIT, LiveServer, McpRunSettings, ServerState, Slot};
use crate::config::{McpServerFile, STARTUP_TIMEOUT_SECS};
use crate::process::{self, Grant, Program};

/// Ends a connection and its process; what the process said last on stderr, or how it ended.
pub(super) async fn stop_live(live: LiveServer) -> String {
    live.connection.close().await;
    let Some(mut served) = live.served else {
        return "the connection closed".into();
    };
    // Its stdin is closed now: a server that leaves on its own reads what was sent last
    // (a cancellation) first; one that does not is stopped after a moment.
    let _ = tokio::time::timeout(LEAVE_WAIT, served.exited()).await;
    let exited = served.try_exited().ok().flatten();
    if exited.is_some() {
        // What it said last before it went.
        served.stderr_drained(Duration::from_millis(500)).await;
    }
    let tail = served.stderr_tail(600);
    let status = served.stop().await;
    let mut why = match exited.or(status) {
        Some(status) => format!("process {status}"),
        None => "the connection closed".into(),
    };
    let tail = tail.trim();
    if !tail.is_empty() {
        tracing::info!(stderr = %tail, "MCP server stderr");
        why.push_str(&format!("; its last words: {}", last_line(tail)));
    }
    why
}

fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    line.chars().take(200).collect()
}

/// Starts `slot`'s server and opens the connection within its start-up timeout; the slot's
/// state says how it went.
pub(super) async fn connect(
    slot: &Slot,
    settings: &McpRunSettings,
    closing: &CancellationToken,
) -> Result<(LiveServer, Vec<ListedTool>), String> {
    let secs = slot
        .file
        .startup_timeout_secs
        .unwrap_or(STARTUP_TIMEOUT_SECS);
    let started = Instant::now();
    let outcome = match (&slot.file.command, &slot.file.url) {
        (Some(command), None) => {
            let grant = if slot.project.is_some() {
                Grant::WorkspaceWrite
            } else {
                Grant::Unsandboxed
            };
            start_stdio(command, &slot.file, settings, grant, secs, closing).await
        }
        (None, Some(url)) => start_http(slot, url, settings, secs, closing).await,
        (Some(_), Some(_)) => Err(StartFailure::Failed(
            slot.file
                .problem()
                .unwrap_or("both `command` and `url`")
                .into(),
        )),
        (None, None) => Err(StartFailure::Failed(
            slot.file.problem().unwrap_or("no command").into(),
        )),
    };
    match outcome {
        Ok((live, tools)) => {
            let tools = slot.offered(tools);
            tracing::info!(
                server = %slot.name,
                tools = tools.len(),
                ms = started.elapsed().as_millis() as u64,
                "MCP server ready"
            );
            slot.set(ServerState::Ready {
                tools: tools.len(),
                protocol: live.connection.protocol.clone(),
            });
            Ok((live, tools))
        }
        Err(StartFailure::TimedOut) => {
            tracing::warn!(server = %slot.name, secs, "MCP server timed out");
            slot.set(ServerState::TimedOut { secs });
            Err(format!("no answer in {secs} s"))
        }
        Err(StartFailure::NeedsLogin) => {
            let command = super::oauth::login_command(&slot.name);
            tracing::warn!(server = %slot.name, "MCP server needs a login");
            slot.set(ServerState::NeedsLogin {
                command: command.clone(),
            });
            Err(format!("it needs a login: run `{command}`"))
        }
        Err(StartFailure::Failed(why)) => {
            tracing::warn!(server = %slot.name, %why, "MCP server failed");
            slot.set(ServerState::Failed { why: why.clone() });
            Err(why)
        }
    }
}

enum StartFailure {
    TimedOut,
    /// It asked for authorization that no login (or none at all) answers.
    NeedsLogin,
    Failed(String),
}

/// A stdio server: its program on the process service (`grant`: the user's own run as the
/// user, a project's in the workspace-write sandbox), JSON-RPC over its pipes.
async fn start_stdio(
    command: &str,
    file: &McpServerFile,
    settings: &McpRunSettings,
    grant: Grant,
    secs: u64,
    closing: &CancellationToken,
) -> Result<(LiveServer, Vec<ListedTool>), StartFailure> {
    let argv = std::iter::once(command.to_string()).chain(file.args.iter().cloned());
    let mut program = Program::new(argv, &settings.workspace, &settings.process, grant);
    for (name, value) in &file.env {
        program = program.env(name, value);
    }
    let mut served = process::serve(&program)
        .map_err(|err| StartFailure::Failed(format!("could not start `{command}`: {err}")))?;
    let (Some(stdout), Some(stdin)) = (served.stdout.take(), served.stdin.take()) else {
        served.stop().await;
        return Err(StartFailure::Failed("its pipes could not be opened".into()));
    };
    let opened = tokio::select! {
        opened = tokio::time::timeout(Duration::from_secs(secs), McpConnection::open(stdout, stdin)) => opened,
        () = closing.cancelled() => {
            served.stop().await;
            return Err(StartFailure::Failed("the session ended before it was ready".into()));
        }
    };
    match opened {
        Ok(Ok((connection, tools))) => Ok((
            LiveServer {
                connection,
                served: Some(served),
            },
            tools,
        )),
        Ok(Err(why)) => {
            let tail = served.stderr_tail(600);
            served.stop().await;
            let tail = tail.trim();
            Err(StartFailure::Failed(if tail.is_empty() {
                why
            } else {
                format!("{why}; its last words: {}", last_line(tail))
            }))
        }
        Err(_) => {
            served.stop().await;
            Err(StartFailure::TimedOut)
        }
    }
}

/// A streamable-HTTP server: `rmcp`'s transport on the run's own HTTP stack (its proxies, CAs
/// and connect timeout; redirects only to the same origin keeping the method), the bearer
/// token from `bearer_token_env` (remembered as a secret: redacted wherever it would show),
/// else the OAuth login `cairn mcp login` kept for one of the user's own servers, and the
/// configured headers on every request.
async fn start_http(
    slot: &Slot,
    url: &str,
    settings: &McpRunSettings,
    secs: u64,
    closing: &CancellationToken,
) -> Result<(LiveServer, Vec<ListedTool>), StartFailure> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let file = &slot.file;
    let Some(network) = &settings.network else {
        return Err(StartFailure::Failed("no HTTP stack in this run".into()));
    };
    let client = network
        .builder()
        .redirect(same_origin_redirects())
        .build()
        .map_err(|err| StartFailure::Failed(format!("setting up its HTTP client: {err}")))?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    // A 2026-07-28 server has no sessions; an older one's expired session starts anew.
    config.allow_stateless = true;
    config.reinit_on_expired_session = true;
    if let Some(name) = &file.bearer_token_env {
        let token = crate::secrets::var(name).ok_or_else(|| {
            StartFailure::Failed(format!("`{name}` (its bearer_token_env) is not set"))
        })?;
        crate::secrets::remember(name, &token);
        config = config.auth_header(token);
    }
    let mut headers = HashMap::new();
    for (name, value) in &file.headers {
        let parsed = (
            reqwest::header::HeaderName::from_bytes(name.as_bytes()),
            reqwest::header::HeaderValue::from_str(value),
        );
        let (Ok(name), Ok(mut value)) = parsed else {
            return Err(StartFailure::Failed(format!(
                "the header `{name}` is not a valid HTTP header"
            )));
        };
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    config = config.custom_headers(headers);
    let mut http = super::http::CairnHttp::new(client);
    if file.bearer_token_env.is_none()
        && slot.project.is_none()
        && let Some(data) = &settings.data
    {
        match super::oauth::bearer::OAuthBearer::load(network, data, &slot.name, url) {
            Ok(Some(login)) => http = http.with_oauth(std::sync::Arc::new(login)),
            Ok(None) => {}
            Err(err) => tracing::warn!(server = %slot.name, %err, "MCP OAuth login unreadable"),
        }
    }
    let asked = http.clone();
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let opened = tokio::select! {
        opened = tokio::time::timeout(Duration::from_secs(secs), McpConnection::over(transport)) => opened,
        () = closing.cancelled() => {
            return Err(StartFailure::Failed("the session ended before it was ready".into()));
        }
    };
    match opened {
        Ok(Ok((connection, tools))) => Ok((
            LiveServer {
                connection,
                served: None,
            },
            tools,
        )),
        Ok(Err(_)) if asked.login_needed() && slot.project.is_none() => {
            Err(StartFailure::NeedsLogin)
        }
        Ok(Err(why)) if asked.login_needed() => Err(StartFailure::Failed(format!(
            "it asks for authorization, and OAuth logins are for the servers of your own config ({})",
            crate::secrets::redact(&why)
        ))),
        Ok(Err(why)) => Err(StartFailure::Failed(
            crate::secrets::redact(&why).into_owned(),
        )),
        Err(_) => Err(StartFailure::TimedOut),
    }
}

/// Redirects followed: only 307 and 308 (they keep the method and body) to the same origin
/// (the session id and headers go nowhere else), at most 10.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}
