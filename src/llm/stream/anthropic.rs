//! Anthropic's Messages stream onto the assembler: each event becomes what a chat chunk would
//! have said, so the caps, the tool-call rules and the end-of-stream rules are the chat
//! format's. `message_start` and `message_delta` carry the usage (the input count excludes
//! what was read from or written to the cache, so the prompt is the sum of the three);
//! `content_block_start`/`_delta` carry text, thinking and its signature, redacted thinking,
//! and tool input as fragments of JSON text keyed by the block's index; `message_stop` ends
//! the reply; `error` is the provider's error mid-stream (`overloaded_error` passes with time).
//! Source: "Streaming Messages" at platform.claude.com/docs/en/build-with-claude/streaming.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::chunk::{Delta, FunctionDelta, ToolCallDelta};
use super::{Progress, StreamAssembler, cut};
use crate::bus::Usage;
use crate::llm::retry::is_transient_error;
use crate::llm::{LlmError, StreamDelta};

/// The usage counts as the stream reports them, and where each thinking block is held.
#[derive(Debug, Default)]
pub struct AnthropicEvents {
    /// Block index → position of its thinking block in the reply's `thinking_blocks`: every
    /// delta of a block goes to that block, however many signature pieces it has.
    thinking: HashMap<u64, usize>,
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
}

impl AnthropicEvents {
    /// Applies one event's data.
    pub(super) fn data(
        &mut self,
        assembler: &mut StreamAssembler,
        payload: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Progress, LlmError> {
        let event: Value = serde_json::from_str(payload).map_err(|e| {
            LlmError::Protocol(format!(
                "a stream event is not valid JSON ({e}): {}",
                cut(payload, 200)
            ))
        })?;
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => self.usage(assembler, &event["message"]["usage"]),
            "content_block_start" => {
                let index = event["index"].as_u64();
                let block = &event["content_block"];
                match block["type"].as_str().unwrap_or_default() {
                    "text" => text(assembler, block["text"].as_str(), on_delta)?,
                    "thinking" => {
                        let start = block["thinking"].as_str().unwrap_or_default();
                        let signature = block["signature"].as_str().unwrap_or_default();
                        self.thinking_piece(assembler, index, "thinking", start, on_delta)?;
                        self.thinking_piece(assembler, index, "signature", signature, on_delta)?;
                    }
                    "redacted_thinking" => thinking(assembler, block.clone(), on_delta)?,
                    "tool_use" => {
                        // The input is `{}` at the start and streams as text; a start that
                        // already holds the whole input (a translator) is taken as it is.
                        let arguments = match &block["input"] {
                            Value::Object(map) if !map.is_empty() => block["input"].to_string(),
                            _ => String::new(),
                        };
                        call(
                            assembler,
                            index,
                            block["id"].as_str().map(String::from),
                            block["name"].as_str().map(String::from),
                            arguments,
                            on_delta,
                        )?;
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => text(assembler, delta["text"].as_str(), on_delta)?,
                    kind @ ("thinking_delta" | "signature_delta") => {
                        let key = if kind == "thinking_delta" {
                            "thinking"
                        } else {
                            "signature"
                        };
                        let piece = delta[key].as_str().unwrap_or_default();
                        let index = event["index"].as_u64();
                        self.thinking_piece(assembler, index, key, piece, on_delta)?;
                    }
                    "input_json_delta" => call(
                        assembler,
                        event["index"].as_u64(),
                        None,
                        None,
                        delta["partial_json"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        on_delta,
                    )?,
                    _ => {}
                }
            }
            "message_delta" => {
                self.usage(assembler, &event["usage"]);
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    assembler.finish_reason = Some(finish_reason(reason).to_string());
                }
            }
            "message_stop" => return Ok(Progress::Done),
            "error" => {
                return Err(LlmError::Provider {
                    message: super::error_message(&event),
                    transient: is_transient_error(&event),
                });
            }
            // `ping`, `content_block_stop`, and whatever a later version adds.
            _ => {}
        }
        Ok(Progress::More)
    }

    /// Adds a piece of a thinking block's text or signature to the block at `index` (opened
    /// on its first piece as `{"type", "thinking", "signature"}`, the API's own order), and shows
    /// the text as reasoning.
    fn thinking_piece(
        &mut self,
        assembler: &mut StreamAssembler,
        index: Option<u64>,
        key: &str,
        piece: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let index = index.unwrap_or(u64::MAX);
        let blocks = &mut assembler.reasoning_blocks.thinking_blocks;
        let at = *self.thinking.entry(index).or_insert_with(|| {
            let mut block = Map::new();
            block.insert("type".into(), json!("thinking"));
            block.insert("thinking".into(), json!(""));
            block.insert("signature".into(), json!(""));
            blocks.push(Value::Object(block));
            blocks.len() - 1
        });
        if piece.is_empty() {
            return Ok(());
        }
        if let Some(Value::String(held)) = blocks.get_mut(at).and_then(|b| b.get_mut(key)) {
            held.push_str(piece);
        }
        assembler.content_seen = true;
        assembler.blocks_bytes += piece.len();
        let max_blocks = assembler.limits.max_reply_bytes.saturating_mul(2);
        if assembler.blocks_bytes > max_blocks {
            return Err(assembler.capped(format!(
                "its reasoning blocks passed {max_blocks} bytes (twice max_reply_bytes)"
            )));
        }
        if key == "thinking" {
            assembler.push_bounded(true, piece.to_string(), on_delta)?;
        }
        Ok(())
    }

    /// Takes the counts a usage object has (each event may carry some of them).
    fn usage(&mut self, assembler: &mut StreamAssembler, usage: &Value) {
        let Value::Object(usage) = usage else { return };
        let take = |key: &str, into: &mut u64| {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *into = n;
            }
        };
        take("input_tokens", &mut self.input);
        take("cache_read_input_tokens", &mut self.cache_read);
        take("cache_creation_input_tokens", &mut self.cache_write);
        take("output_tokens", &mut self.output);
        assembler.usage = Some(Usage {
            prompt_tokens: self.input + self.cache_read + self.cache_write,
            completion_tokens: self.output,
            cached_tokens: self.cache_read,
        });
    }
}

/// The chat format's name for a stop reason (what the assembler's end rules read).
fn finish_reason(stop_reason: &str) -> &str {
    match stop_reason {
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "refusal" => "content_filter",
        _ => "stop",
    }
}

fn text(
    assembler: &mut StreamAssembler,
    text: Option<&str>,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<(), LlmError> {
    match text.filter(|t| !t.is_empty()) {
        Some(text) => assembler.delta(
            Delta {
                content: Some(text.to_string()),
                ..Delta::default()
            },
            on_delta,
        ),
        None => Ok(()),
    }
}

fn thinking(
    assembler: &mut StreamAssembler,
    block: Value,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<(), LlmError> {
    assembler.delta(
        Delta {
            thinking_blocks: Some(vec![block]),
            ..Delta::default()
        },
        on_delta,
    )
}

fn call(
    assembler: &mut StreamAssembler,
    index: Option<u64>,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<(), LlmError> {
    assembler.delta(
        Delta {
            tool_calls: Some(vec![ToolCallDelta {
                index,
                id,
                function: Some(FunctionDelta {
                    name,
                    arguments: Some(arguments),
                }),
            }]),
            ..Delta::default()
        },
        on_delta,
    )
}
