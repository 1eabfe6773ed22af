//! The request's messages with each one's JSON kept beside it. Between compactions the
//! conversation only grows, so a step serialises what it added; the JSON of older messages is
//! kept in frozen runs that every later request shares instead of copying (serialising the
//! whole conversation again every step cost time in proportion to its length). Every change
//! goes through a method that re-encodes what it touched, and the fields are private, so a
//! message and its JSON cannot disagree.

use serde::ser::Error as _;
use tokio_util::bytes::Bytes;

use super::ChatMessage;

/// The open run is frozen once it holds this much, or an eighth of what is frozen already
/// (so a long conversation is a few dozen runs, not thousands).
const SEAL_BYTES: usize = 64 * 1024;

/// Messages as sent, each with its JSON (compact, exactly as `serde_json::to_vec` writes it).
/// Equal when the messages are: where the frozen runs end depends on how the list was built.
#[derive(Debug, Clone, Default)]
pub struct WireMessages {
    messages: Vec<ChatMessage>,
    /// Frozen runs of whole messages' JSON, each message followed by a comma.
    sealed: Vec<Bytes>,
    sealed_bytes: usize,
    /// The messages after the frozen ones, in the same form. The last message is always
    /// here, so merging into it never touches a frozen run.
    open: Vec<u8>,
    /// Where each message of `open` ends (after its comma).
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
            last.append(content);
            self.ends.pop();
            self.open.truncate(self.ends.last().copied().unwrap_or(0));
            self.encode_last();
            return;
        }
        self.messages.push(message.clone());
        self.encode_last();
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Bytes of the JSON array `[m1,m2,…]`.
    pub fn json_len(&self) -> usize {
        // Every message carries a comma; the last one's becomes the closing bracket.
        let json = self.sealed_bytes + self.open.len();
        if json == 0 { 2 } else { json + 1 }
    }

    /// The JSON array `[m1,m2,…]` in pieces whose concatenation is byte for byte what
    /// `serde_json::to_vec(self.as_slice())` writes. The frozen runs are shared, not copied;
    /// only the open run is.
    pub fn json_array_pieces(&self) -> Result<Vec<Bytes>, serde_json::Error> {
        if let Some(failed) = &self.failed {
            return Err(serde_json::Error::custom(failed));
        }
        let mut pieces = Vec::with_capacity(self.sealed.len() + 2);
        pieces.push(Bytes::from_static(b"["));
        pieces.extend(self.sealed.iter().cloned());
        // `open` holds the last message (it is empty only when there is none): its comma
        // becomes the closing bracket.
        let mut last = Vec::with_capacity(self.open.len() + 1);
        last.extend_from_slice(self.open.strip_suffix(b",").unwrap_or(&self.open));
        last.push(b']');
        pieces.push(Bytes::from(last));
        Ok(pieces)
    }

    /// Writes the JSON array (see `json_array_pieces`) into `out`.
    pub fn write_json_array(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        let pieces = self.json_array_pieces()?;
        out.reserve(self.json_len());
        for piece in &pieces {
            out.extend_from_slice(piece);
        }
        Ok(())
    }

    /// Encodes the last message, whose JSON is not kept yet. Freezes the open run first when
    /// it is full: the last message then starts the new open run.
    fn encode_last(&mut self) {
        if self.open.len() >= SEAL_BYTES.max(self.sealed_bytes / 8) {
            self.sealed_bytes += self.open.len();
            self.sealed.push(Bytes::copy_from_slice(&self.open));
            self.open.clear();
            self.ends.clear();
        }
        let Some(message) = self.messages.last() else {
            return;
        };
        let start = self.open.len();
        match serde_json::to_writer(&mut self.open, message) {
            Ok(()) => self.open.push(b','),
            Err(err) => {
                self.open.truncate(start);
                self.failed.get_or_insert_with(|| err.to_string());
            }
        }
        self.ends.push(self.open.len());
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

impl PartialEq for WireMessages {
    fn eq(&self, other: &Self) -> bool {
        self.messages == other.messages
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
                reasoning_items: Vec::new(),
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
    fn a_long_conversation_is_a_few_frozen_runs_that_still_add_up_to_the_same_array() {
        let mut messages = WireMessages::new();
        let big = "line of a file\n".repeat(600);
        for i in 0..400 {
            messages.push_merging_users(&ChatMessage::Tool {
                tool_call_id: format!("c{i}"),
                content: big.clone(),
            });
            // A user message after every tenth result, sometimes two in a row (merged).
            if i % 10 == 0 {
                messages.push_merging_users(&user(&format!("note {i}")));
                if i % 20 == 0 {
                    messages.push_merging_users(&user("and another"));
                }
            }
            if i % 37 == 0 || i == 399 {
                assert_eq!(
                    array(&messages),
                    serde_json::to_vec(messages.as_slice()).unwrap()
                );
            }
        }
        let pieces = messages.json_array_pieces().unwrap();
        assert!(messages.json_len() > 3_000_000);
        assert!(pieces.len() < 48, "{} pieces", pieces.len());
        // The copied part of a request is small next to what is shared.
        let copied = pieces.last().map_or(0, |p| p.len());
        assert!(copied < messages.json_len() / 4, "{copied}");
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
