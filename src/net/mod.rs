//! The one HTTP stack: every request cairn makes (the model client, context-window discovery,
//! the web and MCP clients) goes through a `reqwest::Client` built from one `Network`, made once
//! at launch from `[network]` and the environment. It fixes what all of them must agree on:
//! the certificates trusted (`roots`: bundled + system + the user's CAs, checked by a verifier
//! that names the untrusted issuer, `verify`), the proxy of each URL (`proxy`: credentials kept
//! out of every text, loopback always direct), the connect timeout, and how a failure is named
//! and whether it is worth another attempt (`failure`). A client that needs its own resolver or
//! redirect policy (the web tools) starts from `Network::builder` and adds them.
//!
//! reqwest stays on 0.12: 0.13's rustls default brings aws-lc-rs (a C build) and the platform
//! verifier, where cairn configures rustls itself with ring; reqwest is named only here and in
//! the clients' request code, so moving (for rmcp) is a change of this module.

pub mod failure;
pub mod proxy;
pub mod roots;
pub mod verify;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;

pub use failure::{FailureKind, NetFailure};
pub use proxy::{ProxyRules, ProxyTarget, is_loopback_host};
pub use roots::CaSources;

/// A TCP + TLS handshake slower than this means the host is unreachable.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a remote server may take to start answering. A local server (loopback) has no
/// such limit by default: a model loading or thinking on a CPU is slow, not dead.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("the proxy in {variable} ({shown}) is not a valid proxy URL: {reason}")]
    BadProxy {
        variable: String,
        shown: String,
        reason: String,
    },
    #[error("[network] ca_file {}: {reason}", path.display())]
    CaFile { path: PathBuf, reason: String },
    #[error("could not set up TLS: {0}")]
    Tls(String),
    #[error("could not set up the HTTP client: {0}")]
    Client(String),
}

/// The `[network]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// PEM file(s) of CAs to trust besides the bundled and system ones.
    pub ca_file: Option<OneOrMany>,
    /// A proxy for every request, over `HTTPS_PROXY` and friends.
    pub proxy: Option<String>,
    /// Hosts reached directly, over `NO_PROXY`.
    pub no_proxy: Option<String>,
    /// Longest wait for a remote server to start answering; 0 for none.
    pub first_byte_timeout_secs: Option<u64>,
    /// The same for servers on loopback; absent or 0 for none.
    pub local_first_byte_timeout_secs: Option<u64>,
    pub connect_timeout_secs: Option<u64>,
}

/// `ca_file = "a.pem"` or `ca_file = ["a.pem", "b.pem"]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

impl OneOrMany {
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            OneOrMany::One(path) => vec![path.clone()],
            OneOrMany::Many(paths) => paths.clone(),
        }
    }
}

impl NetworkFile {
    /// Later layers win key by key.
    pub fn merge(self, over: NetworkFile) -> NetworkFile {
        NetworkFile {
            ca_file: over.ca_file.or(self.ca_file),
            proxy: over.proxy.or(self.proxy),
            no_proxy: over.no_proxy.or(self.no_proxy),
            first_byte_timeout_secs: over
                .first_byte_timeout_secs
                .or(self.first_byte_timeout_secs),
            local_first_byte_timeout_secs: over
                .local_first_byte_timeout_secs
                .or(self.local_first_byte_timeout_secs),
            connect_timeout_secs: over.connect_timeout_secs.or(self.connect_timeout_secs),
        }
    }
}

/// Everything the stack is built from.
#[derive(Debug, Clone)]
pub struct NetworkSettings {
    pub ca: CaSources,
    pub proxy: ProxyRules,
    pub connect_timeout: Duration,
    /// For remote servers; `None`: no limit but the request's own.
    pub first_byte_timeout: Option<Duration>,
    /// For servers on loopback.
    pub local_first_byte_timeout: Option<Duration>,
}

