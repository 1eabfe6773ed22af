//! The `[mcp_servers.NAME]` tables (SPEC §11.3): a stdio server (`command`, `args`, `env`) or a
//! streamable-HTTP one (`url`, `bearer_token_env`, `headers`), with its start-up and call
//! timeouts and which of its tools are offered. This file only says what a config may hold;
//! starting and talking to servers is the `mcp` service's business.

use std::collections::BTreeMap;

use serde::Deserialize;

/// How long a server may take to start before it is shown as timed out.
pub const STARTUP_TIMEOUT_SECS: u64 = 10;
/// How long one tool call may take.
pub const TOOL_TIMEOUT_SECS: u64 = 60;

/// One `[mcp_servers.NAME]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct McpServerFile {
    /// The program of a stdio server (run without a shell).
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables the server gets on top of the scrubbed environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The endpoint of a streamable-HTTP server.
    pub url: Option<String>,
    /// The variable holding the bearer token sent to `url`.
    pub bearer_token_env: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Default true.
    pub enabled: Option<bool>,
    pub startup_timeout_secs: Option<u64>,
    pub tool_timeout_secs: Option<u64>,
    /// Only these tools are offered (by the server's names).
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// How `cairn mcp login` logs in to an HTTP server that asks for OAuth (all optional:
    /// discovery and dynamic registration find the rest).
    pub oauth: Option<McpOAuthFile>,
}

/// `[mcp_servers.NAME.oauth]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct McpOAuthFile {
    /// A client registered beforehand, for an authorization server without dynamic client
    /// registration.
    pub client_id: Option<String>,
    /// The scopes to ask for (else those the server names).
    pub scopes: Option<Vec<String>>,
    /// The loopback redirect's port, for a client registered with a fixed redirect URI
    /// (`http://127.0.0.1:PORT/callback`); else a free port is picked.
    pub callback_port: Option<u16>,
}

/// The `[mcp_servers]` table: servers by name.
pub type McpServersFile = BTreeMap<String, McpServerFile>;

impl McpServerFile {
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// Whether the server offers its tool `name` (`enabled_tools`, then `disabled_tools`).
    pub fn offers(&self, name: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }

    /// What is wrong with the table, if anything: exactly one of `command` and `url`.
    pub fn problem(&self) -> Option<&'static str> {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Some("set `command` (stdio) or `url` (HTTP), not both"),
            (None, None) => Some("needs `command` (a stdio server) or `url` (an HTTP server)"),
            (Some(command), None) if command.trim().is_empty() => Some("`command` is empty"),
            _ => None,
        }
    }
}

/// Later layers replace a server's table whole (a server is one thing, not a mix of two).
pub fn merge(mut under: McpServersFile, over: McpServersFile) -> McpServersFile {
    under.extend(over);
    under
}
