//! Folds `chat.completion.chunk` payloads (from `sse`) into one `Completion`, reporting
//! `StreamDelta`s as they arrive: text, reasoning and its blocks, usage, finish reason, and the
//! caps of `ReplyLimits`. Survives the shapes real servers send: `calls` holds the rules of
//! tool-call accumulation, `chunk` the payload types, `decoder` joins the SSE parser to the
//! assembler; the fixtures are in the tests. `anthropic` and `responses` read the native
//! formats' events onto the same assembler.

mod anthropic;
mod calls;
mod chunk;
mod decoder;
mod responses;

use std::collections::HashMap;

pub use decoder::ReplyDecoder;

use super::retry::is_transient_error;
use super::sse::SseFrame;
use super::{AssembledCall, Completion, LlmError, ReasoningBlocks, ReplyLimits, StreamDelta};
use crate::bus::Usage;
use calls::{PartialCall, synthesised_id};
use chunk::{Chunk, Delta};

/// Whether the server has said the response is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    More,
    /// `[DONE]` arrived; nothing after it matters.
    Done,
}

/// Assembles one streamed response. Feed it frames (or chunk payloads), then `finish`.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    text: String,
    reasoning: String,
    reasoning_blocks: ReasoningBlocks,
    /// What `reasoning_blocks` holds, counted as pieces arrive (recounting would be quadratic).
    blocks_bytes: usize,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    calls: Vec<PartialCall>,
    /// Provider `index` → position in `calls` of the call currently using that index.
    by_index: HashMap<u64, usize>,
    /// The call the last fragment went to: fragments without index or id continue it.
    last_call: Option<usize>,
    content_seen: bool,
    limits: ReplyLimits,
}

