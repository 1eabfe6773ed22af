//! The egress client: every hop is checked (`egress`), then sent by a client whose resolver
//! answers only the checked addresses (`Pinned`), so a DNS answer that changes between check
//! and connect cannot win. Redirects are followed by hand (at most `MAX_REDIRECTS`, each hop
//! checked again, https→http refused); a redirect the caller does not want followed comes back
//! unfollowed with its target. Bodies stop at a byte cap; the whole exchange is bounded by a
//! timeout and the call's cancellation token. TLS roots and proxies come from the `HttpStack`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::EgressError;
use super::egress::{EgressPolicy, Route};
use super::resolve::Resolve;
use super::target::Target;

/// At most this many redirects are followed for one request.
pub const MAX_REDIRECTS: usize = 5;

/// Where clients get their TLS roots and proxies: the one HTTP stack cairn builds at launch.
pub trait HttpStack: Send + Sync {
    /// A builder with the stack's roots, proxies and timeouts; the egress client adds its own
    /// resolver and turns automatic redirects off.
    fn builder(&self) -> reqwest::ClientBuilder;
    /// Whether a request to `url` goes through a proxy that resolves names itself.
    fn route(&self, url: &url::Url) -> Route;
    /// The host of the proxy a request to `url` goes through: the one other name a hop's
    /// client may resolve (normally: the user configured it).
    fn proxy_host(&self, _url: &url::Url) -> Option<String> {
        None
    }
    /// A failed request explained for the party that failed (the proxy, the certificate, the
    /// server), when the stack knows more than reqwest's text.
    fn explain(&self, _url: &url::Url, _error: &reqwest::Error) -> Option<String> {
        None
    }
}

/// reqwest's defaults without any proxy: for tests and tools that run before the stack exists.
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectStack;

impl HttpStack for DirectStack {
    fn builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder().no_proxy()
    }
    fn route(&self, _url: &url::Url) -> Route {
        Route::Direct
    }
}

/// One request through the egress client.
#[derive(Debug, Clone)]
pub struct EgressRequest {
    pub target: Target,
    /// `None` is GET; `Some(body)` a POST of JSON (search backends).
    pub json_body: Option<Vec<u8>>,
    pub headers: Vec<(&'static str, String)>,
    /// An endpoint the user configured (a search backend): its first hop is not judged by
    /// address, its redirects are.
    pub trusted: bool,
}

impl EgressRequest {
    pub fn get(target: Target) -> Self {
        Self {
            target,
            json_body: None,
            headers: Vec::new(),
            trusted: false,
        }
    }
}

/// A redirect seen on the way.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hop {
    pub status: u16,
    pub from: String,
    pub to: String,
}

/// What a request came to.
#[derive(Debug)]
pub enum Reply {
    /// A response whose body is read with `read_body`.
    Response(Box<Opened>),
    /// A redirect the caller did not let the client follow; `to` is its target.
    Unfollowed { hops: Vec<Hop>, to: Target },
}

/// A response with its headers read.
#[derive(Debug)]
pub struct Opened {
    pub final_target: Target,
    pub status: u16,
    pub content_type: Option<String>,
    pub content_length: Option<u64>,
    /// The `Retry-After` header, as sent.
    pub retry_after: Option<String>,
    pub hops: Vec<Hop>,
    response: reqwest::Response,
}

/// A body read up to the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub bytes: Vec<u8>,
    /// The cap was reached: the rest was never downloaded (the connection was dropped).
    pub capped: bool,
}

