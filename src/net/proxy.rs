//! Which proxy a request goes through: `[network] proxy` first, else `HTTPS_PROXY` /
//! `HTTP_PROXY` / `ALL_PROXY` (either case), minus `NO_PROXY`, and never for loopback. The
//! variables are read through `secrets::var`, which still holds the ones the start-up scrubber
//! took out of the environment (a proxy URL with a password looks like a secret, and is one).
//! A proxy is only ever shown as `scheme://host:port`: its credentials go to reqwest and to the
//! redaction list, nowhere else.

use std::net::IpAddr;

use reqwest::Url;

use super::NetError;

/// One proxy, parsed and checked at start-up.
#[derive(Clone)]
pub struct ProxyTarget {
    /// The full URL, credentials included: only reqwest sees it.
    url: Url,
    /// Where it was configured (`HTTPS_PROXY`, `[network] proxy`), for error texts.
    pub source: String,
    /// Whether the URL carries a user name or password.
    pub has_credentials: bool,
}

impl std::fmt::Debug for ProxyTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyTarget")
            .field("proxy", &self.shown())
            .field("source", &self.source)
            .field("has_credentials", &self.has_credentials)
            .finish()
    }
}

impl ProxyTarget {
    /// `scheme://host:port`, what error texts name (never the credentials).
    pub fn shown(&self) -> String {
        format!("{}://{}", self.url.scheme(), self.host_port())
    }

    /// `host:port` of the proxy.
    pub fn host_port(&self) -> String {
        let host = self.url.host_str().unwrap_or("?");
        match self.url.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => format!("{host}:{}", default_port(self.url.scheme())),
        }
    }

    /// The proxy's host name or address (no credentials).
    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or_default()
    }

    /// True for `socks5h://` and `socks4a://`: names are resolved by the proxy.
    pub fn resolves_names(&self) -> bool {
        matches!(self.url.scheme(), "socks5h" | "socks4a")
    }

    pub fn is_socks(&self) -> bool {
        self.url.scheme().starts_with("socks")
    }

    /// The URL with its credentials, for the one place that may see them: the environment of
    /// a command whose `pass_env` lists the variable.
    pub fn secret_url(&self) -> String {
        self.url.to_string().trim_end_matches('/').to_string()
    }

    /// The URL for reqwest, credentials included.
    pub(super) fn url(&self) -> &Url {
        &self.url
    }

    /// The password, for the redaction list.
    pub(super) fn password(&self) -> Option<String> {
        self.url.password().map(percent_decode)
    }
}

fn default_port(scheme: &str) -> u16 {
    match scheme {
        "https" => 443,
        "socks4" | "socks4a" | "socks5" | "socks5h" => 1080,
        _ => 80,
    }
}

