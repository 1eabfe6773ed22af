//! The web: one egress client for every request cairn makes on a tool's behalf (web_fetch,
//! web_search, MCP over HTTP next). `target` parses and normalises URLs, `address` judges IP
//! addresses, `egress` resolves and checks a host, `client` connects only to checked addresses
//! and follows redirects by hand, `page` turns what came back into text for the model,
//! `search` talks to the configured search backend. The tools (`tools::web_fetch`,
//! `tools::web_search`) and the permission gate (per host) sit on top.

pub mod address;
pub mod cache;
pub mod client;
pub mod convert;
pub mod egress;
pub mod fetch;
pub mod html_scan;
pub mod page;
pub mod resolve;
pub mod search;
pub mod stack;
pub mod target;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// What stops a request before or while it runs. Messages say what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    #[error("`{url}` is not a URL cairn can fetch ({why})")]
    BadUrl { url: String, why: String },
    #[error("`{url}`: only http and https URLs are fetched")]
    Scheme { url: String },
    #[error("URLs with a user name or password are not fetched; send the URL without them")]
    Credentials,
    #[error(
        "{host} resolves to {addr}, {why}; the web tools do not reach local or private \
         addresses. A server of your own can be allowed by adding \"{host_port}\" to \
         [web] allow_private in the config"
    )]
    Refused {
        host: String,
        host_port: String,
        addr: IpAddr,
        why: String,
    },
    #[error("could not resolve {host}: {why}")]
    Resolve { host: String, why: String },
    #[error("{from} redirected to {to}: a redirect from https to plain http is not followed")]
    Downgrade { from: String, to: String },
    #[error(
        "more than {max} redirects, the last to {to}; fetch that URL directly if it is the one you want"
    )]
    TooManyRedirects { max: usize, to: String },
    #[error("{url}: {why}")]
    Http { url: String, why: String },
    #[error("no answer within {secs} s (`[web] timeout_secs`); the site may be slow or down")]
    Timeout { secs: u64 },
    #[error("{}", crate::tool_output::CANCELLED)]
    Cancelled,
    #[error(
        "{url} is {content_type} ({size}), not text; web_fetch reads web pages and other text \
         (a PDF or an image cannot be read this way)"
    )]
    NotText {
        url: String,
        content_type: String,
        size: String,
    },
}

/// `[web]` as resolved from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSettings {
    /// Exact `host:port` pairs whose local or private addresses may be fetched.
    pub allow_private: Vec<String>,
    /// Host rules (`docs.rs`, `*.example.org`): fetched without asking / never fetched.
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// The download of one page stops here.
    pub max_bytes: u64,
    /// The whole fetch (every redirect and the body) must finish within this.
    pub timeout: Duration,
    /// The search backend; none: `web_search` is not offered.
    pub search: Option<search::SearchSettings>,
}

pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

impl Default for WebSettings {
    fn default() -> Self {
        Self {
            allow_private: Vec::new(),
            allow: Vec::new(),
            deny: Vec::new(),
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            search: None,
        }
    }
}

/// What the web tools of one session share: the egress client, the settings and the pages
/// fetched so far (so `offset` continues from the copy, never a new download).
#[derive(Debug)]
pub struct WebEnv {
    pub client: client::EgressClient,
    pub settings: WebSettings,
    pub pages: cache::PageCache,
}

impl WebEnv {
    /// The web tools with `settings`, resolving names with `resolver` and connecting through
    /// `stack`. A malformed `allow_private` entry is an error naming it.
    pub fn new(
        settings: WebSettings,
        resolver: Arc<dyn resolve::Resolve>,
        stack: Arc<dyn client::HttpStack>,
    ) -> Result<Arc<WebEnv>, String> {
        let policy = egress::EgressPolicy::new(&settings.allow_private)
            .map_err(|err| format!("[web] allow_private: {err}"))?;
        Ok(Arc::new(WebEnv {
            client: client::EgressClient::new(policy, resolver, stack),
            settings,
            pages: cache::PageCache::default(),
        }))
    }

    /// The same client and settings with an empty page cache, for a new session.
    pub fn fresh(&self) -> Arc<WebEnv> {
        Arc::new(WebEnv {
            client: self.client.clone(),
            settings: self.settings.clone(),
            pages: cache::PageCache::default(),
        })
    }
}
