//! OAuth for streamable-HTTP servers that require it (the MCP authorization spec, revisions
//! 2025-06-18 and 2025-11-25). `cairn mcp login NAME` (`login`) finds where the server's
//! authorization server is (`discover`: the 401's `WWW-Authenticate`, else the well-known
//! protected-resource metadata of RFC 9728, then the server's metadata of RFC 8414 or OIDC
//! discovery), registers cairn there when it offers dynamic registration (`register`, RFC 7591;
//! else the configured `client_id`), runs the authorization code flow with PKCE S256 and the
//! `resource` parameter through the user's browser and a loopback redirect (`loopback`,
//! `pkce`), and keeps the tokens in the data directory, readable by the user only (`store`).
//! A session's HTTP transport sends the access token as `Bearer` (`bearer`), refreshed with the
//! refresh token when it expired or a request was refused (`grant`). Every request goes out on
//! the run's one HTTP stack (`fetch`: its proxies and CAs); tokens are remembered as secrets,
//! so they are redacted wherever they would show, and never logged.

pub mod bearer;
pub mod discover;
mod fetch;
pub mod grant;
pub mod login;
pub mod loopback;
pub mod pkce;
pub mod register;
pub mod store;

use std::path::PathBuf;

/// What went wrong in an OAuth step; says what to do where there is something to do.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{url}: {why}")]
    Request { url: String, why: String },
    #[error("{what}: {why}")]
    Invalid { what: String, why: String },
    #[error("{0} is neither HTTPS nor on this machine: OAuth endpoints must use HTTPS")]
    Insecure(String),
    #[error(
        "the authorization server does not offer PKCE with S256 (code_challenge_methods_supported), which MCP requires"
    )]
    NoPkce,
    #[error(
        "the authorization server offers no dynamic client registration: set `client_id` in [mcp_servers.{0}.oauth]"
    )]
    NoClient(String),
    #[error("the authorization server refused: {0}")]
    Refused(String),
    /// The stored grant is gone (no refresh token, or the refresh was refused): log in again.
    #[error("the login expired")]
    LoginExpired,
    #[error("the browser did not come back within {0} s")]
    TimedOut(u64),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the loopback redirect: {0}")]
    Loopback(#[source] std::io::Error),
}

/// How `cairn mcp login NAME`, run the same way, reads in a message (quoted when the name
/// needs it).
pub fn login_command(server: &str) -> String {
    let quoted = shlex::try_quote(server).map_or_else(|_| server.to_string(), |q| q.into_owned());
    format!("cairn mcp login {quoted}")
}

/// Whether `url` may carry OAuth secrets: HTTPS, or plain HTTP to this machine (loopback).
pub fn secure(url: &url::Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// `text` parsed as a URL that may carry OAuth secrets.
pub fn secure_url(text: &str, what: &str) -> Result<url::Url, OAuthError> {
    let url = url::Url::parse(text).map_err(|err| OAuthError::Invalid {
        what: what.to_string(),
        why: format!("`{text}` is not a URL ({err})"),
    })?;
    if !secure(&url) {
        return Err(OAuthError::Insecure(text.to_string()));
    }
    Ok(url)
}

/// Seconds since the epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