impl Opened {
    /// Reads the body, stopping at `max_bytes`: the connection is dropped there, so nothing
    /// beyond the cap is downloaded.
    pub async fn read_body(mut self: Box<Self>, max_bytes: u64) -> Result<Body, EgressError> {
        let url = self.final_target.url.to_string();
        let mut bytes = Vec::new();
        let cap = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        while let Some(chunk) = self
            .response
            .chunk()
            .await
            .map_err(|err| http_error(&url, &err))?
        {
            let room = cap.saturating_sub(bytes.len());
            if chunk.len() > room {
                bytes.extend_from_slice(&chunk[..room]);
                return Ok(Body {
                    bytes,
                    capped: true,
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Body {
            bytes,
            capped: false,
        })
    }
}

/// The egress client: the policy, the resolver and the stack, shared by every network tool.
#[derive(Clone)]
pub struct EgressClient {
    policy: EgressPolicy,
    resolver: Arc<dyn Resolve>,
    stack: Arc<dyn HttpStack>,
}

impl std::fmt::Debug for EgressClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EgressClient")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl EgressClient {
    pub fn new(
        policy: EgressPolicy,
        resolver: Arc<dyn Resolve>,
        stack: Arc<dyn HttpStack>,
    ) -> Self {
        Self {
            policy,
            resolver,
            stack,
        }
    }

    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    /// Sends `request`, following redirects that `follow` accepts (it sees each next
    /// target after it passed the https→http rule, before it is resolved or contacted).
    pub async fn send(
        &self,
        request: &EgressRequest,
        follow: &(dyn Fn(&Target) -> bool + Send + Sync),
    ) -> Result<Reply, EgressError> {
        let mut target = request.target.clone();
        let mut hops: Vec<Hop> = Vec::new();
        loop {
            let route = self.stack.route(&target.url);
            let trusted = request.trusted && hops.is_empty();
            let addrs = self
                .policy
                .check(&target, self.resolver.as_ref(), route, trusted)
                .await?;
            let response = self.send_hop(request, &target, addrs).await?;
            let status = response.status();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string);
            let Some(location) = location.filter(|_| status.is_redirection()) else {
                return Ok(Reply::Response(Box::new(opened(target, hops, response))));
            };
            let next = next_hop(&target, &location, hops.len())?;
            hops.push(Hop {
                status: status.as_u16(),
                from: target.url.to_string(),
                to: next.url.to_string(),
            });
            if !follow(&next) {
                return Ok(Reply::Unfollowed { hops, to: next });
            }
            target = next;
        }
    }

    async fn send_hop(
        &self,
        request: &EgressRequest,
        target: &Target,
        addrs: Vec<IpAddr>,
    ) -> Result<reqwest::Response, EgressError> {
        let url = target.url.to_string();
        let pinned = Pinned {
            host: target.host.clone(),
            addrs,
            proxy_host: self.stack.proxy_host(&target.url).map(|h| normal_name(&h)),
        };
        let client = self
            .stack
            .builder()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(pinned))
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| http_error(&url, &err))?;
        // A redirect of a POST is followed as a GET (303 semantics); search backends do not
        // redirect their API calls in practice.
        let mut builder = match (&request.json_body, target == &request.target) {
            (Some(body), true) => client
                .post(target.url.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone()),
            _ => client.get(target.url.clone()),
        };
        // Credentials go only to the origin they were meant for: a redirect to another host,
        // port or scheme gets the request without them.
        let same_origin = target.url.origin() == request.target.url.origin();
        for (name, value) in &request.headers {
            if same_origin || !is_credential(name) {
                builder = builder.header(*name, value);
            }
        }
        builder
            .send()
            .await
            .map_err(|err| match self.stack.explain(&target.url, &err) {
                Some(why) => EgressError::Http {
                    url: url.clone(),
                    why,
                },
                None => http_error(&url, &err),
            })
    }
}

/// Headers that carry a credential (never sent past a redirect to another origin).
pub fn is_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "authorization" | "proxy-authorization" | "cookie" | "x-subscription-token"
    ) || name.contains("api-key")
        || name.contains("apikey")
        || name.contains("token")
        || name.contains("secret")
}

/// Where a redirect from `current` to `location` leads, after `done` redirects so far:
/// https→http and more than `MAX_REDIRECTS` are refused.
pub fn next_hop(current: &Target, location: &str, done: usize) -> Result<Target, EgressError> {
    let next = current.join(location)?;
    if current.is_https() && !next.is_https() {
        return Err(EgressError::Downgrade {
            from: current.url.to_string(),
            to: next.url.to_string(),
        });
    }
    if done >= MAX_REDIRECTS {
        return Err(EgressError::TooManyRedirects {
            max: MAX_REDIRECTS,
            to: next.url.to_string(),
        });
    }
    Ok(next)
}

fn opened(final_target: Target, hops: Vec<Hop>, response: reqwest::Response) -> Opened {
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    Opened {
        status: response.status().as_u16(),
        content_type: header(reqwest::header::CONTENT_TYPE),
        content_length: header(reqwest::header::CONTENT_LENGTH).and_then(|v| v.parse().ok()),
        retry_after: header(reqwest::header::RETRY_AFTER),
        final_target,
        hops,
        response,
    }
}

/// A library error as one line: what failed, then its causes.
fn http_error(url: &str, err: &reqwest::Error) -> EgressError {
    let mut why = if err.is_connect() {
        "could not connect".to_string()
    } else if err.is_body() || err.is_decode() {
        "the connection broke while reading the page".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        why.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    EgressError::Http {
        url: url.to_string(),
        why,
    }
}

/// Runs `work` within `timeout` unless `cancel` fires first.
pub async fn bounded<T>(
    work: impl Future<Output = Result<T, EgressError>>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<T, EgressError> {
    tokio::select! {
        result = tokio::time::timeout(timeout, work) => result.unwrap_or(Err(EgressError::Timeout {
            secs: timeout.as_secs().max(1),
        })),
        () = cancel.cancelled() => Err(EgressError::Cancelled),
    }
}

/// How long something took, in milliseconds.
pub fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The resolver of one hop's client: the checked addresses for the checked host and nothing
/// else, so the connection goes exactly where the check looked (also through a `socks5://`
/// proxy, which is handed what this resolves). The proxy's own name is resolved normally (the
/// user configured it); any other name is refused.
struct Pinned {
    host: String,
    addrs: Vec<IpAddr>,
    proxy_host: Option<String>,
}

fn normal_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl reqwest::dns::Resolve for Pinned {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let asked = normal_name(name.as_str());
        let pinned = (asked == self.host).then(|| self.addrs.clone());
        let is_proxy = self.proxy_host.as_deref() == Some(asked.as_str());
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = match pinned {
                Some(addrs) if !addrs.is_empty() => {
                    addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect()
                }
                _ if is_proxy => tokio::net::lookup_host((asked.as_str(), 0))
                    .await?
                    .collect(),
                _ => return Err(refused_lookup(&asked)),
            };
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Said by `Pinned` when a name it was not given is asked for.
pub const UNCHECKED_NAME: &str = "was not checked by the egress policy";

fn refused_lookup(name: &str) -> Box<dyn std::error::Error + Send + Sync> {
    format!("{name} {UNCHECKED_NAME}").into()
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
