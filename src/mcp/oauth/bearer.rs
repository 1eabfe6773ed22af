//! The access token a session sends to one server (`mcp::http` attaches it as `Bearer`): the
//! stored login, refreshed with its refresh token when it has expired (or will within a
//! margin) and when the server refused it. A refresh first looks at the file: another cairn
//! may have refreshed it already (with a rotating refresh token, the old one no longer works).

use std::path::{Path, PathBuf};

use super::grant::refresh;
use super::store::{StoredLogin, load, path, save};
use super::{OAuthError, now_secs};
use crate::net::Network;

/// An access token this close to its expiry is refreshed before it is sent.
const EXPIRY_MARGIN_SECS: u64 = 30;

pub struct OAuthBearer {
    server: String,
    path: PathBuf,
    network: Network,
    login: tokio::sync::Mutex<StoredLogin>,
}

impl OAuthBearer {
    /// The login kept for `server`, when there is one for its `url` (a login made for another
    /// URL is not sent here).
    pub fn load(
        network: &Network,
        data: &Path,
        server: &str,
        url: &str,
    ) -> Result<Option<Self>, OAuthError> {
        let at = path(data, server);
        let Some(login) = load(&at)? else {
            return Ok(None);
        };
        if login.server_url != url {
            tracing::info!(server, "the stored MCP login is for another URL; not used");
            return Ok(None);
        }
        login.remember_secrets(server);
        Ok(Some(Self {
            server: server.to_string(),
            path: at,
            network: network.clone(),
            login: tokio::sync::Mutex::new(login),
        }))
    }

    /// The access token to send now, refreshed first when it has expired.
    pub async fn token(&self) -> Result<String, OAuthError> {
        let mut login = self.login.lock().await;
        if login.expired(now_secs(), EXPIRY_MARGIN_SECS) {
            self.renew(&mut login, None).await?;
        }
        Ok(login.access_token.clone())
    }

    /// The server refused `rejected`: a token to try once more (refreshed, or one that
    /// replaced it since).
    pub async fn after_refusal(&self, rejected: &str) -> Result<String, OAuthError> {
        let mut login = self.login.lock().await;
        if login.access_token != rejected {
            return Ok(login.access_token.clone());
        }
        self.renew(&mut login, Some(rejected)).await?;
        Ok(login.access_token.clone())
    }

    async fn renew(
        &self,
        login: &mut StoredLogin,
        rejected: Option<&str>,
    ) -> Result<(), OAuthError> {
        if let Ok(Some(kept)) = load(&self.path)
            && kept.server_url == login.server_url
            && kept.access_token != login.access_token
        {
            kept.remember_secrets(&self.server);
            *login = kept;
            let usable = !login.expired(now_secs(), EXPIRY_MARGIN_SECS)
                && Some(login.access_token.as_str()) != rejected;
            if usable {
                return Ok(());
            }
        }
        let Some(refresh_token) = login.refresh_token.clone() else {
            return Err(OAuthError::LoginExpired);
        };
        let issued = refresh(
            &self.network,
            &login.token_endpoint,
            &login.client,
            &refresh_token,
            &login.resource,
        )
        .await?;
        login.renew(issued);
        login.remember_secrets(&self.server);
        save(&self.path, login)?;
        tracing::info!(server = %self.server, "MCP OAuth token refreshed");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::mcp::oauth::grant::OAuthClient;
    use crate::mcp::oauth::store::save;
    use crate::net::NetworkSettings;

    const URL: &str = "https://mcp.example.com/mcp";

    fn login(access: &str, expires_at: u64, refresh: Option<&str>) -> StoredLogin {
        StoredLogin {
            server_url: URL.into(),
            resource: URL.into(),
            // Nothing listens there: a refresh attempted would fail.
            token_endpoint: "http://127.0.0.1:1/token".into(),
            client: OAuthClient {
                id: "c1".into(),
                secret: None,
                auth_method: None,
            },
            access_token: access.into(),
            refresh_token: refresh.map(str::to_string),
            expires_at: Some(expires_at),
            scope: None,
        }
    }

    #[tokio::test]
    async fn a_token_another_cairn_refreshed_is_taken_from_the_file_and_a_spent_login_needs_a_new_one()
     {
        let data = tempfile::tempdir().unwrap();
        let network = Network::new(NetworkSettings::default()).unwrap();
        let at = path(data.path(), "vault");
        let later = now_secs() + 3600;
        save(&at, &login("access-old-0001", later, Some("refresh-0001"))).unwrap();
        // Another URL: not this server's login.
        assert!(
            OAuthBearer::load(&network, data.path(), "vault", "https://other.example/mcp")
                .unwrap()
                .is_none()
        );
        let bearer = OAuthBearer::load(&network, data.path(), "vault", URL)
            .unwrap()
            .unwrap();
        assert_eq!(bearer.token().await.unwrap(), "access-old-0001");
        // Another session refreshed (and rotated the refresh token) meanwhile.
        save(&at, &login("access-new-0002", later, Some("refresh-0002"))).unwrap();
        let again = bearer.after_refusal("access-old-0001").await.unwrap();
        assert_eq!(again, "access-new-0002");

        // Expired, with no refresh token: only a new login helps.
        save(&at, &login("access-dead-0003", 1, None)).unwrap();
        let spent = OAuthBearer::load(&network, data.path(), "vault", URL)
            .unwrap()
            .unwrap();
        assert!(matches!(spent.token().await, Err(OAuthError::LoginExpired)));
    }
}
