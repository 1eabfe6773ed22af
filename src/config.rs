//! Configuration, layered: built-in defaults < config file in the platform config dir <
//! `--config FILE` < environment (`CAIRN_*`, provider key variables) < command-line flags.
//! Everything is resolved before any request, so a missing key or a bad file is reported at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::llm::{ProviderSettings, ReplyLimits};
use crate::permissions::Mode;

/// A provider preset: where it lives, which variable holds its key, a default model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub base_url: &'static str,
    /// `None` for servers that need no key (Ollama).
    pub key_env: Option<&'static str>,
    pub model: &'static str,
    pub context_window: u64,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "deepseek",
        base_url: "https://api.deepseek.com/v1",
        key_env: Some("DEEPSEEK_API_KEY"),
        model: "deepseek-chat",
        context_window: 128_000,
    },
    Preset {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        model: "gpt-4.1",
        context_window: 1_000_000,
    },
    Preset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_env: Some("OPENROUTER_API_KEY"),
        model: "deepseek/deepseek-chat",
        context_window: 128_000,
    },
    Preset {
        name: "ollama",
        base_url: "http://localhost:11434/v1",
        key_env: None,
        model: "qwen2.5-coder",
        context_window: 32_768,
    },
];

/// The variable that holds the key of a custom (`--base-url`) server; it may be absent.
pub const CUSTOM_KEY_ENV: &str = "CAIRN_API_KEY";

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
        "unknown provider `{0}` (deepseek, openai, openrouter, ollama, or custom with base_url)"
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

/// The `[bash]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BashFile {
    /// Secret-looking variables the model's commands may still see.
    pub pass_env: Option<Vec<String>>,
}

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// Default true: commands run in the sandbox wherever Landlock works.
    pub enabled: Option<bool>,
    /// Default false: approved commands may not use the network either.
    pub network: Option<bool>,
    /// Directories approved commands may write in besides the workspace and temp dirs.
    pub writable: Option<Vec<PathBuf>>,
}

/// The `[permissions]` table: command-prefix rules.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PermissionsFile {
    pub allow: Option<Vec<String>>,
    pub ask: Option<Vec<String>>,
    pub deny: Option<Vec<String>>,
    /// Directories outside the workspace the file tools read without asking (`~/` allowed).
    pub readable: Option<Vec<PathBuf>>,
}

/// One price in the `[prices]` table: dollars per million tokens.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub output: Option<f64>,
}

/// The `[prices]` table: prices for the configured model, and `[prices.models."NAME"]` for others.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PricesFile {
    #[serde(flatten)]
    pub default: PriceFile,
    #[serde(default)]
    pub models: std::collections::BTreeMap<String, PriceFile>,
}

impl PricesFile {
    /// The price of `model`: its own entry, else the table's top-level prices when `model`
    /// is the configured one, each key falling back to the catalogue's price.
    pub fn for_model(&self, model: &str, configured: &str) -> Option<crate::models::Prices> {
        let listed = crate::models::lookup(model).and_then(|info| info.prices);
        let over = self
            .models
            .get(model)
            .or((model == configured).then_some(&self.default));
        let Some(over) = over else { return listed };
        let input = over.input.or(listed.map(|p| p.input))?;
        Some(crate::models::Prices {
            input,
            cached_input: over
                .cached_input
                .or(listed.map(|p| p.cached_input))
                .unwrap_or(input),
            output: over.output.or(listed.map(|p| p.output)).unwrap_or(input),
        })
    }
}

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
    pub compact_threshold: Option<f64>,
    pub max_retries: Option<u32>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub request_idle_timeout_secs: Option<u64>,
    pub request_timeout_secs: Option<u64>,
    pub max_reply_bytes: Option<usize>,
    pub max_tool_call_bytes: Option<usize>,
    pub bash: Option<BashFile>,
    pub sandbox: Option<SandboxFile>,
    pub permissions: Option<PermissionsFile>,
    pub prices: Option<PricesFile>,
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
            bash: merge_table(self.bash, over.bash, |a, b| BashFile {
                pass_env: b.pass_env.or(a.pass_env),
            }),
            sandbox: merge_table(self.sandbox, over.sandbox, |a, b| SandboxFile {
                enabled: b.enabled.or(a.enabled),
                network: b.network.or(a.network),
                writable: b.writable.or(a.writable),
            }),
            permissions: merge_table(self.permissions, over.permissions, |a, b| PermissionsFile {
                allow: b.allow.or(a.allow),
                ask: b.ask.or(a.ask),
                deny: b.deny.or(a.deny),
                readable: b.readable.or(a.readable),
            }),
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
    /// The most tokens one reply of the model may have (room kept free in the window).
    pub max_output: u64,
    /// Compact when the conversation fills this fraction of the window.
    pub compact_threshold: f64,
    pub prices: PricesFile,
    pub pass_env: Vec<String>,
    pub sandbox: SandboxFile,
    pub permissions: PermissionsFile,
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
}

