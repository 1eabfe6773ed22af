//! Where a protected MCP server sends its users to log in. The server's 401 names its
//! protected-resource metadata (`WWW-Authenticate: Bearer resource_metadata="…"`, RFC 9728
//! §5.1); without it the well-known places are probed (the path-specific one, then the
//! root). The metadata names the authorization server, whose own metadata is found at the
//! RFC 8414 and OIDC discovery places in the spec's order. A server with no
//! protected-resource metadata at all (the 2025-03-26 revision) is its own authorization
//! server.

use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use serde::Deserialize;
use url::Url;

use super::fetch;
use super::{OAuthError, secure_url};
use crate::net::Network;

/// What a 401's `WWW-Authenticate: Bearer …` says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BearerChallenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
}

/// The parameters of the `Bearer` challenge of a `WWW-Authenticate` value (None when it has no
/// `Bearer` challenge). Parameters are `name=token` or `name="quoted string"`, comma-separated.
pub fn parse_challenge(header: &str) -> Option<BearerChallenge> {
    let at = header
        .char_indices()
        .find(|(i, _)| {
            header[*i..]
                .get(..6)
                .is_some_and(|w| w.eq_ignore_ascii_case("bearer"))
                && (*i == 0 || header[..*i].ends_with([' ', ',']))
        })
        .map(|(i, _)| i)?;
    let mut rest = &header[at + 6..];
    let mut challenge = BearerChallenge::default();
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq].trim().to_ascii_lowercase();
        if name.contains(' ') {
            // The next challenge's scheme: this one's parameters ended.
            break;
        }
        rest = rest[eq + 1..].trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            value.push(next);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            rest = &quoted[end..];
            value
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let value = rest[..end].trim().to_string();
            rest = &rest[end..];
            value
        };
        match name.as_str() {
            "resource_metadata" => challenge.resource_metadata = Some(value),
            "scope" => challenge.scope = Some(value),
            _ => {}
        }
    }
    Some(challenge)
}

/// RFC 9728 protected-resource metadata (what cairn reads of it).
#[derive(Debug, Default, Clone, Deserialize)]
pub struct ResourceMetadata {
    pub resource: Option<String>,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Vec<String>,
}

/// RFC 8414 / OIDC authorization server metadata (what cairn reads of it).
#[derive(Debug, Clone, Deserialize)]
pub struct AuthServerMetadata {
    pub issuer: Option<String>,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// Everything the login needs to know about a server.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter: the server's canonical URI (RFC 8707).
    pub resource: String,
    pub auth: AuthServerMetadata,
    /// The scopes to ask for, space-separated (the challenge's, else the metadata's).
    pub scope: Option<String>,
}

/// Asks the server without a token (an `initialize`, as a client's first request) and reads
/// its challenge; None when it did not answer 401.
async fn challenge_of(
    network: &Network,
    server: &Url,
) -> Result<Option<BearerChallenge>, OAuthError> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "cairn", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = network
        .client()
        .post(server.clone())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .map_err(|err| OAuthError::Request {
            url: server.to_string(),
            why: network.explain(server, &err).to_string(),
        })?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    let challenge = response
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(parse_challenge);
    Ok(Some(challenge.unwrap_or_default()))
}

/// The well-known places of a resource's metadata: path-specific first, then the root.
pub fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    well_known(server, "oauth-protected-resource")
}

/// `/.well-known/<name><path>` and, for a URL with a path, `/.well-known/<name>` too.
fn well_known(base: &Url, name: &str) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let mut out = Vec::new();
    let mut at = |path: &str| {
        let mut url = base.clone();
        url.set_path(path);
        url.set_query(None);
        url.set_fragment(None);
        out.push(url);
    };
    if !path.is_empty() {
        at(&format!("/.well-known/{name}{path}"));
    }
    at(&format!("/.well-known/{name}"));
    out
}

/// Where an authorization server's metadata may be, in the spec's order: RFC 8414 and OIDC
/// discovery with the issuer's path inserted, then OIDC with it appended.
pub fn auth_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |path: String| {
        let mut url = issuer.clone();
        url.set_path(&path);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// The first of `urls` that answers 200 with a document of type `T`.
async fn first_document<T: serde::de::DeserializeOwned>(
    network: &Network,
    urls: &[Url],
    what: &str,
) -> Result<Option<T>, OAuthError> {
    for url in urls {
        let answer = fetch::get(network, url).await?;
        if answer.status.is_success() {
            return answer.json(url, what).map(Some);
        }
    }
    Ok(None)
}

/// The server's canonical URI: no fragment, the scheme and host in lower case (as `Url`
/// writes them), no trailing slash but the root's.
pub fn canonical(server: &Url) -> String {
    let mut url = server.clone();
    url.set_fragment(None);
    url.to_string()
}

/// Finds how to log in to the MCP server at `server`. `None`: it asked for no authorization
/// and publishes no protected-resource metadata (nothing to log in to).
pub async fn discover(network: &Network, server: &Url) -> Result<Option<Discovered>, OAuthError> {
    let challenge = challenge_of(network, server).await?;
    let named = challenge
        .as_ref()
        .and_then(|c| c.resource_metadata.as_deref())
        .map(|text| secure_url(text, "resource_metadata"))
        .transpose()?;
    let urls = match named {
        Some(url) => vec![url],
        None => resource_metadata_urls(server),
    };
    let metadata: Option<ResourceMetadata> =
        first_document(network, &urls, "the protected-resource metadata").await?;
    if metadata.is_none() && challenge.is_none() {
        return Ok(None);
    }
    let resource = canonical(server);
    let metadata = metadata.unwrap_or_default();
    if let Some(named) = &metadata.resource
        && !resource.starts_with(named.trim_end_matches('/'))
    {
        return Err(OAuthError::Invalid {
            what: "the protected-resource metadata".into(),
            why: format!("it is for `{named}`, not for `{resource}`"),
        });
    }
    // Without metadata (the 2025-03-26 revision) the server's origin is its own
    // authorization server.
    let issuer = match metadata.authorization_servers.first() {
        Some(issuer) => secure_url(issuer, "authorization_servers")?,
        None => {
            let mut origin = server.clone();
            origin.set_path("/");
            origin.set_query(None);
            origin.set_fragment(None);
            origin
        }
    };
    let auth: AuthServerMetadata = first_document(
        network,
        &auth_server_metadata_urls(&issuer),
        "the authorization server metadata",
    )
    .await?
    .ok_or_else(|| OAuthError::Invalid {
        what: "the authorization server".into(),
        why: format!("{issuer} publishes no metadata (RFC 8414 or OIDC discovery)"),
    })?;
    if let Some(named) = &auth.issuer
        && named.trim_end_matches('/') != issuer.as_str().trim_end_matches('/')
    {
        return Err(OAuthError::Invalid {
            what: "the authorization server metadata".into(),
            why: format!("its issuer is `{named}`, not `{issuer}`"),
        });
    }
    let offers_s256 = auth
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
    if !offers_s256 {
        return Err(OAuthError::NoPkce);
    }
    secure_url(&auth.authorization_endpoint, "authorization_endpoint")?;
    secure_url(&auth.token_endpoint, "token_endpoint")?;
    if let Some(registration) = &auth.registration_endpoint {
        secure_url(registration, "registration_endpoint")?;
    }
    let scope = challenge
        .and_then(|c| c.scope)
        .or_else(|| {
            (!metadata.scopes_supported.is_empty()).then(|| metadata.scopes_supported.join(" "))
        })
        .filter(|s| !s.trim().is_empty());
    Ok(Some(Discovered {
        resource,
        auth,
        scope,
    }))
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
