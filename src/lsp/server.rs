//! One running language server: started on the process service (`process::serve`: its own
//! process group and limits, the workspace-write sandbox with the network off, a private
//! cache), initialised with the workspace root, its open documents and their versions, its
//! diagnostics (`store`), pulled when it offers that (statically, or by registering
//! `textDocument/diagnostic` once it knows the client takes dynamic registration), and stopped
//! with `shutdown`, `exit` and its group.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::ServerSpec;
use super::rpc::{RpcConnection, RpcError, RpcHandler};
use super::store::{Diag, DiagStore, Since};
use crate::process::{self, Grant, Program, Served};
use crate::sync::MutexExt;

/// How long a server may take to answer `initialize`.
const INIT_LIMIT: Duration = Duration::from_secs(60);
/// How long `shutdown` may take before the group is ended anyway.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(2);

/// What the reader shares with the server: where diagnostics go, what it registered, its
/// progress, and whom to tell when it exits.
pub struct Shared {
    pub store: DiagStore,
    pull: AtomicBool,
    progress: std::sync::Mutex<HashSet<String>>,
    stopping: AtomicBool,
    on_exit: Box<dyn Fn() + Send + Sync>,
    workspace_uri: String,
}

impl RpcHandler for Shared {
    fn notification(&self, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => {
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    return;
                };
                let version = params
                    .get("version")
                    .and_then(Value::as_i64)
                    .and_then(|v| i32::try_from(v).ok());
                let items = params
                    .get("diagnostics")
                    .and_then(Value::as_array)
                    .map(|list| list.iter().filter_map(Diag::from_json).collect())
                    .unwrap_or_default();
                self.store.add(uri, version, items);
            }
            "$/progress" => {
                let token = params
                    .get("token")
                    .map(Value::to_string)
                    .unwrap_or_default();
                let kind = params
                    .get("value")
                    .and_then(|v| v.get("kind"))
                    .and_then(Value::as_str);
                let mut progress = self.progress.locked();
                match kind {
                    Some("begin") => {
                        progress.insert(token);
                    }
                    Some("end") => {
                        progress.remove(&token);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn request(&self, method: &str, params: Value) -> Value {
        match method {
            "client/registerCapability" => {
                let registrations = params.get("registrations").and_then(Value::as_array);
                for registration in registrations.into_iter().flatten() {
                    if registration.get("method").and_then(Value::as_str)
                        == Some("textDocument/diagnostic")
                    {
                        self.pull.store(true, Ordering::Relaxed);
                        // Whoever waits for diagnostics looks again: it may pull now.
                        self.store.poke();
                    }
                }
                Value::Null
            }
            "workspace/configuration" => {
                let n = params
                    .get("items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                Value::Array(vec![Value::Null; n])
            }
            "workspace/workspaceFolders" => {
                json!([{"uri": self.workspace_uri, "name": "workspace"}])
            }
            _ => Value::Null,
        }
    }

    fn closed(&self) {
        if !self.stopping.load(Ordering::Relaxed) {
            (self.on_exit)();
        }
    }
}

/// A document as the server has it.
#[derive(Debug, Clone)]
pub struct Doc {
    pub version: i32,
    pub text: String,
}

/// A started, initialised server.
pub struct LanguageServer {
    pub spec: Arc<ServerSpec>,
    pub shared: Arc<Shared>,
    conn: RpcConnection,
    served: tokio::sync::Mutex<Option<Served>>,
    pub docs: tokio::sync::Mutex<HashMap<String, Doc>>,
    pub pid: u32,
    /// Whether columns are counted in bytes (negotiated `utf-8`) rather than UTF-16 units.
    pub utf8: bool,
}

/// How a server runs: the workspace-write sandbox with the network off, whatever the
/// session's commands may do, and its private cache dir writable.
pub fn server_settings(base: &process::Settings, cache: &Path) -> process::Settings {
    let mut settings = base.clone();
    if let Some(policy) = settings.sandbox.as_mut() {
        policy.network = false;
        policy.writable.push(cache.to_path_buf());
    }
    settings
}

impl LanguageServer {
    /// Starts `spec` in `root` and initialises it. `on_exit` runs when it exits unasked.
    pub async fn start(
        spec: Arc<ServerSpec>,
        root: &Path,
        settings: &process::Settings,
        cache: &Path,
        on_exit: Box<dyn Fn() + Send + Sync>,
    ) -> Result<LanguageServer, String> {
        std::fs::create_dir_all(cache)
            .map_err(|err| format!("creating its cache {}: {err}", cache.display()))?;
        let mut argv = vec![spec.command.clone()];
        argv.extend(spec.args.iter().cloned());
        // Every server runs in the sandbox, the user's too: it runs the project's build
        // scripts and macros whoever configured it.
        let program = Program::new(argv, root, settings, Grant::WorkspaceWrite)
            .env("XDG_CACHE_HOME", cache)
            .env("CARGO_TARGET_DIR", cache.join("target"))
            .env("CARGO_NET_OFFLINE", "true")
            .env("GOFLAGS", "-mod=mod")
            .env("GOCACHE", cache.join("go-build"))
            .env("npm_config_cache", cache.join("npm"))
            .env("PYTHONPYCACHEPREFIX", cache.join("pycache"));
        let mut served =
            process::serve(&program).map_err(|err| format!("starting {}: {err}", spec.command))?;
        let pid = served.pid();
        let (Some(stdin), Some(stdout)) = (served.stdin.take(), served.stdout.take()) else {
            return Err("its pipes were not open".into());
        };
        let workspace_uri = file_uri(root);
        let shared = Arc::new(Shared {
            store: DiagStore::default(),
            pull: AtomicBool::new(false),
            progress: Default::default(),
            stopping: AtomicBool::new(false),
            on_exit,
            workspace_uri: workspace_uri.clone(),
        });
        let conn = RpcConnection::start(stdout, stdin, shared.clone());
        let params = initialize_params(root, &workspace_uri, spec.init_options.clone());
        let answer = match conn.request("initialize", params, INIT_LIMIT).await {
            Ok(answer) => answer,
            Err(err) => {
                shared.stopping.store(true, Ordering::Relaxed);
                let tail = served.stderr_tail(600);
                served.stop().await;
                // The first lines say why; a backtrace after them does not help the model.
                let tail: String = tail.trim().lines().take(3).collect::<Vec<_>>().join(" ");
                let tail = tail.chars().take(300).collect::<String>();
                return Err(if tail.is_empty() {
                    format!("initialize failed: {err}")
                } else {
                    format!("initialize failed: {err}; it said: {tail}")
                });
            }
        };
        let caps = answer.get("capabilities").cloned().unwrap_or(Value::Null);
        if caps.get("diagnosticProvider").is_some_and(|p| !p.is_null()) {
            shared.pull.store(true, Ordering::Relaxed);
        }
        let utf8 = caps.get("positionEncoding").and_then(Value::as_str) == Some("utf-8");
        conn.notify("initialized", json!({}));
        Ok(LanguageServer {
            spec,
            shared,
            conn,
            served: tokio::sync::Mutex::new(Some(served)),
            docs: Default::default(),
            pid,
            utf8,
        })
    }

    /// Whether the server answers `textDocument/diagnostic`.
    pub fn pulls(&self) -> bool {
        self.shared.pull.load(Ordering::Relaxed)
    }

    /// Whether it reports work in progress (indexing, loading the workspace).
    pub fn busy(&self) -> bool {
        !self.shared.progress.locked().is_empty()
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.conn.notify(method, params);
    }

    pub async fn request(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, RpcError> {
        self.conn.request(method, params, limit).await
    }

    /// Sends `text` as the document's new content: `didOpen` (version 1) the first time,
    /// `didChange` with the next version after. Returns the version the server now has, and
    /// the mark of the moment just before it was sent. Unchanged text sends nothing.
    pub async fn sync(&self, uri: &str, language: &str, text: &str) -> (i32, Since, bool) {
        let mut docs = self.docs.lock().await;
        let since = self.shared.store.mark();
        match docs.get_mut(uri) {
            Some(doc) if doc.text == text => (doc.version, since, false),
            Some(doc) => {
                doc.version += 1;
                doc.text = text.to_string();
                self.conn.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": uri, "version": doc.version},
                        "contentChanges": [{"text": text}],
                    }),
                );
                (doc.version, since, true)
            }
            None => {
                self.conn.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {
                        "uri": uri, "languageId": language, "version": 1, "text": text,
                    }}),
                );
                docs.insert(
                    uri.to_string(),
                    Doc {
                        version: 1,
                        text: text.to_string(),
                    },
                );
                (1, since, true)
            }
        }
    }

    /// The version the server has of `uri`, if open.
    pub async fn version(&self, uri: &str) -> Option<i32> {
        self.docs.lock().await.get(uri).map(|doc| doc.version)
    }

    /// Closes a document that is gone from disk.
    pub async fn close(&self, uri: &str) {
        if self.docs.lock().await.remove(uri).is_some() {
            self.conn.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    /// Pulls `uri`'s diagnostics (for `version`, the one just sent) into the store. A server
    /// that cancels (it was busy) is asked again a few times.
    pub async fn pull(&self, uri: &str, version: i32, limit: Duration) -> Result<(), RpcError> {
        let started = std::time::Instant::now();
        let mut last = RpcError::Closed;
        for _ in 0..5 {
            let left = limit.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            let answer = self
                .request(
                    "textDocument/diagnostic",
                    json!({"textDocument": {"uri": uri}}),
                    left,
                )
                .await;
            match answer {
                Ok(report) => {
                    let items = match report.get("kind").and_then(Value::as_str) {
                        Some("unchanged") => self
                            .shared
                            .store
                            .latest(uri)
                            .map(|r| r.items)
                            .unwrap_or_default(),
                        _ => report
                            .get("items")
                            .and_then(Value::as_array)
                            .map(|l| l.iter().filter_map(Diag::from_json).collect())
                            .unwrap_or_default(),
                    };
                    self.shared.store.add(uri, Some(version), items);
                    return Ok(());
                }
                // ServerCancelled / ContentModified: the server wants to be asked again.
                Err(RpcError::Server { code, message })
                    if code == -32802 || code == -32801 || code == -32800 =>
                {
                    last = RpcError::Server { code, message };
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(err) => return Err(err),
            }
        }
        Err(last)
    }

    /// `shutdown`, `exit`, then its whole group ends (nothing of it survives).
    pub async fn stop(&self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        let _ = self.request("shutdown", Value::Null, SHUTDOWN_LIMIT).await;
        self.notify("exit", Value::Null);
        if let Some(served) = self.served.lock().await.take() {
            served.stop().await;
        }
    }

    /// The last of what it wrote to stderr.
    pub async fn stderr_tail(&self) -> String {
        match self.served.lock().await.as_ref() {
            Some(served) => served.stderr_tail(600),
            None => String::new(),
        }
    }
}

/// The `initialize` request: the workspace root, and what this client takes (dynamic
/// registration of pull diagnostics included: pyright offers them only to such a client).
fn initialize_params(root: &Path, uri: &str, options: Option<Value>) -> Value {
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "cairn", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": uri,
        "rootPath": root.display().to_string(),
        "workspaceFolders": [{"uri": uri, "name": root.file_name().map_or("workspace".into(), |n| n.to_string_lossy().into_owned())}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "textDocument": {
                "synchronization": {"dynamicRegistration": true, "didSave": false},
                "publishDiagnostics": {"versionSupport": true},
                "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false},
                "definition": {"linkSupport": true},
                "references": {},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            },
            "workspace": {
                "workspaceFolders": true,
                "configuration": true,
                "symbol": {},
            },
            "window": {"workDoneProgress": true},
        },
    });
    if let Some(options) = options {
        params["initializationOptions"] = options;
    }
    params
}

/// `file://` URI of a path.
pub fn file_uri(path: &Path) -> String {
    match url::Url::from_file_path(path) {
        Ok(url) => url.to_string(),
        Err(()) => format!("file://{}", path.display()),
    }
}

/// The path of a `file://` URI.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}
