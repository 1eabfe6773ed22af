//! A session's conversation and what is derived from it: the messages as sent (the system
//! prompt first, consecutive user messages merged, each message's JSON kept) and the window
//! meter. Both are caches that a step extends by what it added, so a step costs what it adds,
//! not the whole conversation. They live here, behind the only two ways the conversation
//! changes (append, replace), so none can go stale: an append is caught up incrementally, a
//! replacement (a compaction) starts every cache afresh.

use super::context::Meter;
use crate::bus::Usage;
use crate::llm::{ChatMessage, WireMessages};

#[derive(Debug)]
pub(super) struct Conversation {
    /// Sent first in every request; fixed for the life of the session.
    system: String,
    /// The conversation as logged (a resume rebuilds exactly this).
    messages: Vec<ChatMessage>,
    /// The system prompt and `messages[..wired]`, as sent.
    wire: WireMessages,
    wired: usize,
    meter: Meter,
}

impl Conversation {
    pub fn new(system: String, messages: Vec<ChatMessage>) -> Self {
        let mut conversation = Self {
            system,
            messages: Vec::new(),
            wire: WireMessages::new(),
            wired: 0,
            meter: Meter::default(),
        };
        conversation.replace(messages);
        conversation
    }

    pub fn system(&self) -> &str {
        &self.system
    }

    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }

    pub fn push(&mut self, message: ChatMessage) {
        self.messages.push(message);
    }

    /// Puts `messages` in place of the conversation (a compaction, a fork) and returns the
    /// old one: the messages as sent are built again, and the provider's last count no longer
    /// applies.
    pub fn replace(&mut self, messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
        let old = std::mem::replace(&mut self.messages, messages);
        self.wire = WireMessages::from(vec![ChatMessage::System {
            content: self.system.clone(),
        }]);
        self.wired = 0;
        self.meter = Meter::default();
        old
    }

    /// The messages as sent, caught up with what was appended since the last request.
    pub fn wire(&mut self) -> &WireMessages {
        for message in &self.messages[self.wired..] {
            self.wire.push_merging_users(message);
        }
        self.wired = self.messages.len();
        &self.wire
    }

    /// Tokens of a request made of `fixed_bytes` (tool schemas, envelope; the system prompt
    /// is counted by the caller too) and the conversation.
    pub fn estimate(&mut self, fixed_bytes: u64) -> u64 {
        self.meter.estimate(fixed_bytes, &self.messages)
    }

    /// The provider counted the request just answered and its reply (already appended).
    pub fn anchor(&mut self, usage: &Usage) {
        self.meter.anchor(usage, &self.messages);
    }

    /// Forget the provider's count (it proved wrong).
    pub fn forget_anchor(&mut self) {
        self.meter.forget_anchor();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: text.into(),
        }
    }

    fn assistant(text: &str) -> ChatMessage {
        ChatMessage::Assistant {
            content: Some(text.into()),
            reasoning_content: None,
            reasoning_blocks: Default::default(),
            tool_calls: Vec::new(),
        }
    }

    /// The messages and their JSON array.
    fn sent(wire: &WireMessages) -> (Vec<ChatMessage>, String) {
        let mut json = Vec::new();
        wire.write_json_array(&mut json).unwrap();
        (wire.to_vec(), String::from_utf8(json).unwrap())
    }

    /// The messages as sent, built from nothing: what the kept ones must always equal.
    fn fresh(conversation: &Conversation) -> (Vec<ChatMessage>, String) {
        let mut wire = WireMessages::from(vec![ChatMessage::System {
            content: conversation.system().into(),
        }]);
        for message in conversation.messages() {
            wire.push_merging_users(message);
        }
        sent(&wire)
    }

    #[test]
    fn the_messages_as_sent_follow_appends_and_replacements() {
        let mut conversation = Conversation::new("sys".into(), vec![user("a")]);
        assert_eq!(sent(conversation.wire()), fresh(&conversation));
        conversation.push(user("interrupted, then b"));
        conversation.push(assistant("ok"));
        assert_eq!(sent(conversation.wire()), fresh(&conversation));
        // A compaction that leaves more messages than were sent last time.
        let longer: Vec<ChatMessage> = (0..6).map(|i| user(&format!("m{i}"))).collect();
        conversation.replace(longer);
        let (messages, json) = sent(conversation.wire());
        assert_eq!((messages.clone(), json.clone()), fresh(&conversation));
        assert_eq!(
            messages.len(),
            2,
            "the system prompt and the merged user messages"
        );
        assert!(!json.contains("interrupted"));
    }

    #[test]
    fn a_replacement_forgets_the_count_even_when_it_is_longer() {
        let mut conversation = Conversation::new("sys".into(), vec![user("a")]);
        conversation.estimate(0);
        conversation.anchor(&Usage {
            prompt_tokens: 90_000,
            completion_tokens: 10,
            cached_tokens: 0,
        });
        assert!(conversation.estimate(0) >= 90_000);
        conversation.replace(vec![user("b"), assistant("c"), user("d")]);
        assert!(conversation.estimate(0) < 100);
    }
}
