//! A scripted MCP server on stdio for tests (the `mock-mcp` binary): newline-delimited JSON-RPC
//! as the 2025-11-25 revision speaks it (`server/discover` is answered "method not found", so
//! clients fall back to `initialize`). What it offers and how it behaves come from a JSON
//! `McpScript`; every message it receives is appended to `log` as a JSON line, so a test can
//! assert what cairn sent (arguments, `notifications/cancelled`).
//!
//! Prompts (`prompts/get`) answer a user message `PROMPT NAME with ARGS` (the arguments as
//! JSON) and an assistant message `ok`; resources (`resources/read`) answer the `text` their
//! script entry holds (left out of the listing).
//!
//! Tools behave by name: `echo` answers `echo: ARGS` with the arguments as structured content,
//! `slow` sends two progress notifications and waits (at most 30 s) for the call to be
//! cancelled, `die` exits at once, `fail` answers with `isError`, `big` answers `size` bytes;
//! any other tool answers `NAME called`.

use std::collections::HashSet;
use std::io::{BufRead as _, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::sync::MutexExt;

/// What the server offers and how it behaves.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct McpScript {
    /// Tools as listed (`name`, `description`, `inputSchema`, `annotations`).
    #[serde(default)]
    pub tools: Vec<Value>,
    /// This many more tools `tool_000`, `tool_001`, … with a small schema each.
    #[serde(default)]
    pub generate: usize,
    /// Never answer `initialize` (a server that hangs at start).
    #[serde(default)]
    pub never_initialize: bool,
    /// Announce `tools.listChanged`, and after the first call list one more tool
    /// (`added_later`) and send `notifications/tools/list_changed`.
    #[serde(default)]
    pub list_changed: bool,
    /// Prompts as listed (`name`, `description`, `arguments`).
    #[serde(default)]
    pub prompts: Vec<Value>,
    /// Resources as listed (`uri`, `name`, …), each with the `text` `resources/read` gives.
    #[serde(default)]
    pub resources: Vec<Value>,
    /// Where every received message (and `{"pid": N}` at start) is appended.
    pub log: Option<PathBuf>,
}

/// A prompt entry with its arguments (`(name, required)`).
pub fn prompt(name: &str, description: &str, arguments: &[(&str, bool)]) -> Value {
    let arguments: Vec<Value> = arguments
        .iter()
        .map(|(name, required)| json!({"name": name, "description": format!("the {name}"), "required": required}))
        .collect();
    json!({"name": name, "description": description, "arguments": arguments})
}

/// A resource entry and the text reading it gives.
pub fn resource(uri: &str, name: &str, text: &str) -> Value {
    json!({"uri": uri, "name": name, "mimeType": "text/plain", "text": text})
}

/// A tool entry with a small object schema.
pub fn tool(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "what to send"}},
        }
    })
}

