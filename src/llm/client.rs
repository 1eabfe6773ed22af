//! HTTP side of the model: POSTs the conversation to `{base_url}` plus the wire format's path
//! (`/chat/completions`, `/messages`, `/responses`; the body from `client/body.rs` or
//! `formats`), streams the answer through `stream::ReplyDecoder`, and retries rate limits,
//! overloads, server errors and dropped connections with backoff. The agent holds it as a
//! `ChatModel`.

use crate::sync::RwLockExt;
use std::sync::RwLock;
use std::time::Duration;

use tokio::time::{Instant, timeout_at};

use async_trait::async_trait;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use tokio_util::bytes::Bytes;
use tokio_util::sync::CancellationToken;

use super::{
    ChatModel, ChatRequest, Completion, DeltaSink, LlmError, ProviderSettings, StreamDelta,
};
use crate::net::{Network, NetworkSettings};

mod body;
mod errors;
mod read;

use body::{MESSAGES_KEY, MODEL_KEY, RequestPieces, RequestRest, StreamOptions};
pub use body::{WireTool, wire_tools};
use errors::{error_body_message, read_error_body};
use read::{Clock, read_stream, read_whole_answer, with_retries_said};

/// The wait before the one retry of a refused connection: a server being restarted is back
/// within it; a wrong port or URL is never, and is reported at once after.
const QUICK_RETRY: Duration = Duration::from_millis(250);

/// Largest error body read from a failed response; the message shown is cut much shorter.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A model endpoint in one of the wire formats (`settings.wire.api`).
pub struct HttpModel {
    settings: ProviderSettings,
    endpoint: String,
    url: reqwest::Url,
    model: RwLock<String>,
    http: reqwest::Client,
    network: Network,
    /// The variable the API key came from, named when the provider refuses it.
    key_env: Option<String>,
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModel")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model())
            .finish_non_exhaustive()
    }
}

/// Why one attempt failed, and whether another may succeed.
enum AttemptFailure {
    Retry {
        error: LlmError,
        reason: String,
        wait: Option<Duration>,
        /// Causes that rarely pass (a refused connection, a server that never answered): one
        /// retry in the whole request, not `max_retries`.
        once: bool,
    },
    Fatal(LlmError),
}

impl AttemptFailure {
    /// A retry of a passing condition (a drop, a 5xx), with backoff.
    fn retry(error: LlmError, reason: String, wait: Option<Duration>) -> AttemptFailure {
        AttemptFailure::Retry {
            error,
            reason,
            wait,
            once: false,
        }
    }
}

