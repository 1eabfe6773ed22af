//! What went wrong with a request, by cause, named for the party that failed: the proxy, the
//! name service, the server's certificate, the server. Every client of the stack (the model
//! client, discovery, the web tools) reads reqwest's error through `Network::explain`, so they
//! say the same thing and retry the same way.

use std::error::Error as StdError;

use reqwest::Url;

use super::proxy::ProxyTarget;
use super::verify::UntrustedCertificate;

/// The cause of a failed request, which decides whether trying again can help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// The server's certificate was refused. Never retried.
    Certificate,
    /// The host name does not exist. Never retried.
    NameNotFound,
    /// The name service did not answer (`EAI_AGAIN`): may pass.
    NameServiceDown,
    /// Nothing listens at the address (the server, or the proxy when `proxy` is set). One
    /// quick retry at most: a server being restarted comes back, a wrong port never does.
    Refused,
    /// The proxy wants credentials, or refused the ones given (407). Never retried.
    ProxyAuth,
    /// The proxy answered the CONNECT with an error (it could not reach the server, or its
    /// rules forbid it).
    ProxyTunnel,
    /// The TCP or TLS handshake took longer than the connect timeout.
    ConnectTimeout,
    /// The connection broke after the request was sent (a reset, a closed keep-alive
    /// connection): the request may not have arrived; retried.
    Dropped,
    /// The request could not be built or sent at all (bad URL, unsupported scheme). Never retried.
    Invalid,
}

impl FailureKind {
    /// Whether another attempt may succeed (`Refused`: once).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            FailureKind::NameServiceDown
                | FailureKind::Refused
                | FailureKind::ProxyTunnel
                | FailureKind::ConnectTimeout
                | FailureKind::Dropped
        )
    }
}

/// A failed request, explained: a one-line summary naming who failed, then the library's text.
#[derive(Debug, Clone)]
pub struct NetFailure {
    pub kind: FailureKind,
    /// One line a user can act on ("the proxy at proxy.corp:3128 refused the connection").
    pub summary: String,
    /// The library's own words (reqwest and its causes), for the log and a second line.
    pub detail: String,
    /// The proxy the request went through, when one did.
    pub proxy: Option<ProxyTarget>,
}

impl std::fmt::Display for NetFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.summary)
    }
}

/// The error and its causes in one line. `io::Error` hides its inner error from `source()`,
/// so it is opened by hand.
pub fn chain_text(error: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in causes(error) {
        let text = cause.to_string();
        if parts.last().is_none_or(|last| !last.contains(&text)) {
            parts.push(text);
        }
    }
    crate::secrets::redact(&parts.join(": ")).into_owned()
}

/// `error` and every cause below it, `io::Error`'s inner error included.
fn causes<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(error);
    while let Some(cause) = next {
        out.push(cause);
        next = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn StdError + 'static))
                .or_else(|| cause.source()),
            None => cause.source(),
        };
        if out.len() > 16 {
            break;
        }
    }
    out
}

/// The certificate failure our verifier put into rustls's error, if that is what happened.
fn untrusted(error: &(dyn StdError + 'static)) -> Option<UntrustedCertificate> {
    causes(error)
        .into_iter()
        .find_map(|cause| match cause.downcast_ref::<rustls::Error>()? {
            rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other)) => {
                other.0.downcast_ref::<UntrustedCertificate>().cloned()
            }
            _ => None,
        })
}

fn io_kind(error: &(dyn StdError + 'static)) -> Option<std::io::ErrorKind> {
    causes(error)
        .into_iter()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind)
        .find(|k| *k != std::io::ErrorKind::Other)
}

/// The three ways to add a CA, said wherever a certificate is refused.
pub const CA_HINT: &str = "if your network uses its own CA (a TLS-inspecting proxy, an in-house gateway), add its certificate: set SSL_CERT_FILE to a PEM file, SSL_CERT_DIR to a directory of PEM files, or `ca_file` under [network] in the config (adding it to the system store works too)";

