//! The tokens of each server, in the data directory (`mcp-oauth/`, one file per server):
//! the directory is the user's only (0700), each file too (0600, written whole to a temporary
//! file of that mode and renamed over the old one, so no reader sees half a file and no moment
//! exists where the token is readable by others). The file also keeps what a refresh needs (the
//! token endpoint, the client, the resource), and the server's URL: a token is used only for
//! the server it was issued for.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::OAuthError;
use super::grant::{Issued, OAuthClient};

/// The folder of the data directory holding the tokens.
const FOLDER: &str = "mcp-oauth";

/// One server's login. No `Debug`: it holds the tokens.
#[derive(Clone, Serialize, Deserialize)]
pub struct StoredLogin {
    /// The MCP server's URL as configured when the login was made.
    pub server_url: String,
    pub resource: String,
    pub token_endpoint: String,
    pub client: OAuthClient,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl StoredLogin {
    /// Takes in the tokens of a refresh; a refresh token not rotated stays.
    pub fn renew(&mut self, issued: Issued) {
        self.access_token = issued.access_token;
        if issued.refresh_token.is_some() {
            self.refresh_token = issued.refresh_token;
        }
        self.expires_at = issued.expires_at;
        if issued.scope.is_some() {
            self.scope = issued.scope;
        }
    }

    /// Whether the access token has expired, or will within `margin` seconds.
    pub fn expired(&self, now: u64, margin: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now.saturating_add(margin))
    }

    /// Remembers the tokens as secrets of `server`: redacted wherever they would show.
    pub fn remember_secrets(&self, server: &str) {
        crate::secrets::remember(&format!("MCP {server} access token"), &self.access_token);
        if let Some(refresh) = &self.refresh_token {
            crate::secrets::remember(&format!("MCP {server} refresh token"), refresh);
        }
        if let Some(secret) = &self.client.secret {
            crate::secrets::remember(&format!("MCP {server} client secret"), secret);
        }
    }
}

/// Where the login of `server` is kept: its name made file-safe, and a hash of the whole name
/// so that two names made alike stay apart.
pub fn path(data: &Path, server: &str) -> PathBuf {
    let safe: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let hash = Sha256::digest(server.as_bytes());
    let short: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    data.join(FOLDER).join(format!("{safe}-{short}.json"))
}

/// The login kept at `path`, if any.
pub fn load(path: &Path) -> Result<Option<StoredLogin>, OAuthError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(OAuthError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|err| OAuthError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, err.to_string()),
        })
}

/// Writes `login` to `path`, readable and writable by the user only.
pub fn save(path: &Path, login: &StoredLogin) -> Result<(), OAuthError> {
    let io = |source| OAuthError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().ok_or_else(|| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no folder",
        ))
    })?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    // A folder made before with a wider mode is narrowed.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    let text = serde_json::to_string_pretty(login).map_err(|err| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            err.to_string(),
        ))
    })?;
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::process::id()
    ));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(io)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn login() -> StoredLogin {
        StoredLogin {
            server_url: "https://mcp.example.com/mcp".into(),
            resource: "https://mcp.example.com/mcp".into(),
            token_endpoint: "https://auth.example.com/token".into(),
            client: OAuthClient {
                id: "c1".into(),
                secret: None,
                auth_method: None,
            },
            access_token: "at-1".into(),
            refresh_token: Some("rt-1".into()),
            expires_at: Some(1_000),
            scope: None,
        }
    }

    #[test]
    fn a_login_is_written_for_the_user_only_and_read_back() {
        let data = tempfile::tempdir().unwrap();
        let at = path(data.path(), "my server/x");
        assert!(
            at.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("my_server_x-")
        );
        assert!(load(&at).unwrap().is_none());
        save(&at, &login()).unwrap();
        let mode = std::fs::metadata(&at).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(at.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        let mut back = load(&at).unwrap().unwrap();
        assert_eq!(back.access_token, "at-1");
        assert!(back.expired(995, 30) && !back.expired(900, 30));
        back.renew(Issued {
            access_token: "at-2".into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
        });
        assert_eq!(back.refresh_token.as_deref(), Some("rt-1"));
        assert!(!back.expired(u64::MAX, 30));
    }
}
