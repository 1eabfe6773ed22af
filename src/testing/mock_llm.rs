//! A scripted streaming model server on 127.0.0.1 for tests and demos: each
//! `POST …/chat/completions` (or `…/messages`, `…/responses`: the same script told in
//! Anthropic's or the Responses API's events, see `native`) plays the next `Script` and every
//! request is recorded, so a test can assert exactly what cairn sent. `cache_sim` reports
//! cache reads as the real APIs would. Plain HTTP/1.1.

use crate::sync::MutexExt;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

mod cache_sim;
pub mod native;
mod serve;

pub use native::CacheCounts;

use super::mock_script::Script;
use serve::accept_loop;

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
    /// Set by `simulate_cache`: the usage reports cache reads computed from the requests.
    cache: Mutex<Option<cache_sim::CacheSim>>,
    /// The cache counts reported, one per request answered while simulating.
    cache_counts: Mutex<Vec<CacheCounts>>,
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
            cache: Mutex::new(None),
            cache_counts: Mutex::new(Vec::new()),
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

    /// From now on each reply's usage reports the prompt and cached tokens the provider's
    /// cache would give this request (see `cache_sim`), in the format's own fields.
    pub fn simulate_cache(&self) {
        *lock(&self.shared.cache) = Some(cache_sim::CacheSim::default());
    }

    /// The cache counts reported since `simulate_cache`, one per request.
    pub fn cache_counts(&self) -> Vec<CacheCounts> {
        lock(&self.shared.cache_counts).clone()
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
