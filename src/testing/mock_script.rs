//! The turns a `MockLlm` plays: what one response looks like on the wire (HTTP status,
//! chunk shapes, splits, delays, cuts). Built in Rust with the constructors below or loaded
//! from JSON (`[{"text": "hi"}, {"tool_calls": [{"id": "c1", "name": "bash", …}]}]`).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::bus::Usage;

/// One scripted response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    #[serde(flatten)]
    pub reply: Reply,
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
pub enum Reply {
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
    fn of(reply: Reply) -> Self {
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
        Self::of(Reply::Text(text.into()))
    }

    /// DeepSeek's thinking shape: `reasoning_content` chunks, then `content` chunks.
    pub fn reasoning_then_text(reasoning: &str, text: &str) -> Self {
        Self::text(text).with_reasoning(reasoning)
    }

    pub fn tool_call(id: &str, name: &str, arguments: serde_json::Value) -> Self {
        Self::of(Reply::ToolCalls(vec![MockCall::new(id, name, arguments)]))
    }

    /// Parallel calls; their fragments are interleaved by index.
    pub fn tool_calls<C: Into<MockCall>>(calls: impl IntoIterator<Item = C>) -> Self {
        Self::of(Reply::ToolCalls(
            calls.into_iter().map(Into::into).collect(),
        ))
    }

    /// A huge answer of `n` tokens, generated while it is sent.
    pub fn text_tokens(n: usize) -> Self {
        Self::of(Reply::TextTokens(n))
    }

    /// A non-200 answer; `body` is sent as JSON text.
    pub fn status(code: u16, body: &str) -> Self {
        Self::of(Reply::Status {
            code,
            body: body.into(),
        })
    }

    /// An `error` object (code 500 unless `error_code` says otherwise) after HTTP 200 and the
    /// role chunk, with nothing before it: the shape a proxy sends when its upstream fails.
    pub fn stream_error(message: &str) -> Self {
        Self::of(Reply::StreamError(message.into()))
    }

    /// HTTP 200 with exactly these body bytes.
    pub fn raw(body: impl Into<Vec<u8>>) -> Self {
        Self::of(Reply::Raw(body.into()))
    }

    /// A never-ending reply: `text` as every chunk's content.
    pub fn endless_text(text: &str) -> Self {
        Self::of(Reply::EndlessText(text.into()))
    }

    /// A call to `tool` whose arguments never end.
    pub fn endless_arguments(tool: &str) -> Self {
        Self::of(Reply::EndlessArguments(tool.into()))
    }

