//! The mock's native formats: the chat chunks a `Script` streams (see `mock_chunks`), retold as
//! Anthropic Messages events or Responses API events for a request to `…/messages` or
//! `…/responses`, in each API's order (the thinking block with its signature first, then the
//! text, then each tool call whole, one after the other; a reasoning item with its encrypted
//! content, the message, the function calls), and the checks those APIs make of what comes
//! back: a thinking block whose text or signature changed, a `tool_result` not leading its
//! turn, an encrypted reasoning item altered. Shapes follow the providers' own documents:
//! platform.claude.com/docs/en/build-with-claude/streaming and
//! developers.openai.com/api/reference/resources/responses/streaming-events.

use serde_json::{Value, json};

use crate::bus::Usage;
use crate::llm::Api;

/// The signature the mock gives a thinking text (the real API's is opaque; this one can be
/// checked when it comes back).
pub fn thinking_signature(thinking: &str) -> String {
    let hash = crate::content::content_hash(thinking.as_bytes());
    format!("sig-{}", &hash[..24])
}

/// The encrypted content the mock gives a reasoning summary.
pub fn encrypted_reasoning(summary: &str) -> String {
    let hash = crate::content::content_hash(summary.as_bytes());
    format!("enc-{}", &hash[..24])
}

/// Cache counts to report instead of the script's (see `cache_sim`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounts {
    pub prompt: u64,
    pub read: u64,
    pub written: u64,
}

/// What a script's chunks add up to.
#[derive(Default)]
struct GatheredReply {
    reasoning: String,
    text: String,
    /// (id, name, argument fragments)
    calls: Vec<(String, String, Vec<String>)>,
    finish: Option<String>,
    usage: Option<Usage>,
    error: Option<Value>,
    /// The error came before any tool call (it follows the text).
    error_code: Option<u64>,
}

fn gather(chunks: impl Iterator<Item = String>) -> GatheredReply {
    let mut reply = GatheredReply::default();
    let mut by_index: Vec<(u64, usize)> = Vec::new();
    for chunk in chunks.take(500_000) {
        let Ok(chunk) = serde_json::from_str::<Value>(&chunk) else {
            continue;
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            reply.error_code = error["code"].as_u64();
            reply.error = Some(error.clone());
            break;
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            reply.usage = Some(Usage {
                prompt_tokens: n(&usage["prompt_tokens"]),
                completion_tokens: n(&usage["completion_tokens"]),
                cached_tokens: n(&usage["prompt_tokens_details"]["cached_tokens"]),
            });
        }
        let choice = &chunk["choices"][0];
        if let Some(reason) = choice["finish_reason"].as_str() {
            reply.finish = Some(reason.to_string());
        }
        let delta = &choice["delta"];
        if let Some(text) = delta["reasoning_content"]
            .as_str()
            .or(delta["reasoning"].as_str())
        {
            reply.reasoning.push_str(text);
        }
        if let Some(text) = delta["content"].as_str() {
            reply.text.push_str(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0);
            let fragment = call["function"]["arguments"].as_str().unwrap_or_default();
            match by_index.iter().find(|(i, _)| *i == index) {
                Some(&(_, at)) => reply.calls[at].2.push(fragment.to_string()),
                None => {
                    by_index.push((index, reply.calls.len()));
                    reply.calls.push((
                        call["id"].as_str().unwrap_or("toolu_mock").to_string(),
                        call["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        vec![fragment.to_string()],
                    ));
                }
            }
        }
    }
    reply
}

/// The events (each a whole SSE event, blank line included) of the reply in `api`'s shape.
pub fn events(
    api: Api,
    chunks: impl Iterator<Item = String>,
    model: &str,
    cache: Option<CacheCounts>,
) -> Vec<String> {
    let reply = gather(chunks);
    match api {
        Api::Anthropic => anthropic(reply, model, cache),
        Api::Responses | Api::Chat => responses(reply, model, cache),
    }
}

fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn anthropic(reply: GatheredReply, model: &str, cache: Option<CacheCounts>) -> Vec<String> {
    let usage = reply.usage.unwrap_or_default();
    let counts = cache.unwrap_or(CacheCounts {
        prompt: usage.prompt_tokens,
        read: usage.cached_tokens,
        written: 0,
    });
    let input = counts.prompt.saturating_sub(counts.read + counts.written);
    let mut out = vec![event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "content": [],
            "model": model, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_creation_input_tokens": counts.written,
                "cache_read_input_tokens": counts.read, "output_tokens": 1},
        }}),
    )];
    let mut index = 0;
    let mut block = |out: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        out.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if !reply.reasoning.is_empty() {
        let mut deltas: Vec<Value> = words(&reply.reasoning)
            .map(|w| json!({"type": "thinking_delta", "thinking": w}))
            .collect();
        deltas.push(
            json!({"type": "signature_delta", "signature": thinking_signature(&reply.reasoning)}),
        );
        block(
            &mut out,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if !reply.text.is_empty() {
        let deltas = words(&reply.text)
            .map(|w| json!({"type": "text_delta", "text": w}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    if let Some(error) = &reply.error {
        let kind = match reply.error_code {
            Some(529) => "overloaded_error",
            Some(429) => "rate_limit_error",
            Some(code) if code >= 500 => "api_error",
            _ => "invalid_request_error",
        };
        let message = error["message"].as_str().unwrap_or("error");
        out.push(event(
            "error",
            &json!({"type": "error", "error": {"type": kind, "message": message}}),
        ));
        return out;
    }
    for (id, name, fragments) in &reply.calls {
        let deltas = fragments
            .iter()
            .map(|f| json!({"type": "input_json_delta", "partial_json": f}))
            .collect();
        block(
            &mut out,
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            deltas,
        );
    }
    let stop = match reply.finish.as_deref() {
        Some("tool_calls") => "tool_use",
        Some("length") => "max_tokens",
        _ => "end_turn",
    };
    out.push(event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": usage.completion_tokens}}),
    ));
    out.push(event("message_stop", &json!({"type": "message_stop"})));
    out
}

fn responses(reply: GatheredReply, model: &str, cache: Option<CacheCounts>) -> Vec<String> {
    let usage = reply.usage.unwrap_or_default();
    let (prompt, read) = match cache {
        Some(counts) => (counts.prompt, counts.read),
        None => (usage.prompt_tokens, usage.cached_tokens),
    };
    let mut seq = 0;
    let mut out = Vec::new();
    let mut push = |out: &mut Vec<String>, mut data: Value| {
        data["sequence_number"] = json!(seq);
        seq += 1;
        let name = data["type"].as_str().unwrap_or_default().to_string();
        out.push(event(&name, &data));
    };
    push(
        &mut out,
        json!({"type": "response.created", "response": {"id": "resp_mock", "object": "response",
            "status": "in_progress", "model": model, "output": []}}),
    );
    let mut index = 0;
    if !reply.reasoning.is_empty() {
        let id = "rs_mock";
        push(
            &mut out,
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": id, "type": "reasoning", "summary": []}}),
        );
        for w in words(&reply.reasoning) {
            push(
                &mut out,
                json!({"type": "response.reasoning_summary_text.delta",
                "item_id": id, "output_index": index, "summary_index": 0, "delta": w}),
            );
        }
        push(
            &mut out,
            json!({"type": "response.output_item.done", "output_index": index,
            "item": {"id": id, "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
                "encrypted_content": encrypted_reasoning(&reply.reasoning)}}),
        );
        index += 1;
    }
    if !reply.text.is_empty() {
        for w in words(&reply.text) {
            push(
                &mut out,
                json!({"type": "response.output_text.delta", "item_id": "msg_mock",
                "output_index": index, "content_index": 0, "delta": w}),
            );
        }
        index += 1;
    }
    if let Some(error) = &reply.error {
        let code = match reply.error_code {
            Some(429) => "rate_limit_exceeded",
            Some(code) if code >= 500 => "server_error",
            _ => "invalid_request_error",
        };
        push(
            &mut out,
            json!({"type": "response.failed", "response": {"id": "resp_mock",
            "status": "failed", "error": {"code": code, "message": error["message"]}}}),
        );
        return out;
    }
    for (id, name, fragments) in &reply.calls {
        push(
            &mut out,
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": format!("fc_{id}"), "type": "function_call", "call_id": id,
                "name": name, "arguments": ""}}),
        );
        for f in fragments {
            push(
                &mut out,
                json!({"type": "response.function_call_arguments.delta",
                "output_index": index, "delta": f}),
            );
        }
        push(
            &mut out,
            json!({"type": "response.output_item.done", "output_index": index,
            "item": {"id": format!("fc_{id}"), "type": "function_call", "call_id": id,
                "name": name, "arguments": fragments.concat()}}),
        );
        index += 1;
    }
    let (kind, extra) = match reply.finish.as_deref() {
        Some("length") => (
            "response.incomplete",
            json!({"reason": "max_output_tokens"}),
        ),
        _ => ("response.completed", Value::Null),
    };
    push(
        &mut out,
        json!({"type": kind, "response": {"id": "resp_mock", "status": "completed",
        "incomplete_details": extra,
        "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": read},
            "output_tokens": usage.completion_tokens}}}),
    );
    out
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(char::is_whitespace)
}