/// Where the platform keeps cairn's user config file.
pub fn default_config_path() -> PathBuf {
    if let Some(dir) = std::env::var_os("CAIRN_CONFIG_DIR") {
        return PathBuf::from(dir).join("config.toml");
    }
    directories::ProjectDirs::from("", "", "cairn")
        .map(|dirs| dirs.config_dir().join("config.toml"))
        .unwrap_or_else(|| PathBuf::from(".cairn").join("config.toml"))
}

impl Config {
    /// Loads every layer from the real environment.
    pub fn load(flags: &FlagLayer) -> Result<Config, ConfigError> {
        // Keys were moved out of the environment at start-up (`secrets::protect`).
        Self::load_with(flags, &crate::secrets::var)
    }

    /// Loads every layer; `env` stands in for the process environment (tests).
    pub fn load_with(
        flags: &FlagLayer,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let user_path = default_config_path();
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
        let provider_name = file.provider.clone().unwrap_or_else(|| "deepseek".into());
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
            max_output: known.map_or(8_192, |info| info.max_output),
            compact_threshold,
            prices: file.prices.unwrap_or_default(),
            pass_env: file.bash.and_then(|b| b.pass_env).unwrap_or_default(),
            sandbox: file.sandbox.unwrap_or_default(),
            permissions: file.permissions.unwrap_or_default(),
            config_path,
        })
    }
}

