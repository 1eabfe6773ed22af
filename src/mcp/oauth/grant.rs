//! The token endpoint: the authorization code exchanged (with the PKCE verifier, the redirect
//! and the `resource`), a refresh token exchanged for a new access token. A client with a
//! secret authenticates as it registered (`client_secret_basic` or `client_secret_post`).

use serde::{Deserialize, Serialize};

use super::fetch;
use super::{OAuthError, now_secs};
use crate::net::Network;

/// cairn as a client of one authorization server.
#[derive(Clone, Serialize, Deserialize)]
pub struct OAuthClient {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// How it authenticates at the token endpoint (as registered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<String>,
}

/// Tokens as the token endpoint gave them.
#[derive(Clone)]
pub struct Issued {
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// When the access token expires (seconds since the epoch), when the server said.
    pub expires_at: Option<u64>,
    pub scope: Option<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    token_type: Option<String>,
    expires_in: Option<u64>,
    refresh_token: Option<String>,
    scope: Option<String>,
}

/// The code of a login for tokens.
pub async fn exchange(
    network: &Network,
    token_endpoint: &str,
    client: &OAuthClient,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
    resource: &str,
) -> Result<Issued, OAuthError> {
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
        ("resource", resource),
    ];
    request(network, token_endpoint, client, &form)
        .await
        .map_err(|why| match why {
            TokenFailure::Refused(why) => OAuthError::Refused(why),
            TokenFailure::Other(err) => err,
        })
}

/// A new access token for `refresh_token`. A refusal (the grant expired or was revoked) is
/// `LoginExpired`: only a new login helps.
pub async fn refresh(
    network: &Network,
    token_endpoint: &str,
    client: &OAuthClient,
    refresh_token: &str,
    resource: &str,
) -> Result<Issued, OAuthError> {
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("resource", resource),
    ];
    request(network, token_endpoint, client, &form)
        .await
        .map_err(|why| match why {
            TokenFailure::Refused(why) => {
                tracing::warn!(%why, "MCP OAuth refresh refused");
                OAuthError::LoginExpired
            }
            TokenFailure::Other(err) => err,
        })
}

enum TokenFailure {
    /// The server answered with an OAuth error (4xx).
    Refused(String),
    Other(OAuthError),
}

async fn request(
    network: &Network,
    token_endpoint: &str,
    client: &OAuthClient,
    form: &[(&str, &str)],
) -> Result<Issued, TokenFailure> {
    let url = super::secure_url(token_endpoint, "token_endpoint").map_err(TokenFailure::Other)?;
    let mut form = form.to_vec();
    let basic = match (&client.secret, client.auth_method.as_deref()) {
        (Some(secret), None | Some("client_secret_basic")) => {
            Some((client.id.as_str(), secret.as_str()))
        }
        (Some(secret), Some(_)) => {
            form.push(("client_id", &client.id));
            form.push(("client_secret", secret));
            None
        }
        (None, _) => {
            form.push(("client_id", &client.id));
            None
        }
    };
    let answer = fetch::post_form(network, &url, &form, basic)
        .await
        .map_err(TokenFailure::Other)?;
    if answer.status.is_client_error() {
        return Err(TokenFailure::Refused(answer.refusal()));
    }
    if !answer.status.is_success() {
        return Err(TokenFailure::Other(OAuthError::Request {
            url: url.to_string(),
            why: format!("HTTP {}", answer.status),
        }));
    }
    let tokens: TokenAnswer = answer
        .json(&url, "the token answer")
        .map_err(TokenFailure::Other)?;
    if tokens
        .token_type
        .as_deref()
        .is_some_and(|t| !t.eq_ignore_ascii_case("bearer"))
    {
        return Err(TokenFailure::Other(OAuthError::Invalid {
            what: "the token answer".into(),
            why: "its token_type is not Bearer".into(),
        }));
    }
    Ok(Issued {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        expires_at: tokens
            .expires_in
            .map(|secs| now_secs().saturating_add(secs)),
        scope: tokens.scope,
    })
}
