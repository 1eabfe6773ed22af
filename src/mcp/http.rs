//! The streamable-HTTP transport on cairn's own HTTP stack. `rmcp`'s worker speaks the
//! protocol (session ids, the revision headers, re-initialising on a 404 where the revision has
//! sessions, the stateless 2026-07-28 probe with its fallback to `initialize`); the requests it
//! asks for go out here, on the run's one `reqwest` client (`net::Network`: its proxies, its
//! private CAs, its connect timeout), not on a second stack. The bearer token is sent in the
//! `Authorization` header and never logged; what reaches the log of a failure is the status.
//! A server logged in to with `cairn mcp login` gets its OAuth access token (`oauth::bearer`),
//! refreshed when it expired and, once, when the server answers 401; a 401 that no token
//! answers marks the server as needing a login.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use super::oauth::OAuthError;
use super::oauth::bearer::OAuthBearer;

/// The run's HTTP client as `rmcp`'s streamable-HTTP client.
#[derive(Clone)]
pub struct CairnHttp {
    client: reqwest::Client,
    /// The server's OAuth login (`cairn mcp login`), when it has one and no configured token.
    oauth: Option<Arc<OAuthBearer>>,
    /// Set when the server refused the request for want of authorization and no token (or
    /// no refreshed one) answered it: it needs `cairn mcp login`.
    login_needed: Arc<AtomicBool>,
}

type HttpError = StreamableHttpError<reqwest::Error>;

impl CairnHttp {
    pub fn new(client: reqwest::Client) -> Self {
        Self {
            client,
            oauth: None,
            login_needed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Sends the access token of `login` (when no token is configured).
    pub fn with_oauth(self, login: Arc<OAuthBearer>) -> Self {
        Self {
            oauth: Some(login),
            ..self
        }
    }

    /// Whether the server asked for a login that no token answered.
    pub fn login_needed(&self) -> bool {
        self.login_needed.load(Ordering::SeqCst)
    }

    /// Sends the request `build` makes with its authorization: the configured token (`auth`),
    /// else the OAuth access token, refreshed and sent again once when the server refuses it.
    async fn send(
        &self,
        auth: Option<String>,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, HttpError> {
        if let Some(token) = auth {
            return build()
                .bearer_auth(token)
                .send()
                .await
                .map_err(StreamableHttpError::Client);
        }
        let Some(oauth) = &self.oauth else {
            let response = build().send().await.map_err(StreamableHttpError::Client)?;
            self.note_refusal(&response);
            return Ok(response);
        };
        let token = oauth.token().await.map_err(|err| self.oauth_failed(err))?;
        let response = build()
            .bearer_auth(&token)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        let token = oauth
            .after_refusal(&token)
            .await
            .map_err(|err| self.oauth_failed(err))?;
        let response = build()
            .bearer_auth(&token)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        self.note_refusal(&response);
        Ok(response)
    }

    fn note_refusal(&self, response: &reqwest::Response) {
        if response.status() == StatusCode::UNAUTHORIZED {
            self.login_needed.store(true, Ordering::SeqCst);
        }
    }

    /// A token that could not be had: the login expired (a new one is needed), or the
    /// authorization server could not be reached.
    fn oauth_failed(&self, err: OAuthError) -> HttpError {
        if matches!(err, OAuthError::LoginExpired) {
            self.login_needed.store(true, Ordering::SeqCst);
        }
        let why = err.to_string();
        StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
            "OAuth: {}",
            crate::secrets::redact(&why)
        )))
    }
}

fn media_type_is(value: Option<&HeaderValue>, expected: &str) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session: Option<&str>,
    custom: &HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    for (name, value) in custom {
        request = request.header(name, value);
    }
    if let Some(session) = session {
        request = request.header(HEADER_SESSION_ID, session);
    }
    request
}

/// A 401 or 403 with a challenge: the server wants authorization (`cairn mcp login`).
fn auth_failure(response: &reqwest::Response) -> Option<HttpError> {
    let challenge = response.headers().get(WWW_AUTHENTICATE)?.to_str().ok()?;
    match response.status() {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Some(
            StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge.to_string())),
        ),
        _ => None,
    }
}

/// The body, at most `max` bytes.
async fn bounded(response: reqwest::Response, max: usize) -> Result<Vec<u8>, HttpError> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > max {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn sse(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
}

/// A newer revision's `server/discover` probe that an older server refused (any 4xx but an
/// authorization failure, before a session): answered as a JSON-RPC error to the probe, so
/// that the client falls back to `initialize`, as the official SDKs' clients do.
fn refused_probe(
    message: &ClientJsonRpcMessage,
    session: bool,
    status: StatusCode,
    body: &[u8],
) -> Option<StreamableHttpPostResponse> {
    if session
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_slice::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => {
            ErrorData::invalid_request(format!("server/discover refused with HTTP {status}"), None)
        }
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

impl StreamableHttpClient for CairnHttp {
    type Error = reqwest::Error;

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let build = || {
            let mut request = self.client.get(uri.as_ref()).header(
                ACCEPT,
                format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
            );
            if let Some(id) = &last_event_id {
                request = request.header(HEADER_LAST_EVENT_ID, id);
            }
            with_headers(request, session_id.as_deref(), &custom_headers)
        };
        let response = self.send(auth_header, build).await?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(err) = auth_failure(&response) {
            return Err(err);
        }
        let response = response
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        let content_type = response.headers().get(CONTENT_TYPE);
        if !media_type_is(content_type, EVENT_STREAM_MIME_TYPE) {
            return Err(StreamableHttpError::UnexpectedContentType(
                content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            ));
        }
        Ok(sse(response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let build = || {
            with_headers(
                self.client.delete(uri.as_ref()),
                Some(&session_id),
                &custom_headers,
            )
        };
        let response = self.send(auth_header, build).await?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        response
            .error_for_status()
            .map_err(StreamableHttpError::Client)?;
        Ok(())
    }

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let body = serde_json::to_vec(&message)?;
        let build = || {
            let request = self
                .client
                .post(uri.as_ref())
                .header(
                    ACCEPT,
                    format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
                )
                .header(CONTENT_TYPE, JSON_MIME_TYPE)
                .body(body.clone());
            with_headers(request, session_id.as_deref(), &custom_headers)
        };
        let had_session = session_id.is_some();
        let response = self.send(auth_header, build).await?;
        if let Some(err) = auth_failure(&response) {
            return Err(err);
        }
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = response.headers().get(CONTENT_TYPE).cloned();
        if !status.is_success() {
            let body = bounded(response, limits.max_error_response_size.max(1024))
                .await
                .unwrap_or_default();
            if let Some(answer) = refused_probe(&message, had_session, status, &body) {
                return Ok(answer);
            }
            if media_type_is(content_type.as_ref(), JSON_MIME_TYPE)
                && let Ok(error @ ServerJsonRpcMessage::Error(_)) =
                    serde_json::from_slice::<ServerJsonRpcMessage>(&body)
            {
                return Ok(StreamableHttpPostResponse::Json(error, session));
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}"),
            )));
        }
        if media_type_is(content_type.as_ref(), EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(sse(response), session));
        }
        if media_type_is(content_type.as_ref(), JSON_MIME_TYPE) {
            let body = bounded(response, limits.max_json_response_size).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                Err(err) => Err(StreamableHttpError::Deserialize(err)),
            };
        }
        if awaits_nothing {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        ))
    }
}