/// `%40` → `@`: what the proxy receives is the decoded password, so redact that too.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one proxy setting. `host:port` alone means an HTTP proxy, as curl reads it.
pub fn parse_proxy(value: &str, source: &str) -> Result<ProxyTarget, NetError> {
    let value = value.trim();
    let with_scheme = if value.contains("://") {
        value.to_string()
    } else {
        format!("http://{value}")
    };
    let bad = |reason: &str| NetError::BadProxy {
        variable: source.to_string(),
        shown: shown_without_credentials(value),
        reason: reason.to_string(),
    };
    let url = Url::parse(&with_scheme).map_err(|e| bad(&e.to_string()))?;
    if !matches!(
        url.scheme(),
        "http" | "https" | "socks4" | "socks4a" | "socks5" | "socks5h"
    ) {
        return Err(bad(&format!(
            "unsupported proxy scheme `{}` (use http://, https://, socks5:// or socks5h://)",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() {
        return Err(bad(
            "a proxy URL is scheme://[user:password@]host:port, without a path",
        ));
    }
    Ok(ProxyTarget {
        has_credentials: !url.username().is_empty() || url.password().is_some(),
        url,
        source: source.to_string(),
    })
}

/// A proxy setting as it may be shown: the part after `@` of the authority only.
fn shown_without_credentials(value: &str) -> String {
    let (scheme, rest) = value.split_once("://").unwrap_or(("", value));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if authority.contains('@') {
        format!("…@{host}")
    } else {
        host.to_string()
    };
    if scheme.is_empty() {
        format!("{host}{tail}")
    } else {
        format!("{scheme}://{host}{tail}")
    }
}

/// The `NO_PROXY` list: `*`, host names (matching the name and its subdomains, with or without
/// a leading `.` or `*.`), IP addresses and CIDR ranges; ports are ignored.
#[derive(Debug, Clone, Default)]
pub struct NoProxy {
    all: bool,
    domains: Vec<String>,
    nets: Vec<(IpAddr, u8)>,
}

impl NoProxy {
    pub fn parse(list: &str) -> NoProxy {
        let mut out = NoProxy::default();
        for entry in list
            .split([',', ' '])
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            if entry == "*" {
                out.all = true;
                continue;
            }
            let (addr, bits) = match entry.split_once('/') {
                Some((addr, bits)) => (addr, bits.parse::<u8>().ok()),
                None => (entry, None),
            };
            let bare = addr.trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = bare.parse::<IpAddr>() {
                let max = if ip.is_ipv4() { 32 } else { 128 };
                out.nets.push((ip, bits.unwrap_or(max).min(max)));
                continue;
            }
            // `host:port` and `[v6]:port`: the port is not a distinction cairn makes.
            let host = match addr.rsplit_once(':') {
                Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
                _ => addr,
            };
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = host.parse::<IpAddr>() {
                out.nets.push((ip, if ip.is_ipv4() { 32 } else { 128 }));
                continue;
            }
            let domain = host
                .trim_start_matches("*.")
                .trim_start_matches('.')
                .trim_end_matches('.')
                .to_ascii_lowercase();
            if !domain.is_empty() {
                out.domains.push(domain);
            }
        }
        out
    }

    pub fn matches(&self, host: &str) -> bool {
        if self.all {
            return true;
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self.nets.iter().any(|(net, bits)| in_net(ip, *net, *bits));
        }
        self.domains.iter().any(|d| {
            host == *d
                || host
                    .strip_suffix(d.as_str())
                    .is_some_and(|p| p.ends_with('.'))
        })
    }
}

fn in_net(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// Loopback names and addresses: a local model server is never behind the user's proxy.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    host.eq_ignore_ascii_case("localhost")
        || host.to_ascii_lowercase().ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| match ip {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
        })
}

/// The proxies of a run and the rule for choosing one.
#[derive(Debug, Clone, Default)]
pub struct ProxyRules {
    /// `[network] proxy`: every scheme, over the environment.
    pub configured: Option<ProxyTarget>,
    pub https: Option<ProxyTarget>,
    pub http: Option<ProxyTarget>,
    pub all: Option<ProxyTarget>,
    pub no_proxy: NoProxy,
}

impl ProxyRules {
    /// From `[network] proxy` / `no_proxy` and the environment (through `env`, so tests need
    /// not touch the process environment). A malformed value is an error naming its variable.
    pub fn from_sources(
        configured: Option<&str>,
        configured_no_proxy: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ProxyRules, NetError> {
        let pick = |names: [&str; 2]| -> Result<Option<ProxyTarget>, NetError> {
            for name in names {
                if let Some(value) = env(name).filter(|v| !v.trim().is_empty()) {
                    return parse_proxy(&value, name).map(Some);
                }
            }
            Ok(None)
        };
        let configured = configured
            .filter(|v| !v.trim().is_empty())
            .map(|v| parse_proxy(v, "[network] proxy"))
            .transpose()?;
        let no_proxy = match configured_no_proxy {
            Some(list) => list.to_string(),
            None => env("NO_PROXY")
                .or_else(|| env("no_proxy"))
                .unwrap_or_default(),
        };
        Ok(ProxyRules {
            configured,
            // curl reads only the lower-case `http_proxy` (the upper case can be set by a CGI
            // request's `Proxy:` header); cairn is no CGI program and takes both.
            https: pick(["HTTPS_PROXY", "https_proxy"])?,
            http: pick(["http_proxy", "HTTP_PROXY"])?,
            all: pick(["ALL_PROXY", "all_proxy"])?,
            no_proxy: NoProxy::parse(&no_proxy),
        })
    }

    /// The proxy a request to `url` goes through, or `None` for a direct connection.
    pub fn for_url(&self, url: &Url) -> Option<&ProxyTarget> {
        let host = url.host_str()?;
        if is_loopback_host(host) || self.no_proxy.matches(host) {
            return None;
        }
        if let Some(configured) = &self.configured {
            return Some(configured);
        }
        let by_scheme = match url.scheme() {
            "https" => self.https.as_ref(),
            "http" => self.http.as_ref(),
            _ => None,
        };
        by_scheme.or(self.all.as_ref())
    }

    /// Every proxy configured, for the redaction list.
    pub(super) fn all_targets(&self) -> impl Iterator<Item = &ProxyTarget> {
        [&self.configured, &self.https, &self.http, &self.all]
            .into_iter()
            .flatten()
    }

    pub fn is_empty(&self) -> bool {
        self.all_targets().next().is_none()
    }
}

#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
