//! The turns a `MockLlm` plays: what one response is (text, tool calls, an HTTP status, raw
//! bytes, an endless stream) and how it is delivered (splits, delays, cuts, headers). Built in
//! Rust with the constructors below or loaded from JSON (`[{"text": "hi"}, {"tool_calls":
//! [{"id": "c1", "name": "bash", …}]}]`); `mock_chunks` turns a script into chunk payloads.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bus::Usage;

/// One scripted response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    #[serde(flatten)]
    pub reply: ScriptReply,
    /// Streamed as `reasoning_content` before anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Text streamed before the tool calls of a tool-call reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preface: Option<String>,
    /// Tool-call arguments arrive in fragments of this many bytes (whole characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_arguments_every: Option<usize>,
    /// Pause before each chunk after the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_delay_ms: Option<u64>,
    /// Usage reported in a usage-only chunk; when absent, a rough estimate is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Close the connection after this many chunks: no finish reason, no `[DONE]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_chunks: Option<usize>,
    /// `Retry-After` (seconds) on a status reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// `retry-after-ms` on a status reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Tool calls are sent without ids.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub id_missing: bool,
    /// Extra response headers (name, value), e.g. a proxy's `llm_provider-retry-after`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The `code` of a `stream_error` object (500 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<u16>,
    /// The finish reason sent instead of the natural one (`length` for a cut answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// How `reasoning` is streamed (DeepSeek's `reasoning_content` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_format: Option<ReasoningFormat>,
}

/// The reasoning shapes of real servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningFormat {
    /// DeepSeek, vLLM: `reasoning_content` text.
    ReasoningContent,
    /// LiteLLM's Anthropic route: `reasoning_content` plus `thinking_blocks` fragments, then a
    /// fragment carrying the block's signature (`sig-mock`).
    ThinkingBlocks,
    /// OpenRouter: `reasoning` plus `reasoning_details` fragments at index 0, then the
    /// signature (`sig-mock`).
    ReasoningDetails,
}

/// What kind of response a script is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptReply {
    /// A streamed answer, a few words per chunk.
    Text(String),
    /// Streamed tool calls, interleaved by index.
    ToolCalls(Vec<MockCall>),
    /// A streamed answer of this many generated tokens (see `token_text`).
    TextTokens(usize),
    /// A non-200 answer with this body.
    Status { code: u16, body: String },
    /// HTTP 200, the role chunk, the preface as text if any, then an `error` object.
    StreamError(String),
    /// HTTP 200 with exactly these body bytes.
    Raw(#[serde(with = "bytes_as_text")] Vec<u8>),
    /// A reply that never ends: this text as the content of every chunk, forever.
    EndlessText(String),
    /// A call to this tool whose arguments never end.
    EndlessArguments(String),
    /// HTTP 200, then only `: keep-alive` comments, one every this many milliseconds, forever.
    KeepAliveOnly(u64),
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MockCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// Sent instead of `arguments` when set: lets a script send broken JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

impl MockCall {
    pub fn new(id: &str, name: &str, arguments: serde_json::Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            raw_arguments: None,
        }
    }

    /// A call whose argument text is sent exactly as given (invalid JSON allowed).
    pub fn raw(id: &str, name: &str, arguments: &str) -> Self {
        Self {
            raw_arguments: Some(arguments.into()),
            ..Self::new(id, name, serde_json::Value::Null)
        }
    }

    /// The argument text as sent.
    pub fn argument_text(&self) -> String {
        match &self.raw_arguments {
            Some(raw) => raw.clone(),
            None if self.arguments.is_null() => "{}".into(),
            None => self.arguments.to_string(),
        }
    }
}

impl From<(&str, &str, serde_json::Value)> for MockCall {
    fn from((id, name, arguments): (&str, &str, serde_json::Value)) -> Self {
        Self::new(id, name, arguments)
    }
}

impl Script {
    fn of(reply: ScriptReply) -> Self {
        Self {
            reply,
            reasoning: None,
            preface: None,
            split_arguments_every: None,
            chunk_delay_ms: None,
            usage: None,
            cut_after_chunks: None,
            retry_after: None,
            retry_after_ms: None,
            id_missing: false,
            headers: Vec::new(),
            error_code: None,
            reasoning_format: None,
            finish_reason: None,
        }
    }

    pub fn text(text: &str) -> Self {
        Self::of(ScriptReply::Text(text.into()))
    }

    /// DeepSeek's thinking shape: `reasoning_content` chunks, then `content` chunks.
    pub fn reasoning_then_text(reasoning: &str, text: &str) -> Self {
        Self::text(text).with_reasoning(reasoning)
    }

