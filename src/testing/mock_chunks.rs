//! What a `Script` looks like on the wire: the chunk payloads of a streamed reply (text,
//! reasoning in each server's shape, tool calls split and interleaved, usage, finish reason,
//! errors, endless streams), and the generated text of `Script::text_tokens`.

use serde_json::json;

use super::mock_script::{MockCall, ReasoningFormat, Script, ScriptReply};
use crate::bus::Usage;

impl Script {
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
            ScriptReply::Text(text) => {
                text_chunks(text, &mut first);
                (Box::new(std::iter::empty()), "stop")
            }
            ScriptReply::ToolCalls(calls) => {
                if let Some(preface) = &self.preface {
                    text_chunks(preface, &mut first);
                }
                generated += calls.iter().map(|c| c.argument_text().len()).sum::<usize>();
                let pieces = self.tool_call_chunks(calls, &chunk);
                (Box::new(pieces.into_iter()), "tool_calls")
            }
            ScriptReply::TextTokens(n) => {
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
            ScriptReply::StreamError(message) => {
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
            ScriptReply::EndlessText(text) => {
                let piece = chunk(json!({ "content": text }), None);
                return Box::new(first.into_iter().chain(std::iter::repeat(piece)));
            }
            ScriptReply::EndlessArguments(tool) => {
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
            ScriptReply::Status { .. } | ScriptReply::Raw(_) | ScriptReply::KeepAliveOnly(_) => {
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

#[cfg(test)]
mod tests {
    use super::*;

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
