//! What the user sends while the agent works, taken at step boundaries: steering messages
//! join the conversation after the current tool results (so every assistant message's calls
//! are still followed directly by their results), the user's own commands (`!cmd`, `!!cmd`)
//! run there, between two model requests, so they never race the model's tools. Every
//! message's fate is logged: delivered (after which step), withdrawn, or returned undelivered.

use crate::bus::{QueueEvent, ReportEvent};
use crate::process;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Agent;
use super::inbox::Inbound;
use super::user_shell;
use crate::bus::{AgentEvent, Attachment, EndReason, ShellEvent, ToolResult};
use crate::llm::ChatMessage;
use crate::session_log::Record;
use crate::sync::MutexExt;
use crate::tool_output::ToolOutput;

/// A request to serve: the text, its attachments, and its queue id when it was queued.
pub(super) struct Request {
    pub queued: Option<String>,
    pub text: String,
    pub attach: Vec<Attachment>,
}

impl Agent {
    /// Serves a request, then what the user sent meanwhile that no step boundary took: their
    /// commands run; messages after a completed request are the next request, after any other
    /// end they go back to the user (who stopped the agent, or saw it fail) undelivered.
    pub(super) async fn serve(&mut self, first: Request, cancel: &CancellationToken) {
        let mut next = Some((first, cancel.clone()));
        while let Some((request, cancel)) = next.take() {
            let reason = self.handle_request(request, &cancel).await;
            self.log_withdrawn();
            let left = self.shared.inbox.locked().request_over();
            let mut messages = Vec::new();
            for item in left {
                match item {
                    Inbound::Shell {
                        id,
                        command,
                        context,
                    } => self.run_user_shell(id, command, context).await,
                    Inbound::Message { id, text, attach } => messages.push((id, text, attach)),
                }
            }
            if messages.is_empty() {
                break;
            }
            if reason == EndReason::Completed && !cancel.is_cancelled() {
                let mut messages = messages.into_iter();
                if let Some((id, text, attach)) = messages.next() {
                    let mut inbox = self.shared.inbox.locked();
                    inbox.request_forwarded();
                    inbox.put_back(messages.map(|(id, text, attach)| Inbound::Message {
                        id,
                        text,
                        attach,
                    }));
                    drop(inbox);
                    let request = Request {
                        queued: Some(id),
                        text,
                        attach,
                    };
                    next = Some((request, self.shared.fresh_cancel()));
                }
            } else {
                self.return_messages(messages.into_iter().map(|(id, text, _)| (id, text)));
            }
        }
    }

    /// At a step boundary: runs the user's commands and delivers the messages that came in,
    /// in the order they came. True when a message was delivered (the model answers it).
    pub(super) async fn take_inbox(&mut self, cancel: &CancellationToken) -> bool {
        self.log_withdrawn();
        let waiting = self.shared.inbox.locked().take();
        let mut delivered = false;
        for item in waiting {
            match item {
                Inbound::Shell {
                    id,
                    command,
                    context,
                } => self.run_user_shell(id, command, context).await,
                Inbound::Message { id, text, attach } => {
                    delivered |= self.deliver(id, text, attach, cancel).await;
                }
            }
        }
        delivered
    }