    /// Only keep-alive comments, every `every`, forever.
    pub fn keep_alive_only(every: Duration) -> Self {
        Self::of(Reply::KeepAliveOnly(every.as_millis() as u64))
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

    /// The chunk payloads of a streamed reply (without `[DONE]`), generated lazily.
    /// `prompt_bytes` feeds the usage estimate when the script sets none.
    pub(crate) fn chunks(
        &self,
        model: &str,
        prompt_bytes: usize,
    ) -> Box<dyn Iterator<Item = String> + Send> {
        let head = format!(
            r#"{{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":{},"choices":["#,
            json!(model)
        );
        let chunk_head = head.clone();
        let chunk = move |delta: serde_json::Value, finish: Option<&str>| {
            let head = &chunk_head;
            format!(
                r#"{head}{{"index":0,"delta":{delta},"finish_reason":{}}}]}}"#,
                json!(finish)
            )
        };
        let mut first = vec![chunk(json!({"role": "assistant", "content": null}), None)];
        let mut generated = 0;
        if let Some(reasoning) = &self.reasoning {
            generated += reasoning.len();
            let format = self
                .reasoning_format
                .unwrap_or(ReasoningFormat::ReasoningContent);
            let thinking = |w: &str, signature: Option<&str>| match format {
                ReasoningFormat::ReasoningContent => json!({"reasoning_content": w}),
                ReasoningFormat::ThinkingBlocks => json!({
                    "reasoning_content": w,
                    "thinking_blocks": [{"type": "thinking", "thinking": w, "signature": signature}],
                }),
                ReasoningFormat::ReasoningDetails => json!({
                    "reasoning": w,
                    "reasoning_details": [{
                        "type": "reasoning.text", "text": w, "signature": signature,
                        "format": "anthropic-claude-v1", "index": 0,
                    }],
                }),
            };
            first.extend(words(reasoning).map(|w| chunk(thinking(w, None), None)));
            if format != ReasoningFormat::ReasoningContent {
                first.push(chunk(thinking("", Some("sig-mock")), None));
            }
        }
        let mut text_chunks = |text: &str, out: &mut Vec<String>| {
            generated += text.len();
            out.extend(words(text).map(|w| chunk(json!({"content": w}), None)));
        };
        let (body, finish): (Box<dyn Iterator<Item = String> + Send>, &str) = match &self.reply {
            Reply::Text(text) => {
                text_chunks(text, &mut first);
                (Box::new(std::iter::empty()), "stop")
            }
            Reply::ToolCalls(calls) => {
                if let Some(preface) = &self.preface {
                    text_chunks(preface, &mut first);
                }
                generated += calls.iter().map(|c| c.argument_text().len()).sum::<usize>();
                let pieces = self.tool_call_chunks(calls, &chunk);
                (Box::new(pieces.into_iter()), "tool_calls")
            }
            Reply::TextTokens(n) => {
                let n = *n;
                let token_chunk = move |first: usize, end: usize| {
                    let mut out = String::with_capacity(head.len() + 128);
                    out.push_str(&head);
                    out.push_str(r#"{"index":0,"delta":{"content":""#);
                    for i in first..end {
                        out.push_str(WORDS[i % WORDS.len()]);
                        out.push_str(if (i + 1).is_multiple_of(LINE_WORDS) {
                            "\\n"
                        } else {
                            " "
                        });
                    }
                    out.push_str(r#""},"finish_reason":null}]}"#);
                    out
                };
                // The words repeat with period TOKEN_CYCLE, so full chunks come from a table:
                // 200,000 tokens stream in milliseconds even in a debug build.
                let full: Vec<String> = (0..TOKEN_CYCLE)
                    .map(|at| token_chunk(at, at + TOKENS_PER_CHUNK))
                    .collect();
                let tokens = (0..n.div_ceil(TOKENS_PER_CHUNK)).map(move |c| {
                    let (first, end) = (c * TOKENS_PER_CHUNK, ((c + 1) * TOKENS_PER_CHUNK).min(n));
                    if end - first == TOKENS_PER_CHUNK {
                        full[first % TOKEN_CYCLE].clone()
                    } else {
                        token_chunk(first, end)
                    }
                });
                generated += n * 4;
                (Box::new(tokens), "stop")
            }
            Reply::StreamError(message) => {
                if let Some(preface) = &self.preface {
                    text_chunks(preface, &mut first);
                }
                let code = self.error_code.unwrap_or(500);
                let kind = if code >= 500 {
                    "server_error"
                } else {
                    "invalid_request_error"
                };
                let error = json!({"error": {"message": message, "type": kind, "code": code}});
                return Box::new(first.into_iter().chain(std::iter::once(error.to_string())));
            }
            Reply::EndlessText(text) => {
                let piece = chunk(json!({ "content": text }), None);
                return Box::new(first.into_iter().chain(std::iter::repeat(piece)));
            }
            Reply::EndlessArguments(tool) => {
                let open = chunk(
                    json!({"tool_calls": [{"index": 0, "id": "call_endless", "type": "function",
                        "function": {"name": tool, "arguments": "{\"content\": \""}}]}),
                    None,
                );
                let piece = chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "endless text "}}]}),
                    None,
                );
                first.push(open);
                return Box::new(first.into_iter().chain(std::iter::repeat(piece)));
            }
            Reply::Status { .. } | Reply::Raw(_) | Reply::KeepAliveOnly(_) => {
                return Box::new(std::iter::empty());
            }
        };
        let usage = self.usage.unwrap_or(Usage {
            prompt_tokens: (prompt_bytes / 4) as u64,
            completion_tokens: (generated / 4).max(1) as u64,
            cached_tokens: 0,
        });
        let finish = self.finish_reason.as_deref().unwrap_or(finish);
        let tail = [
            chunk(json!({}), Some(finish)),
            json!({
                "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
                "model": model, "choices": [],
                "usage": {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                    "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                    "prompt_tokens_details": { "cached_tokens": usage.cached_tokens },
                },
            })
            .to_string(),
        ];
        Box::new(first.into_iter().chain(body).chain(tail))
    }

    /// Each call opens with id, name and empty arguments (or the whole arguments when not
    /// split); fragments then go round-robin over the calls, so parallel calls interleave.
    fn tool_call_chunks(
        &self,
        calls: &[MockCall],
        chunk: &impl Fn(serde_json::Value, Option<&str>) -> String,
    ) -> Vec<String> {
        let fragments: Vec<Vec<String>> = calls
            .iter()
            .map(|c| match self.split_arguments_every {
                Some(n) => split_chars(&c.argument_text(), n),
                None => vec![c.argument_text()],
            })
            .collect();
        let open = |i: usize, arguments: &str| {
            let mut call = json!({
                "index": i, "type": "function",
                "function": { "name": calls[i].name, "arguments": arguments },
            });
            if !self.id_missing {
                call["id"] = json!(calls[i].id);
            }
            chunk(json!({ "tool_calls": [call] }), None)
        };
        let fragment = |i: usize, arguments: &str| {
            chunk(
                json!({ "tool_calls": [{ "index": i, "function": { "arguments": arguments } }] }),
                None,
            )
        };
        let mut out = Vec::new();
        if self.split_arguments_every.is_none() {
            out.extend(fragments.iter().enumerate().map(|(i, f)| open(i, &f[0])));
            return out;
        }
        out.extend((0..calls.len()).map(|i| open(i, "")));
        let rounds = fragments.iter().map(Vec::len).max().unwrap_or(0);
        for round in 0..rounds {
            for (i, pieces) in fragments.iter().enumerate() {
                if let Some(piece) = pieces.get(round) {
                    out.push(fragment(i, piece));
                }
            }
        }
        out
    }
}