impl Default for NetworkSettings {
    /// Bundled and system roots, no proxy: what a test or a tool without configuration gets.
    fn default() -> Self {
        NetworkSettings {
            ca: CaSources {
                system: true,
                ..CaSources::default()
            },
            proxy: ProxyRules::default(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: Some(DEFAULT_FIRST_BYTE_TIMEOUT),
            local_first_byte_timeout: None,
        }
    }
}

impl NetworkSettings {
    /// From `[network]` and the environment. `env` is `secrets::var` in cairn (it still has
    /// the proxy variables the scrubber took away); tests pass their own.
    pub fn from_config(
        file: &NetworkFile,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<NetworkSettings, NetError> {
        let ca_files = file
            .ca_file
            .as_ref()
            .map(OneOrMany::paths)
            .unwrap_or_default();
        let secs = |s: u64| (s > 0).then(|| Duration::from_secs(s));
        Ok(NetworkSettings {
            ca: CaSources::from_env(ca_files.iter().map(|p| expand_home(p, env)).collect(), env),
            proxy: ProxyRules::from_sources(file.proxy.as_deref(), file.no_proxy.as_deref(), env)?,
            connect_timeout: file
                .connect_timeout_secs
                .and_then(secs)
                .unwrap_or(DEFAULT_CONNECT_TIMEOUT),
            first_byte_timeout: match file.first_byte_timeout_secs {
                Some(s) => secs(s),
                None => Some(DEFAULT_FIRST_BYTE_TIMEOUT),
            },
            local_first_byte_timeout: file.local_first_byte_timeout_secs.and_then(secs),
        })
    }
}

fn expand_home(path: &std::path::Path, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    match (path.strip_prefix("~"), env("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

/// The stack: cheap to clone, shared by every client.
#[derive(Clone)]
pub struct Network {
    inner: Arc<NetworkInner>,
}

struct NetworkInner {
    tls: rustls::ClientConfig,
    ca: CaSources,
    proxy: Arc<ProxyRules>,
    connect_timeout: Duration,
    first_byte_timeout: Option<Duration>,
    local_first_byte_timeout: Option<Duration>,
    warnings: Vec<String>,
    client: reqwest::Client,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("proxy", &self.inner.proxy)
            .field("connect_timeout", &self.inner.connect_timeout)
            .field("first_byte_timeout", &self.inner.first_byte_timeout)
            .finish_non_exhaustive()
    }
}

impl Network {
    pub fn new(settings: NetworkSettings) -> Result<Network, NetError> {
        let roots = roots::load(&settings.ca)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots.store),
            Arc::clone(&provider),
        )
        .build()
        .map_err(|e| NetError::Tls(e.to_string()))?;
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| NetError::Tls(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verify::NamingVerifier::new(webpki)))
            .with_no_client_auth();
        // The passwords of proxies are secrets like the provider key: redacted wherever they
        // would show up in a tool's output.
        for target in settings.proxy.all_targets() {
            if let Some(password) = target.password().filter(|p| !p.is_empty()) {
                crate::secrets::remember(&format!("{} password", target.source), &password);
            }
        }
        let proxy = Arc::new(settings.proxy);
        let client = base_builder(&tls, &proxy, settings.connect_timeout)
            .build()
            .map_err(|e| NetError::Client(failure::chain_text(&e)))?;
        Ok(Network {
            inner: Arc::new(NetworkInner {
                tls,
                ca: settings.ca,
                proxy,
                connect_timeout: settings.connect_timeout,
                first_byte_timeout: settings.first_byte_timeout,
                local_first_byte_timeout: settings.local_first_byte_timeout,
                warnings: roots.warnings,
                client,
            }),
        })
    }

    /// The shared client: bundled + system + user roots, the proxies, the connect timeout,
    /// cairn's user agent, redirects as reqwest follows them.
    pub fn client(&self) -> reqwest::Client {
        self.inner.client.clone()
    }

    /// A builder with the same roots, proxies and connect timeout, for a client that needs its
    /// own resolver (`dns_resolver`), redirect policy or timeouts.
    pub fn builder(&self) -> reqwest::ClientBuilder {
        base_builder(
            &self.inner.tls,
            &self.inner.proxy,
            self.inner.connect_timeout,
        )
    }

    /// The proxy a request to `url` goes through, if any.
    pub fn proxy_for(&self, url: &Url) -> Option<&ProxyTarget> {
        self.inner.proxy.for_url(url)
    }

    /// Where the trusted certificates come from (for the commands' CA bundle).
    pub fn ca_sources(&self) -> &CaSources {
        &self.inner.ca
    }

    pub fn proxies(&self) -> &ProxyRules {
        &self.inner.proxy
    }

    /// How long a server at `url` may take to start answering (`None`: no limit of its own).
    pub fn first_byte_timeout(&self, url: &Url) -> Option<Duration> {
        if url.host_str().is_some_and(is_loopback_host) {
            self.inner.local_first_byte_timeout
        } else {
            self.inner.first_byte_timeout
        }
    }

    /// Problems with `SSL_CERT_FILE` / `SSL_CERT_DIR`, for the user to hear about at start.
    pub fn warnings(&self) -> &[String] {
        &self.inner.warnings
    }

    /// What went wrong with a request to `url`, named for the party that failed.
    pub fn explain(&self, url: &Url, error: &reqwest::Error) -> NetFailure {
        failure::explain(url, self.proxy_for(url), error)
    }
}

fn base_builder(
    tls: &rustls::ClientConfig,
    proxy: &Arc<ProxyRules>,
    connect_timeout: Duration,
) -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder()
        .use_preconfigured_tls(tls.clone())
        .connect_timeout(connect_timeout)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")));
    if proxy.is_empty() {
        // Not even reqwest's own reading of the environment: the rules above are the only ones.
        return builder.no_proxy();
    }
    let rules = Arc::clone(proxy);
    builder.proxy(reqwest::Proxy::custom(move |url| {
        rules.for_url(url).map(|target| target.url().clone())
    }))
}

#[cfg(test)]
#[path = "net_tests.rs"]
mod tests;
