//! What is kept of a reply in the conversation and the log: a whole one, or what the user
//! saw of one that failed, was interrupted or hit the output cap (marked, so neither the
//! user nor the model takes it for a whole answer); and the notes the model is told.

use super::Agent;
use super::history::assistant_message;
use crate::bus::{AgentEvent, ConversationEvent, ReportEvent, StepId};
use crate::content::ReasoningPart;
use crate::llm::{ChatMessage, Completion, StreamDelta};
use crate::session_log::{LoggedCall, Record, ToldState};

impl Agent {
    /// Keeps what the user saw of a reply that failed, marked as incomplete; whether any was.
    pub(super) fn keep_shown_on_failure(&mut self, step: StepId, shown: Shown) -> bool {
        if shown.text.is_empty() && shown.reasoning.is_empty() {
            return false;
        }
        let partial = Completion {
            text: marked(&shown.text, CUT_OFF_MARK),
            reasoning: shown.reasoning,
            ..Completion::default()
        };
        self.keep_reply(step, &partial);
        true
    }

    /// The user interrupted the reply while it streamed: what they saw of it is kept, marked,
    /// so the transcript, the log (and a resume) and the model's next request all hold it.
    pub(super) fn keep_interrupted_reply(&mut self, step: StepId, shown: Shown) {
        if shown.text.is_empty() && shown.reasoning.is_empty() {
            return;
        }
        let partial = Completion {
            text: marked(&shown.text, INTERRUPTED_MARK),
            reasoning: shown.reasoning,
            ..Completion::default()
        };
        self.keep_reply(step, &partial);
    }

    /// After an interrupt the model is told, at the end of the conversation, that the user
    /// stopped it and where: the next message is then a new one, not a continuation of the
    /// last (two user messages in a row are sent as one, so without this note the interrupted
    /// message and the next would read as one request).
    pub(super) fn tell_interrupted(&mut self) {
        let last = self.session.conversation.messages().last();
        self.tell_model(interrupted_note(last));
    }

    /// A reply stopped at a size limit: what arrived is kept (its calls never run), and a note
    /// at the end of the conversation tells the model in the next request, so it does not
    /// take the cut text for its whole answer or repeat the oversized call.
    pub(super) fn keep_capped_reply(&mut self, step: StepId, partial: &Completion, reason: &str) {
        if !partial.text.is_empty() || !partial.reasoning.is_empty() {
            self.keep_reply(step, partial);
        }
        let text = format!(
            "[cairn] Your previous reply was stopped because {reason}; only its beginning was \
             received and none of its tool calls ran. Keep replies and tool arguments smaller: \
             write large files in several parts."
        );
        self.tell_model(text);
    }

    /// Tells the model something that happened outside its calls (a capped reply, a change
    /// the user reverted): a note at the end of the conversation, logged so a resume sends it
    /// again, so what was sent before stays a byte-exact prefix.
    pub(super) fn tell_model(&mut self, text: String) {
        self.record(&Record::Note {
            text: text.clone(),
            told: self.session.told.clone(),
            parts: Vec::new(),
        });
        self.session.conversation.push(ChatMessage::User {
            content: text.into(),
        });
    }

    /// Appends a note when the mode or the git branch moved since the model was last told:
    /// new content at the end, so everything sent before stays a byte-exact prefix.
    pub(super) fn tell_changes(&mut self) {
        let now = ToldState {
            mode: self.shared.mode(),
            git_branch: super::prompt::git_branch(&self.settings.workspace),
        };
        let Some(text) = super::prompt::state_note(&self.session.told, &now) else {
            return;
        };
        self.record(&Record::Note {
            text: text.clone(),
            told: now.clone(),
            parts: Vec::new(),
        });
        self.session.told = now;
        self.session.conversation.push(ChatMessage::User {
            content: text.into(),
        });
    }

    /// Appends the assistant message to the log (before any of its calls runs) and to the
    /// conversation, and publishes it.
    pub(super) fn keep_reply(&mut self, step: StepId, completion: &Completion) {
        let calls: Vec<LoggedCall> = completion
            .tool_calls
            .iter()
            .map(|c| LoggedCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        let reasoning = ReasoningPart::new(
            completion.reasoning.clone(),
            completion.reasoning_blocks.clone(),
        );
        self.record(&Record::Assistant {
            text: completion.text.clone(),
            reasoning: reasoning.clone(),
            tool_calls: calls.clone(),
        });
        if let Some(usage) = completion.usage {
            self.record(&Record::Usage(usage));
            self.emit(AgentEvent::Report(ReportEvent::Usage(usage)));
            self.session.costs.push((step.0, usage));
        }
        self.session
            .conversation
            .push(assistant_message(&completion.text, &reasoning, &calls));
        if let Some(usage) = completion.usage {
            self.session.conversation.anchor(&usage);
        }
        self.emit(AgentEvent::Conversation(
            ConversationEvent::AssistantMessage {
                step,
                text: completion.text.clone(),
                reasoning: completion.reasoning.clone(),
            },
        ));
        self.report_context();
    }
}

/// Ends the text of a reply the model did not finish, so neither the user nor the model
/// takes it for a whole answer.
pub const INTERRUPTED_MARK: &str = "[interrupted by the user: the reply stopped here]";
pub const CUT_OFF_MARK: &str = "[cut off: the reply broke off here and is incomplete]";

/// How the note the model reads after an interrupt begins.
pub const INTERRUPTED_NOTE: &str = "[cairn] The user interrupted";

/// The note for an interrupt that came after `last`, the newest message of the conversation:
/// the kept partial reply, the cancelled calls' results, or the user's message itself.
fn interrupted_note(last: Option<&ChatMessage>) -> String {
    let what = match last {
        Some(ChatMessage::Assistant { .. }) => {
            "your reply (Esc or Ctrl+C); what had arrived of it is kept above, marked as interrupted"
        }
        Some(ChatMessage::Tool { .. }) => {
            "the request while its tool calls ran (Esc or Ctrl+C); calls whose result is [cancelled] were stopped or never started"
        }
        _ => "the request above (Esc or Ctrl+C) before you replied",
    };
    format!(
        "{INTERRUPTED_NOTE} {what}. What follows is a new message: do not resume the interrupted work unless it asks for it."
    )
}

pub(super) fn marked(text: &str, mark: &str) -> String {
    if text.trim().is_empty() {
        mark.to_string()
    } else {
        format!("{}\n\n{mark}", text.trim_end())
    }
}

/// The text and reasoning of the attempt now streaming, as the user saw them: a retry starts
/// the reply again, so `Retrying` empties it.
#[derive(Debug, Default)]
pub(super) struct Shown {
    text: String,
    reasoning: String,
}

impl Shown {
    pub(super) fn follow(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::Text(text) => self.text.push_str(text),
            StreamDelta::Reasoning(text) => self.reasoning.push_str(text),
            StreamDelta::Retrying { .. } => *self = Self::default(),
            StreamDelta::Usage(_) => {}
        }
    }
}
