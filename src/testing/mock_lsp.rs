//! A scripted language server for tests (the `mock-lsp` binary): it speaks LSP over stdio,
//! answers `initialize`, and publishes diagnostics per document version on a script, with
//! delays, versions left out or stale versions sent late, pull diagnostics offered only to a
//! client that takes dynamic registration, scripted definition and reference locations, a
//! crash on demand, and probes of its sandbox. A document's diagnostics come from its text:
//! every line holding `ERROR: message` is an error at that place, `WARN: message` a warning.
//! A `didChange` whose text holds `CRASH` makes it exit at once.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What the mock does (a JSON file named by its first argument).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MockLspScript {
    /// Milliseconds before the diagnostics of version N are sent: `delays_ms[N-1]`, or the
    /// last entry for later versions (none: at once).
    pub delays_ms: Vec<u64>,
    /// Leave `version` out of `publishDiagnostics` (as typescript-language-server does).
    pub unversioned: bool,
    /// With each version N > 1 also send version N-1's diagnostics: after N's when
    /// versioned, before N's when unversioned (the late ones from opening the file).
    pub stale: bool,
    /// Offer pull diagnostics, only by registering them dynamically (as pyright does).
    pub pull: bool,
    /// Milliseconds before `initialize` is answered.
    pub init_delay_ms: u64,
    /// Exit at once without answering `initialize` (a server that cannot initialise).
    pub fail_init: bool,
    /// Answers to `textDocument/definition` and `textDocument/references`.
    pub definition: Vec<MockLocation>,
    pub references: Vec<MockLocation>,
    /// After `initialized`: try a TCP connection to this address, a write into its cache
    /// (`XDG_CACHE_HOME`) and a write of this file, and write what happened to `probe_report`
    /// (`connect: ok|refused ...`, `cache: ok DIR|refused ...`, `write: ...`).
    pub probe_connect: Option<String>,
    pub probe_write: Option<PathBuf>,
    pub probe_report: Option<PathBuf>,
    /// Start a child that sleeps (a server's helper process) and write both pids here.
    pub pids_file: Option<PathBuf>,
    /// Append a line per document sent (`didOpen 1 "text"`, `didChange 2 "text"`) and per
    /// diagnostics published (`published 2`), as each happens.
    pub messages_file: Option<PathBuf>,
}

/// A scripted location: a path relative to the root the client gave, 0-based line and column.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MockLocation {
    pub path: String,
    pub line: u32,
    pub character: u32,
}

struct MockState {
    script: MockLspScript,
    root: PathBuf,
    /// uri -> (version, text) and the text before it.
    docs: std::collections::HashMap<String, (i32, String, String)>,
    dynamic: bool,
}

type Out = Arc<Mutex<std::io::Stdout>>;

fn send(out: &Out, message: &Value) {
    let body = message.to_string();
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
    let _ = out.flush();
}

fn read(input: &mut impl BufRead) -> Option<Value> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length:") {
            length = n.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The diagnostics of a text.
pub fn diagnostics_of(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (marker, severity) in [("ERROR:", 1), ("WARN:", 2)] {
            if let Some(at) = line.find(marker) {
                let message = line[at + marker.len()..].trim();
                let col = line[..at].chars().count();
                found.push(json!({
                    "range": {"start": {"line": n, "character": col}, "end": {"line": n, "character": col + marker.len()}},
                    "severity": severity,
                    "code": "E1",
                    "source": "mock",
                    "message": message,
                }));
            }
        }
    }
    found
}

