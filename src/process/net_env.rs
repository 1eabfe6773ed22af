//! The proxy and CA variables of commands that may use the network. cairn reaches the network
//! through `[network] proxy` and `[network] ca_file` (and the environment's proxies, some of
//! which the start-up scrubber took out because they carry a password); a command granted the
//! network gets the same, as the variables curl, git, Python, Node and OpenSSL read. A proxy's
//! credentials go only into a variable `[bash] pass_env` lists; elsewhere the proxy is given
//! without them (the tool then hears a 407 from the proxy, instead of going around it). A
//! command without the network gets no proxy variable at all.

use std::sync::Arc;

/// The proxy variables commands may see.
pub const PROXY_VARS: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The variables that name a CA bundle, for OpenSSL (curl, Python's ssl, Ruby), curl, Python
/// requests, Node and git.
pub const CA_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
];

/// One proxy variable whose value carries a user name or password.
#[derive(Clone)]
pub struct CredentialedVar {
    pub name: String,
    /// The URL with its credentials: only for a variable `pass_env` lists.
    pub full: String,
    /// `scheme://host:port`.
    pub bare: String,
}

/// What commands granted the network get set, built at launch from the HTTP stack.
#[derive(Clone, Default)]
pub struct NetworkEnv {
    /// Set as they are (proxies without credentials, `NO_PROXY`, the CA bundle).
    pub plain: Vec<(String, String)>,
    pub credentialed: Vec<CredentialedVar>,
    /// Whatever must live as long as the variables point at it (the CA bundle file).
    pub keep: Option<Arc<dyn Send + Sync>>,
}

impl std::fmt::Debug for NetworkEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let credentialed: Vec<(&str, &str)> = self
            .credentialed
            .iter()
            .map(|v| (v.name.as_str(), v.bare.as_str()))
            .collect();
        f.debug_struct("NetworkEnv")
            .field("plain", &self.plain)
            .field("credentialed", &credentialed)
            .finish_non_exhaustive()
    }
}

/// A change to a command's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvChange {
    Set(String, String),
    Remove(String),
}

impl NetworkEnv {
    /// The changes for one command: `network` says whether it may use the network; `allowed`
    /// is `[bash] pass_env`.
    pub fn changes(&self, network: bool, allowed: &[String]) -> Vec<EnvChange> {
        if !network {
            return PROXY_VARS
                .iter()
                .map(|name| EnvChange::Remove((*name).to_string()))
                .collect();
        }
        let mut changes: Vec<EnvChange> = self
            .plain
            .iter()
            .map(|(name, value)| EnvChange::Set(name.clone(), value.clone()))
            .collect();
        for var in &self.credentialed {
            let value = if allowed.contains(&var.name) {
                &var.full
            } else {
                &var.bare
            };
            changes.push(EnvChange::Set(var.name.clone(), value.clone()));
        }
        changes
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env() -> NetworkEnv {
        NetworkEnv {
            plain: vec![
                ("NO_PROXY".into(), "localhost,127.0.0.1,::1".into()),
                ("SSL_CERT_FILE".into(), "bundle.pem".into()),
            ],
            credentialed: vec![CredentialedVar {
                name: "HTTPS_PROXY".into(),
                full: "http://u:SECRET@proxy:3128".into(),
                bare: "http://proxy:3128".into(),
            }],
            keep: None,
        }
    }

    #[test]
    fn a_command_without_the_network_gets_every_proxy_variable_removed_and_nothing_set() {
        let changes = env().changes(false, &["HTTPS_PROXY".into()]);
        assert!(changes.iter().all(|c| matches!(c, EnvChange::Remove(_))));
        for name in PROXY_VARS {
            assert!(
                changes.contains(&EnvChange::Remove((*name).into())),
                "{name}"
            );
        }
    }

    #[test]
    fn credentials_go_only_into_a_variable_pass_env_lists() {
        let set = |allowed: &[String]| env().changes(true, allowed);
        assert!(set(&[]).contains(&EnvChange::Set(
            "HTTPS_PROXY".into(),
            "http://proxy:3128".into()
        )));
        assert!(!format!("{:?}", set(&["https_proxy".into()])).contains("SECRET"));
        assert!(set(&["HTTPS_PROXY".into()]).contains(&EnvChange::Set(
            "HTTPS_PROXY".into(),
            "http://u:SECRET@proxy:3128".into()
        )));
        assert!(set(&[]).contains(&EnvChange::Set("SSL_CERT_FILE".into(), "bundle.pem".into())));
        assert!(!format!("{:?}", env()).contains("SECRET"));
    }
}
