//! The egress client on the one HTTP stack (`net::Network`): its roots, proxies and connect
//! timeout, with the egress client's own resolver and redirect handling added per hop.
//!
//! What a proxy changes: a CONNECT (`http://`, `https://`) or `socks5h://` proxy resolves the
//! name itself, so cairn cannot pin the address the proxy connects to. The hop is then
//! `Route::Proxy`: a literal address is still judged, and a name that resolves here is judged by
//! every local answer; only a name cairn cannot resolve is left to the proxy. A `socks5://` or
//! `socks4://` proxy is handed an address reqwest resolves through the egress client's resolver,
//! so the hop stays `Route::Direct` and the pinning holds through it.

use crate::net::Network;

use super::client::{HttpStack, UNCHECKED_NAME};
use super::egress::Route;

impl HttpStack for Network {
    fn builder(&self) -> reqwest::ClientBuilder {
        Network::builder(self)
    }

    fn route(&self, url: &url::Url) -> Route {
        match self.proxy_for(url) {
            Some(proxy) if proxy.resolves_names() || !proxy.is_socks() => Route::Proxy,
            // No proxy, or a SOCKS proxy that takes an address: cairn resolves, checks, pins.
            _ => Route::Direct,
        }
    }

    fn proxy_host(&self, url: &url::Url) -> Option<String> {
        self.proxy_for(url).map(|proxy| proxy.host().to_string())
    }

    /// The stack's own naming ("the proxy at HOST:PORT (from HTTPS_PROXY) …", the untrusted
    /// issuer and the ways to add a CA), then the library's words, redacted.
    fn explain(&self, url: &url::Url, error: &reqwest::Error) -> Option<String> {
        let failure = Network::explain(self, url, error);
        // A name the pinned resolver refused is the egress policy's doing, not a DNS failure.
        if failure.detail.contains(UNCHECKED_NAME) {
            return None;
        }
        Some(if failure.detail.is_empty() {
            failure.summary
        } else {
            format!("{} (cause: {})", failure.summary, failure.detail)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::net::{NetworkFile, NetworkSettings};

    fn stack(pairs: &[(&str, &str)]) -> Network {
        let env = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        };
        Network::new(NetworkSettings::from_config(&NetworkFile::default(), &env).unwrap()).unwrap()
    }

    fn url(text: &str) -> url::Url {
        url::Url::parse(text).unwrap()
    }

    #[test]
    fn the_route_follows_who_resolves_the_name() {
        let page = url("https://docs.rs/serde");
        assert_eq!(stack(&[]).route(&page), Route::Direct);
        assert_eq!(stack(&[]).proxy_host(&page), None);
        for (proxy, route) in [
            ("http://proxy.corp:3128", Route::Proxy),
            ("https://proxy.corp:3128", Route::Proxy),
            ("socks5h://proxy.corp:1080", Route::Proxy),
            ("socks4a://proxy.corp:1080", Route::Proxy),
            ("socks5://proxy.corp:1080", Route::Direct),
            ("socks4://proxy.corp:1080", Route::Direct),
        ] {
            let network = stack(&[("HTTPS_PROXY", proxy)]);
            assert_eq!(network.route(&page), route, "{proxy}");
            assert_eq!(network.proxy_host(&page).as_deref(), Some("proxy.corp"));
        }
    }

    #[test]
    fn loopback_and_no_proxy_hosts_are_direct_even_with_a_proxy() {
        let network = stack(&[
            ("HTTPS_PROXY", "http://user:pw@proxy.corp:3128"),
            ("NO_PROXY", "internal.corp"),
        ]);
        for direct in [
            "https://127.0.0.1:8443/",
            "https://localhost/",
            "https://wiki.internal.corp/",
        ] {
            assert_eq!(network.route(&url(direct)), Route::Direct, "{direct}");
            assert_eq!(network.proxy_host(&url(direct)), None, "{direct}");
        }
        // Only https has a proxy here: a plain http page goes direct.
        assert_eq!(network.route(&url("http://docs.rs/")), Route::Direct);
    }
}