impl StreamAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_limits(limits: ReplyLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// True once anything was reported to the UI: from then on the response cannot be retried
    /// without the user seeing it twice.
    pub fn has_content(&self) -> bool {
        self.content_seen
    }

    /// Whether the server said the reply is over (a finish reason arrived): a body that ends
    /// without one was cut.
    pub fn has_finish_reason(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Applies one SSE frame. An `error` frame or object is `LlmError::Provider`.
    pub fn frame(
        &mut self,
        frame: SseFrame,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Progress, LlmError> {
        match frame {
            SseFrame::Done => Ok(Progress::Done),
            SseFrame::Error(message) => Err(provider_error_text(&message)),
            SseFrame::Data(payload) => {
                self.chunk(&payload, on_delta)?;
                Ok(Progress::More)
            }
            SseFrame::TooLong { limit } => {
                Err(self.capped(format!("one event of the stream passed {limit} bytes")))
            }
        }
    }

    /// Applies one chunk payload (JSON text).
    pub fn chunk(
        &mut self,
        payload: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let chunk: Chunk = serde_json::from_str(payload).map_err(|e| {
            LlmError::Protocol(format!(
                "a stream chunk is not valid JSON ({e}): {}",
                cut(payload, 200)
            ))
        })?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            return Err(LlmError::Provider {
                message: error_message(&error),
                transient: is_transient_error(&error),
            });
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.to_usage());
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue; // Only one choice is ever requested.
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, on_delta)?;
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                if reason == "error" {
                    return Err(LlmError::Provider {
                        message: "the provider ended the stream with an error".into(),
                        transient: false,
                    });
                }
                self.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    /// The stream ended (`[DONE]` or end of body). A response is complete only when a finish
    /// reason arrived, and not when the output limit cut a tool call.
    pub fn finish(
        mut self,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Completion, LlmError> {
        if let Some(usage) = self.usage {
            on_delta(StreamDelta::Usage(usage));
        }
        match self.finish_reason.as_deref() {
            None => Err(self.truncated("the stream ended before the model finished")),
            Some("length") if !self.calls.is_empty() => Err(self.call_cut()),
            Some(_) => {
                let calls = std::mem::take(&mut self.calls);
                let tool_calls = calls
                    .into_iter()
                    .filter(|c| !c.name.is_empty() || !c.arguments.is_empty())
                    .map(|mut c| AssembledCall {
                        id: c.id.take().unwrap_or_else(synthesised_id),
                        name: c.name,
                        arguments: c.arguments,
                    })
                    .collect();
                Ok(self.completion(tool_calls))
            }
        }
    }

    /// What arrived so far as a `Capped` error, the calls dropped. Takes the text out: the
    /// assembler is finished after this.
    fn capped(&mut self, reason: String) -> LlmError {
        let partial = Completion {
            text: std::mem::take(&mut self.text),
            reasoning: std::mem::take(&mut self.reasoning),
            reasoning_blocks: std::mem::take(&mut self.reasoning_blocks),
            tool_calls: Vec::new(),
            finish_reason: None,
            usage: self.usage,
        };
        self.calls.clear();
        LlmError::Capped {
            reason,
            partial: Box::new(partial),
        }
    }

    /// Appends `piece` to the text or reasoning, up to `max_reply_bytes`; past it, keeps what
    /// fits (whole characters) and stops the reply.
    fn push_bounded(
        &mut self,
        reasoning: bool,
        piece: String,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let max = self.limits.max_reply_bytes;
        let held = if reasoning {
            &self.reasoning
        } else {
            &self.text
        };
        let room = max.saturating_sub(held.len());
        let over = piece.len() > room;
        let mut piece = piece;
        if over {
            let mut end = room;
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            piece.truncate(end);
        }
        self.content_seen = true;
        if !piece.is_empty() {
            if reasoning {
                self.reasoning.push_str(&piece);
                on_delta(StreamDelta::Reasoning(piece));
            } else {
                self.text.push_str(&piece);
                on_delta(StreamDelta::Text(piece));
            }
        }
        if over {
            let what = if reasoning { "reasoning" } else { "text" };
            return Err(self.capped(format!("its {what} passed {max} bytes (max_reply_bytes)")));
        }
        Ok(())
    }

    /// The output limit ended the reply inside a tool call: the last call named, its
    /// arguments dropped with it.
    fn call_cut(self) -> LlmError {
        let last = self.calls.last();
        let tool = last
            .map(|c| c.name.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "an unnamed tool".to_string());
        let arguments_bytes = last.map_or(0, |c| c.arguments.len());
        LlmError::CallCut {
            tool,
            arguments_bytes,
            partial: Box::new(self.completion(Vec::new())),
        }
    }

    /// What arrived so far as a `Truncated` error; half-built tool calls are dropped.
    pub fn truncated(self, reason: impl Into<String>) -> LlmError {
        LlmError::Truncated {
            reason: reason.into(),
            partial: Box::new(self.completion(Vec::new())),
        }
    }

    fn completion(self, tool_calls: Vec<AssembledCall>) -> Completion {
        Completion {
            text: self.text,
            reasoning: self.reasoning,
            reasoning_blocks: self.reasoning_blocks,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }

    fn delta(
        &mut self,
        delta: Delta,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        // Structured blocks are kept whole for the follow-up; their text is shown only when
        // the delta has no plain reasoning field (LiteLLM and OpenRouter send both).
        let mut block_text = String::new();
        if let Some(blocks) = delta.thinking_blocks {
            self.content_seen = true;
            self.blocks_bytes += super::reasoning::text_bytes(&blocks);
            block_text.push_str(&self.reasoning_blocks.add_thinking_blocks(blocks));
        }
        if let Some(details) = delta.reasoning_details {
            self.content_seen = true;
            self.blocks_bytes += super::reasoning::text_bytes(&details);
            block_text.push_str(&self.reasoning_blocks.add_reasoning_details(details));
        }
        // Signatures and encrypted data come on top of the thinking text, hence twice the cap.
        let max_blocks = self.limits.max_reply_bytes.saturating_mul(2);
        if self.blocks_bytes > max_blocks {
            return Err(self.capped(format!(
                "its reasoning blocks passed {max_blocks} bytes (twice max_reply_bytes)"
            )));
        }
        // vLLM may send the same text under both names; `reasoning_content` wins.
        let reasoning = delta
            .reasoning_content
            .filter(|r| !r.is_empty())
            .or(delta.reasoning)
            .filter(|r| !r.is_empty())
            .or(Some(block_text));
        if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
            self.push_bounded(true, reasoning, on_delta)?;
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.push_bounded(false, text, on_delta)?;
        }
        for call in delta.tool_calls.unwrap_or_default() {
            self.tool_call(call)?;
        }
        Ok(())
    }
}

/// An error frame: JSON with `message` somewhere, or the text itself.
fn provider_error_text(raw: &str) -> LlmError {
    let value = serde_json::from_str::<serde_json::Value>(raw)
        .unwrap_or_else(|_| serde_json::Value::String(raw.trim().to_string()));
    LlmError::Provider {
        message: error_message(&value),
        transient: is_transient_error(&value),
    }
}

/// `{"message": …}`, `{"error": {"message": …}}`, a bare string, or the JSON text.
pub(crate) fn error_message(value: &serde_json::Value) -> String {
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(map) => match (map.get("message"), map.get("error")) {
            (Some(serde_json::Value::String(m)), _) => m.clone(),
            (_, Some(inner)) if !inner.is_null() => error_message(inner),
            _ => value.to_string(),
        },
        _ => value.to_string(),
    };
    cut(&text, 500)
}

/// At most `max` bytes of `text`, cut on a character boundary, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
