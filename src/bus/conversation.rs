//! The conversation as it happens: the session, the user's messages, the model's reply as it
//! streams, retries and the request's end; and what became of queued messages.

use serde::{Deserialize, Serialize};

use super::{EndReason, ImageChip, Mode, SessionId, StepId};

/// The session, the user's messages and the model's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConversationEvent {
    SessionStarted {
        session: SessionId,
        provider: String,
        model: String,
        mode: Mode,
        context_window: u64,
        resumed: bool,
    },
    /// A user message entered the conversation (also replayed on resume), with the images
    /// attached to it (from `@`, a paste, Ctrl+V or `--image`), for their chips.
    UserMessage {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageChip>,
        /// The files and directories `@` attached to it, for their chips: `src/lib.rs`,
        /// `src/lib.rs (lines 10-20)`, `docs/ (directory)`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
        /// What the user typed, when `text` (what the model got) expands it: a `/name args`
        /// command or skill, `/init`. The transcript shows this.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        typed: Option<String>,
    },
    /// A user request began: one `RequestEnded` follows, after all its steps.
    RequestStarted,
    /// One model step of the request began (a reply, then its tool calls); one `StepEnded`
    /// with the same id follows before the next step or the request's end.
    StepStarted {
        #[serde(rename = "turn")]
        step: StepId,
    },
    StepEnded {
        #[serde(rename = "turn")]
        step: StepId,
    },
    TextDelta {
        #[serde(rename = "turn")]
        step: StepId,
        text: String,
    },
    ReasoningDelta {
        #[serde(rename = "turn")]
        step: StepId,
        text: String,
    },
    /// The assistant message of a step is complete (also replayed on resume).
    AssistantMessage {
        #[serde(rename = "turn")]
        step: StepId,
        text: String,
        reasoning: String,
    },
    /// The model request failed and is tried again after `wait_ms`: the reply starts over,
    /// so text and reasoning streamed since `StepStarted` are void.
    Retrying {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
    /// The request that `RequestStarted` opened is over; `last_step` is its last step.
    RequestEnded {
        #[serde(rename = "turn")]
        last_step: StepId,
        reason: EndReason,
    },
    /// The agent is idle and waits for the next `Submit`.
    Idle,
    /// The conversation was replaced (new or resumed session): clear the transcript, diffs and
    /// todos; the history of a resumed session follows as ordinary events.
    Reset,
}

/// What became of queued messages (`UserCommand::Steer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueEvent {
    /// A queued message (`UserCommand::Steer`) entered the conversation after model step
    /// `step` of the session.
    Delivered { id: String, step: u64 },
    /// A queued message or command was taken back before it was delivered.
    Withdrawn { id: String },
    /// Queued messages the request ended without (interrupted, failed, denied): not
    /// delivered, back with the user, who decides again.
    Returned { ids: Vec<String> },
}
