//! The Messages API body (Anthropic): `system` as a text block, `tools` with `input_schema`,
//! messages of content blocks. An assistant turn goes back as its thinking and
//! redacted-thinking blocks verbatim (signatures byte for byte, in the order they came), then
//! its text, then its `tool_use` blocks; the results of its calls go back first in the next
//! user turn, as `tool_result` blocks, with any user text after them. `cache_plan` decides
//! where the `cache_control` breakpoints go. Sources: the Messages API reference and its
//! streaming, extended-thinking and prompt-caching guides at platform.claude.com/docs.

use serde::Serialize;
use serde_json::{Value, json};

use super::cache_plan::{CachePlan, plan};
use super::{BodyContext, MessagesTurn, split_data_url, system_text, user_parts};
use crate::llm::wire::wire_arguments;
use crate::llm::{ChatMessage, ChatRequest, ToolChoice, WirePart};

/// `max_tokens` when neither the config nor the table of models knows the model's limit.
const FALLBACK_MAX_TOKENS: u32 = 8_192;

/// The smallest thinking budget the API takes.
const MIN_THINKING_BUDGET: u32 = 1_024;

/// The body, fields in the order the API reads its prefix: tools, system, messages.
#[derive(Serialize)]
struct MessagesBody<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Value>,
    messages: Vec<MessagesTurn>,
}

pub fn body(cx: BodyContext<'_>, request: ChatRequest<'_>) -> Result<Vec<u8>, serde_json::Error> {
    let conversation = request.messages.as_slice();
    let system = system_text(conversation);
    let mut messages = project(conversation);
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|spec| {
            json!({
                "name": spec.name,
                "description": spec.description,
                "input_schema": spec.parameters,
            })
        })
        .collect();
    let mut system_blocks = if system.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": system})]
    };
    let cache = plan(
        &tools,
        &system_blocks,
        &messages,
        super::cache_plan::min_cacheable_tokens(cx.model),
    );
    // The diagnostic of the plan, in cairn's log: where the markers went and why not more.
    tracing::debug!(
        tools = cache.tools,
        system = cache.system,
        messages = ?cache.messages,
        min_tokens = super::cache_plan::min_cacheable_tokens(cx.model),
        "cache_control breakpoints"
    );
    apply_plan(
        &cache,
        &mut tools,
        &mut system_blocks,
        &mut messages,
        &cache_control(cx),
    );
    let (max_tokens, thinking) = limits(cx);
    let body = MessagesBody {
        model: cx.model,
        max_tokens,
        stream: true,
        temperature: cx.settings.temperature.filter(|_| thinking.is_none()),
        tool_choice: cx
            .settings
            .wire
            .tool_choice
            .filter(|_| !request.tools.is_empty())
            // With thinking on, the API takes only `auto` or `none`: a forced call would be a
            // 400 on every request.
            .map(|choice| match choice {
                ToolChoice::Required if thinking.is_some() => ToolChoice::Auto,
                other => other,
            })
            .map(|choice| json!({"type": ToolChoice::anthropic(choice)})),
        thinking,
        tools,
        system: system_blocks,
        messages,
    };
    serde_json::to_vec(&body)
}

/// `max_tokens` (required by the API: the config's, else the model's output limit) and the
/// `thinking` object when a budget is set, kept below `max_tokens` as the API requires.
fn limits(cx: BodyContext<'_>) -> (u32, Option<Value>) {
    let max_tokens = cx
        .settings
        .max_tokens
        .or_else(|| {
            crate::models::lookup(cx.model)
                .map(|info| u32::try_from(info.max_output).unwrap_or(u32::MAX))
        })
        .unwrap_or(FALLBACK_MAX_TOKENS);
    let thinking = cx.settings.wire.thinking_budget.map(|budget| {
        let budget = budget
            .max(MIN_THINKING_BUDGET)
            .min(max_tokens.saturating_sub(1).max(MIN_THINKING_BUDGET));
        json!({"type": "enabled", "budget_tokens": budget})
    });
    (max_tokens, thinking)
}

