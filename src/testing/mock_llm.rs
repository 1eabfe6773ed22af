//! A scripted OpenAI-compatible streaming server on 127.0.0.1 for tests and demos: each
//! `POST …/chat/completions` plays the next `Script` and every request is recorded, so a test
//! can assert exactly what cairn sent. Plain HTTP/1.1, one request per connection.

use crate::sync::MutexExt;
use std::collections::VecDeque;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::mock_script::{Script, ScriptReply};

/// The answer once the scripts are used up.
pub const NO_MORE_TURNS: &str = "(mock: no more scripted turns)";

const MAX_HEAD: usize = 64 * 1024;
const WRITE_BATCH: usize = 64 * 1024;

/// Where the server listens and where it records.
#[derive(Debug, Clone, Default)]
pub struct MockOptions {
    /// 0 picks a free port.
    pub port: u16,
    /// Every received request body is appended here as one JSON line.
    pub record: Option<PathBuf>,
    /// Answer 400 (without playing a script) to a request whose assistant messages hold
    /// tool-call arguments that are not a JSON object, as Anthropic behind a proxy does.
    pub strict: bool,
}

/// One received request.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (a JSON string holding the text when it was not JSON).
    pub body: serde_json::Value,
    /// The body exactly as received.
    pub raw: Vec<u8>,
}

struct MockLlmShared {
    scripts: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<RecordedRequest>>,
    count: watch::Sender<usize>,
    record: Option<Mutex<std::fs::File>>,
    strict: bool,
    /// Requests counted above this many tokens are refused like OpenAI does (see `enforce_window`).
    window: Mutex<Option<u64>>,
    responder: Mutex<Option<Responder>>,
    /// `token_count` of every chat request, kept even when bodies are not.
    tokens: Mutex<Vec<u64>>,
    /// Set by `forget_bodies`: requests are counted, not kept (a long benchmark session).
    forget: std::sync::atomic::AtomicBool,
    /// Connections accepted so far (a client that keeps them alive opens one).
    connections: std::sync::atomic::AtomicUsize,
    /// What `GET …/models` answers.
    models: Mutex<ModelsRoute>,
}

/// What the mock's `GET …/models` answers (`MockLlm::serve_models`, `refuse_models`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum ModelsRoute {
    /// `{"object": "list", "data": [{"id": …}, …]}` of these ids.
    Listed(Vec<String>),
    /// This status with an error body.
    Status(u16),
}

/// Picks the reply to a request from its body instead of the queue (`None`: use the queue).
pub type Responder = Box<dyn Fn(&serde_json::Value) -> Option<Script> + Send + Sync>;

/// The mock's own token count of a request body: one token per 4 bytes, rounded up. Crude, but
/// fixed and known, so a test can hold a client to a window by it.
pub fn token_count(body: &[u8]) -> u64 {
    (body.len() as u64).div_ceil(4)
}