impl HttpModel {
    /// Refuses a base URL that is not an http(s) URL. Uses a stack with the bundled and system
    /// roots and no proxy; cairn itself builds one `Network` at launch (`with_network`).
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        let network = Network::new(NetworkSettings::default())
            .map_err(|e| LlmError::Connection(e.to_string()))?;
        Self::with_network(settings, &network)
    }

    /// The client on the run's HTTP stack: its roots, proxies and timeouts.
    pub fn with_network(settings: ProviderSettings, network: &Network) -> Result<Self, LlmError> {
        let base = settings.base_url.trim_end_matches('/');
        let endpoint = format!("{base}{}", settings.wire.api.path());
        let url = match reqwest::Url::parse(&endpoint) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            Ok(_) | Err(_) => {
                return Err(LlmError::Connection(format!(
                    "invalid base URL `{}` (--base-url / base_url): expected something like http://localhost:11434/v1",
                    settings.base_url
                )));
            }
        };
        Ok(Self {
            model: RwLock::new(settings.model.clone()),
            settings,
            endpoint,
            url,
            http: network.client(),
            network: network.clone(),
            key_env: None,
        })
    }

    /// Names the variable the key came from, for the text of a 401 or 403.
    pub fn with_key_env(mut self, key_env: Option<String>) -> Self {
        self.key_env = key_env;
        self
    }

    /// One cheap request (`GET {base_url}/models`) to see whether the endpoint answers: `Ok`
    /// when any HTTP answer came (a 404 still means a server is there), else what a chat
    /// request would have said, without retries. For a start-up check that warns before the
    /// first message.
    pub async fn check_endpoint(&self, timeout: Duration) -> Result<(), LlmError> {
        let base = self.settings.base_url.trim_end_matches('/');
        let url = reqwest::Url::parse(&format!("{base}/models"))
            .map_err(|e| LlmError::Connection(format!("invalid base URL: {e}")))?;
        let mut request = self.http.get(url.clone()).timeout(timeout);
        for (name, value) in self.auth_headers() {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(response) => match response.status().as_u16() {
                401 | 403 => Err(LlmError::Status {
                    status: response.status().as_u16(),
                    message: self.auth_message(response.status().as_u16(), ""),
                }),
                407 => Err(LlmError::Connection(self.proxy_auth_message())),
                _ => Ok(()),
            },
            Err(e) if e.is_timeout() => Err(LlmError::Connection(format!(
                "the model server at {} did not answer within {}s; check --base-url / base_url",
                self.endpoint,
                timeout.as_secs_f64()
            ))),
            Err(e) => Err(LlmError::Connection(
                self.connection_text(&self.network.explain(&url, &e)),
            )),
        }
    }

    /// The JSON body sent for `request`, exactly as POSTed: what `serde_json::to_vec` writes
    /// for `{model, messages, stream, stream_options, tools, max_tokens, temperature}`.
    pub fn request_body(&self, request: ChatRequest<'_>) -> Result<Vec<u8>, serde_json::Error> {
        Ok(self.request_pieces(request)?.concat())
    }

    /// The body in pieces: the envelope is serialised here, the messages come already encoded
    /// (see `WireMessages`) and mostly shared, not copied. Serialising the whole conversation
    /// again every step, then copying it, cost time in proportion to its length.
    fn request_pieces(&self, request: ChatRequest<'_>) -> Result<RequestPieces, serde_json::Error> {
        let model = self.model();
        let cx = super::formats::BodyContext {
            model: &model,
            settings: &self.settings,
        };
        if let Some(body) = super::formats::native_body(cx, request) {
            return Ok(RequestPieces(vec![Bytes::from(body?)]));
        }
        let mut head = MODEL_KEY.to_vec();
        serde_json::to_writer(&mut head, &self.model())?;
        head.extend_from_slice(MESSAGES_KEY);
        let rest = serde_json::to_vec(&RequestRest {
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: wire_tools(request.tools),
            tool_choice: self
                .settings
                .wire
                .tool_choice
                .filter(|_| !request.tools.is_empty())
                .map(super::ToolChoice::openai),
            max_tokens: self.settings.max_tokens,
            temperature: self.settings.temperature,
            reasoning_effort: self.settings.wire.reasoning_effort.as_deref(),
        })?;
        // `rest` is an object, `{"stream":true,…}`: its fields follow the messages.
        let mut tail = vec![b','];
        tail.extend_from_slice(rest.get(1..).unwrap_or_default());
        let mut pieces = vec![Bytes::from(head)];
        pieces.extend(request.messages.json_array_pieces()?);
        pieces.push(Bytes::from(tail));
        Ok(RequestPieces(pieces))
    }

    async fn stream_with_retries(
        &self,
        request: ChatRequest<'_>,
        on_delta: DeltaSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        // Shared by the attempts: a retry sends the same bytes without copying them.
        let body = self
            .request_pieces(request)
            .map_err(|e| LlmError::Protocol(format!("could not encode the request: {e}")))?;
        let mut retry = 0;
        let mut once_used = false;
        loop {
            let (error, reason, hint, once) = match self.attempt(&body, &mut *on_delta).await {
                Ok(completion) => return Ok(completion),
                Err(AttemptFailure::Fatal(error)) => return Err(error),
                Err(AttemptFailure::Retry {
                    error,
                    reason,
                    wait,
                    once,
                }) => (error, reason, wait, once),
            };
            if retry >= self.settings.max_retries || (once && once_used) {
                return Err(with_retries_said(error, retry));
            }
            once_used |= once;
            retry += 1;
            let wait = self.backoff(retry, hint);
            tracing::info!(retry, wait_ms = wait.as_millis() as u64, %reason, "retrying the model request");
            on_delta(StreamDelta::Retrying {
                attempt: retry,
                wait,
                reason,
            });
            tokio::select! {
                () = cancel.cancelled() => return Err(LlmError::Cancelled),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// The server's wait when it named one, else exponential backoff with jitter; both capped.
    fn backoff(&self, retry: u32, hint: Option<Duration>) -> Duration {
        let wait = hint.unwrap_or_else(|| {
            let factor = 2u32.saturating_pow(retry.saturating_sub(1).min(20));
            let base = self.settings.initial_backoff.saturating_mul(factor);
            // Jitter in [base/2, base): clients that failed together do not retry together.
            base / 2 + base.mul_f64(fastrand::f64() / 2.0)
        });
        wait.min(self.settings.max_backoff)
    }

    async fn attempt(
        &self,
        body: &RequestPieces,
        on_delta: DeltaSink<'_>,
    ) -> Result<Completion, AttemptFailure> {
        let idle = self.settings.idle_timeout;
        let limits = self.settings.limits;
        let started = Instant::now();
        let deadline = started + limits.request_timeout;
        let first_byte = self.network.first_byte_timeout(&self.url);
        let mut clock = Clock {
            idle,
            timeout: limits.request_timeout,
            deadline,
            first_byte,
            first_byte_deadline: first_byte.map_or(deadline, |fb| (started + fb).min(deadline)),
            answered: None,
        };
        let mut request = self
            .http
            .post(&self.endpoint)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            // Set, so the pieces go out as one body of known length, not chunked.
            .header(CONTENT_LENGTH, body.len())
            .body(body.to_body());
        for (name, value) in self.auth_headers() {
            request = request.header(name, value);
        }
        tracing::debug!(endpoint = %self.endpoint, model = %self.model(), "model request");
        let response = match timeout_at(clock.first_byte_deadline, request.send()).await {
            Err(_) => return Err(self.silent(&clock)),
            Ok(Err(e)) => return Err(self.send_failure(&e)),
            Ok(Ok(response)) => response,
        };
        clock.answered = Some(Instant::now());
        if !response.status().is_success() {
            return Err(self.status_failure(response).await);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let api = self.settings.wire.api;
        if content_type.contains("json") && api != super::Api::Chat {
            let body = read_error_body(response, idle).await;
            Err(AttemptFailure::Fatal(LlmError::Protocol(format!(
                "expected an event stream from {} ({}) but got a JSON answer: {}",
                self.endpoint,
                api.title(),
                error_body_message(&body, 200)
            ))))
        } else if content_type.contains("json") {
            read_whole_answer(response, clock, limits, on_delta).await
        } else if content_type.starts_with("text/html") {
            // A proxy or captive portal answered, not a model: retrying will not help.
            let body = read_error_body(response, idle).await;
            Err(AttemptFailure::Fatal(LlmError::Protocol(format!(
                "expected an event stream from {} but got an HTML page: {}",
                self.endpoint,
                error_body_message(&body, 200)
            ))))
        } else {
            read_stream(response, clock, limits, api, on_delta).await
        }
    }

    /// The headers that carry the key for this wire format.
    fn auth_headers(&self) -> Vec<(&'static str, String)> {
        super::formats::auth_headers(self.settings.wire.api, self.settings.api_key.as_deref())
    }
}

#[async_trait]
impl ChatModel for HttpModel {
    async fn stream_chat(
        &self,
        request: ChatRequest<'_>,
        on_delta: DeltaSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LlmError::Cancelled),
            result = self.stream_with_retries(request, on_delta, cancel) => result,
        }
    }

    fn model(&self) -> String {
        self.model.read_locked().clone()
    }

    fn set_model(&self, model: &str) {
        *self.model.write_locked() = model.to_string();
    }

    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn ChatModel>> {
        let mut settings = self.settings.clone();
        settings.model = model.to_string();
        let client = HttpModel::with_network(settings, &self.network).ok()?;
        Some(std::sync::Arc::new(
            client.with_key_env(self.key_env.clone()),
        ))
    }

    async fn check_endpoint(&self, timeout: Duration) -> Result<(), LlmError> {
        HttpModel::check_endpoint(self, timeout).await
    }

    async fn list_models(&self) -> Result<Vec<String>, super::listing::ListError> {
        let key = self.settings.api_key.as_deref();
        super::listing::list_models(
            &self.http,
            &self.settings.base_url,
            &super::formats::auth_headers(self.settings.wire.api, key),
            super::listing::LIST_TIMEOUT,
        )
        .await
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
