//! The `[web]` and `[web.search]` tables: host rules, the local servers the web tools may
//! reach, download and time limits, and the search backend. Resolved into `web::WebSettings`;
//! the search key is read from the variable `api_key_env` names, never from the file.

use std::time::Duration;

use serde::Deserialize;

use crate::web::search::{Backend, SearchSettings};
use crate::web::{DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_SECS, WebSettings};

/// The `[web]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WebFile {
    /// Hosts fetched without asking (`docs.rs`, `*.example.org`).
    pub allow: Option<Vec<String>>,
    /// Hosts never fetched.
    pub deny: Option<Vec<String>>,
    /// Exact `host:port` pairs whose local or private addresses may be fetched.
    pub allow_private: Option<Vec<String>>,
    pub max_bytes: Option<u64>,
    pub timeout_secs: Option<u64>,
    pub search: Option<SearchFile>,
}

/// The `[web.search]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SearchFile {
    pub backend: Option<String>,
    pub url: Option<String>,
    pub api_key_env: Option<String>,
}

impl WebFile {
    /// `over`'s keys win; the search table merges key by key.
    pub fn merge(self, over: WebFile) -> WebFile {
        WebFile {
            allow: over.allow.or(self.allow),
            deny: over.deny.or(self.deny),
            allow_private: over.allow_private.or(self.allow_private),
            max_bytes: over.max_bytes.or(self.max_bytes),
            timeout_secs: over.timeout_secs.or(self.timeout_secs),
            search: match (self.search, over.search) {
                (Some(a), Some(b)) => Some(SearchFile {
                    backend: b.backend.or(a.backend),
                    url: b.url.or(a.url),
                    api_key_env: b.api_key_env.or(a.api_key_env),
                }),
                (a, b) => b.or(a),
            },
        }
    }

    /// The settings, with the search key read through `env`. A mistake is a message naming
    /// the key to fix.
    pub fn resolve(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<WebSettings, String> {
        let list = |items: &Option<Vec<String>>| items.clone().unwrap_or_default();
        for entry in list(&self.allow_private) {
            crate::web::target::HostPort::parse(&entry)
                .map_err(|err| format!("[web] allow_private: {err}"))?;
        }
        let max_bytes = self.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        if max_bytes == 0 {
            return Err("[web] max_bytes must be at least 1".into());
        }
        let timeout_secs = self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if timeout_secs == 0 {
            return Err("[web] timeout_secs must be at least 1".into());
        }
        Ok(WebSettings {
            allow_private: list(&self.allow_private),
            allow: list(&self.allow),
            deny: list(&self.deny),
            max_bytes,
            timeout: Duration::from_secs(timeout_secs),
            search: self
                .search
                .as_ref()
                .map(|search| search.resolve(env))
                .transpose()?
                .flatten(),
        })
    }
}

impl SearchFile {
    fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<SearchSettings>, String> {
        let Some(name) = &self.backend else {
            return Ok(None);
        };
        let backend = Backend::parse(name).map_err(|err| format!("[web.search] backend: {err}"))?;
        let url = match (&self.url, backend.default_url()) {
            (Some(url), _) => url.trim().to_string(),
            (None, Some(url)) => url.to_string(),
            (None, None) => {
                return Err(format!(
                    "[web.search] backend = \"{}\" needs `url`, the address of your instance (such as http://127.0.0.1:8888)",
                    backend.name()
                ));
            }
        };
        // A user name and password in the user's own URL are basic auth (never shown).
        let (url, basic_auth) = crate::web::search::split_credentials(&url)
            .map_err(|err| format!("[web.search] url: {err}"))?;
        crate::web::target::Target::parse(&url)
            .map_err(|err| format!("[web.search] url: {err}"))?;
        let key_env = self
            .api_key_env
            .clone()
            .or_else(|| backend.default_key_env().map(str::to_string));
        let api_key = key_env.as_deref().and_then(env);
        if api_key.is_none()
            && let (Some(var), Backend::Brave | Backend::Tavily) = (&key_env, backend)
        {
            return Err(format!(
                "[web.search] backend = \"{}\" needs its API key in the variable {var} (or name another with api_key_env)",
                backend.name()
            ));
        }
        if basic_auth.is_some() && api_key.is_some() && backend == Backend::Tavily {
            return Err(
                "[web.search] url has a user name and password, and Tavily's API key goes in the same Authorization header: use one".into(),
            );
        }
        Ok(Some(SearchSettings {
            backend,
            url,
            key_env,
            api_key,
            basic_auth,
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn parse(text: &str) -> WebFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_and_limits() {
        let settings = WebFile::default().resolve(&|_| None).unwrap();
        assert_eq!(settings.max_bytes, 10 * 1024 * 1024);
        assert_eq!(settings.timeout, Duration::from_secs(30));
        assert!(settings.search.is_none());
        assert!(parse("max_bytes = 0").resolve(&|_| None).is_err());
        assert!(parse("timeout_secs = 0").resolve(&|_| None).is_err());
        let err = parse("allow_private = [\"localhost\"]")
            .resolve(&|_| None)
            .unwrap_err();
        assert!(
            err.contains("allow_private") && err.contains("host:port"),
            "{err}"
        );
    }

    #[test]
    fn search_backends_need_what_they_need() {
        let searx = parse("[search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"");
        let settings = searx.resolve(&|_| None).unwrap().search.unwrap();
        assert_eq!(settings.backend, Backend::Searxng);
        assert!(
            parse("[search]\nbackend = \"searxng\"")
                .resolve(&|_| None)
                .is_err()
        );
        let brave = parse("[search]\nbackend = \"brave\"");
        let err = brave.resolve(&|_| None).unwrap_err();
        assert!(err.contains("BRAVE_API_KEY"), "{err}");
        let key = |name: &str| (name == "MY_KEY").then(|| "k".to_string());
        let tavily = parse("[search]\nbackend = \"tavily\"\napi_key_env = \"MY_KEY\"");
        let settings = tavily.resolve(&key).unwrap().search.unwrap();
        assert_eq!(settings.api_key.as_deref(), Some("k"));
        assert!(
            parse("[search]\nbackend = \"bing\"")
                .resolve(&|_| None)
                .is_err()
        );
        assert!(
            parse("[search]\nurl = \"http://x\"")
                .resolve(&|_| None)
                .unwrap()
                .search
                .is_none()
        );
    }

    #[test]
    fn a_backend_url_with_credentials_is_basic_auth() {
        let searx = parse("[search]\nbackend = \"searxng\"\nurl = \"https://me:pw@searx.example\"");
        let settings = searx.resolve(&|_| None).unwrap().search.unwrap();
        assert_eq!(settings.url, "https://searx.example/");
        assert_eq!(settings.basic_auth, Some(("me".into(), "pw".into())));
        let key = |name: &str| (name == "TAVILY_API_KEY").then(|| "k".to_string());
        let both =
            parse("[search]\nbackend = \"tavily\"\nurl = \"https://me:pw@api.tavily.com/search\"");
        let err = both.resolve(&key).unwrap_err();
        assert!(err.contains("use one") && !err.contains("pw"), "{err}");
    }
}
