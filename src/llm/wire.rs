//! Serde types of the chat-completions request messages, exactly as sent.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    System {
        content: String,
    },
    /// Text, or text and images (see `user_content`).
    User {
        content: super::UserContent,
    },
    Assistant {
        /// Sent as `""` when absent (a message of tool calls only): llama.cpp's server behind
        /// llama-cpp-python answers 500 to `null`, and OpenAI, DeepSeek, vLLM and Ollama all
        /// take `""`.
        #[serde(serialize_with = "text_or_empty")]
        content: Option<String>,
        /// DeepSeek thinking models answer 400 unless the reasoning of an assistant message
        /// that made tool calls is sent back with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
        /// `thinking_blocks` (Anthropic through LiteLLM) and `reasoning_details` (OpenRouter),
        /// under the same rule as `reasoning_content`: a signed thinking block missing from a
        /// tool-calling turn makes Anthropic reject the follow-up.
        /// (The Responses API's reasoning items are left out: foreign to this wire.)
        #[serde(flatten, serialize_with = "super::reasoning::chat_blocks")]
        reasoning_blocks: super::ReasoningBlocks,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

fn text_or_empty<S: serde::Serializer>(text: &Option<String>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(text.as_deref().unwrap_or_default())
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub function: WireFunction,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireFunction {
    pub name: String,
    pub arguments: String,
}

impl WireToolCall {
    /// A function call as it goes back to the provider in an assistant message, its arguments
    /// through [`wire_arguments`].
    pub fn function(id: &str, name: &str, arguments: &str) -> WireToolCall {
        WireToolCall {
            id: id.to_string(),
            kind: "function".into(),
            function: WireFunction {
                name: name.to_string(),
                arguments: wire_arguments(arguments),
            },
        }
    }
}

/// Tool-call arguments as they go back to the provider in an assistant message: the model's
/// text when it is a JSON object, else `{}`. Strict servers (Anthropic behind a proxy) answer
/// 400 to every later request whose history holds arguments that are not an object, so one bad
/// call would end the session; the tool result already told the model what was wrong. Blank
/// arguments (DeepSeek streams `""` for parameterless calls) become `{}` too.
/// The one "blank arguments are `{}`" rule: DeepSeek streams `""` for a call without
/// parameters. Used when the call is run and when it goes back in history.
pub fn blank_as_empty_object(raw: &str) -> &str {
    if raw.trim().is_empty() { "{}" } else { raw }
}

pub fn wire_arguments(raw: &str) -> String {
    let raw = blank_as_empty_object(raw);
    if is_json_object(raw) {
        raw.to_string()
    } else {
        "{}".to_string()
    }
}

/// Valid JSON whose value is an object: it opens with `{` and parses whole.
pub fn is_json_object(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// The model's face of a tool: exactly what goes into the request, nothing else. A wire type,
/// so the client needs nothing from `tools`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: serde_json::Value,
}