const TOKENS_PER_CHUNK: usize = 10;
/// A line break follows every this many words.
const LINE_WORDS: usize = 12;
/// After this many tokens the words and line breaks repeat (lcm of 8 words and 12).
const TOKEN_CYCLE: usize = 24;
const WORDS: [&str; 8] = [
    "alpha", "beta", "gamma", "delta", "cairn", "stone", "path", "ridge",
];

/// The text `Script::text_tokens(n)` streams: `n` words, a line break after every 12th.
pub fn token_text(n: usize) -> String {
    let mut text = String::with_capacity(n * 6);
    (0..n).for_each(|i| push_token(&mut text, i));
    text
}

fn push_token(text: &mut String, i: usize) {
    text.push_str(WORDS[i % WORDS.len()]);
    text.push(if (i + 1).is_multiple_of(LINE_WORDS) {
        '\n'
    } else {
        ' '
    });
}

/// Words with their trailing whitespace, a realistic streaming granularity.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(char::is_whitespace)
}

/// Pieces of at most `n` bytes, never splitting a character (unless one is longer than `n`).
fn split_chars(text: &str, n: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for c in text.chars() {
        if !piece.is_empty() && piece.len() + c.len_utf8() > n {
            pieces.push(std::mem::take(&mut piece));
        }
        piece.push(c);
    }
    if !piece.is_empty() || pieces.is_empty() {
        pieces.push(piece);
    }
    pieces
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

    #[test]
    fn split_keeps_characters_whole() {
        assert_eq!(split_chars("aé日b", 2), ["a", "é", "日", "b"]);
        assert_eq!(split_chars("abcde", 2), ["ab", "cd", "e"]);
        assert_eq!(split_chars("", 3), [""]);
    }

    #[test]
    fn token_text_has_n_words() {
        assert_eq!(token_text(13).split_whitespace().count(), 13);
        assert!(token_text(13).contains('\n'));
    }
}
