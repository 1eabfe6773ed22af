//! Configuration, layered: built-in defaults < config file in the platform config dir <
//! `--config FILE` < environment (`CAIRN_*`, provider key variables) < command-line flags.
//! Everything is resolved before any request, so a missing key or a bad file is reported at once.
//! This file resolves the layers into a `Config`; `layer` is one layer and how layers merge,
//! `presets` the providers, `tables` the `[bash]`, `[sandbox]` and `[permissions]` tables,
//! `prices` the `[prices]` table, `limits` the caps on a reply.

mod hooks;
mod layer;
mod limits;
mod lsp;
mod mcp;
mod presets;
mod prices;
mod subagents;
mod tables;
mod web;
mod wire_keys;

use std::path::PathBuf;
use std::time::Duration;

pub use hooks::{HookEntry, HooksFile, OnError};
pub use layer::ConfigFile;
pub use lsp::{LspFile, LspServerEntry};
pub use mcp::{
    McpOAuthFile, McpServerFile, McpServersFile, STARTUP_TIMEOUT_SECS, TOOL_TIMEOUT_SECS,
};
pub use presets::{CUSTOM_KEY_ENV, DEFAULT_PROVIDER, PRESETS, Preset};
pub use prices::{PriceFile, PricesFile};
pub use subagents::{MAX_DEPTH_CEILING, SubagentsFile};
pub use tables::{BashFile, CheckpointsFile, PermissionsFile, SandboxFile};
pub use web::{SearchFile, WebFile};

use crate::bus::Mode;
use crate::dirs::Dirs;
use crate::llm::ProviderSettings;
use limits::reply_limits;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "unknown provider `{0}` (deepseek, openai, anthropic, openrouter, ollama, or custom with base_url)"
    )]
    UnknownProvider(String),
    #[error(
        "provider `custom` needs a base_url (set `base_url` in the config file, CAIRN_BASE_URL or --base-url)"
    )]
    MissingBaseUrl,
    #[error(
        "no API key for {provider}: set the environment variable {env} (or `api_key_env` in {config} to name another variable)"
    )]
    MissingKey {
        provider: String,
        env: String,
        config: String,
    },
    #[error("{name}={value}: {message}")]
    BadEnv {
        name: String,
        value: String,
        message: String,
    },
}

/// The fully resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub provider: ProviderSettings,
    /// The variable the key came from (removed from commands' environment).
    pub key_env: Option<String>,
    pub mode: Mode,
    pub max_steps: u32,
    pub context_window: u64,
    /// True when the user set `context_window`: the provider is then not asked.
    pub context_window_set: bool,
    /// Whether the configured model takes images: `vision` in the config, else the table of
    /// known models; `None` when neither knows (images are then sent and a refusal handled).
    pub vision: Option<bool>,
    /// The most tokens one reply of the model may have (room kept free in the window).
    pub max_output: u64,
    /// Compact when the conversation fills this fraction of the window.
    pub compact_threshold: f64,
    pub prices: PricesFile,
    pub pass_env: Vec<String>,
    pub sandbox: SandboxFile,
    pub checkpoints: CheckpointsFile,
    pub permissions: PermissionsFile,
    /// The `[network]` table: CAs, proxy, timeouts (the stack is built from it at launch).
    pub network: crate::net::NetworkFile,
    /// `[web]` and `[web.search]`, resolved (the search key read from its variable).
    pub web: crate::web::WebSettings,
    /// `[hooks]` of the user's file and `--config`, in that order (the project's are read by
    /// `hooks::load`).
    pub hooks: HooksFile,
    /// `[mcp_servers.NAME]` of the user's file and `--config` (a later layer replaces a
    /// server's table whole).
    pub mcp_servers: McpServersFile,
    /// `[lsp]` of the user's file and `--config` (a project's is read by `lsp::servers`).
    pub lsp: LspFile,
    /// `[subagents]` of the user's file and `--config`.
    pub subagents: SubagentsFile,
    /// The user config file that was read, if any (named in error messages).
    pub config_path: PathBuf,
}

/// Command-line flags that override everything else.
#[derive(Debug, Clone, Default)]
pub struct FlagLayer {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub mode: Option<Mode>,
    pub config: Option<PathBuf>,
    /// `--api`: the wire format.
    pub api: Option<crate::llm::Api>,
    /// `--reasoning-effort`.
    pub reasoning_effort: Option<String>,
    /// `--thinking-budget`.
    pub thinking_budget: Option<u32>,
}

impl Config {
    /// Loads every layer from the real environment (the user's file is `dirs`' config file).
    pub fn load(dirs: &Dirs, flags: &FlagLayer) -> Result<Config, ConfigError> {
        // Keys were moved out of the environment at start-up (`secrets::protect`).
        Self::load_with(dirs, flags, &crate::secrets::var)
    }

