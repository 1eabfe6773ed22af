//! The mock's side of a connection: reading a request, recording it, and playing the next
//! script (or the models list, or a refusal past the window) back, streamed or whole.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::{
    MAX_HEAD, MockLlmShared, ModelsRoute, NO_MORE_TURNS, RecordedRequest, WRITE_BATCH,
    context_length_exceeded_body, lock, token_count,
};
use crate::llm::Api;
use crate::testing::mock_script::{Script, ScriptReply};

pub(super) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<MockLlmShared>,
    shutdown: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((socket, _)) = accepted else { continue };
        shared
            .connections
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // Small SSE writes must not wait for delayed ACKs (Nagle), or every turn costs milliseconds.
        let _ = socket.set_nodelay(true);
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                result = serve(socket, &shared) => {
                    if let Err(e) = result {
                        tracing::debug!("mock LLM connection ended: {e}");
                    }
                }
            }
        });
    }
}

/// Serves the requests of one connection. A reply streamed whole keeps the connection open
/// for the next request, as real providers do (HTTP/1.1 keep-alive, chunked SSE), so a long
/// session's requests do not each pay a fresh connection; every other reply closes it.
async fn serve(mut socket: TcpStream, shared: &MockLlmShared) -> std::io::Result<()> {
    while let Some(request) = read_request(&mut socket, needs_whole_body(shared)).await? {
        if answer(&mut socket, shared, request).await? == Connection::Close {
            break;
        }
    }
    Ok(())
}

/// Whether the connection stays open after a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Connection {
    KeepAlive,
    Close,
}

async fn answer(
    socket: &mut TcpStream,
    shared: &MockLlmShared,
    request: RecordedRequest,
) -> std::io::Result<Connection> {
    let api = if request.path.ends_with("/messages") {
        Api::Anthropic
    } else if request.path.ends_with("/responses") {
        Api::Responses
    } else {
        Api::Chat
    };
    let is_chat = request.method == "POST"
        && (api != Api::Chat || request.path.ends_with("/chat/completions"));
    if request.method == "GET" && request.path.ends_with("/models") {
        let route = lock(&shared.models).clone();
        let (status, body) = match route {
            ModelsRoute::Listed(ids) => {
                let data: Vec<_> = ids
                    .iter()
                    .map(|id| json!({"id": id, "object": "model"}))
                    .collect();
                (200, json!({"object": "list", "data": data}))
            }
            ModelsRoute::Status(status) => (
                status,
                json!({"error": {"message": format!("mock: /models answers {status}")}}),
            ),
        };
        return respond(socket, status, &[], body.to_string().as_bytes()).await;
    }
    if !is_chat {
        let body = json!({"error": {"message": format!("no route for {} {}", request.method, request.path)}});
        return respond(socket, 404, &[], body.to_string().as_bytes()).await;
    }
    let rejection = if shared.strict {
        invalid_history_arguments(&request.body)
    } else {
        None
    }
    .or_else(|| super::native::refusal(api, &request.body));
    let tokens = token_count(&request.raw);
    let over_window = lock(&shared.window).filter(|&window| tokens > window);
    let script = match (rejection, over_window) {
        (Some(message), _) => {
            let body = match api {
                Api::Anthropic => {
                    json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                }
                _ => json!({"error": {"type": "invalid_request_error", "message": message}}),
            };
            Script::status(400, &body.to_string())
        }
        (None, Some(window)) => Script::status(400, &context_length_exceeded_body(window, tokens)),
        (None, None) => {
            let chosen = lock(&shared.responder)
                .as_ref()
                .and_then(|respond| respond(&request.body));
            chosen.unwrap_or_else(|| {
                lock(&shared.scripts)
                    .pop_front()
                    .unwrap_or_else(|| Script::text(NO_MORE_TURNS))
            })
        }
    };
    let model = request.body["model"]
        .as_str()
        .unwrap_or("mock-model")
        .to_string();
    let prompt_bytes = request.raw.len();
    let cache = lock(&shared.cache)
        .as_mut()
        .map(|sim| sim.count(api, &request.body));
    if let Some(counts) = cache {
        lock(&shared.cache_counts).push(counts);
    }
    if let Some(file) = &shared.record {
        let mut file = lock(file);
        // The bytes as received, in one write (a record line must not interleave).
        let mut line = request.raw.clone();
        line.push(b'\n');
        file.write_all(&line)?;
        file.flush()?;
    }
    lock(&shared.tokens).push(tokens);
    if !shared.forget.load(std::sync::atomic::Ordering::SeqCst) {
        lock(&shared.requests).push(request);
    }
    shared.count.send_modify(|c| *c += 1);
    let reply = ReplyShape {
        api,
        model: &model,
        prompt_bytes,
        cache,
    };
    play(socket, &script, &reply).await
}

