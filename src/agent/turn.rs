//! One user request: stream a reply → collect text, reasoning and tool calls → validate, gate
//! and run the calls → append results → ask again, until the model answers without tool calls,
//! the step limit is reached, the user interrupts, or something fails.

use crate::bus::{ConversationEvent, ReportEvent};
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::calls::CallsOutcome;
use super::compact::Why;
use super::history::{image_chips, user_message};
use super::overflow::{is_context_overflow, window_in_error};
use super::reply_kept::{CUT_OFF_MARK, Shown, marked};
use super::steering::Request;
use crate::bus::{AgentEvent, EndReason, StepId};
use crate::llm::{ChatMessage, ChatRequest, Completion, LlmError, StreamDelta};
use crate::session_log::Record;

impl Agent {
    /// Serves one user request to its end; says how it ended.
    pub(super) async fn handle_request(
        &mut self,
        request: Request,
        cancel: &CancellationToken,
    ) -> EndReason {
        let Request {
            queued,
            text,
            attach,
        } = request;
        let mut last_step = StepId(self.step_counter);
        self.emit(AgentEvent::Conversation(ConversationEvent::RequestStarted));
        // `/name args` becomes the command's text (a skill's, which it also loads; an MCP
        // prompt's messages); what the user typed is kept to show.
        let expanded = match self.expand_mcp_prompt(&text, cancel).await {
            Some(Ok(turn)) => turn,
            Some(Err(reason)) => {
                self.emit(AgentEvent::Conversation(ConversationEvent::RequestEnded {
                    last_step,
                    reason: reason.clone(),
                }));
                return reason;
            }
            None => self.expand_command(&text),
        };
        let typed = (expanded != text).then_some(text);
        let text = expanded;
        // Attachments are resolved (and asked for) before anything is logged or sent: a
        // refusal leaves the session as it was.
        let parts = match self.attach(&text, &attach, cancel).await {
            Ok(parts) => parts,
            Err(reason) => {
                self.emit(AgentEvent::Conversation(ConversationEvent::RequestEnded {
                    last_step,
                    reason: reason.clone(),
                }));
                return reason;
            }
        };
        // The user's own guards see the message before the model does.
        let context = match self.user_prompt_hooks(&text, cancel).await {
            Ok(context) => context,
            Err(why) => {
                self.warn(&why);
                self.emit(AgentEvent::Conversation(ConversationEvent::RequestEnded {
                    last_step,
                    reason: EndReason::Denied,
                }));
                return EndReason::Denied;
            }
        };
        let before = self.session.conversation.messages().len();
        self.push_user_message(&text, parts, typed);
        if let Some(id) = queued {
            self.note_delivered(id);
        }
        if !context.is_empty() {
            self.tell_model(format!(
                "[cairn] Context from the user's prompt hooks:\n{context}"
            ));
        }
        // The conversation up to the request's message (and its hooks' context): nothing
        // after it when the request fails means the model never answered it.
        let asked = self.session.conversation.messages().len();
        let mut stop_blocks = 0;
        let reason = 'request: {
            for _ in 0..self.settings.max_steps {
                self.step_counter += 1;
                let step = StepId(self.step_counter);
                last_step = step;
                self.emit(AgentEvent::Conversation(ConversationEvent::StepStarted {
                    step,
                }));
                let ended = self.step(step, cancel).await;
                self.emit(AgentEvent::Conversation(ConversationEvent::StepEnded {
                    step,
                }));
                match ended {
                    // A step boundary: what the user sent meanwhile comes in here, after the
                    // step's results and before the next request.
                    None => {
                        self.take_inbox(cancel).await;
                    }
                    // A message that came while the model gave its answer extends the request.
                    Some(EndReason::Completed) if self.take_inbox(cancel).await => {}
                    // A stop hook may send the model on (`max_stop_blocks` times at most).
                    Some(EndReason::Completed)
                        if self.stop_hooks_continue(&mut stop_blocks, cancel).await => {}
                    Some(reason) => break 'request reason,
                }
            }
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!(
                    "stopped after {} steps (max_steps); send a message to let the agent continue",
                    self.settings.max_steps
                ),
            }));
            EndReason::StepLimit
        };
        if reason == EndReason::Interrupted {
            self.tell_interrupted();
        }
        // A skill's allowed-tools hold to the end of the user turn that loaded it.
        self.end_skill_turn();
        // Undo, redo, rewind and revert run between requests: each finds the last checkpoint.
        self.settle_checkpoint().await;
        self.maintain_checkpoints_when_due();
        if reason != EndReason::Completed {
            self.record(&Record::Ended {
                reason: reason.clone(),
            });
        }
        if matches!(reason, EndReason::Failed(_))
            && self.session.conversation.messages().len() == asked
        {
            self.drop_unanswered(before);
        }
        self.emit(AgentEvent::Conversation(ConversationEvent::RequestEnded {
            last_step,
            reason: reason.clone(),
        }));
        // Awaited, so a headless run that exits now still tells its hooks.
        let message = format!("the turn ended ({})", end_text(&reason));
        let subject = crate::hooks::Subject::Notification { message };
        self.informing_hooks(crate::hooks::Event::Notification, subject)
            .await;
        reason
    }

    /// A request that failed before anything followed its message (no answer, no note) leaves
    /// the message unanswered: it leaves the conversation (logged, so a resume does the same),
    /// and the next message — a `/retry` or another — takes its place instead of being joined
    /// to it.
    /// `before` is the conversation's length before the message (its hooks' context, if
    /// any, goes with it).
    fn drop_unanswered(&mut self, before: usize) {
        let messages = self.session.conversation.messages();
        let Some(dropped) = messages.len().checked_sub(before).filter(|n| *n > 0) else {
            return;
        };
        let kept = messages[..before].to_vec();
        self.session.conversation.replace(kept);
        self.record(&Record::Unanswered { messages: dropped });
    }

    /// Logs, publishes and appends a user message (a request's, or one steering it).
    pub(super) fn push_user_message(
        &mut self,
        text: &str,
        parts: Vec<crate::content::Part>,
        typed: Option<String>,
    ) {
        self.record(&Record::user_typed(text, parts.clone(), typed.clone()));
        self.prime_checkpoints();
        self.emit(AgentEvent::Conversation(ConversationEvent::UserMessage {
            text: text.to_string(),
            images: image_chips(&parts),
            files: super::attach::attached_files(&parts),
            typed,
        }));
        self.session.request_text = text.to_string();
        let store = self.image_store();
        let message = user_message(text, &parts, &|image| store.get(&image.hash).ok());
        self.session.conversation.push(message);
    }

    /// One model step: the reply and its tool calls. `Some` when the request ends with it.
    async fn step(&mut self, step: StepId, cancel: &CancellationToken) -> Option<EndReason> {
        self.tell_changes();
        self.tell_job_news();
        self.compact_if_needed(cancel).await;
        let completion = match self.reply(step, cancel).await {
            Ok(completion) => completion,
            Err(reason) => return Some(reason),
        };
        if completion.tool_calls.is_empty() {
            // A text answer cut by the output limit is kept, but the request did not
            // finish: the user is told and can ask for the rest.
            if completion.finish_reason.as_deref() == Some("length") {
                return Some(EndReason::OutputLimit);
            }
            return Some(EndReason::Completed);
        }
        let outcome = self.run_calls(&completion, cancel).await;
        self.publish_lsp();
        self.show_seen_images();
        self.report_context();
        match outcome {
            CallsOutcome::Continue => None,
            CallsOutcome::Interrupted => Some(EndReason::Interrupted),
            CallsOutcome::DeniedHeadless => Some(EndReason::Denied),
        }
    }

    /// Streams one reply. When the provider says the request is longer than the model's
    /// window, compacts and tries once more (never twice: a second refusal ends the request).
    async fn reply(
        &mut self,
        step: StepId,
        cancel: &CancellationToken,
    ) -> Result<Completion, EndReason> {
        let message = match self.stream_reply(step, cancel).await {
            Ok(completion) => return Ok(completion),
            Err(ReplyError::End(reason)) => return Err(reason),
            Err(ReplyError::ImageRefused(message)) => {
                return self.retry_without_images(step, &message, cancel).await;
            }
            Err(ReplyError::TooLong(message)) => message,
        };
        // Our count was short. The refused request is longer than the real window, and the
        // provider may say how long that is: the smaller bounds what compaction aims for.
        let refused = self.estimate();
        let stated = window_in_error(&message).unwrap_or(u64::MAX);
        self.window.set(self.window().min(stated).min(refused));
        self.session.conversation.forget_anchor();
        self.emit(AgentEvent::Report(ReportEvent::Warning {
            message: format!(
                "the provider says the conversation is too long for the model ({message}); compacting and trying once more"
            ),
        }));
        if !self.compact(Why::Overflow, None, cancel).await {
            return Err(EndReason::Failed(format!(
                "the request is too long for the model and there is nothing left to compact: {message}"
            )));
        }
        match self.stream_reply(step, cancel).await {
            Ok(completion) => Ok(completion),
            Err(ReplyError::End(reason)) => Err(reason),
            Err(ReplyError::ImageRefused(message)) => {
                self.retry_without_images(step, &message, cancel).await
            }
            Err(ReplyError::TooLong(message)) => Err(EndReason::Failed(format!(
                "the request is still too long for the model after compacting: {message}"
            ))),
        }
    }

    /// The provider refused an image: the newest message's images become a note, for good
    /// (logged, so no resume sends them again), and the request goes once more.
    async fn retry_without_images(
        &mut self,
        step: StepId,
        message: &str,
        cancel: &CancellationToken,
    ) -> Result<Completion, EndReason> {
        let reason = crate::llm::stream::cut(message, 200);
        let note = format!("[image removed: the provider refused it ({reason})]");
        let removed = self.remove_newest_images(&note);
        if removed.is_empty() {
            return Err(EndReason::Failed(format!(
                "the provider refused an image: {message}"
            )));
        }
        self.emit(AgentEvent::Report(ReportEvent::Warning {
            message: format!(
                "the provider refused {} ({reason}); it is replaced by a note and the request is sent once more without it",
                removed.join(", ")
            ),
        }));
        match self.stream_reply(step, cancel).await {
            Ok(completion) => Ok(completion),
            Err(ReplyError::End(reason)) => Err(reason),
            Err(ReplyError::ImageRefused(message) | ReplyError::TooLong(message)) => {
                Err(EndReason::Failed(format!(
                    "the provider refused the request again after the image was removed: {message}"
                )))
            }
        }
    }

    /// Puts `note` in place of the images of the newest message that has any; returns their
    /// labels.
    fn remove_newest_images(&mut self, note: &str) -> Vec<String> {
        let newest: Vec<crate::content::ImageRef> = self
            .session
            .conversation
            .messages()
            .iter()
            .rev()
            .find_map(|m| match m {
                ChatMessage::User { content } if content.images().next().is_some() => {
                    Some(content.images().cloned().collect())
                }
                _ => None,
            })
            .unwrap_or_default();
        if newest.is_empty() {
            return Vec::new();
        }
        let mut messages = self.session.conversation.messages().to_vec();
        for image in &newest {
            self.record(&Record::ImageRemoved {
                hash: image.hash.clone(),
                note: note.to_string(),
            });
            super::history::remove_image(&mut messages, &image.hash, note);
        }
        self.session.conversation.replace(messages);
        newest.iter().map(|image| image.label()).collect()
    }

    /// Streams one reply and records it. On failure returns how the request ends.
    async fn stream_reply(
        &mut self,
        step: StepId,
        cancel: &CancellationToken,
    ) -> Result<Completion, ReplyError> {
        let registry = std::sync::Arc::clone(&self.engine.registry);
        // Tools that join at the first request (MCP servers): fixed here, once.
        if let Some(notices) = registry.settle().await {
            self.tools_bytes = super::context::serialized_len(registry.specs());
            for notice in notices {
                self.warn(&notice);
            }
        }
        let events = self.events.clone();
        // What the user has seen of this reply, kept when they interrupt it.
        let mut shown = Shown::default();
        let mut on_delta = |delta: StreamDelta| {
            shown.follow(&delta);
            let event = match delta {
                StreamDelta::Text(text) => {
                    AgentEvent::Conversation(ConversationEvent::TextDelta { step, text })
                }
                StreamDelta::Reasoning(text) => {
                    AgentEvent::Conversation(ConversationEvent::ReasoningDelta { step, text })
                }
                // Usage is published with the reply, after it is recorded.
                StreamDelta::Usage(_) => return,
                StreamDelta::Retrying {
                    attempt,
                    wait,
                    reason,
                } => AgentEvent::Conversation(ConversationEvent::Retrying {
                    attempt,
                    wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    reason,
                }),
            };
            let _ = events.send(event);
        };
        let request = ChatRequest {
            messages: self.session.conversation.wire(),
            tools: registry.specs(),
        };
        let model = std::sync::Arc::clone(&self.engine.model);
        let result = model.stream_chat(request, &mut on_delta, cancel).await;
        // The last batch's checkpoint, taken while this streamed, is logged before the reply
        // (its write to disk may go on).
        self.settle_checkpoint_record().await;
        match result {
            Ok(completion) => {
                self.keep_reply(step, &completion);
                Ok(completion)
            }
            Err(LlmError::Cancelled) => {
                self.keep_interrupted_reply(step, shown);
                Err(ReplyError::End(EndReason::Interrupted))
            }
            Err(LlmError::Status { status, message })
                if is_image_refusal(status, &message) && self.holds_images() =>
            {
                Err(ReplyError::ImageRefused(message))
            }
            Err(err) if is_context_overflow(&err) => Err(ReplyError::TooLong(err.to_string())),
            Err(LlmError::Truncated { reason, partial }) => {
                // The client retried as often as it may: what arrived last is kept (text
                // only: half-built calls are never run), marked as incomplete in the
                // transcript, the log and what the model is sent next.
                let kept = !partial.text.is_empty() || !partial.reasoning.is_empty();
                if kept {
                    let text_only = Completion {
                        text: marked(&partial.text, CUT_OFF_MARK),
                        tool_calls: Vec::new(),
                        ..(*partial).clone()
                    };
                    self.keep_reply(step, &text_only);
                }
                let what = if kept {
                    "; the text that arrived is kept, marked incomplete"
                } else {
                    ""
                };
                Err(ReplyError::End(EndReason::Failed(format!(
                    "the answer was cut off{what}\n{reason}"
                ))))
            }
            Err(LlmError::CallCut {
                tool,
                arguments_bytes,
                partial,
            }) => {
                // The same request would end at the same place: nothing is retried. The model
                // reads why its call did not run in what is kept of its reply; the user reads
                // it in the request's end.
                let note = format!(
                    "[cut off: your output limit ended this reply inside a call to {tool} ({arguments_bytes} bytes of arguments had arrived); the call was not run. Make smaller calls, for example write a long file in several parts]"
                );
                let kept = Completion {
                    text: marked(&partial.text, &note),
                    tool_calls: Vec::new(),
                    ..(*partial).clone()
                };
                self.keep_reply(step, &kept);
                Err(ReplyError::End(EndReason::Failed(format!(
                    "the model's output limit (max_tokens) ended its reply inside a call to `{tool}` ({arguments_bytes} bytes of arguments had arrived); the call was not run and the model is told so. Raise max_tokens, or ask for smaller steps"
                ))))
            }
            Err(LlmError::Capped { reason, partial }) => {
                self.keep_capped_reply(step, &partial, &reason);
                let kept = if partial.text.is_empty() {
                    ""
                } else {
                    "; the text that arrived is kept"
                };
                Err(ReplyError::End(EndReason::Failed(format!(
                    "the reply was stopped: {reason}{kept}"
                ))))
            }
            Err(err) => {
                // An error after text was shown (a final error frame mid-answer): the text
                // stays, marked, as a cut stream's does.
                let kept = self.keep_shown_on_failure(step, shown);
                let message = if kept {
                    format!("{err}\nthe text that arrived is kept, marked incomplete")
                } else {
                    err.to_string()
                };
                Err(ReplyError::End(EndReason::Failed(message)))
            }
        }
    }
}

/// How a request ended, in a notification's words.
fn end_text(reason: &EndReason) -> String {
    match reason {
        EndReason::Completed => "completed".into(),
        EndReason::Interrupted => "interrupted".into(),
        EndReason::StepLimit => "step limit".into(),
        EndReason::Denied => "denied".into(),
        EndReason::Failed(why) => format!("failed: {}", crate::llm::stream::cut(why, 200)),
        EndReason::OutputLimit => "output limit".into(),
    }
}

/// A 4xx that blames an image: too large, a format or a model that takes none.
fn is_image_refusal(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    matches!(status, 400 | 413 | 415 | 422)
        && ["image", "vision", "multimodal", "image_url"]
            .iter()
            .any(|word| message.contains(word))
}

impl Agent {
    fn holds_images(&self) -> bool {
        self.session.conversation.messages().iter().any(
            |m| matches!(m, ChatMessage::User { content } if content.images().next().is_some()),
        )
    }
}

/// Why a reply did not come.
enum ReplyError {
    End(EndReason),
    /// The provider refused an image in the request.
    ImageRefused(String),
    /// The provider refused the request as longer than the model's window.
    TooLong(String),
}