/// Explains `error`, a failure of a request to `url` that went through `proxy` (if any).
pub fn explain(url: &Url, proxy: Option<&ProxyTarget>, error: &reqwest::Error) -> NetFailure {
    let detail = chain_text(error);
    let lower = detail.to_ascii_lowercase();
    let host = url.host_str().unwrap_or("?").to_string();
    let port = url.port_or_known_default().unwrap_or(0);
    let target = format!("{host}:{port}");
    let failure = |kind: FailureKind, summary: String| NetFailure {
        kind,
        summary,
        detail: detail.clone(),
        proxy: proxy.cloned(),
    };
    if let Some(cert) = untrusted(error) {
        let issuer = cert
            .issuer
            .as_deref()
            .map(|i| format!(" (issuer: {i})"))
            .unwrap_or_default();
        let hint = if cert.unknown_issuer {
            format!("; {CA_HINT}")
        } else {
            String::new()
        };
        return failure(FailureKind::Certificate, format!("{cert}{issuer}{hint}"));
    }
    if lower.contains("invalid peer certificate") {
        return failure(
            FailureKind::Certificate,
            format!("the TLS connection to {host} failed on its certificate; {CA_HINT}"),
        );
    }
    if error.is_builder() || lower.contains("url scheme is not allowed") {
        return failure(
            FailureKind::Invalid,
            format!("the request to {url} could not be made"),
        );
    }
    let kind = io_kind(error);
    let timed_out = error.is_timeout() || kind == Some(std::io::ErrorKind::TimedOut);
    if let Some(proxy) = proxy.filter(|_| error.is_connect()) {
        let at = format!("the proxy at {} (from {})", proxy.host_port(), proxy.source);
        let auth_refused = [
            "proxy authorization required",
            "407",
            "credentials not accepted",
            "does not support user/pass",
        ]
        .iter()
        .any(|needle| lower.contains(needle));
        if auth_refused {
            let what = if proxy.has_credentials {
                "refused the credentials in its URL (407); check the user name and password"
            } else {
                "asks for credentials (407); put them in the proxy URL: scheme://user:password@host:port"
            };
            return failure(FailureKind::ProxyAuth, format!("{at} {what}"));
        }
        if kind == Some(std::io::ErrorKind::ConnectionRefused) {
            return failure(FailureKind::Refused, format!("{at} refused the connection"));
        }
        if timed_out {
            return failure(
                FailureKind::ConnectTimeout,
                format!("{at} did not answer in time"),
            );
        }
        if is_dns(&lower) && !proxy.resolves_names() {
            return failure(
                FailureKind::NameNotFound,
                format!("{at} could not be reached: a host name was not found (DNS)"),
            );
        }
        // The proxy answered, but not with a connection: its rules, or it could not reach
        // the server (`tunnel error: unsuccessful`, a SOCKS reply such as `host unreachable`).
        return failure(
            FailureKind::ProxyTunnel,
            format!("{at} failed to connect to {target}"),
        );
    }
    if is_dns(&lower) {
        if lower.contains("temporary failure") || lower.contains("try again") {
            return failure(
                FailureKind::NameServiceDown,
                format!("the name service did not answer for {host} (DNS)"),
            );
        }
        return failure(
            FailureKind::NameNotFound,
            format!("the host name {host} was not found (DNS)"),
        );
    }
    if error.is_connect() {
        if kind == Some(std::io::ErrorKind::ConnectionRefused) {
            return failure(
                FailureKind::Refused,
                format!("nothing is listening at {target} (connection refused)"),
            );
        }
        if timed_out {
            return failure(
                FailureKind::ConnectTimeout,
                format!("connecting to {target} timed out"),
            );
        }
        return failure(
            FailureKind::Dropped,
            format!("could not connect to {target}"),
        );
    }
    failure(
        FailureKind::Dropped,
        format!("the connection to {target} broke before the answer arrived"),
    )
}

fn is_dns(lower: &str) -> bool {
    lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
        || lower.contains("no address associated")
        || lower.contains("nodename nor servname")
}
