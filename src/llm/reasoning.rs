//! Structured reasoning that must travel back with tool calls: Anthropic's signed
//! `thinking_blocks` (as LiteLLM passes them through) and OpenRouter's `reasoning_details`.
//! Both stream as fragments; they are merged here into the blocks a follow-up request carries
//! in the assistant message, exactly as the server sent them apart from the merging. A
//! provider that verifies signatures rejects a follow-up whose thinking is missing or altered.

use serde_json::{Map, Value};

pub use crate::content::ReasoningBlocks;

impl ReasoningBlocks {
    /// Bytes of text held (thinking, signatures, data, type names), for the reply's cap.
    pub fn text_bytes(&self) -> usize {
        text_bytes(&self.thinking_blocks)
            + text_bytes(&self.reasoning_details)
            + text_bytes(&self.reasoning_items)
    }

    /// Merges one delta's `thinking_blocks` and returns the readable thinking text it added.
    /// A `thinking` fragment continues the last thinking block until that block is signed;
    /// `redacted_thinking` blocks arrive whole.
    pub fn add_thinking_blocks(&mut self, blocks: Vec<Value>) -> String {
        let mut text = String::new();
        for block in blocks {
            let Value::Object(block) = block else {
                continue;
            };
            let kind = block
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("thinking");
            if kind == "thinking" {
                if let Some(fragment) = block.get("thinking").and_then(Value::as_str) {
                    text.push_str(fragment);
                }
                let open = self.thinking_blocks.last_mut().and_then(|last| {
                    let is_open = last.get("type").and_then(Value::as_str) == Some("thinking")
                        && !has_text(last, "signature");
                    is_open.then_some(last)
                });
                match open {
                    Some(Value::Object(last)) => merge(last, block, &["thinking", "signature"]),
                    _ => self.thinking_blocks.push(Value::Object(block)),
                }
            } else {
                self.thinking_blocks.push(Value::Object(block));
            }
        }
        text
    }

    /// Merges one delta's `reasoning_details` and returns the readable text it added. Pieces
    /// with the same `index` are one detail (text, summary and data concatenated); without an
    /// index a piece continues the last detail of its type until that one is signed.
    pub fn add_reasoning_details(&mut self, details: Vec<Value>) -> String {
        let mut text = String::new();
        for detail in details {
            let Value::Object(detail) = detail else {
                continue;
            };
            for key in ["text", "summary"] {
                if let Some(fragment) = detail.get(key).and_then(Value::as_str) {
                    text.push_str(fragment);
                }
            }
            let kind = detail.get("type").cloned();
            let index = detail.get("index").and_then(Value::as_u64);
            let existing = self
                .reasoning_details
                .iter_mut()
                .rev()
                .find(|d| match index {
                    Some(i) => d.get("index").and_then(Value::as_u64) == Some(i),
                    None => d.get("type") == kind.as_ref() && !has_text(d, "signature"),
                });
            match existing {
                Some(Value::Object(open)) => {
                    merge(open, detail, &["text", "summary", "data", "signature"])
                }
                _ => self.reasoning_details.push(Value::Object(detail)),
            }
        }
        text
    }
}

/// The string bytes of the objects in `values` (what merging them will hold).
pub fn text_bytes(values: &[Value]) -> usize {
    let size = |v: &Value| match v {
        Value::Object(map) => map
            .values()
            .map(|v| v.as_str().map_or(0, str::len))
            .sum::<usize>(),
        _ => 0,
    };
    values.iter().map(size).sum()
}

/// The chat wire's view of the blocks: what chat-completions servers take back (Anthropic's
/// thinking blocks through LiteLLM, OpenRouter's details); the Responses API's items are
/// foreign there and stay out (they remain in the log).
pub(crate) fn chat_blocks<S: serde::Serializer>(
    blocks: &ReasoningBlocks,
    out: S,
) -> Result<S::Ok, S::Error> {
    #[derive(serde::Serialize)]
    struct ChatBlocks<'a> {
        #[serde(skip_serializing_if = "<[Value]>::is_empty")]
        thinking_blocks: &'a [Value],
        #[serde(skip_serializing_if = "<[Value]>::is_empty")]
        reasoning_details: &'a [Value],
    }
    serde::Serialize::serialize(
        &ChatBlocks {
            thinking_blocks: &blocks.thinking_blocks,
            reasoning_details: &blocks.reasoning_details,
        },
        out,
    )
}

