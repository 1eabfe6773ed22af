//! A URL the egress client may be asked to fetch, parsed once and normalised the way a
//! browser does (WHATWG): `2130706433`, `0177.0.0.1`, `0x7f.1` and `127.1` all become
//! `127.0.0.1`, names are lower-cased and IDN becomes punycode, a trailing dot is dropped. The
//! checker and `[web] allow_private` only ever see this normal form, so no other spelling
//! of an address can slip past them.

use std::net::IpAddr;

use url::{Host, Url};

use super::EgressError;

/// A parsed http(s) URL with its host and port in normal form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: Url,
    /// The host as rules and `allow_private` match it: lower case, no trailing dot, IPv6
    /// without brackets.
    pub host: String,
    pub port: u16,
    /// Set when the host is an address literal (no name to resolve).
    pub literal: Option<IpAddr>,
}

impl Target {
    /// Parses what the model or a redirect sent. Only http and https, no credentials.
    pub fn parse(raw: &str) -> Result<Target, EgressError> {
        let url = Url::parse(raw.trim()).map_err(|err| EgressError::BadUrl {
            url: raw.to_string(),
            why: err.to_string(),
        })?;
        Self::from_url(url)
    }

    /// Resolves a redirect's `Location` against the URL it came from.
    pub fn join(&self, location: &str) -> Result<Target, EgressError> {
        let url = self.url.join(location).map_err(|err| EgressError::BadUrl {
            url: location.to_string(),
            why: err.to_string(),
        })?;
        Self::from_url(url)
    }

    pub fn from_url(mut url: Url) -> Result<Target, EgressError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(EgressError::Scheme {
                url: url.to_string(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(EgressError::Credentials);
        }
        let (host, literal) = match url.host() {
            Some(Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_string();
                // `127.0.0.1.` is the same address with a root dot: judge it as the address.
                match name.parse::<IpAddr>() {
                    Ok(ip) => (ip.to_string(), Some(ip)),
                    Err(_) => (name, None),
                }
            }
            Some(Host::Ipv4(ip)) => (ip.to_string(), Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => (ip.to_string(), Some(IpAddr::V6(ip))),
            None => {
                return Err(EgressError::BadUrl {
                    url: url.to_string(),
                    why: "no host".into(),
                });
            }
        };
        if host.is_empty() {
            return Err(EgressError::BadUrl {
                url: url.to_string(),
                why: "no host".into(),
            });
        }
        // The fragment never leaves the machine; dropping it keeps cache keys and the
        // header honest.
        url.set_fragment(None);
        let port = url.port_or_known_default().unwrap_or(80);
        Ok(Target {
            url,
            host,
            port,
            literal,
        })
    }

    /// `host:port` as `[web] allow_private` lists it (IPv6 in brackets).
    pub fn host_port(&self) -> String {
        match self.literal {
            Some(IpAddr::V6(_)) => format!("[{}]:{}", self.host, self.port),
            _ => format!("{}:{}", self.host, self.port),
        }
    }

    pub fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }
}

/// One `[web] allow_private` entry, normalised like a URL's host so `localhost:3000`,
/// `127.1:8080` and `[::1]:8080` match the URLs that mean them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl HostPort {
    pub fn parse(entry: &str) -> Result<HostPort, String> {
        let entry = entry.trim();
        let target = Target::parse(&format!("http://{entry}/"))
            .map_err(|err| format!("`{entry}` is not host:port ({err})"))?;
        let has_port = target.url.port().is_some() || entry.ends_with(":80");
        if !has_port || target.url.path() != "/" {
            return Err(format!(
                "`{entry}` must be exactly host:port, such as 127.0.0.1:8080 or localhost:3000"
            ));
        }
        Ok(HostPort {
            host: target.host,
            port: target.port,
        })
    }

    pub fn matches(&self, target: &Target) -> bool {
        self.host == target.host && self.port == target.port
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn host_of(raw: &str) -> String {
        Target::parse(raw).unwrap().host
    }

    #[test]
    fn every_spelling_of_an_address_comes_out_as_its_normal_form() {
        let rows = [
            ("http://2130706433/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://127.0.0.1./", "127.0.0.1"),
            ("http://0/", "0.0.0.0"),
            ("http://0.0.0.0/", "0.0.0.0"),
            ("http://[::]/", "::"),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
            ("http://[0:0:0:0:0:0:0:1]/", "::1"),
            ("http://0251.0376.0251.0376/", "169.254.169.254"),
            ("http://LOCALHOST./", "localhost"),
            ("http://Bücher.example/", "xn--bcher-kva.example"),
        ];
        for (raw, host) in rows {
            assert_eq!(host_of(raw), host, "{raw}");
        }
        assert!(Target::parse("http://0x7f.1/").unwrap().literal.is_some());
        assert!(
            Target::parse("http://127.0.0.1./")
                .unwrap()
                .literal
                .is_some()
        );
    }

    #[test]
    fn only_http_and_https_without_credentials() {
        for raw in [
            "file:///etc/passwd",
            "ftp://x.org/",
            "gopher://x/",
            "data:text/plain,hi",
        ] {
            assert!(
                matches!(Target::parse(raw), Err(EgressError::Scheme { .. })),
                "{raw}"
            );
        }
        assert!(matches!(
            Target::parse("http://user:pw@example.org/"),
            Err(EgressError::Credentials)
        ));
        assert!(matches!(
            Target::parse("not a url"),
            Err(EgressError::BadUrl { .. })
        ));
    }

    #[test]
    fn allow_private_entries_match_exactly_by_host_and_port() {
        let entry = HostPort::parse("127.0.0.1:8080").unwrap();
        assert!(entry.matches(&Target::parse("http://127.0.0.1:8080/x").unwrap()));
        assert!(entry.matches(&Target::parse("http://2130706433:8080/").unwrap()));
        assert!(!entry.matches(&Target::parse("http://127.0.0.1:8081/").unwrap()));
        assert!(!entry.matches(&Target::parse("http://127.0.0.2:8080/").unwrap()));
        assert!(!entry.matches(&Target::parse("http://localhost:8080/").unwrap()));
        let v6 = HostPort::parse("[::1]:3000").unwrap();
        assert!(v6.matches(&Target::parse("http://[0::1]:3000/").unwrap()));
        let name = HostPort::parse("Localhost:3000").unwrap();
        assert!(name.matches(&Target::parse("http://localhost.:3000/").unwrap()));
        assert!(HostPort::parse("127.0.0.1").is_err());
        assert!(HostPort::parse("127.0.0.1:8080/path").is_err());
    }

    #[test]
    fn a_redirect_location_is_resolved_against_the_page() {
        let page = Target::parse("https://example.org/a/b").unwrap();
        assert_eq!(
            page.join("../c").unwrap().url.as_str(),
            "https://example.org/c"
        );
        assert_eq!(page.join("//other.org/").unwrap().host, "other.org");
    }
}