/// How to tell a script: in which format, for which model, with which usage.
struct ReplyShape<'a> {
    api: Api,
    model: &'a str,
    prompt_bytes: usize,
    cache: Option<super::native::CacheCounts>,
}

impl ReplyShape<'_> {
    /// The events of the script's reply, each a whole SSE event.
    fn events(&self, script: &Script) -> Box<dyn Iterator<Item = String> + Send> {
        let chunks = script.chunks(self.model, self.prompt_bytes);
        match (self.api, self.cache) {
            (Api::Chat, None) => Box::new(
                chunks
                    .map(|chunk| format!("data: {chunk}\n\n"))
                    .chain(std::iter::once("data: [DONE]\n\n".to_string())),
            ),
            (Api::Chat, Some(counts)) => Box::new(
                chunks
                    .map(move |chunk| format!("data: {}\n\n", with_cache(chunk, counts)))
                    .chain(std::iter::once("data: [DONE]\n\n".to_string())),
            ),
            (api, cache) => {
                Box::new(super::native::events(api, chunks, self.model, cache).into_iter())
            }
        }
    }
}

/// A chat chunk whose usage reports `counts` instead of the script's.
fn with_cache(chunk: String, counts: super::native::CacheCounts) -> String {
    if !chunk.contains("\"usage\"") {
        return chunk;
    }
    match serde_json::from_str::<serde_json::Value>(&chunk) {
        Ok(mut value) if value["usage"].is_object() => {
            value["usage"]["prompt_tokens"] = json!(counts.prompt);
            value["usage"]["prompt_tokens_details"] = json!({"cached_tokens": counts.read});
            value.to_string()
        }
        _ => chunk,
    }
}

async fn play(
    socket: &mut TcpStream,
    script: &Script,
    reply: &ReplyShape<'_>,
) -> std::io::Result<Connection> {
    match &script.reply {
        ScriptReply::Status { code, body } => {
            let mut headers = Vec::new();
            if let Some(secs) = script.retry_after {
                headers.push(("Retry-After", secs.to_string()));
            }
            if let Some(ms) = script.retry_after_ms {
                headers.push(("retry-after-ms", ms.to_string()));
            }
            headers.extend(script.headers.iter().map(|(n, v)| (n.as_str(), v.clone())));
            return respond(socket, *code, &headers, body.as_bytes()).await;
        }
        ScriptReply::Raw(body) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await?;
            socket.write_all(body).await?;
            socket.shutdown().await?;
            return Ok(Connection::Close);
        }
        ScriptReply::KeepAliveOnly(ms) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await?;
            let every = Duration::from_millis((*ms).max(1));
            // Ends when the client hangs up (the write fails).
            loop {
                socket.write_all(b": keep-alive\n\n").await?;
                tokio::time::sleep(every).await;
            }
        }
        _ => {}
    }
    // A stream the script cuts ends the way a dropped connection does: the body is delimited
    // by the close, so the client sees it end early rather than a broken chunk.
    let body = if script.cut_after_chunks.is_some() {
        Framing::UntilClose
    } else {
        Framing::Chunked
    };
    let head = match body {
        Framing::UntilClose => STREAM_HEAD,
        Framing::Chunked => STREAM_HEAD_KEEP_ALIVE,
    };
    socket.write_all(head.as_bytes()).await?;
    let mut out = Vec::with_capacity(WRITE_BATCH * 2);
    let delay = script.delay();
    for (i, event) in reply.events(script).enumerate() {
        if script.cut_after_chunks == Some(i) {
            body.write(socket, &out).await?;
            socket.shutdown().await?;
            return Ok(Connection::Close);
        }
        if let Some(delay) = delay.filter(|_| i > 0) {
            body.write(socket, &out).await?;
            out.clear();
            tokio::time::sleep(delay).await;
        }
        out.extend_from_slice(event.as_bytes());
        if out.len() >= WRITE_BATCH {
            body.write(socket, &out).await?;
            out.clear();
        }
    }
    body.end(socket, &out).await
}

