//! Window accounting: how many tokens the next request will be, without a tokenizer. The
//! provider's count of the last request (prompt plus reply tokens) is the anchor; what was
//! added since is estimated at 4 bytes of serialised JSON per token (close for English and
//! code with the BPE tokenizers in use, and on the safe side for JSON punctuation). Without
//! an anchor (a new or just compacted conversation) the whole request is estimated that way.
//! Counting is incremental: each message is serialised once, when first seen.

use crate::bus::Usage;
use crate::config::PricesFile;
use crate::llm::ChatMessage;
use crate::models::discover::WindowProbe;

/// Bytes per token of the estimate.
pub const BYTES_PER_TOKEN: u64 = 4;

/// How the agent manages the window; fixed for the life of the task.
#[derive(Debug, Clone)]
pub struct ContextSettings {
    /// Compact when the estimate passes this fraction of the window.
    pub threshold: f64,
    /// Tokens kept free for the reply: a request that leaves less is compacted first.
    pub reply_reserve: u64,
    /// Asked once for the window (in the background) when the config does not set it.
    pub probe: Option<WindowProbe>,
    /// True when the user set the window: neither the provider nor a model switch changes it.
    pub window_fixed: bool,
    pub prices: PricesFile,
    /// The model the config names (`[prices]` top-level keys apply to it).
    pub configured_model: String,
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            threshold: 0.8,
            reply_reserve: 4_096,
            probe: None,
            window_fixed: false,
            prices: PricesFile::default(),
            configured_model: String::new(),
        }
    }
}

/// The window, shared with the task that asks the provider for it.
#[derive(Debug)]
pub(super) struct WindowCell(std::sync::atomic::AtomicU64);

impl WindowCell {
    pub fn new(window: u64) -> Self {
        Self(std::sync::atomic::AtomicU64::new(window.max(1)))
    }
    pub fn window(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn set(&self, window: u64) {
        if window > 0 {
            self.0.store(window, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Serialised size of the conversation, and the provider's last count of it.
#[derive(Debug, Default, Clone)]
pub(super) struct Meter {
    /// Messages already counted (a prefix of the conversation).
    counted: usize,
    bytes: u64,
    /// (tokens the provider counted, `bytes` at that moment).
    anchor: Option<(u64, u64)>,
}

impl Meter {
    fn catch_up(&mut self, messages: &[ChatMessage]) {
        if self.counted > messages.len() {
            // The conversation was replaced (compaction): count it afresh.
            *self = Meter::default();
        }
        for message in &messages[self.counted..] {
            self.bytes += estimated_len(message) + 1;
        }
        self.counted = messages.len();
    }

    /// Tokens of a request made of `fixed_bytes` (system prompt, tool schemas, envelope)
    /// and `messages`.
    pub fn estimate(&mut self, fixed_bytes: u64, messages: &[ChatMessage]) -> u64 {
        self.catch_up(messages);
        match self.anchor {
            Some((tokens, at)) => tokens + self.bytes.saturating_sub(at) / BYTES_PER_TOKEN,
            None => (fixed_bytes + self.bytes).div_ceil(BYTES_PER_TOKEN),
        }
    }

    /// The provider counted the request just answered and its reply (already appended).
    pub fn anchor(&mut self, usage: &Usage, messages: &[ChatMessage]) {
        self.catch_up(messages);
        if usage.prompt_tokens > 0 {
            self.anchor = Some((usage.prompt_tokens + usage.completion_tokens, self.bytes));
        }
    }

    /// Forget the provider's count (after a compaction, or when it proved wrong).
    pub fn forget_anchor(&mut self) {
        self.anchor = None;
    }
}

/// What `message` counts for in the window, in bytes of JSON: its serialised length, except
/// that an image counts as what the model is charged for it, not its data URL.
pub fn estimated_len(message: &ChatMessage) -> u64 {
    let json = serialized_len(message);
    match message {
        ChatMessage::User { content } => {
            let (url_bytes, images) = content.image_url_bytes();
            json.saturating_sub(url_bytes) + images * crate::llm::user_content::IMAGE_ESTIMATE_BYTES
        }
        _ => json,
    }
}

/// Bytes of `value` as JSON, without building the text.
pub fn serialized_len<T: serde::Serialize + ?Sized>(value: &T) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Serialising plain data into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: text.into(),
        }
    }

    #[test]
    fn the_estimate_follows_the_provider_count_plus_what_was_added() {
        let mut meter = Meter::default();
        let mut messages = vec![user(&"a".repeat(396))];
        // No count yet: bytes / 4 of everything.
        let first = meter.estimate(400, &messages);
        assert_eq!(first, (400 + serialized_len(&messages[0]) + 1).div_ceil(4));
        meter.anchor(
            &Usage {
                prompt_tokens: 1000,
                completion_tokens: 50,
                cached_tokens: 0,
            },
            &messages,
        );
        messages.push(user(&"b".repeat(4000)));
        let grown = meter.estimate(400, &messages);
        assert!((2050..2070).contains(&grown), "{grown}");
        // A replaced conversation is counted afresh.
        messages.truncate(0);
        messages.push(user("x"));
        meter.forget_anchor();
        assert!(meter.estimate(0, &messages) < 10);
    }
}