/// Runs the mock on stdin and stdout until `exit` or the end of its input.
pub fn serve_stdio(script: MockLspScript) {
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let state = Arc::new(Mutex::new(MockState {
        script,
        root: PathBuf::from("/"),
        docs: Default::default(),
        dynamic: false,
    }));
    while let Some(message) = read(&mut input) {
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
        match method {
            "initialize" => {
                if st.script.fail_init {
                    std::process::exit(3);
                }
                std::thread::sleep(Duration::from_millis(st.script.init_delay_ms));
                if let Some(root) = params
                    .get("rootUri")
                    .and_then(Value::as_str)
                    .and_then(|u| url::Url::parse(u).ok())
                    .and_then(|u| u.to_file_path().ok())
                {
                    st.root = root;
                }
                st.dynamic = params
                    .pointer("/capabilities/textDocument/diagnostic/dynamicRegistration")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
                    "capabilities": {"textDocumentSync": 1, "definitionProvider": true, "referencesProvider": true},
                    "serverInfo": {"name": "mock-lsp"},
                }});
                send(&out, &answer);
            }
            "initialized" => {
                if st.script.pull && st.dynamic {
                    send(
                        &out,
                        &json!({"jsonrpc": "2.0", "id": "reg-1", "method": "client/registerCapability", "params": {
                            "registrations": [{"id": "pull", "method": "textDocument/diagnostic", "registerOptions": {"interFileDependencies": false, "workspaceDiagnostics": false}}]
                        }}),
                    );
                }
                probe(&st.script);
            }
            "textDocument/didOpen" | "textDocument/didChange" => {
                let uri = params
                    .pointer("/textDocument/uri")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let version = params
                    .pointer("/textDocument/version")
                    .and_then(Value::as_i64)
                    .unwrap_or(0) as i32;
                let text = params
                    .pointer("/textDocument/text")
                    .or_else(|| params.pointer("/contentChanges/0/text"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if method == "textDocument/didChange" && text.contains("CRASH") {
                    std::process::exit(101);
                }
                let short = method.trim_start_matches("textDocument/");
                log(&st.script, &format!("{short} {version} {text:?}"));
                let previous = st.docs.get(&uri).map(|d| d.1.clone()).unwrap_or_default();
                st.docs
                    .insert(uri.clone(), (version, text.clone(), previous.clone()));
                if !(st.script.pull && st.dynamic) {
                    publish(&st.script, &out, &uri, version, &text, &previous);
                }
            }
            "textDocument/diagnostic" => {
                let uri = params
                    .pointer("/textDocument/uri")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let (version, text) = st
                    .docs
                    .get(&uri)
                    .map(|d| (d.0, d.1.clone()))
                    .unwrap_or_default();
                let delay = delay(&st.script, version);
                let out = out.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    send(
                        &out,
                        &json!({"jsonrpc": "2.0", "id": id, "result": {"kind": "full", "items": diagnostics_of(&text)}}),
                    );
                });
            }
            "textDocument/definition" | "textDocument/references" => {
                let list = if method == "textDocument/definition" {
                    &st.script.definition
                } else {
                    &st.script.references
                };
                let locations: Vec<Value> = list
                    .iter()
                    .map(|l| {
                        let uri = url::Url::from_file_path(st.root.join(&l.path))
                            .map(|u| u.to_string())
                            .unwrap_or_default();
                        json!({"uri": uri, "range": {
                            "start": {"line": l.line, "character": l.character},
                            "end": {"line": l.line, "character": l.character + 1},
                        }})
                    })
                    .collect();
                send(
                    &out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": locations}),
                );
            }
            "shutdown" => send(&out, &json!({"jsonrpc": "2.0", "id": id, "result": null})),
            "exit" => std::process::exit(0),
            _ => {
                if let Some(id) = id
                    && !method.is_empty()
                {
                    send(&out, &json!({"jsonrpc": "2.0", "id": id, "result": null}));
                }
            }
        }
    }
}

fn delay(script: &MockLspScript, version: i32) -> Duration {
    let index = usize::try_from(version.max(1) - 1).unwrap_or(0);
    let ms = script
        .delays_ms
        .get(index)
        .or(script.delays_ms.last())
        .copied()
        .unwrap_or(0);
    Duration::from_millis(ms)
}

fn publish(script: &MockLspScript, out: &Out, uri: &str, version: i32, text: &str, previous: &str) {
    let delay = delay(script, version);
    let versioned = !script.unversioned;
    let stale = script.stale && version > 1;
    let message = |version: i32, text: &str| {
        let mut params = json!({"uri": uri, "diagnostics": diagnostics_of(text)});
        if versioned {
            params["version"] = json!(version);
        }
        json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
    };
    let current = message(version, text);
    let old = message(version - 1, previous);
    let out = out.clone();
    let script = script.clone();
    std::thread::spawn(move || {
        if stale && !versioned {
            std::thread::sleep(delay / 4);
            send(&out, &old);
            std::thread::sleep(delay - delay / 4);
        } else {
            std::thread::sleep(delay);
        }
        send(&out, &current);
        if stale && versioned {
            send(&out, &old);
        }
        log(&script, &format!("published {version}"));
    });
}

/// One line of `messages_file`.
fn log(script: &MockLspScript, line: &str) {
    if let Some(path) = &script.messages_file
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}

fn probe(script: &MockLspScript) {
    let mut report = String::new();
    if let Some(address) = &script.probe_connect {
        let outcome = match address.parse::<std::net::SocketAddr>() {
            Ok(addr) => match std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
                Ok(_) => "ok".to_string(),
                Err(err) => format!("refused {err}"),
            },
            Err(err) => format!("bad address {err}"),
        };
        report.push_str(&format!("connect: {outcome}\n"));
    }
    if script.probe_report.is_some() {
        // Its private cache: named by XDG_CACHE_HOME, and writable.
        let outcome = match std::env::var_os("XDG_CACHE_HOME") {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                match std::fs::write(dir.join("probe"), "cached") {
                    Ok(()) => format!("ok {}", dir.display()),
                    Err(err) => format!("refused {err} {}", dir.display()),
                }
            }
            None => "unset".to_string(),
        };
        report.push_str(&format!("cache: {outcome}\n"));
    }
    if let Some(path) = &script.probe_write {
        let outcome = match std::fs::write(path, "written by a language server") {
            Ok(()) => "ok".to_string(),
            Err(err) => format!("refused {err}"),
        };
        report.push_str(&format!("write: {outcome}\n"));
    }
    if let Some(path) = &script.pids_file {
        let child = std::process::Command::new("sleep").arg("600").spawn();
        let child = child.map(|c| c.id()).unwrap_or(0);
        let _ = std::fs::write(path, format!("{} {child}\n", std::process::id()));
    }
    if let Some(path) = &script.probe_report {
        let _ = std::fs::write(path, report);
    }
}