    /// A steering message joins the conversation now.
    async fn deliver(
        &mut self,
        id: String,
        text: String,
        attach: Vec<Attachment>,
        cancel: &CancellationToken,
    ) -> bool {
        let expanded = match self.expand_mcp_prompt(&text, cancel).await {
            Some(Ok(turn)) => turn,
            Some(Err(_)) => {
                // Said why already; the message goes back to the user.
                self.return_messages([(id, text)]);
                return false;
            }
            None => self.expand_command(&text),
        };
        let typed = (expanded != text).then_some(text);
        let text = expanded;
        match self.attach(&text, &attach, cancel).await {
            Ok(parts) => {
                // The user's prompt guards see a steering message as they see a request.
                let context = match self.user_prompt_hooks(&text, cancel).await {
                    Ok(context) => context,
                    Err(why) => {
                        self.warn(&format!("a queued message was not delivered: {why}"));
                        self.return_messages([(id, text)]);
                        return false;
                    }
                };
                self.push_user_message(&text, parts, typed);
                self.note_delivered(id);
                if !context.is_empty() {
                    self.tell_model(format!(
                        "[cairn] Context from the user's prompt hooks:\n{context}"
                    ));
                }
                true
            }
            Err(reason) => {
                let why = match reason {
                    EndReason::Failed(why) => why,
                    other => format!("{other:?}"),
                };
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: format!("a queued message was not delivered: {why}"),
                }));
                self.return_messages([(id, text)]);
                false
            }
        }
    }

    /// Logs and says that the queued message `id` entered the conversation now.
    pub(super) fn note_delivered(&mut self, id: String) {
        let step = self.step_counter;
        self.record(&Record::Delivered {
            id: id.clone(),
            step,
        });
        self.emit(AgentEvent::Queue(QueueEvent::Delivered { id, step }));
    }

    /// Logs the withdrawals the router took (it cannot write the log itself).
    pub(super) fn log_withdrawn(&mut self) {
        let withdrawn = self.shared.inbox.locked().take_withdrawn();
        for (id, text) in withdrawn {
            self.record(&Record::Withdrawn { id, text });
        }
    }

    fn return_messages(&mut self, messages: impl IntoIterator<Item = (String, String)>) {
        let mut ids = Vec::new();
        for (id, text) in messages {
            self.record(&Record::Returned {
                id: id.clone(),
                text,
            });
            ids.push(id);
        }
        if !ids.is_empty() {
            self.emit(AgentEvent::Queue(QueueEvent::Returned { ids }));
        }
    }

    /// Runs the user's own command to its end (or until `Interrupt` stops it), streaming its
    /// output; with `context` the command and its output join the conversation.
    pub(super) async fn run_user_shell(&mut self, id: String, command: String, context: bool) {
        // The model's last batch is recorded first: what the user's command changes is not
        // the model's.
        self.settle_checkpoint().await;
        let command = crate::secrets::redact(&command).into_owned();
        let stop = self.shared.closing.child_token();
        *self.shared.shell.locked() = Some(stop.clone());
        self.emit(AgentEvent::Shell(ShellEvent::Started {
            id: id.clone(),
            command: command.clone(),
            context,
        }));
        let events = self.events.clone();
        let tail_id = id.clone();
        let tail: process::TailSink = Arc::new(move |chunk: &str| {
            let _ = events.send(AgentEvent::Shell(ShellEvent::Output {
                id: tail_id.clone(),
                chunk: crate::secrets::redact(chunk).into_owned(),
            }));
        });
        let env = Arc::clone(&self.engine.tool_env);
        let result = match user_shell::run(&command, &env, &stop, Some(tail)).await {
            Ok(run) => ToolResult::ok(ToolOutput::Command(run)),
            Err(err) => ToolResult::error(err),
        };
        *self.shared.shell.locked() = None;
        let told = context.then(|| match &result.output {
            Some(ToolOutput::Command(run)) => user_shell::context_text(run),
            _ => format!(
                "{}\n$ {command}\n{}",
                user_shell::CONTEXT_PREAMBLE,
                crate::secrets::redact(&result.text)
            ),
        });
        let result = crate::secrets::redact_value(result);
        self.record(&Record::Shell {
            id: id.clone(),
            command: command.clone(),
            context,
            result: result.clone(),
            told: told.clone(),
        });
        if let Some(text) = told {
            self.session.conversation.push(ChatMessage::User {
                content: text.into(),
            });
        }
        self.emit(AgentEvent::Shell(ShellEvent::Finished {
            id,
            command,
            context,
            result,
        }));
        self.report_context();
    }
}