struct Server {
    script: McpScript,
    out: Mutex<std::io::Stdout>,
    cancelled: Mutex<HashSet<String>>,
    wake: Condvar,
    log: Option<Mutex<std::fs::File>>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Server {
    fn send(&self, message: &Value) {
        let mut out = self.out.locked();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }

    fn record(&self, message: &Value) {
        if let Some(log) = &self.log {
            let _ = writeln!(log.locked(), "{message}");
        }
    }

    fn answer(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    fn tools(&self) -> Vec<Value> {
        let mut tools = self.script.tools.clone();
        if self.script.list_changed && self.calls.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            tools.push(tool(
                "added_later",
                "A tool the server added after the first call.",
            ));
        }
        for i in 0..self.script.generate {
            tools.push(tool(
                &format!("tool_{i:03}"),
                &format!("Generated tool number {i}: returns what it is sent."),
            ));
        }
        tools
    }
}

/// Serves on stdin/stdout until stdin closes.
pub fn serve_stdio(script: McpScript) {
    let log = script.log.as_ref().and_then(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
    let server = Arc::new(Server {
        script,
        out: Mutex::new(std::io::stdout()),
        cancelled: Mutex::default(),
        wake: Condvar::new(),
        log,
        calls: std::sync::atomic::AtomicUsize::new(0),
    });
    server.record(&json!({"pid": std::process::id()}));
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        server.record(&message);
        handle(&server, message);
    }
}

fn handle(server: &Arc<Server>, message: Value) {
    let method = message["method"].as_str().unwrap_or("").to_string();
    let id = message.get("id").cloned();
    match (method.as_str(), id) {
        ("notifications/cancelled", None) => {
            let id = message["params"]["requestId"].to_string();
            server.cancelled.locked().insert(id);
            server.wake.notify_all();
        }
        (_, None) => {}
        ("initialize", Some(_)) if server.script.never_initialize => {}
        ("initialize", Some(id)) => {
            let asked = message["params"]["protocolVersion"].as_str().unwrap_or("");
            let version = if ["2025-06-18", "2025-11-25"].contains(&asked) {
                asked
            } else {
                "2025-11-25"
            };
            server.answer(
                &id,
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities(&server.script),
                    "serverInfo": {"name": "mock-mcp", "version": "1.0.0"}
                }),
            );
        }
        ("ping", Some(id)) => server.answer(&id, json!({})),
        ("tools/list", Some(id)) => {
            // Pages of 100, so clients must follow the cursor.
            let tools = server.tools();
            let start: usize = message["params"]["cursor"]
                .as_str()
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            let end = (start + 100).min(tools.len());
            let mut result = json!({"tools": tools[start.min(end)..end]});
            if end < tools.len() {
                result["nextCursor"] = json!(end.to_string());
            }
            server.answer(&id, result);
        }
        ("prompts/list", Some(id)) => {
            server.answer(&id, json!({"prompts": server.script.prompts}));
        }
        ("prompts/get", Some(id)) => get_prompt(server, &id, &message["params"]),
        ("resources/list", Some(id)) => {
            let listed: Vec<Value> = server
                .script
                .resources
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    if let Some(entry) = r.as_object_mut() {
                        entry.remove("text");
                    }
                    r
                })
                .collect();
            server.answer(&id, json!({"resources": listed}));
        }
        ("resources/read", Some(id)) => {
            let uri = message["params"]["uri"].as_str().unwrap_or("");
            match server.script.resources.iter().find(|r| r["uri"] == uri) {
                Some(found) => server.answer(
                    &id,
                    json!({"contents": [{"uri": uri, "mimeType": found["mimeType"], "text": found["text"]}]}),
                ),
                None => server.error(&id, -32002, &format!("resource not found: {uri}")),
            }
        }
        ("tools/call", Some(id)) => {
            let server = server.clone();
            std::thread::spawn(move || call(&server, &id, &message["params"]));
        }
        (_, Some(id)) => server.error(&id, -32601, &format!("method not found: {method}")),
    }
}

/// What the server announces: tools (and whether they change), prompts and resources when
/// it has some.
fn capabilities(script: &McpScript) -> Value {
    let mut capabilities = json!({"tools": {"listChanged": script.list_changed}});
    if !script.prompts.is_empty() {
        capabilities["prompts"] = json!({});
    }
    if !script.resources.is_empty() {
        capabilities["resources"] = json!({});
    }
    capabilities
}

fn get_prompt(server: &Server, id: &Value, params: &Value) {
    let name = params["name"].as_str().unwrap_or("");
    if !server.script.prompts.iter().any(|p| p["name"] == name) {
        return server.error(id, -32602, &format!("no prompt {name}"));
    }
    let args = params.get("arguments").cloned().unwrap_or(json!({}));
    server.answer(
        id,
        json!({
            "description": format!("the {name} prompt"),
            "messages": [
                {"role": "user", "content": {"type": "text", "text": format!("PROMPT {name} with {args}")}},
                {"role": "assistant", "content": {"type": "text", "text": "ok"}}
            ]
        }),
    );
}

fn call(server: &Arc<Server>, id: &Value, params: &Value) {
    let name = params["name"].as_str().unwrap_or("");
    let args = params.get("arguments").cloned().unwrap_or(json!({}));
    let first = server
        .calls
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        == 0;
    let text = |t: String| json!({"content": [{"type": "text", "text": t}]});
    // Announced before the answer, so a client has it before it sees the result.
    if first && server.script.list_changed {
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    }
    match name {
        "echo" => server.answer(
            id,
            json!({
                "content": [{"type": "text", "text": format!("echo: {args}")}],
                "structuredContent": args,
            }),
        ),
        "slow" => {
            let token = params["_meta"]["progressToken"].clone();
            for step in 1..=2 {
                server.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": step, "total": 4, "message": format!("step {step}")}
                }));
            }
            let key = id.to_string();
            let mut cancelled = server.cancelled.locked();
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !cancelled.contains(&key) && std::time::Instant::now() < deadline {
                cancelled = match server
                    .wake
                    .wait_timeout(cancelled, Duration::from_millis(200))
                {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                };
            }
            if !cancelled.contains(&key) {
                drop(cancelled);
                server.answer(id, text("slow done".into()));
            }
        }
        "die" => {
            let _ = writeln!(std::io::stderr(), "mock-mcp: dying as asked");
            std::process::exit(3);
        }
        "fail" => server.answer(
            id,
            json!({"content": [{"type": "text", "text": "it went wrong"}], "isError": true}),
        ),
        "big" => {
            let size = args["size"].as_u64().unwrap_or(100_000) as usize;
            server.answer(id, text(format!("BEGIN{}END", "x".repeat(size))));
        }
        other => server.answer(id, text(format!("{other} called with {args}"))),
    }
}
