//! One layer of configuration (the user file, `--config FILE`, the environment, the flags):
//! every key optional, unknown keys refused; how layers merge, and where a mistake in a file is.

use std::path::Path;

use serde::Deserialize;

use super::{
    BashFile, CheckpointsFile, ConfigError, PermissionsFile, PriceFile, PricesFile, SandboxFile,
    WebFile,
};
use crate::bus::Mode;

/// One layer of configuration: every key optional, unknown keys refused.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub mode: Option<Mode>,
    pub max_steps: Option<u32>,
    pub context_window: Option<u64>,
    /// Whether the model takes images; unset: the table of known models decides.
    pub vision: Option<bool>,
    pub compact_threshold: Option<f64>,
    pub max_retries: Option<u32>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub request_idle_timeout_secs: Option<u64>,
    pub request_timeout_secs: Option<u64>,
    pub max_reply_bytes: Option<usize>,
    pub max_tool_call_bytes: Option<usize>,
    /// Sent only when set: `auto`, `required` or `none`.
    #[serde(default, deserialize_with = "super::wire_keys::parsed")]
    pub tool_choice: Option<crate::llm::ToolChoice>,
    /// The wire format: `chat`, `anthropic` or `responses` (unset: the preset's, else chat).
    #[serde(default, deserialize_with = "super::wire_keys::parsed")]
    pub api: Option<crate::llm::Api>,
    /// `reasoning_effort` (chat) / `reasoning.effort` (Responses).
    pub reasoning_effort: Option<String>,
    /// Anthropic's thinking budget in tokens; thinking is off without it.
    pub thinking_budget: Option<u32>,
    /// How long Anthropic keeps the prompt cache: `5m` (default) or `1h`.
    #[serde(default, deserialize_with = "super::wire_keys::parsed")]
    pub cache_ttl: Option<crate::llm::CacheTtl>,
    pub bash: Option<BashFile>,
    pub sandbox: Option<SandboxFile>,
    pub checkpoints: Option<CheckpointsFile>,
    pub permissions: Option<PermissionsFile>,
    pub prices: Option<PricesFile>,
    pub network: Option<crate::net::NetworkFile>,
    pub web: Option<WebFile>,
    pub hooks: Option<super::HooksFile>,
    pub mcp_servers: Option<super::McpServersFile>,
    pub lsp: Option<super::LspFile>,
    pub subagents: Option<super::SubagentsFile>,
}

