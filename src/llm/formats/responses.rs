//! The Responses API body (OpenAI): `instructions`, function `tools`, and `input` items. Nothing
//! is kept on the server (`store: false`); the reasoning of a turn comes back encrypted
//! (`include: ["reasoning.encrypted_content"]`) and goes back in place: an assistant turn is
//! its reasoning items verbatim, in the order they came, then its message, then its
//! `function_call` items; each call's result follows as a `function_call_output` with the same
//! `call_id`. `prompt_cache_key` is the same for the whole session (it is derived from the
//! instructions and tools, which never change in a session), so a resume sends the same key.
//! The include is asked of reasoning models only: others refuse it. Sources: the Responses API
//! reference (create, input items, streaming events) and the reasoning guide's stateless
//! (`store: false`) section at developers.openai.com; the refusal as reported in
//! pydantic/pydantic-ai#2865 and #3326.

use serde::Serialize;
use serde_json::{Value, json};

use super::{BodyContext, system_text, user_parts};
use crate::llm::wire::wire_arguments;
use crate::llm::{ChatMessage, ChatRequest, ToolChoice, WirePart};

/// The body, the items last: everything before them is the same in every request of a session.
#[derive(Serialize)]
struct ResponsesBody<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "String::is_empty")]
    instructions: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    prompt_cache_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    stream: bool,
    input: Vec<Value>,
}

pub fn body(cx: BodyContext<'_>, request: ChatRequest<'_>) -> Result<Vec<u8>, serde_json::Error> {
    let conversation = request.messages.as_slice();
    let instructions = system_text(conversation);
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|spec| {
            json!({
                "type": "function",
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            })
        })
        .collect();
    let prompt_cache_key = cache_key(&instructions, &tools);
    let body = ResponsesBody {
        model: cx.model,
        instructions,
        tool_choice: cx
            .settings
            .wire
            .tool_choice
            .filter(|_| !tools.is_empty())
            .map(ToolChoice::openai),
        tools,
        store: false,
        // Non-reasoning models (gpt-4o, gpt-4.1, gpt-5-chat) answer 400 "Encrypted content
        // is not supported with this model" to the include (pydantic-ai#2865, #3326).
        include: if reasons(cx.model) || cx.settings.wire.reasoning_effort.is_some() {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        prompt_cache_key,
        reasoning: cx
            .settings
            .wire
            .reasoning_effort
            .as_ref()
            .map(|effort| json!({"effort": effort, "summary": "auto"})),
        max_output_tokens: cx.settings.max_tokens,
        temperature: cx.settings.temperature,
        stream: true,
        input: project(conversation),
    };
    serde_json::to_vec(&body)
}

/// Whether `model` is one of OpenAI's reasoning models (o1, o3, o4, gpt-5 but its chat
/// variant, codex), which keep their reasoning across calls only as encrypted items.
pub fn reasons(model: &str) -> bool {
    let model = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = ["o1", "o3", "o4"]
        .iter()
        .any(|p| model == *p || model.starts_with(&format!("{p}-")));
    o_series || (model.starts_with("gpt-5") && !model.contains("chat")) || model.contains("codex")
}

/// `cairn-` and 32 hex digits of the hash of the instructions and tools: constant for a
/// session, the same again on resume, and shared by sessions that start alike (which share a
/// prefix too).
pub fn cache_key(instructions: &str, tools: &[Value]) -> String {
    let mut seed = instructions.as_bytes().to_vec();
    seed.push(0);
    seed.extend(serde_json::to_vec(tools).unwrap_or_default());
    let hash = crate::content::content_hash(&seed);
    format!("cairn-{}", hash.get(..32).unwrap_or(&hash))
}

/// The conversation as input items.
pub fn project(conversation: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::new();
    for message in conversation {
        match message {
            ChatMessage::System { .. } => {}
            ChatMessage::User { content } => {
                let parts: Vec<Value> = user_parts(content)
                    .filter_map(|part| match part {
                        WirePart::Text(text) if text.is_empty() => None,
                        WirePart::Text(text) => Some(json!({"type": "input_text", "text": text})),
                        WirePart::Image { url, .. } => {
                            Some(json!({"type": "input_image", "image_url": &**url}))
                        }
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(json!({"type": "message", "role": "user", "content": parts}));
                }
            }
            ChatMessage::Assistant {
                content,
                reasoning_blocks,
                tool_calls,
                ..
            } => {
                out.extend(
                    reasoning_blocks
                        .reasoning_items
                        .iter()
                        .filter(|item| item["type"] == "reasoning")
                        .cloned(),
                );
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    out.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    }));
                }
                for call in tool_calls {
                    out.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.function.name,
                        "arguments": wire_arguments(&call.function.arguments),
                    }));
                }
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => out.push(json!({
                "type": "function_call_output",
                "call_id": tool_call_id,
                "output": content,
            })),
        }
    }
    out
}