/// OpenAI's answer to a request longer than the model's window.
pub fn context_length_exceeded_body(window: u64, tokens: u64) -> String {
    json!({"error": {
        "message": format!("This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }})
    .to_string()
}

/// The running server; dropping it stops it.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<MockLlmShared>,
    shutdown: CancellationToken,
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl MockLlm {
    /// Starts on a free port of 127.0.0.1. Panics if it cannot listen (a test set-up failure).
    pub async fn start(scripts: impl IntoIterator<Item = Script>) -> MockLlm {
        Self::start_with(scripts, MockOptions::default())
            .await
            .expect("the mock LLM server could not listen on 127.0.0.1")
    }

    pub async fn start_with(
        scripts: impl IntoIterator<Item = Script>,
        options: MockOptions,
    ) -> std::io::Result<MockLlm> {
        let listener = TcpListener::bind(("127.0.0.1", options.port)).await?;
        let record = match &options.record {
            Some(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?;
                Some(Mutex::new(file))
            }
            None => None,
        };
        let shared = Arc::new(MockLlmShared {
            scripts: Mutex::new(scripts.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            count: watch::channel(0).0,
            record,
            strict: options.strict,
            window: Mutex::new(None),
            responder: Mutex::new(None),
            tokens: Mutex::new(Vec::new()),
            forget: std::sync::atomic::AtomicBool::new(false),
            connections: std::sync::atomic::AtomicUsize::new(0),
            models: Mutex::new(ModelsRoute::Listed(vec!["mock-model".to_string()])),
        });
        let shutdown = CancellationToken::new();
        let addr = listener.local_addr()?;
        tokio::spawn(accept_loop(listener, shared.clone(), shutdown.clone()));
        Ok(MockLlm {
            addr,
            shared,
            shutdown,
        })
    }

    /// The API root, `/v1` included, as a `base_url`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Like `start`, in strict mode (see `MockOptions::strict`).
    pub async fn start_strict(scripts: impl IntoIterator<Item = Script>) -> MockLlm {
        let options = MockOptions {
            strict: true,
            ..MockOptions::default()
        };
        Self::start_with(scripts, options)
            .await
            .expect("the mock LLM server could not listen on 127.0.0.1")
    }

    /// Appends a script after the ones already queued.
    pub fn push(&self, script: Script) {
        lock(&self.shared.scripts).push_back(script);
    }

    /// From now on `GET …/models` lists these ids (at start it lists `mock-model`).
    pub fn serve_models(&self, ids: &[&str]) {
        let ids = ids.iter().map(|id| (*id).to_string()).collect();
        *lock(&self.shared.models) = ModelsRoute::Listed(ids);
    }

    /// From now on `GET …/models` answers `status` (a server without the route: 404).
    pub fn refuse_models(&self, status: u16) {
        *lock(&self.shared.models) = ModelsRoute::Status(status);
    }

    /// From now on a chat request of more than `tokens` (by `token_count`) is answered with
    /// OpenAI's 400 `context_length_exceeded`, without using a scripted turn.
    pub fn enforce_window(&self, tokens: u64) {
        *lock(&self.shared.window) = Some(tokens);
    }

    /// From now on `responder` picks the reply to each chat request; where it returns `None`
    /// the queue is used.
    pub fn respond_with(
        &self,
        responder: impl Fn(&serde_json::Value) -> Option<Script> + Send + Sync + 'static,
    ) {
        *lock(&self.shared.responder) = Some(Box::new(responder));
    }

    /// The mock's token count (`token_count`) of every chat request received, in order.
    pub fn request_tokens(&self) -> Vec<u64> {
        lock(&self.shared.tokens).clone()
    }

    /// From now on requests are counted (`request_tokens`, `wait_for_requests`) but their
    /// bodies not kept, so a session of thousands of large requests does not fill memory.
    pub fn forget_bodies(&self) {
        self.shared
            .forget
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Scripts not played yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.scripts).len()
    }

    /// Every chat-completions request body received, in order.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        self.recorded().into_iter().map(|r| r.body).collect()
    }

    /// Requests with method, path and headers.
    /// How many connections clients opened so far.
    pub fn connections(&self) -> usize {
        self.shared
            .connections
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Body of request `i` (0-based). Panics when fewer arrived.
    pub fn request(&self, i: usize) -> serde_json::Value {
        let requests = lock(&self.shared.requests);
        match requests.get(i) {
            Some(request) => request.body.clone(),
            None => panic!(
                "mock LLM: request {i} was asked for but only {} arrived",
                requests.len()
            ),
        }
    }

    /// A header of request `i`, by case-insensitive name.
    pub fn header(&self, i: usize, name: &str) -> Option<String> {
        let requests = lock(&self.shared.requests);
        let request = requests.get(i)?;
        let name = name.to_ascii_lowercase();
        request
            .headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }

    /// The content of the `tool` message answering `call_id` in request `i`.
    pub fn tool_result(&self, i: usize, call_id: &str) -> Option<String> {
        let body = lock(&self.shared.requests).get(i)?.body.clone();
        let message = body["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"].as_str() == Some(call_id))?;
        Some(match &message["content"] {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    }

    /// Waits until at least `n` requests arrived. Panics after `within` (a test guard).
    pub async fn wait_for_requests(&self, n: usize, within: Duration) {
        let mut count = self.shared.count.subscribe();
        let reached = tokio::time::timeout(within, count.wait_for(|&c| c >= n)).await;
        if !matches!(reached, Ok(Ok(_))) {
            let got = *self.shared.count.borrow();
            panic!("mock LLM: waited {within:?} for {n} requests, {got} arrived");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.locked()
}

async fn accept_loop(
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
    let is_chat = request.method == "POST" && request.path.ends_with("/chat/completions");
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
    };
    let tokens = token_count(&request.raw);
    let over_window = lock(&shared.window).filter(|&window| tokens > window);
    let script = match (rejection, over_window) {
        (Some(message), _) => {
            let body = json!({"error": {"type": "invalid_request_error", "message": message}});
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
    play(socket, &script, &model, prompt_bytes).await
}

async fn play(
    socket: &mut TcpStream,
    script: &Script,
    model: &str,
    prompt_bytes: usize,
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
    for (i, chunk) in script.chunks(model, prompt_bytes).enumerate() {
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
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(chunk.as_bytes());
        out.extend_from_slice(b"\n\n");
        if out.len() >= WRITE_BATCH {
            body.write(socket, &out).await?;
            out.clear();
        }
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
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
        || lock(&shared.responder).is_some()
}

/// Reads one request: head up to the blank line, then `Content-Length` bytes of body (as JSON
/// when `whole`, else only its `model`).
async fn read_request(
    socket: &mut TcpStream,
    whole: bool,
) -> std::io::Result<Option<RecordedRequest>> {
    let mut buf = Vec::with_capacity(8192);
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
        let mut chunk = [0u8; 8192];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_string();
    let path = request_line.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf.split_off(head_end + 4);
    // curl asks before sending a body over 1 KiB; without an answer it stalls for a second.
    let expects_continue = headers
        .iter()
        .any(|(name, value)| name == "expect" && value.eq_ignore_ascii_case("100-continue"));
    if expects_continue && body.len() < length {
        socket.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let raw = body;
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
