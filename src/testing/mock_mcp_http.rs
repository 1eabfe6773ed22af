//! A scripted streamable-HTTP MCP server on 127.0.0.1 for tests, in one of two revisions:
//! stateful 2025-11-25 (`server/discover` refused with a plain 400 as an older server does,
//! `initialize` gives an `Mcp-Session-Id` that every later request must carry, an unknown or
//! expired session answers 404) or stateless 2026-07-28 (`server/discover` answered, no
//! session, every request stands alone). Answers are JSON. With a `bearer` it answers 401 to
//! requests without `Authorization: Bearer <it>`. Every request is recorded (method, headers,
//! body) so a test can assert what cairn sent.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::sync::MutexExt;

/// How the server behaves.
#[derive(Debug, Clone, Default)]
pub struct McpHttpScript {
    /// The stateless 2026-07-28 revision (else stateful 2025-11-25).
    pub stateless: bool,
    /// Tools as listed; `echo` answers `echo: ARGS`, others `NAME called`.
    pub tools: Vec<Value>,
    /// Required `Authorization: Bearer` token.
    pub bearer: Option<String>,
    /// Stateful: the session is forgotten after this many tool calls (the next request gets
    /// 404 and the client must initialise again).
    pub expire_after_calls: Option<usize>,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct McpHttpRequest {
    pub method: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl McpHttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC method of the body.
    pub fn rpc(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

struct HttpMockState {
    script: McpHttpScript,
    requests: Mutex<Vec<McpHttpRequest>>,
    session: Mutex<Option<String>>,
    sessions: std::sync::atomic::AtomicUsize,
    calls: std::sync::atomic::AtomicUsize,
}

pub struct MockMcpHttp {
    addr: SocketAddr,
    state: Arc<HttpMockState>,
    shutdown: CancellationToken,
}

impl Drop for MockMcpHttp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl MockMcpHttp {
    /// Starts on a free port of 127.0.0.1 (panics when it cannot: a test set-up failure).
    pub async fn start(script: McpHttpScript) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("the mock MCP server could not listen on 127.0.0.1");
        let addr = listener.local_addr().expect("its address");
        let state = Arc::new(HttpMockState {
            script,
            requests: Mutex::default(),
            session: Mutex::default(),
            sessions: std::sync::atomic::AtomicUsize::new(0),
            calls: std::sync::atomic::AtomicUsize::new(0),
        });
        let shutdown = CancellationToken::new();
        let served = state.clone();
        crate::testing::accept::spawn_accept_loop(listener, shutdown.clone(), move |socket| {
            let state = served.clone();
            async move { serve(socket, &state).await }
        });
        Self {
            addr,
            state,
            shutdown,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<McpHttpRequest> {
        self.state.requests.locked().clone()
    }

    /// How many sessions `initialize` opened.
    pub fn sessions(&self) -> usize {
        self.state
            .sessions
            .load(std::sync::atomic::Ordering::SeqCst)
    }
}

async fn serve(mut socket: TcpStream, state: &HttpMockState) -> std::io::Result<()> {
    while let Some(request) = read(&mut socket).await? {
        state.requests.locked().push(request.clone());
        let (status, headers, body) = answer(state, &request);
        let mut head = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        socket.write_all(head.as_bytes()).await?;
        socket.write_all(body.as_bytes()).await?;
    }
    Ok(())
}

type HttpAnswer = (&'static str, Vec<(&'static str, String)>, String);

fn json_answer(id: &Value, result: Value) -> HttpAnswer {
    (
        "200 OK",
        vec![("content-type", "application/json".into())],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
}

fn answer(state: &HttpMockState, request: &McpHttpRequest) -> HttpAnswer {
    let script = &state.script;
    if let Some(token) = &script.bearer
        && request.header("authorization") != Some(&format!("Bearer {token}"))
    {
        return ("401 Unauthorized", Vec::new(), "no valid token".into());
    }
    match request.method.as_str() {
        "POST" => {}
        "DELETE" => return ("200 OK", Vec::new(), String::new()),
        _ => return ("405 Method Not Allowed", Vec::new(), String::new()),
    }
    let body = &request.body;
    let method = request.rpc();
    let Some(id) = body.get("id") else {
        return ("202 Accepted", Vec::new(), String::new());
    };
    if !script.stateless {
        if method == "initialize" {
            let n = state
                .sessions
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                + 1;
            let session = format!("session-{n}");
            *state.session.locked() = Some(session.clone());
            let (status, mut headers, body) = json_answer(
                id,
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mock-mcp-http", "version": "1.0.0"}
                }),
            );
            headers.push(("mcp-session-id", session));
            return (status, headers, body);
        }
        let current = state.session.locked().clone();
        match (request.header("mcp-session-id"), current) {
            (None, _) => return ("400 Bad Request", Vec::new(), "no session".into()),
            (Some(sent), Some(current)) if sent == current => {}
            (Some(_), _) => return ("404 Not Found", Vec::new(), "no such session".into()),
        }
    } else if method == "server/discover" {
        return json_answer(
            id,
            json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mock-mcp-http", "version": "1.0.0"}}
            }),
        );
    }
    match method {
        "ping" => json_answer(id, json!({})),
        "tools/list" => json_answer(id, json!({"tools": script.tools})),
        "tools/call" => {
            let calls = state
                .calls
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                + 1;
            if script.expire_after_calls == Some(calls) {
                *state.session.locked() = None;
            }
            let name = body["params"]["name"].as_str().unwrap_or("");
            let args = body["params"]
                .get("arguments")
                .cloned()
                .unwrap_or(json!({}));
            let text = match name {
                "echo" => format!("echo: {args}"),
                other => format!("{other} called"),
            };
            json_answer(id, json!({"content": [{"type": "text", "text": text}]}))
        }
        other => (
            "200 OK",
            vec![("content-type", "application/json".into())],
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("method not found: {other}")}}).to_string(),
        ),
    }
}

/// One request: the head, then `Content-Length` bytes of body (JSON).
async fn read(socket: &mut TcpStream) -> std::io::Result<Option<McpHttpRequest>> {
    let Some(request) = super::accept::read_request(socket, 64 * 1024).await? else {
        return Ok(None);
    };
    Ok(Some(McpHttpRequest {
        body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
        method: request.method,
        headers: request.headers,
    }))
}
