//! The `chat.completion.chunk` payload as servers send it, every field optional: what the
//! assembler reads, and nothing else.

use serde::Deserialize;

use crate::bus::Usage;

#[derive(Deserialize)]
pub(super) struct Chunk {
    #[serde(default)]
    pub(super) choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub(super) struct Choice {
    #[serde(default)]
    pub(super) index: Option<u64>,
    /// Non-streaming answers (a server that ignored `stream`) carry `message` instead.
    #[serde(default, alias = "message")]
    pub(super) delta: Option<Delta>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct Delta {
    #[serde(default)]
    pub(super) content: Option<String>,
    #[serde(default)]
    pub(super) reasoning_content: Option<String>,
    #[serde(default)]
    pub(super) reasoning: Option<String>,
    /// LiteLLM's Anthropic route.
    #[serde(default)]
    pub(super) thinking_blocks: Option<Vec<serde_json::Value>>,
    /// OpenRouter.
    #[serde(default)]
    pub(super) reasoning_details: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    pub(super) tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize, Default)]
pub(super) struct ToolCallDelta {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) function: Option<FunctionDelta>,
}

#[derive(Deserialize, Default)]
pub(super) struct FunctionDelta {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
    /// DeepSeek.
    #[serde(default)]
    pub(super) prompt_cache_hit_tokens: Option<u64>,
    /// OpenAI (DeepSeek sends it too).
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
pub(super) struct PromptTokensDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn to_usage(&self) -> Usage {
        let details = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens);
        Usage {
            prompt_tokens: self.prompt_tokens.unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
            cached_tokens: self.prompt_cache_hit_tokens.or(details).unwrap_or(0),
        }
    }
}
