//! `cairn mcp login NAME`, the flow: discover the authorization server, register (or use the
//! configured client), open the authorization URL (the caller shows it and opens the browser)
//! with PKCE S256, `state` and `resource`, take the code at the loopback redirect, exchange it
//! and keep the tokens (`store`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::discover::discover;
use super::grant::{OAuthClient, exchange};
use super::loopback::Loopback;
use super::pkce::{Pkce, random_text};
use super::register::register;
use super::store::{StoredLogin, path, save};
use super::{OAuthError, secure_url};
use crate::config::McpOAuthFile;
use crate::net::Network;

/// How long the browser may take to come back.
pub const BROWSER_WAIT: Duration = Duration::from_secs(300);

/// How a login ended.
pub enum LoginOutcome {
    /// Logged in; the tokens are at `path`.
    Done {
        path: PathBuf,
        expires_at: Option<u64>,
        refreshable: bool,
    },
    /// The server asked for no authorization and publishes no protected-resource metadata.
    NotNeeded,
}

/// Logs in to the MCP server `server` at `url`; `open` gets the authorization URL (to print
/// and open in the browser) before the wait for the browser's return starts.
pub async fn login(
    network: &Network,
    data: &Path,
    server: &str,
    url: &str,
    settings: Option<&McpOAuthFile>,
    open: impl FnOnce(&str),
) -> Result<LoginOutcome, OAuthError> {
    let server_url = secure_url(url, "the server's url")?;
    let Some(found) = discover(network, &server_url).await? else {
        return Ok(LoginOutcome::NotNeeded);
    };
    let loopback = Loopback::bind(settings.and_then(|s| s.callback_port).unwrap_or(0)).await?;
    let redirect_uri = loopback.redirect_uri();
    let scope = settings
        .and_then(|s| s.scopes.as_ref())
        .map(|scopes| scopes.join(" "))
        .or(found.scope.clone())
        .filter(|s| !s.is_empty());
    let client = match (
        settings.and_then(|s| s.client_id.clone()),
        &found.auth.registration_endpoint,
    ) {
        (Some(id), _) => OAuthClient {
            id,
            secret: None,
            auth_method: None,
        },
        (None, Some(endpoint)) => {
            register(network, endpoint, &redirect_uri, scope.as_deref()).await?
        }
        (None, None) => return Err(OAuthError::NoClient(server.to_string())),
    };
    let pkce = Pkce::new()?;
    let state = random_text(16)?;
    let mut authorize = secure_url(&found.auth.authorization_endpoint, "authorization_endpoint")?;
    {
        let mut query = authorize.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client.id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &found.resource);
        if let Some(scope) = &scope {
            query.append_pair("scope", scope);
        }
    }
    open(authorize.as_str());
    let code = loopback.code(&state, BROWSER_WAIT).await?;
    let issued = exchange(
        network,
        &found.auth.token_endpoint,
        &client,
        &code,
        &pkce.verifier,
        &redirect_uri,
        &found.resource,
    )
    .await?;
    let stored = StoredLogin {
        server_url: url.to_string(),
        resource: found.resource,
        token_endpoint: found.auth.token_endpoint,
        client,
        access_token: issued.access_token,
        refresh_token: issued.refresh_token,
        expires_at: issued.expires_at,
        scope: issued.scope.or(scope),
    };
    stored.remember_secrets(server);
    let at = path(data, server);
    save(&at, &stored)?;
    tracing::info!(server, "MCP OAuth login stored");
    Ok(LoginOutcome::Done {
        path: at,
        expires_at: stored.expires_at,
        refreshable: stored.refresh_token.is_some(),
    })
}