    /// Loads every layer; `env` stands in for the process environment (tests).
    pub fn load_with(
        dirs: &Dirs,
        flags: &FlagLayer,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let user_path = dirs.config_file();
        let mut layers = ConfigFile::default();
        if user_path.is_file() {
            layers = layers.merge(ConfigFile::load(&user_path)?);
        }
        if let Some(path) = &flags.config {
            layers = layers.merge(ConfigFile::load(path)?);
        }
        layers = layers.merge(ConfigFile::from_env(env)?);
        let flag_layer = ConfigFile {
            provider: flags.provider.clone(),
            model: flags.model.clone(),
            base_url: flags.base_url.clone(),
            mode: flags.mode,
            api: flags.api,
            reasoning_effort: flags.reasoning_effort.clone(),
            thinking_budget: flags.thinking_budget,
            ..ConfigFile::default()
        };
        // `--base-url` without `--provider` means a server of the user's own.
        let custom_by_flag = flags.base_url.is_some() && flags.provider.is_none();
        let mut merged = layers.merge(flag_layer);
        // A URL without a provider, from any layer, is a server of the user's own: never send
        // it a preset's key.
        if custom_by_flag || (merged.provider.is_none() && merged.base_url.is_some()) {
            merged.provider = Some("custom".into());
        }
        let shown_path = flags.config.clone().unwrap_or(user_path);
        Self::resolve(merged, env, shown_path)
    }

    /// Turns merged layers into settings, checking the key before any request is made.
    pub fn resolve(
        file: ConfigFile,
        env: &dyn Fn(&str) -> Option<String>,
        config_path: PathBuf,
    ) -> Result<Config, ConfigError> {
        let provider_name = file
            .provider
            .clone()
            .unwrap_or_else(|| DEFAULT_PROVIDER.into());
        let preset = PRESETS.iter().find(|p| p.name == provider_name);
        if preset.is_none() && provider_name != "custom" {
            return Err(ConfigError::UnknownProvider(provider_name));
        }
        let base_url = match (&file.base_url, preset) {
            (Some(url), _) => url.trim_end_matches('/').to_string(),
            (None, Some(p)) => p.base_url.to_string(),
            (None, None) => return Err(ConfigError::MissingBaseUrl),
        };
        let key_env = file.api_key_env.clone().or_else(|| {
            preset.map_or(Some(CUSTOM_KEY_ENV.to_string()), |p| {
                p.key_env.map(String::from)
            })
        });
        let api_key = key_env.as_deref().and_then(env);
        let key_required =
            preset.is_some_and(|p| p.key_env.is_some()) || file.api_key_env.is_some();
        if api_key.is_none() && key_required {
            return Err(ConfigError::MissingKey {
                provider: provider_name,
                env: key_env.unwrap_or_default(),
                config: config_path.display().to_string(),
            });
        }
        let model = file
            .model
            .clone()
            .or_else(|| preset.map(|p| p.model.to_string()))
            .unwrap_or_else(|| "default".into());
        let known = crate::models::lookup(&model);
        let vision = file.vision.or_else(|| crate::models::takes_images(&model));
        let context_window = file
            .context_window
            .or(known.map(|info| info.context_window))
            .or_else(|| preset.map(|p| p.context_window))
            .unwrap_or(128_000);
        let compact_threshold = file.compact_threshold.unwrap_or(0.8);
        if !(0.1..=1.0).contains(&compact_threshold) {
            return Err(ConfigError::File {
                path: config_path,
                message: format!(
                    "compact_threshold must be between 0.1 and 1.0 (a fraction of the window), got {compact_threshold}"
                ),
            });
        }
        let provider = ProviderSettings {
            provider: provider_name,
            base_url,
            api_key,
            model,
            max_retries: file.max_retries.unwrap_or(5),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(file.request_idle_timeout_secs.unwrap_or(300)),
            max_tokens: file.max_tokens,
            temperature: file.temperature,
            limits: reply_limits(&file),
            wire: crate::llm::WireOptions {
                // The preset's format unless one is chosen: the `anthropic` preset speaks the
                // Messages API, the others chat completions.
                api: file.api.or(preset.map(|p| p.api)).unwrap_or_default(),
                tool_choice: file.tool_choice,
                reasoning_effort: file.reasoning_effort.clone(),
                thinking_budget: file.thinking_budget,
                cache_ttl: file.cache_ttl.unwrap_or_default(),
            },
        };
        Ok(Config {
            provider,
            key_env,
            mode: file.mode.unwrap_or_default(),
            max_steps: match file.max_steps {
                Some(0) => {
                    return Err(ConfigError::File {
                        path: config_path,
                        message: "max_steps must be at least 1".into(),
                    });
                }
                steps => steps.unwrap_or(100),
            },
            context_window,
            context_window_set: file.context_window.is_some(),
            vision,
            max_output: known.map_or(8_192, |info| info.max_output),
            compact_threshold,
            prices: file.prices.unwrap_or_default(),
            pass_env: file.bash.and_then(|b| b.pass_env).unwrap_or_default(),
            sandbox: file.sandbox.unwrap_or_default(),
            checkpoints: file.checkpoints.unwrap_or_default(),
            permissions: file.permissions.unwrap_or_default(),
            network: file.network.unwrap_or_default(),
            hooks: file.hooks.unwrap_or_default(),
            mcp_servers: file.mcp_servers.unwrap_or_default(),
            lsp: file.lsp.unwrap_or_default(),
            subagents: file.subagents.unwrap_or_default(),
            web: file
                .web
                .unwrap_or_default()
                .resolve(env)
                .map_err(|message| ConfigError::File {
                    path: config_path.clone(),
                    message,
                })?,
            config_path,
        })
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
