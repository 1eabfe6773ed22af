//! HTTP side of the model: POSTs the conversation to `{base_url}/chat/completions`, streams the
//! body through `stream::ReplyDecoder`, and retries rate limits, server errors and dropped
//! connections with backoff. The agent holds it as a `ChatModel`.

use crate::sync::RwLockExt;
use std::sync::RwLock;
use std::time::{Duration, SystemTime};

use tokio::time::{Instant, timeout_at};

use async_trait::async_trait;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
use tokio_util::bytes::Bytes;
use tokio_util::sync::CancellationToken;

use super::retry::{names_request_shape, proxy_retried, retry_after};
use super::stream::{Progress, ReplyDecoder, cut, error_message};
use super::{
    ChatModel, ChatRequest, Completion, DeltaSink, LlmError, ProviderSettings, ReplyLimits,
    StreamDelta,
};
use crate::net::{FailureKind, NetFailure, Network, NetworkSettings};

/// The wait before the one retry of a refused connection: a server being restarted is back
/// within it; a wrong port or URL is never, and is reported at once after.
const QUICK_RETRY: Duration = Duration::from_millis(250);

/// Largest error body read from a failed response; the message shown is cut much shorter.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// An OpenAI-compatible chat-completions endpoint.
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
enum Failure {
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

impl Failure {
    /// A retry of a passing condition (a drop, a 5xx), with backoff.
    fn retry(error: LlmError, reason: String, wait: Option<Duration>) -> Failure {
        Failure::Retry {
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
        let endpoint = format!("{base}/chat/completions");
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
        if let Some(key) = self.settings.api_key.as_deref().filter(|k| !k.is_empty()) {
            request = request.bearer_auth(key);
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
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Retry {
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
    ) -> Result<Completion, Failure> {
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
        if let Some(key) = self.settings.api_key.as_deref().filter(|k| !k.is_empty()) {
            request = request.bearer_auth(key);
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
        if content_type.contains("json") {
            read_whole_answer(response, clock, limits, on_delta).await
        } else if content_type.starts_with("text/html") {
            // A proxy or captive portal answered, not a model: retrying will not help.
            let body = read_error_body(response, idle).await;
            Err(Failure::Fatal(LlmError::Protocol(format!(
                "expected an event stream from {} but got an HTML page: {}",
                self.endpoint,
                error_body_message(&body, 200)
            ))))
        } else {
            read_stream(response, clock, limits, on_delta).await
        }
    }

    async fn status_failure(&self, response: reqwest::Response) -> Failure {
        let status = response.status().as_u16();
        let wait = retry_after(response.headers(), SystemTime::now());
        let retried_by_proxy = proxy_retried(response.headers());
        let body = read_error_body(response, self.settings.idle_timeout).await;
        if status == 407 {
            // Only a proxy sends 407: its page is not the provider's message.
            return Failure::Fatal(LlmError::Connection(self.proxy_auth_message()));
        }
        let mut message = error_body_message(&body, status);
        if matches!(status, 401 | 403) {
            message = self.auth_message(status, &message);
        }
        if matches!(status, 404 | 405) && !lower_mentions_model(&body) {
            // No such route: the base URL lacks its version part or names another API.
            message.push_str(&format!(
                "; {} has no chat completions API: check --base-url / base_url (now {}), the API root that /chat/completions is added to, such as http://localhost:11434/v1",
                self.endpoint, self.settings.base_url
            ));
        }
        let lower = body.to_lowercase();
        let quota = [
            "insufficient_quota",
            "insufficient balance",
            "insufficient credits",
            "exceeded your current quota",
        ]
        .iter()
        .any(|needle| lower.contains(needle));
        if status == 402 || (status == 429 && quota) {
            return Failure::Fatal(LlmError::QuotaExhausted { message });
        }
        let retryable = matches!(status, 408 | 409 | 429 | 500..=599);
        if retryable && status != 429 && names_request_shape(&message) {
            // The server blames what was sent (a null content, a field of the wrong type):
            // the same bytes again would fail the same way.
            message.push_str(
                " (not retried: the message is about the request itself, which a retry would send unchanged)",
            );
            return Failure::Fatal(LlmError::Status { status, message });
        }
        if retryable && let Some(retries) = retried_by_proxy {
            // The proxy in front of the provider (LiteLLM) has retried already: retrying on
            // top multiplies the attempts upstream (3 × 6 = 18) for a failure that stayed.
            message.push_str(&format!(
                " (the proxy in front of the provider already retried {retries} time(s); not retried again)"
            ));
            return Failure::Fatal(LlmError::Status { status, message });
        }
        let error = LlmError::Status {
            status,
            message: message.clone(),
        };
        match status {
            429 => Failure::retry(error, format!("rate limited (429): {message}"), wait),
            408 | 409 | 500..=599 => {
                Failure::retry(error, format!("server error {status}: {message}"), wait)
            }
            _ => Failure::Fatal(error),
        }
    }

    /// A 401 or 403, naming the provider and where the key came from.
    fn auth_message(&self, status: u16, message: &str) -> String {
        let provider = &self.settings.provider;
        let said = if message.is_empty() {
            String::new()
        } else {
            format!(": {message}")
        };
        let has_key = self
            .settings
            .api_key
            .as_deref()
            .is_some_and(|k| !k.is_empty());
        match (&self.key_env, has_key) {
            (Some(var), true) if status == 401 => format!(
                "{provider} did not accept the API key from {var}{said}. Check the value of {var} (or `api_key_env` in the config)"
            ),
            (Some(var), true) => format!(
                "{provider} refused the request made with the API key from {var}{said}. The key may lack access to model `{}`",
                self.model()
            ),
            (Some(var), false) => format!(
                "{provider} wants an API key{said}, and none is set: set {var} (or `api_key_env` in the config to name another variable)"
            ),
            (None, true) => format!("{provider} did not accept the API key{said}"),
            (None, false) => format!(
                "{provider} wants an API key{said} (no API key is configured: set CAIRN_API_KEY, or `api_key_env` in the config)"
            ),
        }
    }

    fn proxy_auth_message(&self) -> String {
        match self.network.proxy_for(&self.url) {
            Some(proxy) if proxy.has_credentials => format!(
                "the proxy at {} (from {}) refused the credentials in its URL (407); check the user name and password",
                proxy.host_port(),
                proxy.source
            ),
            Some(proxy) => format!(
                "the proxy at {} (from {}) asks for credentials (407); put them in the proxy URL: scheme://user:password@host:port",
                proxy.host_port(),
                proxy.source
            ),
            None => "a proxy between cairn and the provider asks for credentials (407); set HTTPS_PROXY or `proxy` under [network] to scheme://user:password@host:port".to_string(),
        }
    }

    /// A request that could not be sent, or whose answer never began: retried by cause.
    fn send_failure(&self, error: &reqwest::Error) -> Failure {
        let failure = self.network.explain(&self.url, error);
        tracing::debug!(kind = ?failure.kind, detail = %failure.detail, "model request failed");
        let text = self.connection_text(&failure);
        let error = LlmError::Connection(text.clone());
        match failure.kind {
            FailureKind::Refused => Failure::Retry {
                error,
                reason: failure.summary,
                wait: Some(QUICK_RETRY),
                once: true,
            },
            // A handshake that already took the whole connect timeout: another full wait is
            // worth one try (a network blip), not `max_retries` of them.
            FailureKind::ConnectTimeout => Failure::Retry {
                error,
                reason: failure.summary,
                wait: None,
                once: true,
            },
            kind if kind.is_retryable() => Failure::retry(error, failure.summary, None),
            _ => Failure::Fatal(error),
        }
    }

    /// The text a user reads for a connection failure: who failed, what to check (the URL
    /// and `--base-url` when it is the server's address that is wrong), then the library's
    /// own words.
    fn connection_text(&self, failure: &NetFailure) -> String {
        let check_url = failure.proxy.is_none()
            && matches!(
                failure.kind,
                FailureKind::Refused
                    | FailureKind::NameNotFound
                    | FailureKind::ConnectTimeout
                    | FailureKind::Invalid
            );
        let advice = if check_url {
            format!(
                "; check --base-url / base_url (now {})",
                self.settings.base_url
            )
        } else {
            String::new()
        };
        // The summary alone on the first line: a user reads that one; the library's words
        // follow for whoever needs them.
        format!(
            "could not reach the model server at {}: {}{advice}\ncause: {}",
            self.endpoint, failure.summary, failure.detail
        )
    }

    /// The server took the request and sent nothing within the first-byte timeout.
    fn silent(&self, clock: &Clock) -> Failure {
        let reason = clock.expired(clock.first_byte_deadline, false);
        Failure::Retry {
            error: LlmError::Connection(format!("the model server at {} {reason}", self.endpoint)),
            reason,
            wait: None,
            once: true,
        }
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

    async fn check_endpoint(&self, timeout: Duration) -> Result<(), LlmError> {
        HttpModel::check_endpoint(self, timeout).await
    }

    async fn list_models(&self) -> Result<Vec<String>, super::listing::ListError> {
        let key = self.settings.api_key.as_deref();
        super::listing::list_models(
            &self.http,
            &self.settings.base_url,
            key,
            super::listing::LIST_TIMEOUT,
        )
        .await
    }
}

/// The clocks of one attempt: the first-byte timer, until the first data arrives; then the
/// idle timer, which only data restarts; and the overall deadline, which nothing does.
#[derive(Debug, Clone, Copy)]
struct Clock {
    idle: Duration,
    timeout: Duration,
    deadline: Instant,
    /// `[network] first_byte_timeout_secs` for this server (`None`: only the deadline).
    first_byte: Option<Duration>,
    first_byte_deadline: Instant,
    /// When the response's head arrived: from then on the idle timer runs too, so a server
    /// that answers and then sends nothing but comments is dropped after the idle timeout.
    answered: Option<Instant>,
}

impl Clock {
    /// When to give up waiting: before any data, at the first-byte deadline; after, when the
    /// last data arrived at `last_data` plus the idle timeout.
    fn next(&self, last_data: Option<Instant>) -> Instant {
        match (last_data, self.answered) {
            (Some(at), _) => (at + self.idle).min(self.deadline),
            (None, Some(at)) => (at + self.idle).min(self.first_byte_deadline),
            (None, None) => self.first_byte_deadline,
        }
    }

    /// Why a wait that ended at `at` gave up.
    fn expired(&self, at: Instant, had_data: bool) -> String {
        if at >= self.deadline {
            format!(
                "took longer than {}s (request_timeout_secs)",
                self.timeout.as_secs_f64()
            )
        } else if !had_data
            && at >= self.first_byte_deadline
            && let Some(first_byte) = self.first_byte
        {
            format!(
                "sent nothing within {}s of the request (first_byte_timeout_secs under [network])",
                first_byte.as_secs_f64()
            )
        } else {
            format!(
                "sent no data for {}s (request_idle_timeout_secs)",
                self.idle.as_secs_f64()
            )
        }
    }
}

/// What a server may still send after `[DONE]` (the end of a chunked body, a last comment) is
/// read, briefly, so the connection goes back to the pool: the next step of the session then
/// skips a new connection (a TLS handshake with a real provider). A server that keeps the
/// stream open after `[DONE]` is left after `AFTER_DONE_WAIT`.
async fn finish_body(mut response: reqwest::Response) {
    let deadline = Instant::now() + AFTER_DONE_WAIT;
    let mut left = AFTER_DONE_BYTES;
    while let Ok(Ok(Some(bytes))) = timeout_at(deadline, response.chunk()).await {
        left = left.saturating_sub(bytes.len());
        if left == 0 {
            return;
        }
    }
}

/// Longest wait for the end of a body after `[DONE]`.
const AFTER_DONE_WAIT: Duration = Duration::from_millis(100);
/// Most bytes read after `[DONE]` before the connection is given up instead.
const AFTER_DONE_BYTES: usize = 64 * 1024;

/// Reads the event stream. A drop, stall or early end is retried (with backoff, within
/// `max_retries`) also after text was shown, since no tool call runs before a reply is whole;
/// the last attempt's partial comes back as `Truncated`. Only `data:` lines
/// restart the idle timer: a server that sends nothing but `: keep-alive` comments times out.
async fn read_stream(
    mut response: reqwest::Response,
    clock: Clock,
    limits: ReplyLimits,
    on_delta: DeltaSink<'_>,
) -> Result<Completion, Failure> {
    let mut decoder = ReplyDecoder::with_limits(limits);
    let mut last_data = None;
    loop {
        let until = clock.next(last_data);
        // `timeout_at` only looks at the clock when the read would wait; a server that
        // streams faster than it is read never makes it wait, so check the deadline here too.
        let read = if Instant::now() >= clock.deadline {
            Err(clock.deadline)
        } else {
            timeout_at(until, response.chunk()).await.map_err(|_| until)
        };
        // What happened (one line a user reads), the library's words, and whether it stalled.
        let (failure, cause, stalled) = match read {
            Ok(Ok(Some(bytes))) => {
                let seen = decoder.data_lines_seen();
                match decoder.feed(&bytes, &mut *on_delta) {
                    Ok(Progress::More) => {
                        if decoder.data_lines_seen() != seen {
                            last_data = Some(Instant::now());
                        }
                        continue;
                    }
                    Ok(Progress::Done) => {
                        finish_body(response).await;
                        break;
                    }
                    // Dropping the response closes the connection: the server stops sending.
                    Err(e) if decoder.has_content() => return Err(error_mid_answer(e, decoder)),
                    Err(e) => return Err(stream_error(e, false)),
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => (
                "the connection dropped before the reply was complete".to_string(),
                Some(connection_message(&e)),
                false,
            ),
            Err(at) => (
                format!("the server {}", clock.expired(at, last_data.is_some())),
                None,
                true,
            ),
        };
        let detailed = match &cause {
            Some(cause) => format!("{failure}\ncause: {cause}"),
            None => failure.clone(),
        };
        tracing::debug!(%detailed, "the model's stream broke off");
        if decoder.has_content() {
            // Text was shown, but nothing runs before a reply is whole: the same request
            // again is safe. `Retrying` tells the front ends to drop what was shown; when no
            // retry is left, the partial is what the caller gets.
            return Err(Failure::retry(
                decoder.truncated(detailed),
                format!("the answer was cut off ({failure})"),
                None,
            ));
        }
        // Nothing was shown (at most a tool call was half sent): the same request again.
        return Err(Failure::Retry {
            error: LlmError::Connection(detailed),
            reason: failure,
            wait: None,
            // A server silent from the start rarely wakes up: one more try, not `max_retries`.
            once: stalled && last_data.is_none(),
        });
    }
    let had_content = decoder.has_content();
    // A body that ends without a finish reason was cut (a proxy or server closed it); one
    // that ended at the output limit inside a tool call would end there again.
    let cut_short = !decoder.has_finish_reason();
    match decoder.finish(&mut *on_delta) {
        Ok(completion) => Ok(completion),
        Err(LlmError::Truncated { .. }) if !had_content => {
            let reason = "the stream ended before the reply was complete".to_string();
            Err(Failure::retry(
                LlmError::Connection(reason.clone()),
                reason,
                None,
            ))
        }
        Err(error @ LlmError::Truncated { .. }) if cut_short => Err(Failure::retry(
            error,
            "the answer was cut off (the stream ended before the model finished)".to_string(),
            None,
        )),
        Err(e) => Err(stream_error(e, had_content)),
    }
}

/// An error object in the stream before anything was shown is the same failure as the HTTP
/// status it names (a 5xx, a 429, an overload): retried when that status would be. After
/// content arrived it ends the request (a retry would show the user the text twice).
fn stream_error(error: LlmError, had_content: bool) -> Failure {
    match error {
        LlmError::Provider {
            ref message,
            transient: true,
        } if !had_content => Failure::retry(
            LlmError::Provider {
                message: message.clone(),
                transient: true,
            },
            format!("the provider reported an error before answering: {message}"),
            None,
        ),
        other => Failure::Fatal(other),
    }
}

/// An error object after text was shown: a passing one (an overload, a 5xx) is retried like
/// a cut stream, the partial coming back as `Truncated` when no retry is left; a final one
/// (or a reply over a limit) ends the request as it is.
fn error_mid_answer(error: LlmError, decoder: ReplyDecoder) -> Failure {
    match error {
        LlmError::Provider {
            message,
            transient: true,
        } => {
            let reason = format!("the provider reported an error mid-answer: {message}");
            Failure::retry(
                decoder.truncated(reason.clone()),
                format!("the answer was cut off ({reason})"),
                None,
            )
        }
        other => Failure::Fatal(other),
    }
}

/// A server that ignored `stream: true` answers with one JSON completion, read whole but
/// no larger than the largest event a stream may carry.
async fn read_whole_answer(
    mut response: reqwest::Response,
    clock: Clock,
    limits: ReplyLimits,
    on_delta: DeltaSink<'_>,
) -> Result<Completion, Failure> {
    let max = limits.max_event_bytes();
    let mut body = Vec::new();
    let mut last_data = None;
    loop {
        let until = clock.next(last_data);
        match timeout_at(until, response.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                if body.len() + bytes.len() > max {
                    return Err(Failure::Fatal(LlmError::Capped {
                        reason: format!("the answer passed {max} bytes"),
                        partial: Box::default(),
                    }));
                }
                body.extend_from_slice(&bytes);
                let now = Instant::now();
                last_data = Some(now);
                if now >= clock.deadline {
                    let reason = format!("the server {}", clock.expired(clock.deadline, true));
                    return Err(Failure::retry(
                        LlmError::Connection(reason.clone()),
                        reason,
                        None,
                    ));
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                let reason = "the connection dropped before the answer was complete".to_string();
                return Err(Failure::retry(
                    LlmError::Connection(format!("{reason}\ncause: {}", connection_message(&e))),
                    reason,
                    None,
                ));
            }
            Err(_) => {
                let reason = format!("the server {}", clock.expired(until, last_data.is_some()));
                return Err(Failure::Retry {
                    error: LlmError::Connection(reason.clone()),
                    reason,
                    once: last_data.is_none(),
                    wait: None,
                });
            }
        }
    }
    let text = String::from_utf8_lossy(&body);
    let mut decoder = super::stream::StreamAssembler::with_limits(limits);
    decoder
        .chunk(&text, &mut *on_delta)
        .map_err(|e| stream_error(e, false))?;
    decoder.finish(&mut *on_delta).map_err(Failure::Fatal)
}

/// A cut answer that every retry also lost says so: the user then looks at the network
/// (a proxy closing long streams), not at the model.
fn with_retries_said(error: LlmError, retries: u32) -> LlmError {
    match error {
        LlmError::Truncated { reason, partial } if retries > 0 => LlmError::Truncated {
            // On the summary line, ahead of the library's words.
            reason: match reason.split_once('\n') {
                Some((summary, cause)) => {
                    format!("{summary}; {retries} retries were cut off too\n{cause}")
                }
                None => format!("{reason}; {retries} retries were cut off too"),
            },
            partial,
        },
        other => other,
    }
}

/// Whether an error body is about the model (`The model 'x' does not exist`): a 404 that
/// names a model is the model's name at fault, not the URL.
fn lower_mentions_model(body: &str) -> bool {
    body.to_ascii_lowercase().contains("model")
}

/// The error and its causes, which is where reqwest keeps the useful part.
fn connection_message(error: &reqwest::Error) -> String {
    crate::net::failure::chain_text(error)
}

async fn read_error_body(mut response: reqwest::Response, idle: Duration) -> String {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The provider's own message (`{"error":{"message":…}}` and friends), else the body text,
/// else the status's name; at most about 500 characters.
fn error_body_message(body: &str, status: u16) -> String {
    let trimmed = body.trim();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        let detail = value.get("detail").filter(|d| d.is_string());
        if value.get("error").is_some() || value.get("message").is_some() {
            return error_message(&value);
        }
        if let Some(serde_json::Value::String(detail)) = detail {
            return cut(detail, 500);
        }
    }
    if trimmed.is_empty() {
        let name = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason());
        return name.unwrap_or("no message").to_string();
    }
    let single_line = trimmed.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&single_line, 500)
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;

/// A request body as the pieces it was built from; cloning one shares them.
#[derive(Debug, Clone)]
struct RequestPieces(Vec<Bytes>);

impl RequestPieces {
    fn len(&self) -> usize {
        self.0.iter().map(Bytes::len).sum()
    }

    fn concat(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.len());
        for piece in &self.0 {
            body.extend_from_slice(piece);
        }
        body
    }

    /// One body, written piece by piece (hyper writes them together with one `writev`).
    fn to_body(&self) -> reqwest::Body {
        let pieces = self.0.clone().into_iter().map(Ok::<_, std::io::Error>);
        reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
    }
}

/// The body opens with these, the model name between them; the messages follow.
const MODEL_KEY: &[u8] = b"{\"model\":";
const MESSAGES_KEY: &[u8] = b",\"messages\":";

/// The request's fields after the messages, in the order they are sent.
#[derive(serde::Serialize)]
struct RequestRest<'a> {
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// A tool schema as the request's `tools` array wants it; `ToolSpec` serialises to exactly
/// `{name, description, parameters}`.
#[derive(serde::Serialize)]
pub struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: &'a crate::llm::wire::ToolSpec,
}

/// The request's `tools` array; `cairn tool list` prints the same.
pub fn wire_tools(specs: &[crate::llm::wire::ToolSpec]) -> Vec<WireTool<'_>> {
    specs
        .iter()
        .map(|spec| WireTool {
            kind: "function",
            function: spec,
        })
        .collect()
}
