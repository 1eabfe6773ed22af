//! Dynamic client registration (RFC 7591): cairn registers itself as a public native client
//! (no secret, `token_endpoint_auth_method = none`) with the loopback redirect of this login.
//! A server that insists on a secret gets one back in the answer, and it is kept.

use serde::Deserialize;

use super::OAuthError;
use super::fetch;
use super::grant::OAuthClient;
use crate::net::Network;

#[derive(Deserialize)]
struct Registered {
    client_id: String,
    client_secret: Option<String>,
    token_endpoint_auth_method: Option<String>,
}

/// Registers cairn at `endpoint` for `redirect_uri`.
pub async fn register(
    network: &Network,
    endpoint: &str,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<OAuthClient, OAuthError> {
    let url = super::secure_url(endpoint, "registration_endpoint")?;
    let mut body = serde_json::json!({
        "client_name": "cairn",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(scope) = scope {
        body["scope"] = scope.into();
    }
    let answer = fetch::post_json(network, &url, &body).await?;
    if !answer.status.is_success() {
        return Err(OAuthError::Refused(format!(
            "registering cairn at {url}: {}",
            answer.refusal()
        )));
    }
    let registered: Registered = answer.json(&url, "the registration")?;
    if let Some(secret) = &registered.client_secret {
        crate::secrets::remember("MCP OAuth client secret", secret);
    }
    Ok(OAuthClient {
        id: registered.client_id,
        secret: registered.client_secret,
        auth_method: registered.token_endpoint_auth_method,
    })
}
