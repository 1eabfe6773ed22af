//! The request's messages with each one's JSON kept beside it. Between compactions the
//! conversation only grows, so a step serialises what it added and writes the rest of the body
//! by copying; serialising the whole conversation again every step cost time in proportion to
//! its length. Every change goes through a method that re-encodes what it touched, and the
//! fields are private, so a message and its JSON cannot disagree.

use serde::ser::Error as _;

use super::ChatMessage;

/// Messages as sent, each with its JSON (compact, exactly as `serde_json::to_vec` writes it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WireMessages {
    messages: Vec<ChatMessage>,
    /// The JSON of every message, one after another, no separators.
    json: Vec<u8>,
    /// Where each message's JSON ends in `json`.
    ends: Vec<usize>,
    /// The first message that could not be encoded: the request fails with this, as it did
    /// when the whole body was serialised at once.
    failed: Option<String>,
}

impl WireMessages {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn as_slice(&self) -> &[ChatMessage] {
        &self.messages
    }

    pub fn push(&mut self, message: ChatMessage) {
        self.messages.push(message);
        self.encode_last();
    }

    /// Appends `message`, except that a user message right after a user message is merged into
    /// it: an interrupted request leaves a user message without an answer, and chat templates
    /// that require alternating roles reject two in a row. The merged message is re-encoded.
    pub fn push_merging_users(&mut self, message: &ChatMessage) {
        if let (Some(ChatMessage::User { content: last }), ChatMessage::User { content }) =
            (self.messages.last_mut(), message)
        {
            last.push_str("\n\n");
            last.push_str(content);
            self.ends.pop();
            self.json.truncate(self.ends.last().copied().unwrap_or(0));
            self.encode_last();
            return;
        }
        self.messages.push(message.clone());
        self.encode_last();
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Bytes `write_json_array` writes.
    pub fn json_len(&self) -> usize {
        // Brackets, and a comma between two messages.
        self.json.len() + 2 + self.messages.len().saturating_sub(1)
    }

    /// Writes `[m1,m2,…]`, byte for byte what `serde_json::to_writer(out, self.as_slice())`
    /// writes, by copying the kept pieces.
    pub fn write_json_array(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        if let Some(failed) = &self.failed {
            return Err(serde_json::Error::custom(failed));
        }
        out.reserve(self.json_len());
        out.push(b'[');
        let mut start = 0;
        for (i, &end) in self.ends.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&self.json[start..end]);
            start = end;
        }
        out.push(b']');
        Ok(())
    }

    /// Encodes the last message, whose JSON is not in `json` yet.
    fn encode_last(&mut self) {
        let Some(message) = self.messages.last() else {
            return;
        };
        let start = self.json.len();
        if let Err(err) = serde_json::to_writer(&mut self.json, message) {
            self.json.truncate(start);
            self.failed.get_or_insert_with(|| err.to_string());
        }
        self.ends.push(self.json.len());
    }
}

impl From<Vec<ChatMessage>> for WireMessages {
    fn from(messages: Vec<ChatMessage>) -> Self {
        let mut out = Self::new();
        for message in messages {
            out.push(message);
        }
        out
    }
}

impl<const N: usize> From<[ChatMessage; N]> for WireMessages {
    fn from(messages: [ChatMessage; N]) -> Self {
        Self::from(Vec::from(messages))
    }
}

impl std::ops::Deref for WireMessages {
    type Target = [ChatMessage];

    fn deref(&self) -> &[ChatMessage] {
        &self.messages
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::llm::{ReasoningBlocks, WireToolCall};

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: text.into(),
        }
    }

    fn array(messages: &WireMessages) -> Vec<u8> {
        let mut out = Vec::new();
        messages.write_json_array(&mut out).unwrap();
        assert_eq!(out.len(), messages.json_len());
        out
    }

    #[test]
    fn the_array_is_what_serde_writes_for_the_same_messages() {
        let empty = WireMessages::new();
        assert_eq!(array(&empty), serde_json::to_vec(empty.as_slice()).unwrap());
        let mut messages = WireMessages::new();
        messages.push(ChatMessage::System {
            content: "sys".into(),
        });
        assert_eq!(
            array(&messages),
            serde_json::to_vec(messages.as_slice()).unwrap()
        );
        messages.push(ChatMessage::Assistant {
            content: None,
            reasoning_content: Some("hm".into()),
            reasoning_blocks: ReasoningBlocks {
                thinking_blocks: vec![json!({"type": "thinking", "signature": "s"})],
                reasoning_details: Vec::new(),
            },
            tool_calls: vec![WireToolCall::function("c1", "bash", r#"{"command":"ls"}"#)],
        });
        messages.push(ChatMessage::Tool {
            tool_call_id: "c1".into(),
            content: "a\tb\u{1}\"é\"\n".into(),
        });
        assert_eq!(
            array(&messages),
            serde_json::to_vec(messages.as_slice()).unwrap()
        );
    }

    #[test]
    fn consecutive_user_messages_merge_and_the_merged_one_is_encoded_again() {
        let mut messages = WireMessages::new();
        for text in ["first", "second"] {
            messages.push_merging_users(&user(text));
        }
        assert_eq!(messages.as_slice(), [user("first\n\nsecond")]);
        messages.push_merging_users(&ChatMessage::Assistant {
            content: Some("a".into()),
            reasoning_content: None,
            reasoning_blocks: ReasoningBlocks::default(),
            tool_calls: Vec::new(),
        });
        messages.push_merging_users(&user("third"));
        messages.push_merging_users(&user("fourth"));
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2], user("third\n\nfourth"));
        assert_eq!(
            array(&messages),
            serde_json::to_vec(messages.as_slice()).unwrap()
        );
        messages.clear();
        messages.push(user("again"));
        assert_eq!(array(&messages), br#"[{"role":"user","content":"again"}]"#);
    }
}