/// `{"type": "ephemeral"}`, with `"ttl": "1h"` when the hour-long cache is chosen.
fn cache_control(cx: BodyContext<'_>) -> Value {
    match cx.settings.wire.cache_ttl {
        crate::llm::CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        crate::llm::CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

fn apply_plan(
    cache: &CachePlan,
    tools: &mut [Value],
    system: &mut [Value],
    messages: &mut [MessagesTurn],
    marker: &Value,
) {
    let mark = |block: Option<&mut Value>| {
        if let Some(Value::Object(block)) = block {
            block.insert("cache_control".into(), marker.clone());
        }
    };
    if cache.tools {
        mark(tools.last_mut());
    }
    if cache.system {
        mark(system.last_mut());
    }
    for &at in &cache.messages {
        mark(messages.get_mut(at).and_then(|m| m.content.last_mut()));
    }
}

/// The conversation as Messages API turns: roles alternate (neighbours of one role are
/// joined), `tool_result` blocks lead their user turn, and a turn with nothing to send is
/// left out (the API refuses empty content).
pub fn project(conversation: &[ChatMessage]) -> Vec<MessagesTurn> {
    let mut out: Vec<MessagesTurn> = Vec::new();
    for message in conversation {
        match message {
            ChatMessage::System { .. } => {}
            ChatMessage::User { content } => {
                let blocks = user_parts(content).filter_map(user_block).collect();
                push(&mut out, "user", blocks);
            }
            ChatMessage::Assistant {
                content,
                reasoning_blocks,
                tool_calls,
                ..
            } => {
                let mut blocks: Vec<Value> = reasoning_blocks
                    .thinking_blocks
                    .iter()
                    .filter(|block| replayable(block))
                    .cloned()
                    .collect();
                if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input: Value =
                        serde_json::from_str(&wire_arguments(&call.function.arguments))
                            .unwrap_or_else(|_| json!({}));
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.function.name,
                        "input": input,
                    }));
                }
                push(&mut out, "assistant", blocks);
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => {
                let text = if content.is_empty() {
                    "(no output)"
                } else {
                    content
                };
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": tool_call_id,
                    "content": text,
                });
                match out.last_mut() {
                    Some(last) if last.role == "user" => {
                        // Results lead the turn: before any text already there.
                        let at = last
                            .content
                            .iter()
                            .position(|b| b["type"] != "tool_result")
                            .unwrap_or(last.content.len());
                        last.content.insert(at, block);
                    }
                    _ => out.push(MessagesTurn {
                        role: "user",
                        content: vec![block],
                    }),
                }
            }
        }
    }
    out
}

/// A thinking block the API will take back: a signed `thinking` block or a `redacted_thinking`
/// one. An unsigned fragment (a stream cut before the signature) would be refused.
fn replayable(block: &Value) -> bool {
    let has = |key: &str| block[key].as_str().is_some_and(|s| !s.is_empty());
    match block["type"].as_str() {
        Some("thinking") => has("signature"),
        Some("redacted_thinking") => has("data"),
        _ => false,
    }
}

fn user_block(part: &WirePart) -> Option<Value> {
    match part {
        WirePart::Text(text) if text.is_empty() => None,
        WirePart::Text(text) => Some(json!({"type": "text", "text": text})),
        WirePart::Image { image, url } => {
            let (media_type, data) = split_data_url(url)?;
            let media_type = if media_type.is_empty() {
                image.media_type.as_str()
            } else {
                media_type
            };
            Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            }))
        }
    }
}

fn push(out: &mut Vec<MessagesTurn>, role: &'static str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.role == role => last.content.extend(blocks),
        _ => out.push(MessagesTurn {
            role,
            content: blocks,
        }),
    }
}