    pub fn tool_call(id: &str, name: &str, arguments: serde_json::Value) -> Self {
        Self::of(ScriptReply::ToolCalls(vec![MockCall::new(
            id, name, arguments,
        )]))
    }

    /// Parallel calls; their fragments are interleaved by index.
    pub fn tool_calls<C: Into<MockCall>>(calls: impl IntoIterator<Item = C>) -> Self {
        Self::of(ScriptReply::ToolCalls(
            calls.into_iter().map(Into::into).collect(),
        ))
    }

    /// A huge answer of `n` tokens, generated while it is sent.
    pub fn text_tokens(n: usize) -> Self {
        Self::of(ScriptReply::TextTokens(n))
    }

    /// A non-200 answer; `body` is sent as JSON text.
    pub fn status(code: u16, body: &str) -> Self {
        Self::of(ScriptReply::Status {
            code,
            body: body.into(),
        })
    }

    /// An `error` object (code 500 unless `error_code` says otherwise) after HTTP 200 and the
    /// role chunk, with nothing before it: the shape a proxy sends when its upstream fails.
    pub fn stream_error(message: &str) -> Self {
        Self::of(ScriptReply::StreamError(message.into()))
    }

    /// HTTP 200 with exactly these body bytes.
    pub fn raw(body: impl Into<Vec<u8>>) -> Self {
        Self::of(ScriptReply::Raw(body.into()))
    }

    /// A never-ending reply: `text` as every chunk's content.
    pub fn endless_text(text: &str) -> Self {
        Self::of(ScriptReply::EndlessText(text.into()))
    }

    /// A call to `tool` whose arguments never end.
    pub fn endless_arguments(tool: &str) -> Self {
        Self::of(ScriptReply::EndlessArguments(tool.into()))
    }

    /// Only keep-alive comments, every `every`, forever.
    pub fn keep_alive_only(every: Duration) -> Self {
        Self::of(ScriptReply::KeepAliveOnly(every.as_millis() as u64))
    }

    pub fn with_reasoning(mut self, reasoning: &str) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Text streamed before the tool calls.
    pub fn with_preface(mut self, text: &str) -> Self {
        self.preface = Some(text.into());
        self
    }

    pub fn split_arguments_every(mut self, bytes: usize) -> Self {
        self.split_arguments_every = Some(bytes.max(1));
        self
    }

    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay_ms = Some(delay.as_millis() as u64);
        self
    }

    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    pub fn cut_after_chunks(mut self, chunks: usize) -> Self {
        self.cut_after_chunks = Some(chunks);
        self
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Ends with this finish reason (`"length"`: cut at the output limit).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    pub fn reasoning_format(mut self, format: ReasoningFormat) -> Self {
        self.reasoning_format = Some(format);
        self
    }

    pub fn error_code(mut self, code: u16) -> Self {
        self.error_code = Some(code);
        self
    }

    pub fn id_missing(mut self) -> Self {
        self.id_missing = true;
        self
    }

    pub(crate) fn delay(&self) -> Option<Duration> {
        self.chunk_delay_ms
            .filter(|&ms| ms > 0)
            .map(Duration::from_millis)
    }
}

/// Raw bodies are text in JSON script files; bytes that are not UTF-8 become a byte list.
mod bytes_as_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Text(String),
        Bytes(Vec<u8>),
    }

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(bytes) {
            Ok(text) => text.serialize(serializer),
            Err(_) => bytes.serialize(serializer),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        Ok(match Form::deserialize(deserializer)? {
            Form::Text(text) => text.into_bytes(),
            Form::Bytes(bytes) => bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn scripts_load_from_json() {
        let file = r#"[
            {"text": "hello", "reasoning": "hmm", "chunk_delay_ms": 5},
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}], "split_arguments_every": 4},
            {"status": {"code": 429, "body": "{}"}, "retry_after": 1},
            {"raw": "data: [DONE]\n\n"},
            {"text_tokens": 5}
        ]"#;
        let scripts: Vec<Script> = serde_json::from_str(file).unwrap();
        assert_eq!(
            scripts[0],
            Script::reasoning_then_text("hmm", "hello").chunk_delay(Duration::from_millis(5))
        );
        assert_eq!(
            scripts[1],
            Script::tool_call("c1", "bash", json!({"command": "ls"})).split_arguments_every(4)
        );
        assert_eq!(scripts[2], Script::status(429, "{}").retry_after(1));
        assert_eq!(scripts[3], Script::raw("data: [DONE]\n\n"));
        assert_eq!(scripts[4], Script::text_tokens(5));
        let again: Vec<Script> =
            serde_json::from_str(&serde_json::to_string(&scripts).unwrap()).unwrap();
        assert_eq!(again, scripts);
    }
}
