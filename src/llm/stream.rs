//! Folds `chat.completion.chunk` payloads (from `sse`) into one `Completion`, reporting
//! `StreamDelta`s as they arrive. Survives the shapes real servers send: see the notes on
//! tool-call accumulation below and the fixtures in the tests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;

use super::retry::is_transient_error;
use super::sse::{SseFrame, SseParser};
use super::{AssembledCall, Completion, LlmError, ReasoningBlocks, ReplyLimits, StreamDelta};
use crate::bus::{CallId, Usage};

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

#[derive(Debug, Default)]
struct PartialCall {
    /// The id the provider gave, kept to recognise a new call reusing an index.
    provider_id: Option<String>,
    /// Fixed when the call is announced; unique within the response.
    id: Option<CallId>,
    name: String,
    arguments: String,
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
            Some("length") if !self.calls.is_empty() => {
                Err(self.truncated("the output limit was reached in the middle of a tool call"))
            }
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
            self.tool_call(call, on_delta)?;
        }
        Ok(())
    }

    // Accumulation rules (wire-formats notes, section 7): calls are keyed by `index`. On a used
    // index, a new non-empty id starts a new call (Ollama gives every call index 0), and so
    // does a name without id after complete arguments (older Ollama, no ids at all). Without
    // an index, a fragment that names a tool starts a new call and any other continues the
    // last one; so does a fragment under an unknown index with neither id nor name (endpoints
    // that shift the index of argument fragments). Arguments stay raw text throughout.
    fn tool_call(
        &mut self,
        call: ToolCallDelta,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        let id = call.id.filter(|id| !id.is_empty());
        let (name, arguments) = match call.function {
            Some(f) => (f.name.filter(|n| !n.is_empty()), f.arguments),
            None => (None, None),
        };
        let existing = match call.index {
            Some(index) => match self.by_index.get(&index) {
                Some(&at) => {
                    let open = &self.calls[at];
                    let other_id = match (&id, &open.provider_id) {
                        (Some(new), Some(old)) => new != old,
                        _ => false,
                    };
                    // Ollama before ids existed: whole calls, all at index 0, no id. A name
                    // after complete arguments starts the next call.
                    let next_whole_call = id.is_none()
                        && name.is_some()
                        && !open.name.is_empty()
                        && is_complete_json(&open.arguments);
                    (!other_id && !next_whole_call).then_some(at)
                }
                None if id.is_none() && name.is_none() => self.last_call,
                None => None,
            },
            None => {
                let same_id = id.as_ref().and_then(|id| {
                    self.calls
                        .iter()
                        .rposition(|c| c.provider_id.as_ref() == Some(id))
                });
                match same_id {
                    Some(at) => Some(at),
                    None if name.is_some() || id.is_some() => None,
                    None => self.last_call,
                }
            }
        };
        let at = match existing {
            Some(at) => at,
            None if self.calls.len() >= self.limits.max_calls => {
                let max = self.limits.max_calls;
                return Err(self.capped(format!("it made more than {max} tool calls")));
            }
            None => {
                self.calls.push(PartialCall::default());
                self.calls.len() - 1
            }
        };
        if let Some(index) = call.index {
            self.by_index.insert(index, at);
        }
        self.last_call = Some(at);
        self.content_seen = true;

        if self.calls[at].provider_id.is_none() {
            self.calls[at].provider_id = id;
        }
        if let Some(name) = name
            && self.calls[at].name.is_empty()
        {
            let id = self.unique_id(at);
            self.calls[at].name = name.clone();
            self.calls[at].id = Some(id.clone());
            on_delta(StreamDelta::ToolCallStarted { id, name });
        }
        if let Some(arguments) = arguments {
            let max = self.limits.max_call_bytes;
            if self.calls[at].arguments.len() + arguments.len() > max {
                let name = match self.calls[at].name.as_str() {
                    "" => "a tool call".to_string(),
                    name => format!("its `{name}` call"),
                };
                return Err(self.capped(format!(
                    "the arguments of {name} passed {max} bytes (max_tool_call_bytes)"
                )));
            }
            self.calls[at].arguments.push_str(&arguments);
        }
        Ok(())
    }

    /// The provider's id, unless it is missing or already used by another call of this
    /// response (llama.cpp has given parallel calls one id); then a synthesised one.
    fn unique_id(&self, at: usize) -> CallId {
        match &self.calls[at].provider_id {
            Some(id)
                if !self
                    .calls
                    .iter()
                    .any(|c| c.id.as_ref().is_some_and(|c| c.0 == *id)) =>
            {
                CallId::new(id.clone())
            }
            _ => synthesised_id(),
        }
    }
}

/// Body bytes to `Completion`: the SSE parser and the assembler together, as the client and
/// the benchmark drive them.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    parser: SseParser,
    assembler: StreamAssembler,
    frames: Vec<SseFrame>,
    done: bool,
}

impl StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_limits(limits: ReplyLimits) -> Self {
        Self {
            parser: SseParser::with_max_bytes(limits.max_event_bytes()),
            assembler: StreamAssembler::with_limits(limits),
            frames: Vec::new(),
            done: false,
        }
    }

    /// Non-empty `data:` lines so far; comments and blank keep-alives do not count.
    pub fn data_lines_seen(&self) -> u64 {
        self.parser.data_lines_seen()
    }

    /// See `StreamAssembler::has_content`.
    pub fn has_content(&self) -> bool {
        self.assembler.has_content()
    }

    /// Consumes one read of the body. After `Progress::Done`, stop reading and `finish`.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Progress, LlmError> {
        if self.done {
            return Ok(Progress::Done);
        }
        self.parser.feed(bytes, &mut self.frames);
        self.apply_frames(on_delta)
    }

    /// The body ended (or `[DONE]` arrived): the complete response, or why there is none.
    pub fn finish(
        mut self,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Completion, LlmError> {
        if !self.done {
            self.parser.finish(&mut self.frames);
            self.apply_frames(on_delta)?;
        }
        self.assembler.finish(on_delta)
    }

    /// The transfer broke off: what arrived so far, as `Truncated`.
    pub fn truncated(self, reason: impl Into<String>) -> LlmError {
        self.assembler.truncated(reason)
    }

    fn apply_frames(
        &mut self,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Progress, LlmError> {
        let mut frames = std::mem::take(&mut self.frames);
        let mut result = Ok(Progress::More);
        for frame in frames.drain(..) {
            match self.assembler.frame(frame, on_delta) {
                Ok(Progress::More) => {}
                Ok(Progress::Done) => {
                    self.done = true;
                    result = Ok(Progress::Done);
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        frames.clear();
        self.frames = frames;
        result
    }
}

fn is_complete_json(text: &str) -> bool {
    !text.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// `call_<n>`, unique within this process, for calls the provider sent without an id.
fn synthesised_id() -> CallId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    CallId(format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed)))
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

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    /// Non-streaming answers (a server that ignored `stream`) carry `message` instead.
    #[serde(default, alias = "message")]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    /// LiteLLM's Anthropic route.
    #[serde(default)]
    thinking_blocks: Option<Vec<serde_json::Value>>,
    /// OpenRouter.
    #[serde(default)]
    reasoning_details: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    /// DeepSeek.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
    /// OpenAI (DeepSeek sends it too).
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
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

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
