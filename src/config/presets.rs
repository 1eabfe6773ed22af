//! The provider presets (DeepSeek, OpenAI, Anthropic, OpenRouter, Ollama): base URL, key
//! variable, default model, window and wire format; and the key variable of a server of the
//! user's own.

use crate::llm::Api;

/// A provider preset: where it lives, which variable holds its key, a default model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    /// The provider's name as people write it (the setup panel's list).
    pub label: &'static str,
    pub base_url: &'static str,
    /// `None` for servers that need no key (Ollama).
    pub key_env: Option<&'static str>,
    pub model: &'static str,
    pub context_window: u64,
    /// The wire format it speaks unless `api` says otherwise.
    pub api: Api,
}

/// The provider of a configuration that names none.
pub const DEFAULT_PROVIDER: &str = "deepseek";

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "deepseek",
        label: "DeepSeek",
        base_url: "https://api.deepseek.com/v1",
        key_env: Some("DEEPSEEK_API_KEY"),
        model: "deepseek-chat",
        context_window: 128_000,
        api: Api::Chat,
    },
    Preset {
        name: "openai",
        label: "OpenAI",
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        model: "gpt-4.1",
        context_window: 1_000_000,
        api: Api::Chat,
    },
    Preset {
        name: "anthropic",
        label: "Anthropic",
        base_url: "https://api.anthropic.com/v1",
        key_env: Some("ANTHROPIC_API_KEY"),
        model: "claude-sonnet-4-5",
        context_window: 200_000,
        api: Api::Anthropic,
    },
    Preset {
        name: "openrouter",
        label: "OpenRouter",
        base_url: "https://openrouter.ai/api/v1",
        key_env: Some("OPENROUTER_API_KEY"),
        model: "deepseek/deepseek-chat",
        context_window: 128_000,
        api: Api::Chat,
    },
    Preset {
        name: "ollama",
        label: "Ollama",
        base_url: "http://localhost:11434/v1",
        key_env: None,
        model: "qwen2.5-coder",
        context_window: 32_768,
        api: Api::Chat,
    },
];

/// The variable that holds the key of a custom (`--base-url`) server; it may be absent.
pub const CUSTOM_KEY_ENV: &str = "CAIRN_API_KEY";
