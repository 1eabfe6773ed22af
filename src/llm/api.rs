//! Which wire format a provider speaks (`api = "chat" | "anthropic" | "responses"`, `--api`),
//! and the per-format knobs of a request: `tool_choice`, reasoning effort, the thinking
//! budget and the prompt-cache TTL. The formats themselves live in `formats`.

use std::fmt;
use std::str::FromStr;

/// A provider's wire format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI-compatible Chat Completions: DeepSeek, OpenAI, OpenRouter, Ollama, vLLM,
    /// llama.cpp, LiteLLM.
    #[default]
    Chat,
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Responses API.
    Responses,
}

impl Api {
    pub const ALL: [Api; 3] = [Api::Chat, Api::Anthropic, Api::Responses];

    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Anthropic => "anthropic",
            Api::Responses => "responses",
        }
    }

    /// What is appended to `base_url` (the API root with its version) for a reply.
    pub fn path(self) -> &'static str {
        match self {
            Api::Chat => "/chat/completions",
            Api::Anthropic => "/messages",
            Api::Responses => "/responses",
        }
    }

    /// What the API is called in a message that says a route is missing.
    pub fn title(self) -> &'static str {
        match self {
            Api::Chat => "chat completions API",
            Api::Anthropic => "Anthropic Messages API",
            Api::Responses => "Responses API",
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Api {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        Api::ALL
            .into_iter()
            .find(|api| api.name() == value.trim())
            .ok_or_else(|| format!("unknown api `{value}`: expected chat, anthropic or responses"))
    }
}

/// `tool_choice`: unsent unless configured (some servers, llama-cpp-python's among them,
/// ignore `tools` without it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    Required,
    None,
}

impl FromStr for ToolChoice {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        match value.trim() {
            "auto" => Ok(ToolChoice::Auto),
            "required" | "any" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            other => Err(format!(
                "unknown tool_choice `{other}`: expected auto, required or none"
            )),
        }
    }
}

impl ToolChoice {
    /// The chat and Responses spelling.
    pub fn openai(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
            ToolChoice::None => "none",
        }
    }

    /// Anthropic's spelling (`{"type": "auto" | "any" | "none"}`).
    pub fn anthropic(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "any",
            ToolChoice::None => "none",
        }
    }
}

/// How long Anthropic keeps a cache entry: 5 minutes (the default, writes cost 1.25×) or one
/// hour (writes cost 2×).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheTtl {
    #[default]
    FiveMinutes,
    OneHour,
}

impl FromStr for CacheTtl {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        match value.trim() {
            "5m" => Ok(CacheTtl::FiveMinutes),
            "1h" => Ok(CacheTtl::OneHour),
            other => Err(format!("unknown cache_ttl `{other}`: expected 5m or 1h")),
        }
    }
}

/// The per-format knobs of a request. Each format sends what it has a field for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireOptions {
    pub api: Api,
    pub tool_choice: Option<ToolChoice>,
    /// `reasoning_effort` (chat), `reasoning.effort` (Responses): `minimal`, `low`,
    /// `medium`, `high`.
    pub reasoning_effort: Option<String>,
    /// Anthropic's `thinking.budget_tokens`; thinking is off without it.
    pub thinking_budget: Option<u32>,
    pub cache_ttl: CacheTtl,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_paths_follow_the_api_root() {
        for api in Api::ALL {
            assert_eq!(api.name().parse::<Api>(), Ok(api));
        }
        assert_eq!(Api::Anthropic.path(), "/messages");
        assert!("claude".parse::<Api>().unwrap_or_default() == Api::Chat);
        assert!(
            "claude"
                .parse::<Api>()
                .is_err_and(|e| e.contains("anthropic"))
        );
        assert_eq!("any".parse::<ToolChoice>(), Ok(ToolChoice::Required));
        assert!("1d".parse::<CacheTtl>().is_err());
    }
}