impl ConfigFile {
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|err| ConfigError::File {
            path: path.to_path_buf(),
            message: describe_toml_error(text, &err),
        })
    }

    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Later layers win key by key; lists replace, tables merge.
    /// A layer that switches to another provider does not inherit the model, URL or key
    /// variable chosen for the old one (an OpenAI model name sent to DeepSeek is a 400).
    pub fn merge(self, over: ConfigFile) -> ConfigFile {
        let switches = over.provider.is_some() && over.provider != self.provider;
        let inherit = |value: Option<String>| if switches { None } else { value };
        ConfigFile {
            provider: over.provider.or(self.provider),
            model: over.model.or(inherit(self.model)),
            base_url: over.base_url.or(inherit(self.base_url)),
            api_key_env: over.api_key_env.or(inherit(self.api_key_env)),
            mode: over.mode.or(self.mode),
            max_steps: over.max_steps.or(self.max_steps),
            context_window: over.context_window.or(self.context_window),
            vision: over.vision.or(self.vision),
            compact_threshold: over.compact_threshold.or(self.compact_threshold),
            max_retries: over.max_retries.or(self.max_retries),
            max_tokens: over.max_tokens.or(self.max_tokens),
            temperature: over.temperature.or(self.temperature),
            request_idle_timeout_secs: over
                .request_idle_timeout_secs
                .or(self.request_idle_timeout_secs),
            request_timeout_secs: over.request_timeout_secs.or(self.request_timeout_secs),
            max_reply_bytes: over.max_reply_bytes.or(self.max_reply_bytes),
            max_tool_call_bytes: over.max_tool_call_bytes.or(self.max_tool_call_bytes),
            tool_choice: over.tool_choice.or(self.tool_choice),
            // A format belongs to a provider, like its URL: a switch does not inherit it.
            api: over.api.or(if switches { None } else { self.api }),
            reasoning_effort: over.reasoning_effort.or(self.reasoning_effort),
            thinking_budget: over.thinking_budget.or(self.thinking_budget),
            cache_ttl: over.cache_ttl.or(self.cache_ttl),
            bash: merge_table(self.bash, over.bash, |a, b| BashFile {
                pass_env: b.pass_env.or(a.pass_env),
            }),
            sandbox: merge_table(self.sandbox, over.sandbox, |a, b| SandboxFile {
                enabled: b.enabled.or(a.enabled),
                network: b.network.or(a.network),
                writable: b.writable.or(a.writable),
                // More stores are only ever more caution: every layer's entries count.
                deny_read: match (a.deny_read, b.deny_read) {
                    (Some(mut a), Some(b)) => {
                        a.extend(b);
                        Some(a)
                    }
                    (a, b) => b.or(a),
                },
                allow_unix_sockets: b.allow_unix_sockets.or(a.allow_unix_sockets),
                max_processes: b.max_processes.or(a.max_processes),
                max_memory_mb: b.max_memory_mb.or(a.max_memory_mb),
                read_only_max_processes: b.read_only_max_processes.or(a.read_only_max_processes),
                read_only_max_memory_mb: b.read_only_max_memory_mb.or(a.read_only_max_memory_mb),
            }),
            checkpoints: merge_table(self.checkpoints, over.checkpoints, |a, b| CheckpointsFile {
                enabled: b.enabled.or(a.enabled),
                notifications: b.notifications.or(a.notifications),
                max_store_mb: b.max_store_mb.or(a.max_store_mb),
            }),
            permissions: merge_table(self.permissions, over.permissions, |a, b| PermissionsFile {
                allow: b.allow.or(a.allow),
                ask: b.ask.or(a.ask),
                deny: b.deny.or(a.deny),
                readable: b.readable.or(a.readable),
                run_later: b.run_later.or(a.run_later),
            }),
            network: merge_table(self.network, over.network, crate::net::NetworkFile::merge),
            prices: merge_table(self.prices, over.prices, |a, mut b| {
                let mut models = a.models;
                models.append(&mut b.models);
                PricesFile {
                    default: PriceFile {
                        input: b.default.input.or(a.default.input),
                        cached_input: b.default.cached_input.or(a.default.cached_input),
                        output: b.default.output.or(a.default.output),
                    },
                    models,
                }
            }),
            web: merge_table(self.web, over.web, WebFile::merge),
            hooks: merge_table(self.hooks, over.hooks, super::HooksFile::merge),
            mcp_servers: merge_table(self.mcp_servers, over.mcp_servers, super::mcp::merge),
            lsp: merge_table(self.lsp, over.lsp, super::LspFile::merge),
            subagents: merge_table(self.subagents, over.subagents, super::SubagentsFile::merge),
        }
    }

    /// The `CAIRN_*` environment layer.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut layer = ConfigFile {
            provider: env("CAIRN_PROVIDER"),
            model: env("CAIRN_MODEL"),
            base_url: env("CAIRN_BASE_URL"),
            ..ConfigFile::default()
        };
        if let Some(value) = env("CAIRN_API") {
            layer.api = Some(value.parse().map_err(|message| ConfigError::BadEnv {
                name: "CAIRN_API".into(),
                value: value.clone(),
                message,
            })?);
        }
        if let Some(value) = env("CAIRN_MODE") {
            layer.mode = Some(value.parse().map_err(|message| ConfigError::BadEnv {
                name: "CAIRN_MODE".into(),
                value: value.clone(),
                message,
            })?);
        }
        if let Some(value) = env("CAIRN_MAX_STEPS") {
            layer.max_steps = Some(value.parse().map_err(|_| ConfigError::BadEnv {
                name: "CAIRN_MAX_STEPS".into(),
                value: value.clone(),
                message: "expected a whole number".into(),
            })?);
        }
        Ok(layer)
    }
}

fn merge_table<T>(under: Option<T>, over: Option<T>, merge: impl Fn(T, T) -> T) -> Option<T> {
    match (under, over) {
        (Some(a), Some(b)) => Some(merge(a, b)),
        (a, b) => b.or(a),
    }
}

/// toml's message already names the key; add the line and column of the mistake.
fn describe_toml_error(text: &str, err: &toml::de::Error) -> String {
    let message = err.message().trim().to_string();
    match err.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let source_line = text.lines().nth(line - 1).unwrap_or("").trim_end();
            format!("line {line}, column {column}: {message}\n    {source_line}")
        }
        None => message,
    }
}