/// The reply limits, defaults where the file sets none; a 0 would stop every reply at once,
/// so it counts as 1.
fn reply_limits(file: &ConfigFile) -> ReplyLimits {
    let defaults = ReplyLimits::default();
    ReplyLimits {
        max_reply_bytes: file
            .max_reply_bytes
            .unwrap_or(defaults.max_reply_bytes)
            .max(1),
        max_call_bytes: file
            .max_tool_call_bytes
            .unwrap_or(defaults.max_call_bytes)
            .max(1),
        max_calls: defaults.max_calls,
        request_timeout: file
            .request_timeout_secs
            .map_or(defaults.request_timeout, |s| Duration::from_secs(s.max(1))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn missing_key_names_the_variable_and_the_config_file() {
        let err =
            Config::resolve(ConfigFile::default(), &env_of(&[]), "cfg.toml".into()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("DEEPSEEK_API_KEY"), "{text}");
        assert!(text.contains("cfg.toml"), "{text}");
    }

    #[test]
    fn presets_fill_url_model_and_key() {
        let file = ConfigFile {
            provider: Some("openai".into()),
            ..Default::default()
        };
        let cfg = Config::resolve(file, &env_of(&[("OPENAI_API_KEY", "k")]), "c".into()).unwrap();
        assert_eq!(cfg.provider.base_url, "https://api.openai.com/v1");
        assert_eq!(cfg.provider.api_key.as_deref(), Some("k"));
        let ollama = ConfigFile {
            provider: Some("ollama".into()),
            ..Default::default()
        };
        let cfg = Config::resolve(ollama, &env_of(&[]), "c".into()).unwrap();
        assert_eq!(cfg.provider.api_key, None);
    }

    #[test]
    fn custom_server_key_is_optional() {
        let file = ConfigFile {
            provider: Some("custom".into()),
            base_url: Some("http://127.0.0.1:9/v1/".into()),
            ..Default::default()
        };
        let cfg = Config::resolve(file, &env_of(&[]), "c".into()).unwrap();
        assert_eq!(cfg.provider.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(cfg.provider.api_key, None);
    }

    #[test]
    fn later_layers_win() {
        let file = ConfigFile {
            model: Some("a".into()),
            max_steps: Some(5),
            ..Default::default()
        };
        let env = ConfigFile::from_env(&env_of(&[("CAIRN_MODEL", "b")])).unwrap();
        let merged = file.merge(env);
        assert_eq!(merged.model.as_deref(), Some("b"));
        assert_eq!(merged.max_steps, Some(5));
    }

    #[test]
    fn switching_provider_drops_the_old_providers_model_and_url() {
        let file = ConfigFile {
            provider: Some("openai".into()),
            model: Some("gpt-4.1".into()),
            base_url: Some("https://proxy.example/v1".into()),
            ..Default::default()
        };
        let flags = ConfigFile {
            provider: Some("deepseek".into()),
            ..Default::default()
        };
        let merged = file.clone().merge(flags);
        assert_eq!(merged.model, None);
        assert_eq!(merged.base_url, None);
        let same = file.merge(ConfigFile {
            provider: Some("openai".into()),
            ..Default::default()
        });
        assert_eq!(same.model.as_deref(), Some("gpt-4.1"));
    }

    #[test]
    fn zero_steps_is_refused() {
        let file = ConfigFile {
            max_steps: Some(0),
            provider: Some("ollama".into()),
            ..Default::default()
        };
        let err = Config::resolve(file, &env_of(&[]), "c.toml".into())
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_steps"), "{err}");
    }

    #[test]
    fn mistakes_report_line_and_key() {
        let path = Path::new("x.toml");
        let err = ConfigFile::parse("model = \"m\"\nmax_step = 3\n", path)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("x.toml") && err.contains("line 2") && err.contains("max_step"),
            "{err}"
        );
        let err = ConfigFile::parse("max_steps = \"ten\"\n", path)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1") && err.contains("max_steps"), "{err}");
        let err = ConfigFile::parse("mode = \"sometimes\"\n", path)
            .unwrap_err()
            .to_string();
        assert!(err.contains("sometimes"), "{err}");
        let err = ConfigFile::parse("model = \n", path)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn the_example_config_loads_and_documents_every_key() {
        let text = include_str!("../config.example.toml");
        let file = ConfigFile::parse(text, Path::new("config.example.toml")).unwrap();
        assert_eq!(file.provider.as_deref(), Some("deepseek"));
        assert!(file.bash.is_some() && file.sandbox.is_some() && file.permissions.is_some());
        for key in [
            "provider",
            "model",
            "base_url",
            "api_key_env",
            "mode",
            "max_steps",
            "context_window",
            "compact_threshold",
            "input",
            "cached_input",
            "output",
            "max_retries",
            "max_tokens",
            "temperature",
            "request_idle_timeout_secs",
            "request_timeout_secs",
            "max_reply_bytes",
            "max_tool_call_bytes",
            "pass_env",
            "enabled",
            "network",
            "writable",
            "allow",
            "ask",
            "deny",
        ] {
            assert!(
                text.contains(&format!("{key} =")),
                "config.example.toml does not document `{key}`"
            );
        }
        let cfg = Config::resolve(file, &env_of(&[("DEEPSEEK_API_KEY", "k")]), "c".into()).unwrap();
        assert_eq!(cfg.mode, Mode::AutoEdit);
    }

    #[test]
    fn bad_mode_in_env_is_reported() {
        let err = ConfigFile::from_env(&env_of(&[("CAIRN_MODE", "yolo")])).unwrap_err();
        assert!(err.to_string().contains("CAIRN_MODE"));
    }
}