/// What Anthropic or OpenAI would refuse in a request body: `None` when it passes.
pub fn refusal(api: Api, body: &Value) -> Option<String> {
    match api {
        Api::Anthropic => anthropic_refusal(body),
        Api::Responses => responses_refusal(body),
        Api::Chat => None,
    }
}

fn anthropic_refusal(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    let markers = body.to_string().matches("\"cache_control\"").count();
    if markers > 4 {
        return Some(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {markers}."
        ));
    }
    for (at, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array()?;
        if blocks.is_empty() {
            return Some(format!("messages.{at}: content must be non-empty"));
        }
        for block in blocks {
            if block["type"] == "thinking" {
                let thinking = block["thinking"].as_str().unwrap_or_default();
                if block["signature"].as_str() != Some(thinking_signature(thinking).as_str()) {
                    return Some(format!(
                        "messages.{at}.content: thinking or redacted_thinking blocks in the latest assistant message cannot be modified"
                    ));
                }
            }
        }
        if message["role"] == "user" {
            let first_other = blocks.iter().position(|b| b["type"] != "tool_result");
            let last_result = blocks.iter().rposition(|b| b["type"] == "tool_result");
            if let (Some(other), Some(result)) = (first_other, last_result)
                && other < result
            {
                return Some(format!(
                    "messages.{at}: tool_result blocks must come first in the user message"
                ));
            }
        }
    }
    None
}

fn responses_refusal(body: &Value) -> Option<String> {
    for item in body["input"].as_array()? {
        if item["type"] == "reasoning" {
            let summary: String = item["summary"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s["text"].as_str())
                .collect();
            if item["encrypted_content"].as_str() != Some(encrypted_reasoning(&summary).as_str()) {
                return Some(format!(
                    "Item with id '{}' not found. Items are not persisted when `store` is set to false.",
                    item["id"].as_str().unwrap_or_default()
                ));
            }
        }
    }
    None
}