fn has_text(value: &Value, key: &str) -> bool {
    value
        .get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// Adds `piece` to `into`: string fields in `concatenated` are appended, anything else is
/// taken when `into` has no non-null value for it yet.
fn merge(into: &mut Map<String, Value>, piece: Map<String, Value>, concatenated: &[&str]) {
    for (key, value) in piece {
        match (into.get_mut(&key), value) {
            (Some(Value::String(held)), Value::String(more))
                if concatenated.contains(&key.as_str()) =>
            {
                held.push_str(&more);
            }
            (Some(held), value) if held.is_null() => *held = value,
            (Some(_), _) => {}
            (None, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn list(value: Value) -> Vec<Value> {
        match value {
            Value::Array(items) => items,
            _ => Vec::new(),
        }
    }

    #[test]
    fn litellm_thinking_fragments_merge_into_signed_blocks() {
        let mut blocks = ReasoningBlocks::default();
        let mut shown = String::new();
        for piece in [
            json!([{"type": "thinking", "thinking": "Let me ", "signature": null}]),
            json!([{"type": "thinking", "thinking": "list files."}]),
            json!([{"type": "thinking", "thinking": "", "signature": "EqoB=="}]),
            json!([{"type": "redacted_thinking", "data": "ENC"}]),
            json!([{"type": "thinking", "thinking": "Second."}]),
        ] {
            shown.push_str(&blocks.add_thinking_blocks(list(piece)));
        }
        assert_eq!(shown, "Let me list files.Second.");
        assert_eq!(
            blocks.thinking_blocks,
            vec![
                json!({"type": "thinking", "thinking": "Let me list files.", "signature": "EqoB=="}),
                json!({"type": "redacted_thinking", "data": "ENC"}),
                json!({"type": "thinking", "thinking": "Second."}),
            ]
        );
    }

    #[test]
    fn blocks_travel_as_top_level_keys_of_the_assistant_message() {
        let message = crate::llm::ChatMessage::Assistant {
            content: Some(String::new()),
            reasoning_content: Some("r".into()),
            reasoning_blocks: ReasoningBlocks {
                thinking_blocks: vec![
                    json!({"type": "thinking", "thinking": "r", "signature": "s"}),
                ],
                reasoning_details: Vec::new(),
                reasoning_items: vec![json!({"type": "reasoning", "encrypted_content": "e"})],
            },
            tool_calls: Vec::new(),
        };
        let value = serde_json::to_value(&message).unwrap_or_default();
        assert_eq!(
            value,
            json!({
                "role": "assistant", "content": "", "reasoning_content": "r",
                "thinking_blocks": [{"type": "thinking", "thinking": "r", "signature": "s"}],
            })
        );
        // The Responses API's items are foreign to the chat wire: dropped there, kept in the log.
        let back: crate::llm::ChatMessage = serde_json::from_value(value).unwrap_or_else(|e| {
            panic!("{e}");
        });
        let mut expected = message;
        if let crate::llm::ChatMessage::Assistant {
            reasoning_blocks, ..
        } = &mut expected
        {
            reasoning_blocks.reasoning_items.clear();
        }
        assert_eq!(back, expected);
    }

    #[test]
    fn openrouter_details_merge_by_index() {
        let mut blocks = ReasoningBlocks::default();
        let mut shown = String::new();
        for piece in [
            json!([{"type": "reasoning.text", "text": "Plan", "format": "anthropic-claude-v1", "index": 0}]),
            json!([{"type": "reasoning.text", "text": " it.", "index": 0}]),
            json!([{"type": "reasoning.text", "signature": "sig", "index": 0}]),
            json!([{"type": "reasoning.encrypted", "data": "AAA", "index": 1}]),
            json!([{"type": "reasoning.summary", "summary": "Sum"}]),
            json!([{"type": "reasoning.summary", "summary": "mary"}]),
        ] {
            shown.push_str(&blocks.add_reasoning_details(list(piece)));
        }
        assert_eq!(shown, "Plan it.Summary");
        assert_eq!(
            blocks.reasoning_details,
            vec![
                json!({"type": "reasoning.text", "text": "Plan it.", "format": "anthropic-claude-v1", "index": 0, "signature": "sig"}),
                json!({"type": "reasoning.encrypted", "data": "AAA", "index": 1}),
                json!({"type": "reasoning.summary", "summary": "Summary"}),
            ]
        );
        // Every string counts towards the reply's cap, signatures and data included.
        assert!(blocks.text_bytes() > "Plan it.sigAAASummary".len());
    }
}