/// How a streamed body is framed.
#[derive(Debug, Clone, Copy)]
enum Framing {
    /// Ends when the connection closes.
    UntilClose,
    /// `Transfer-Encoding: chunked`, so the connection can carry the next request.
    Chunked,
}

impl Framing {
    async fn write(self, socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
        socket.write_all(&self.framed(bytes)).await
    }

    /// Writes the last bytes and ends the body: a chunked one with its last chunk in the same
    /// write (as real servers send it), so the connection is ready for the next request.
    async fn end(self, socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<Connection> {
        let mut last = self.framed(bytes);
        match self {
            Framing::UntilClose => {
                socket.write_all(&last).await?;
                socket.shutdown().await?;
                Ok(Connection::Close)
            }
            Framing::Chunked => {
                last.extend_from_slice(b"0\r\n\r\n");
                socket.write_all(&last).await?;
                Ok(Connection::KeepAlive)
            }
        }
    }

    fn framed(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            // An empty chunk would end a chunked body.
            Framing::UntilClose | Framing::Chunked if bytes.is_empty() => Vec::new(),
            Framing::UntilClose => bytes.to_vec(),
            Framing::Chunked => {
                let mut framed = Vec::with_capacity(bytes.len() + 16);
                framed.extend_from_slice(format!("{:x}\r\n", bytes.len()).as_bytes());
                framed.extend_from_slice(bytes);
                framed.extend_from_slice(b"\r\n");
                framed
            }
        }
    }
}

/// Strict mode: the first assistant tool call whose `arguments` string is not a JSON object,
/// described the way Anthropic's validation error reads through a proxy.
fn invalid_history_arguments(body: &serde_json::Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    messages.iter().enumerate().find_map(|(at, message)| {
        if message["role"] != "assistant" {
            return None;
        }
        let calls = message["tool_calls"].as_array()?;
        calls.iter().find_map(|call| {
            let arguments = &call["function"]["arguments"];
            let is_object = arguments
                .as_str()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
                .is_some_and(|value| value.is_object());
            (!is_object).then(|| {
                format!(
                    "messages.{at}.content: tool_use.input: Input should be a valid dictionary (got {arguments})"
                )
            })
        })
    })
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
const STREAM_HEAD_KEEP_ALIVE: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";

async fn respond(
    socket: &mut TcpStream,
    code: u16,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<Connection> {
    let reason = reqwest::StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Status");
    let mut head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body).await?;
    socket.shutdown().await?;
    Ok(Connection::Close)
}

/// Whether the next request's body is needed as JSON: kept (`recorded`), judged (`strict`) or
/// shown to a responder. Otherwise only its model is read: parsing a long session's ever
/// larger bodies into values would weigh on a benchmark that measures the client.
fn needs_whole_body(shared: &MockLlmShared) -> bool {
    !shared.forget.load(std::sync::atomic::Ordering::SeqCst)
        || shared.strict
        || lock(&shared.cache).is_some()
        || lock(&shared.responder).is_some()
}

/// Reads one request: head up to the blank line, then `Content-Length` bytes of body (as JSON
/// when `whole`, else only its `model`).
async fn read_request(
    socket: &mut TcpStream,
    whole: bool,
) -> std::io::Result<Option<RecordedRequest>> {
    let Some(request) = crate::testing::accept::read_request(socket, MAX_HEAD).await? else {
        return Ok(None);
    };
    let (method, path, headers, raw) = (
        request.method,
        request.target,
        request.headers,
        request.body,
    );
    let body = if whole {
        serde_json::from_slice(&raw).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&raw).into_owned())
        })
    } else {
        #[derive(serde::Deserialize)]
        struct ModelOnly {
            model: Option<String>,
        }
        match serde_json::from_slice::<ModelOnly>(&raw) {
            Ok(ModelOnly { model: Some(model) }) => json!({ "model": model }),
            _ => serde_json::Value::Null,
        }
    };
    Ok(Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        raw,
    }))
}
