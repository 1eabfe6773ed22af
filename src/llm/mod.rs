//! The model side, in three wire formats (`api`): OpenAI-compatible chat completions,
//! Anthropic's Messages and OpenAI's Responses, all streaming. `encoded` keeps each chat
//! message's JSON, `formats` projects the conversation onto the native formats, `client` does
//! HTTP and retries, `sse` turns bytes into events, `stream` assembles a format's events into
//! a `Completion`.
//! The agent talks to a `ChatModel`; tests drive the real client against the scripted
//! server in `testing` rather than a fake of the trait.

pub mod api;
pub mod client;
pub mod encoded;
pub mod formats;
pub mod listing;
pub mod reasoning;
pub mod retry;
pub mod sse;
pub mod stream;
pub mod user_content;
pub mod wire;

use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::bus::{CallId, Usage};
pub use api::{Api, CacheTtl, ToolChoice, WireOptions};
pub use client::HttpModel;
pub use encoded::WireMessages;
pub use reasoning::ReasoningBlocks;
pub use user_content::{UserContent, WirePart};
pub use wire::ToolSpec;
pub use wire::{ChatMessage, WireFunction, WireToolCall, wire_arguments};

/// Where and how to reach the model. `Debug` shows whether a key is set, never the key.
#[derive(Clone)]
pub struct ProviderSettings {
    /// Preset name (`deepseek`, `openai`, `openrouter`, `ollama`, `custom`).
    pub provider: String,
    /// API root including its version; the format's path (`/chat/completions`, `/messages`,
    /// `/responses`) is appended.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// Retries after the first attempt for 429, 5xx and dropped connections.
    pub max_retries: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Longest wait for the first byte of a response and between two reads of the body.
    pub idle_timeout: Duration,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub limits: ReplyLimits,
    /// The wire format and its per-format knobs.
    pub wire: WireOptions,
}

/// Bounds on one response, so a server that never stops cannot exhaust memory or patience.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyLimits {
    /// Largest reply text, and separately largest reasoning, in bytes (`max_reply_bytes`).
    pub max_reply_bytes: usize,
    /// Largest arguments of one tool call, in bytes (`max_tool_call_bytes`).
    pub max_call_bytes: usize,
    /// Most tool calls in one reply.
    pub max_calls: usize,
    /// Longest one attempt may take from sending to the end of the stream
    /// (`request_timeout_secs`), however steadily data arrives.
    pub request_timeout: Duration,
}

impl Default for ReplyLimits {
    /// 1 MiB is far beyond any model's output limit (128k tokens are about 512 KiB), so only
    /// a runaway stream reaches it.
    fn default() -> Self {
        Self {
            max_reply_bytes: 1 << 20,
            max_call_bytes: 1 << 20,
            max_calls: 256,
            request_timeout: Duration::from_secs(600),
        }
    }
}

impl ReplyLimits {
    /// Largest single SSE event: a server that ignores streaming sends the whole answer in one.
    pub fn max_event_bytes(&self) -> usize {
        self.max_reply_bytes
            .saturating_mul(2)
            .saturating_add(self.max_call_bytes)
            .saturating_add(64 * 1024)
    }
}

impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("limits", &self.limits)
            .field("wire", &self.wire)
            .finish()
    }
}

/// A tool call assembled from the stream, arguments still raw JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembledCall {
    pub id: CallId,
    pub name: String,
    /// Raw argument text; `""` means `{}`.
    pub arguments: String,
}

/// One complete model response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    pub reasoning: String,
    /// Signed thinking blocks / reasoning details, sent back with the reply's tool calls.
    pub reasoning_blocks: ReasoningBlocks,
    pub tool_calls: Vec<AssembledCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// Progress while a response streams, for the UI.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    Text(String),
    Reasoning(String),
    Usage(Usage),
    /// A retryable failure; the client waits `wait` before retry number `attempt` (1 for the
    /// first retry, at most `max_retries`). `wait` is the server's `Retry-After` when it sent one.
    Retrying {
        attempt: u32,
        wait: Duration,
        reason: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The stream ended before a finish reason. Half-built tool calls are dropped; `partial`
    /// keeps the text that did arrive.
    #[error("the response was cut off: {reason}")]
    Truncated {
        reason: String,
        partial: Box<Completion>,
    },
    /// The model's output limit (`finish_reason: length`) ended the reply inside a tool call.
    /// The same request would end there again, so it is not retried; the half-built call is
    /// never run. `partial` keeps the text and reasoning that arrived, without calls.
    #[error(
        "the model's output limit ended the reply inside a call to `{tool}` ({arguments_bytes} bytes of its arguments had arrived); the call was not run"
    )]
    CallCut {
        tool: String,
        arguments_bytes: usize,
        partial: Box<Completion>,
    },
    /// The reply passed one of the `ReplyLimits`: the stream was stopped there. `partial` keeps
    /// the text and reasoning up to the limit; tool calls are dropped.
    #[error("the reply was stopped: {reason}")]
    Capped {
        reason: String,
        partial: Box<Completion>,
    },
    /// A non-retryable HTTP status, or a retryable one after all retries.
    #[error("the provider answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("the provider's quota is exhausted: {message}")]
    QuotaExhausted { message: String },
    /// An error object sent inside a 200 stream. `transient` when its code or type says it
    /// passes with time (rate limit, overload, 5xx): retried if no content had arrived yet.
    #[error("the provider reported an error: {message}")]
    Provider { message: String, transient: bool },
    /// The request did not reach the server or its answer broke off: a summary line that
    /// names what to check, then the library's words.
    #[error("{0}")]
    Connection(String),
    #[error("could not read the provider's response: {0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
}

/// A request: the whole conversation (each message's JSON kept with it, see `encoded`) plus
/// the tool schemas.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub messages: &'a WireMessages,
    pub tools: &'a [ToolSpec],
}

pub type DeltaSink<'a> = &'a mut (dyn FnMut(StreamDelta) + Send);

#[async_trait]
pub trait ChatModel: Send + Sync {
    /// Streams one response. Retries are the implementation's business; each wait is reported
    /// as `StreamDelta::Retrying` first. Returns `Cancelled` soon after `cancel` fires.
    async fn stream_chat(
        &self,
        request: ChatRequest<'_>,
        on_delta: DeltaSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError>;
    fn model(&self) -> String;
    fn set_model(&self, model: &str);
    /// A client of the same provider for another model (a subagent's own `model`); None
    /// where the client cannot make one.
    fn with_model(&self, _model: &str) -> Option<std::sync::Arc<dyn ChatModel>> {
        None
    }
    /// One cheap request to see whether the endpoint answers at all, without retries, for a
    /// warning before the first message. A model that needs no server has nothing to check.
    async fn check_endpoint(&self, _timeout: Duration) -> Result<(), LlmError> {
        Ok(())
    }
    /// The models the provider offers (its `/models`), for the user to pick from.
    async fn list_models(&self) -> Result<Vec<String>, listing::ListError>;
}
