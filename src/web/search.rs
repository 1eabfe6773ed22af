//! `web_search`'s backends: a SearXNG instance (its JSON API), Brave's and Tavily's search
//! APIs, all through the egress client. The backend URL is trusted (the user configured it),
//! its redirects are checked. Domain filters are applied here, for every backend alike; a
//! backend's failure (429 and its Retry-After, 5xx, an answer that is not the JSON expected)
//! becomes a message saying what happened. The key goes only into the request's header.

use std::time::Instant;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::client::{EgressRequest, Reply, bounded, elapsed_ms};
use super::target::Target;
use super::{EgressError, WebEnv};
use crate::tool_output::{SearchHit, WebSearch};

/// Largest answer read from a backend.
const MAX_ANSWER_BYTES: u64 = 2 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Searxng,
    Brave,
    Tavily,
}

impl Backend {
    pub fn parse(name: &str) -> Result<Backend, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "searxng" => Ok(Backend::Searxng),
            "brave" => Ok(Backend::Brave),
            "tavily" => Ok(Backend::Tavily),
            other => Err(format!(
                "unknown search backend `{other}` (searxng, brave, tavily)"
            )),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Backend::Searxng => "searxng",
            Backend::Brave => "brave",
            Backend::Tavily => "tavily",
        }
    }
    /// The API endpoint when the config names none (SearXNG has no default: it is yours).
    pub fn default_url(self) -> Option<&'static str> {
        match self {
            Backend::Searxng => None,
            Backend::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            Backend::Tavily => Some("https://api.tavily.com/search"),
        }
    }
    /// The variable the key is read from when `api_key_env` names none.
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            Backend::Searxng => None,
            Backend::Brave => Some("BRAVE_API_KEY"),
            Backend::Tavily => Some("TAVILY_API_KEY"),
        }
    }
}

/// `[web.search]` resolved. The key and the password are held here and never printed
/// (`Debug` hides them); `url` is without the user name and password the config gave it.
#[derive(Clone, PartialEq, Eq)]
pub struct SearchSettings {
    pub backend: Backend,
    pub url: String,
    pub key_env: Option<String>,
    pub api_key: Option<String>,
    /// The user name and password of the configured URL (an instance behind basic auth),
    /// sent as `Authorization: Basic` to that origin only.
    pub basic_auth: Option<(String, String)>,
}

impl std::fmt::Debug for SearchSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchSettings")
            .field("backend", &self.backend)
            .field("url", &self.url)
            .field("key_env", &self.key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "[hidden]"))
            .field(
                "basic_auth",
                &self.basic_auth.as_ref().map(|(user, _)| (user, "[hidden]")),
            )
            .finish()
    }
}

/// Splits the user name and password out of a backend URL the user configured: the URL
/// without them, and them percent-decoded. Only the user's own config gets this; a URL the
/// model sends with credentials is still refused (`EgressError::Credentials`).
pub fn split_credentials(raw: &str) -> Result<(String, Option<(String, String)>), String> {
    let mut url = url::Url::parse(raw).map_err(|err| err.to_string())?;
    if url.username().is_empty() && url.password().is_none() {
        return Ok((raw.to_string(), None));
    }
    let decode = |text: &str| {
        String::from_utf8(percent_decode(text))
            .map_err(|_| "the user name or password is not UTF-8 once decoded".to_string())
    };
    let user = decode(url.username())?;
    let password = decode(url.password().unwrap_or(""))?;
    if user.contains(':') {
        return Err("a user name for basic auth cannot hold ':'".into());
    }
    // Both always succeed on a URL with a host (http and https, checked after).
    let _ = url.set_username("");
    let _ = url.set_password(None);
    Ok((url.to_string(), Some((user, password))))
}

/// `%XX` undone (the URL parser leaves the user name and password encoded).
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    out
}

/// The `Authorization` value of basic auth (RFC 7617, UTF-8).
fn basic_header(user: &str, password: &str) -> String {
    use base64::Engine as _;
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

/// What the model asked for.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub query: String,
    pub max_results: usize,
    pub allowed_domains: Vec<String>,
    pub blocked_domains: Vec<String>,
}

/// Runs `query` against the configured backend and filters the hits.
pub async fn search(
    env: &WebEnv,
    settings: &SearchSettings,
    query: &Query,
    cancel: &CancellationToken,
) -> Result<WebSearch, String> {
    let started = Instant::now();
    let request = request_for(settings, query).map_err(|err| err.to_string())?;
    let shown = format!(
        "the {} backend at {}",
        settings.backend.name(),
        host_of(&settings.url)
    );
    let work = async {
        let opened = match env.client.send(&request, &|_| true).await? {
            Reply::Response(opened) => opened,
            // Every redirect is accepted above; this cannot come back.
            Reply::Unfollowed { to, .. } => {
                return Err(EgressError::Http {
                    url: to.url.to_string(),
                    why: "a redirect was not followed".into(),
                });
            }
        };
        let status = opened.status;
        let retry_after = opened.retry_after.clone();
        let body = opened.read_body(MAX_ANSWER_BYTES).await?;
        Ok((status, retry_after, body.bytes))
    };
    let (status, retry_after, body) =
        bounded(work, env.settings.timeout, cancel)
            .await
            .map_err(|err| match err {
                EgressError::Cancelled => err.to_string(),
                other => format!("{shown} could not be reached: {other}"),
            })?;
    if let Some(problem) = status_problem(status, retry_after.as_deref()) {
        return Err(format!("{shown} {problem}"));
    }
    let value: Value = serde_json::from_slice(&body).map_err(|err| {
        format!("{shown} answered with something that is not JSON ({err}); check [web.search] url")
    })?;
    let hits = parse_hits(settings.backend, &value).ok_or_else(|| {
        format!(
            "{shown} answered JSON without a result list; check that [web.search] url is its search API"
        )
    })?;
    let found = hits.len();
    let hits: Vec<SearchHit> = hits
        .into_iter()
        .filter(|hit| passes(&hit.url, &query.allowed_domains, &query.blocked_domains))
        .collect();
    let filtered = found - hits.len();
    Ok(WebSearch {
        query: query.query.clone(),
        backend: settings.backend.name().into(),
        hits: hits.into_iter().take(query.max_results).collect(),
        filtered,
        duration_ms: elapsed_ms(started),
    })
}

fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| url.to_string())
}

/// The backend is asked for more than the model wants, so filtering still leaves enough.
fn asked_count(query: &Query) -> usize {
    (query.max_results * 2).clamp(10, 20)
}

fn request_for(settings: &SearchSettings, query: &Query) -> Result<EgressRequest, EgressError> {
    let mut url = url::Url::parse(&settings.url).map_err(|err| EgressError::BadUrl {
        url: settings.url.clone(),
        why: err.to_string(),
    })?;
    let count = asked_count(query).to_string();
    let mut headers: Vec<(&'static str, String)> = vec![("Accept", "application/json".into())];
    if let Some((user, password)) = &settings.basic_auth {
        headers.push(("Authorization", basic_header(user, password)));
    }
    let mut json_body = None;
    match settings.backend {
        Backend::Searxng => {
            if !url.path().trim_end_matches('/').ends_with("/search") {
                let path = format!("{}/search", url.path().trim_end_matches('/'));
                url.set_path(&path);
            }
            url.query_pairs_mut()
                .append_pair("q", &query.query)
                .append_pair("format", "json");
        }
        Backend::Brave => {
            url.query_pairs_mut()
                .append_pair("q", &query.query)
                .append_pair("count", &count);
            if let Some(key) = &settings.api_key {
                headers.push(("X-Subscription-Token", key.clone()));
            }
        }
        Backend::Tavily => {
            json_body = Some(
                json!({"query": query.query, "max_results": asked_count(query)})
                    .to_string()
                    .into_bytes(),
            );
            // A configured basic auth keeps its header (the config refuses both).
            if let (Some(key), None) = (&settings.api_key, &settings.basic_auth) {
                headers.push(("Authorization", format!("Bearer {key}")));
            }
        }
    }
    Ok(EgressRequest {
        target: Target::from_url(url)?,
        json_body,
        headers,
        trusted: true,
    })
}

/// What a status other than success means for the user.
fn status_problem(status: u16, retry_after: Option<&str>) -> Option<String> {
    match status {
        200..=299 => None,
        429 => Some(match retry_after {
            Some(wait) => format!(
                "refused the search: too many requests (429); it asks to wait {} before searching again",
                wait_text(wait)
            ),
            None => {
                "refused the search: too many requests (429); wait a little before searching again"
                    .into()
            }
        }),
        401 | 403 => Some(format!(
            "refused the key ({status}); check the variable [web.search] api_key_env names"
        )),
        500..=599 => Some(format!(
            "failed with a server error ({status}); the search service may be down, try again later"
        )),
        other => Some(format!("answered {other} instead of results")),
    }
}

/// `Retry-After` as seconds or an HTTP date, said plainly.
fn wait_text(value: &str) -> String {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return format!("{secs} s");
    }
    match httpdate::parse_http_date(value) {
        Ok(when) => {
            let secs = when
                .duration_since(std::time::SystemTime::now())
                .map_or(0, |d| d.as_secs());
            format!("{secs} s (until {value})")
        }
        Err(_) => value.to_string(),
    }
}

fn parse_hits(backend: Backend, value: &Value) -> Option<Vec<SearchHit>> {
    let (list, snippet_key) = match backend {
        Backend::Searxng | Backend::Tavily => (value.get("results")?, "content"),
        Backend::Brave => (value.get("web")?.get("results")?, "description"),
    };
    let text = |item: &Value, key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Some(
        list.as_array()?
            .iter()
            .filter(|item| item.get("url").and_then(Value::as_str).is_some())
            .map(|item| SearchHit {
                title: text(item, "title"),
                url: text(item, "url"),
                snippet: strip_tags(&text(item, snippet_key)),
            })
            .collect(),
    )
}

/// Brave marks matches with `<strong>`: the model wants the words.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// A domain filter entry matches its host and every host below it (`example.org` matches
/// `docs.example.org`, not `badexample.org`).
fn domain_matches(host: &str, domain: &str) -> bool {
    let domain = domain
        .trim()
        .trim_start_matches("*.")
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let domain = domain
        .split("://")
        .last()
        .unwrap_or(&domain)
        .split('/')
        .next()
        .unwrap_or_default();
    !domain.is_empty()
        && (host == domain
            || host
                .strip_suffix(domain)
                .is_some_and(|rest| rest.ends_with('.')))
}

/// Whether a hit's URL passes the filters: blocked domains removed, and when allowed domains
/// are given, only those kept. A hit without a parsable host never passes.
pub fn passes(url: &str, allowed: &[String], blocked: &[String]) -> bool {
    let Ok(target) = Target::parse(url) else {
        return false;
    };
    let host = target.host.as_str();
    if blocked.iter().any(|d| domain_matches(host, d)) {
        return false;
    }
    allowed.is_empty() || allowed.iter().any(|d| domain_matches(host, d))
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
