//! The Responses API's stream onto the assembler, as `anthropic` does for the Messages API.
//! Every event's data names its `type`, so a stream without `event:` lines (LiteLLM's) reads
//! the same, and a `[DONE]` after the last event is the chat format's end. Text and reasoning
//! summaries arrive as deltas; a function call is announced by `response.output_item.added`
//! (its `call_id` and name, keyed by `output_index`) and its arguments stream as deltas; a
//! reasoning item is kept whole, verbatim, from `response.output_item.done` (with its
//! `encrypted_content`), to go back in place. `response.completed` and `response.incomplete`
//! carry the usage (the input count includes the cached tokens) and end the reply;
//! `response.failed` and `error` are the provider's errors. Source: "Responses streaming
//! events" at developers.openai.com/api/reference/resources/responses/streaming-events.

use std::collections::HashSet;

use serde_json::Value;

use super::chunk::{Delta, FunctionDelta, ToolCallDelta};
use super::{Progress, StreamAssembler, cut};
use crate::bus::Usage;
use crate::llm::retry::is_transient_error;
use crate::llm::{LlmError, StreamDelta};

/// What the stream said so far that the assembler does not hold.
#[derive(Debug, Default)]
pub struct ResponsesEvents {
    /// Output indexes of the calls whose arguments have streamed (a `done` without deltas
    /// brings them whole).
    arguments_seen: HashSet<u64>,
    /// A summary part was shown: the next one starts on a new paragraph.
    summary_parts: u64,
}

impl ResponsesEvents {
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
        let index = event["output_index"].as_u64();
        match event["type"].as_str().unwrap_or_default() {
            "response.output_text.delta" => {
                if let Some(text) = event["delta"].as_str().filter(|t| !t.is_empty()) {
                    let delta = Delta {
                        content: Some(text.to_string()),
                        ..Delta::default()
                    };
                    assembler.delta(delta, on_delta)?;
                }
            }
            "response.reasoning_summary_part.added" => {
                self.summary_parts += 1;
                if self.summary_parts > 1 {
                    reasoning(assembler, "\n\n", on_delta)?;
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(text) = event["delta"].as_str() {
                    reasoning(assembler, text, on_delta)?;
                }
            }
            "response.output_item.added" => {
                let item = &event["item"];
                if item["type"] == "function_call" {
                    let arguments = item["arguments"].as_str().unwrap_or_default();
                    if !arguments.is_empty() {
                        self.arguments_seen.extend(index);
                    }
                    call(
                        assembler,
                        index,
                        item["call_id"].as_str(),
                        item["name"].as_str(),
                        arguments,
                    )?;
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(fragment) = event["delta"].as_str() {
                    self.arguments_seen.extend(index);
                    call(assembler, index, None, None, fragment)?;
                }
            }
            "response.output_item.done" => {
                let item = &event["item"];
                match item["type"].as_str() {
                    Some("reasoning") => {
                        assembler.content_seen = true;
                        assembler.blocks_bytes +=
                            crate::llm::reasoning::text_bytes(std::slice::from_ref(item))
                                + item.to_string().len();
                        let max = assembler.limits.max_reply_bytes.saturating_mul(2);
                        if assembler.blocks_bytes > max {
                            return Err(assembler.capped(format!(
                                "its reasoning items passed {max} bytes (twice max_reply_bytes)"
                            )));
                        }
                        assembler
                            .reasoning_blocks
                            .reasoning_items
                            .push(item.clone());
                    }
                    Some("function_call")
                        if !index.is_some_and(|i| self.arguments_seen.contains(&i)) =>
                    {
                        let arguments = item["arguments"].as_str().unwrap_or_default();
                        self.arguments_seen.extend(index);
                        call(assembler, index, item["call_id"].as_str(), None, arguments)?;
                    }
                    _ => {}
                }
            }
            kind @ ("response.completed" | "response.incomplete") => {
                let response = &event["response"];
                usage(assembler, &response["usage"]);
                let reason = if kind == "response.incomplete" {
                    match response["incomplete_details"]["reason"].as_str() {
                        Some("content_filter") => "content_filter",
                        _ => "length",
                    }
                } else if assembler.calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                };
                assembler.finish_reason = Some(reason.to_string());
                return Ok(Progress::Done);
            }
            "response.failed" => {
                let error = &event["response"]["error"];
                let error = if error.is_null() { &event } else { error };
                return Err(LlmError::Provider {
                    message: super::error_message(error),
                    transient: is_transient_error(error),
                });
            }
            "error" => {
                return Err(LlmError::Provider {
                    message: super::error_message(&event),
                    transient: is_transient_error(&event),
                });
            }
            _ => {}
        }
        Ok(Progress::More)
    }
}

fn usage(assembler: &mut StreamAssembler, usage: &Value) {
    if !usage.is_object() {
        return;
    }
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    assembler.usage = Some(Usage {
        prompt_tokens: count(&usage["input_tokens"]),
        completion_tokens: count(&usage["output_tokens"]),
        cached_tokens: count(&usage["input_tokens_details"]["cached_tokens"]),
    });
}

fn reasoning(
    assembler: &mut StreamAssembler,
    text: &str,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<(), LlmError> {
    if text.is_empty() {
        return Ok(());
    }
    let delta = Delta {
        reasoning: Some(text.to_string()),
        ..Delta::default()
    };
    assembler.delta(delta, on_delta)
}

fn call(
    assembler: &mut StreamAssembler,
    index: Option<u64>,
    call_id: Option<&str>,
    name: Option<&str>,
    arguments: &str,
) -> Result<(), LlmError> {
    assembler.tool_call(ToolCallDelta {
        index,
        id: call_id.map(String::from),
        function: Some(FunctionDelta {
            name: name.map(String::from),
            arguments: Some(arguments.to_string()),
        }),
    })
}
