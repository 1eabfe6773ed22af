//! The few request shapes OAuth needs, on the run's HTTP stack (`net::Network`: its proxies,
//! its CAs, its connect timeout): a JSON document fetched, a form or JSON posted and its JSON
//! answer read, bounded in size. A failure names the URL and what the stack says about it.

use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::de::DeserializeOwned;

use super::OAuthError;
use crate::net::Network;

/// The most a metadata document or token answer may hold.
const MAX_BODY: usize = 256 * 1024;
/// The longest one OAuth request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// An answer: its status and body.
pub(super) struct FetchAnswer {
    pub status: reqwest::StatusCode,
    pub body: Vec<u8>,
}

impl FetchAnswer {
    pub fn json<T: DeserializeOwned>(&self, url: &url::Url, what: &str) -> Result<T, OAuthError> {
        serde_json::from_slice(&self.body).map_err(|err| OAuthError::Invalid {
            what: format!("{what} at {url}"),
            why: err.to_string(),
        })
    }

    /// The OAuth error of a refused request (`error`, `error_description`), else the status.
    pub fn refusal(&self) -> String {
        #[derive(serde::Deserialize)]
        struct OAuthRefusal {
            error: String,
            error_description: Option<String>,
        }
        let text = match serde_json::from_slice::<OAuthRefusal>(&self.body) {
            Ok(OAuthRefusal {
                error,
                error_description: Some(description),
            }) => format!("{error} ({description})"),
            Ok(OAuthRefusal { error, .. }) => error,
            Err(_) => format!("HTTP {}", self.status),
        };
        crate::secrets::redact(&text).into_owned()
    }
}

pub(super) async fn get(network: &Network, url: &url::Url) -> Result<FetchAnswer, OAuthError> {
    let request = network
        .client()
        .get(url.clone())
        .header(ACCEPT, "application/json");
    send(network, url, request).await
}

pub(super) async fn post_form(
    network: &Network,
    url: &url::Url,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Result<FetchAnswer, OAuthError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let mut request = network
        .client()
        .post(url.clone())
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body);
    if let Some((user, password)) = basic {
        request = request.basic_auth(user, Some(password));
    }
    send(network, url, request).await
}

pub(super) async fn post_json(
    network: &Network,
    url: &url::Url,
    body: &serde_json::Value,
) -> Result<FetchAnswer, OAuthError> {
    let request = network
        .client()
        .post(url.clone())
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    send(network, url, request).await
}

async fn send(
    network: &Network,
    url: &url::Url,
    request: reqwest::RequestBuilder,
) -> Result<FetchAnswer, OAuthError> {
    let failed = |err: &reqwest::Error| OAuthError::Request {
        url: url.to_string(),
        why: network.explain(url, err).to_string(),
    };
    let response = request
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|err| failed(&err))?;
    let status = response.status();
    let too_big = || OAuthError::Request {
        url: url.to_string(),
        why: format!("the answer is larger than {MAX_BODY} bytes"),
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY as u64)
    {
        return Err(too_big());
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| failed(&err))?;
        if body.len() + chunk.len() > MAX_BODY {
            return Err(too_big());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(FetchAnswer { status, body })
}
