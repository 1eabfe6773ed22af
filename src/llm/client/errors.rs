//! What a failed request says: an HTTP status (its body's message, the key or proxy at
//! fault, whether it may pass), a connection that could not be made, a server that never
//! answered; each as the text a user reads and the retry it deserves.

use std::time::{Duration, SystemTime};

use super::read::Clock;
use super::{AttemptFailure, HttpModel, MAX_ERROR_BODY, QUICK_RETRY};
use crate::llm::retry::{names_request_shape, proxy_retried, retry_after};
use crate::llm::stream::{cut, error_message};
use crate::llm::{ChatModel, LlmError};
use crate::net::{FailureKind, NetFailure};

impl HttpModel {
    pub(super) async fn status_failure(&self, response: reqwest::Response) -> AttemptFailure {
        let status = response.status().as_u16();
        let wait = retry_after(response.headers(), SystemTime::now());
        let retried_by_proxy = proxy_retried(response.headers());
        let body = read_error_body(response, self.settings.idle_timeout).await;
        if status == 407 {
            // Only a proxy sends 407: its page is not the provider's message.
            return AttemptFailure::Fatal(LlmError::Connection(self.proxy_auth_message()));
        }
        let mut message = error_body_message(&body, status);
        if matches!(status, 401 | 403) {
            message = self.auth_message(status, &message);
        }
        if matches!(status, 404 | 405) && !lower_mentions_model(&body) {
            // No such route: the base URL lacks its version part or names another API.
            let api = self.settings.wire.api;
            message.push_str(&format!(
                "; {} has no {}: check --base-url / base_url (now {}), the API root that {} is added to, such as {}, and --api / api (now {api})",
                self.endpoint,
                api.title(),
                self.settings.base_url,
                api.path(),
                match api {
                    crate::llm::Api::Anthropic => "https://api.anthropic.com/v1",
                    _ => "http://localhost:11434/v1",
                },
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
            return AttemptFailure::Fatal(LlmError::QuotaExhausted { message });
        }
        let retryable = matches!(status, 408 | 409 | 429 | 500..=599);
        if retryable && status != 429 && names_request_shape(&message) {
            // The server blames what was sent (a null content, a field of the wrong type):
            // the same bytes again would fail the same way.
            message.push_str(
                " (not retried: the message is about the request itself, which a retry would send unchanged)",
            );
            return AttemptFailure::Fatal(LlmError::Status { status, message });
        }
        if retryable && let Some(retries) = retried_by_proxy {
            // The proxy in front of the provider (LiteLLM) has retried already: retrying on
            // top multiplies the attempts upstream (3 × 6 = 18) for a failure that stayed.
            message.push_str(&format!(
                " (the proxy in front of the provider already retried {retries} time(s); not retried again)"
            ));
            return AttemptFailure::Fatal(LlmError::Status { status, message });
        }
        let error = LlmError::Status {
            status,
            message: message.clone(),
        };
        match status {
            429 => AttemptFailure::retry(error, format!("rate limited (429): {message}"), wait),
            408 | 409 | 500..=599 => {
                AttemptFailure::retry(error, format!("server error {status}: {message}"), wait)
            }
            _ => AttemptFailure::Fatal(error),
        }
    }

    /// A 401 or 403, naming the provider and where the key came from.
    pub(super) fn auth_message(&self, status: u16, message: &str) -> String {
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

    pub(super) fn proxy_auth_message(&self) -> String {
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
    pub(super) fn send_failure(&self, error: &reqwest::Error) -> AttemptFailure {
        let failure = self.network.explain(&self.url, error);
        tracing::debug!(kind = ?failure.kind, detail = %failure.detail, "model request failed");
        let text = self.connection_text(&failure);
        let error = LlmError::Connection(text.clone());
        match failure.kind {
            FailureKind::Refused => AttemptFailure::Retry {
                error,
                reason: failure.summary,
                wait: Some(QUICK_RETRY),
                once: true,
            },
            // A handshake that already took the whole connect timeout: another full wait is
            // worth one try (a network blip), not `max_retries` of them.
            FailureKind::ConnectTimeout => AttemptFailure::Retry {
                error,
                reason: failure.summary,
                wait: None,
                once: true,
            },
            kind if kind.is_retryable() => AttemptFailure::retry(error, failure.summary, None),
            _ => AttemptFailure::Fatal(error),
        }
    }

    /// The text a user reads for a connection failure: who failed, what to check (the URL
    /// and `--base-url` when it is the server's address that is wrong), then the library's
    /// own words.
    pub(super) fn connection_text(&self, failure: &NetFailure) -> String {
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
    pub(super) fn silent(&self, clock: &Clock) -> AttemptFailure {
        let reason = clock.expired(clock.first_byte_deadline, false);
        AttemptFailure::Retry {
            error: LlmError::Connection(format!("the model server at {} {reason}", self.endpoint)),
            reason,
            wait: None,
            once: true,
        }
    }
}

/// Whether an error body is about the model (`The model 'x' does not exist`): a 404 that
/// names a model is the model's name at fault, not the URL.
pub(super) fn lower_mentions_model(body: &str) -> bool {
    body.to_ascii_lowercase().contains("model")
}

pub(super) async fn read_error_body(mut response: reqwest::Response, idle: Duration) -> String {
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
pub(super) fn error_body_message(body: &str, status: u16) -> String {
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
