//! One pass over a session log's records, rebuilding the conversation, the settings and the
//! events a replay shows (`history::rebuild_with` drives it; a fork restarts it).

use super::{
    BranchUser, ImageBytes, LoadedSkill, Rebuilt, assistant_message, close_open_calls, image_chips,
    remove_image, shell_events, todos_of, user_message,
};
use crate::bus::{AgentEvent, CallId, StepId, ToolEvent, ToolResult};
use crate::bus::{ConversationEvent, ReportEvent, TimeTravelEvent};
use crate::content::ReasoningPart;
use crate::llm::ChatMessage;
use crate::session_log::{LoggedCall, Record};

/// The state of one pass over a log: what is rebuilt so far, the latest assistant message's
/// calls still waiting for a result (in order), the step and user-message counts.
pub(super) struct Replay<'a> {
    pub(super) out: Rebuilt,
    open: Vec<LoggedCall>,
    step: u64,
    users: usize,
    images: ImageBytes<'a>,
}

impl<'a> Replay<'a> {
    pub(super) fn new(images: ImageBytes<'a>) -> Self {
        Self {
            out: Rebuilt::default(),
            open: Vec::new(),
            step: 0,
            users: 0,
            images,
        }
    }

    pub(super) fn close_open_calls(&mut self) {
        close_open_calls(&mut self.out, &mut self.open);
    }

    /// Records that change the conversation sent to the model (and what the user sees of
    /// it); false for any other record.
    pub(super) fn conversation(&mut self, record: &Record) -> bool {
        match record {
            Record::User {
                text,
                time,
                parts,
                typed,
            } => {
                self.close_open_calls();
                self.out.users.push(BranchUser {
                    at: self.users,
                    step: self.step,
                    text: text.clone(),
                    time: time.clone(),
                });
                self.users += 1;
                self.out.request_text.clone_from(text);
                self.out
                    .messages
                    .push(user_message(text, parts, self.images));
                self.out
                    .events
                    .push(AgentEvent::Conversation(ConversationEvent::UserMessage {
                        text: text.clone(),
                        images: image_chips(parts),
                        files: crate::agent::attach::attached_files(parts),
                        typed: typed.clone(),
                    }));
            }
            Record::Assistant {
                text,
                reasoning,
                tool_calls,
            } => self.assistant(text, reasoning, tool_calls),
            Record::ToolResult { call, name, result } => self.tool_result(call, name, result),
            Record::Compacted {
                stubs,
                summary,
                summarized,
                before,
                after,
                usage,
            } => {
                self.close_open_calls();
                crate::agent::compact::apply(
                    &mut self.out.messages,
                    stubs,
                    summary.as_deref(),
                    *summarized,
                );
                if let Some(usage) = usage {
                    self.out.costs.push((0, *usage));
                    self.out
                        .events
                        .push(AgentEvent::Report(ReportEvent::Usage(*usage)));
                }
                self.out
                    .events
                    .push(AgentEvent::Report(ReportEvent::Compacted {
                        before: *before,
                        after: *after,
                        pruned: stubs.len(),
                        summarized: *summarized,
                        summary: summary.clone(),
                    }));
            }
            Record::ImageRemoved { hash, note } => {
                remove_image(&mut self.out.messages, hash, note);
            }
            Record::Unanswered { messages } => {
                let keep = self.out.messages.len().saturating_sub(*messages);
                self.out.messages.truncate(keep);
            }
            Record::Note { text, told, parts } => {
                self.close_open_calls();
                self.out
                    .messages
                    .push(user_message(text, parts, self.images));
                self.out.told = Some(told.clone());
            }
            Record::Shell {
                id,
                command,
                context,
                result,
                told,
            } => {
                if let Some(text) = told {
                    self.close_open_calls();
                    self.out.messages.push(ChatMessage::User {
                        content: text.as_str().into(),
                    });
                }
                self.out
                    .events
                    .extend(shell_events(id, command, *context, result));
            }
            _ => return false,
        }
        true
    }

    fn assistant(&mut self, text: &str, reasoning: &ReasoningPart, tool_calls: &[LoggedCall]) {
        self.close_open_calls();
        self.step += 1;
        self.out
            .messages
            .push(assistant_message(text, reasoning, tool_calls));
        self.out.events.push(AgentEvent::Conversation(
            ConversationEvent::AssistantMessage {
                step: StepId(self.step),
                text: text.to_string(),
                reasoning: reasoning.text.clone(),
            },
        ));
        for call in tool_calls {
            let args = serde_json::from_str(&call.arguments)
                .unwrap_or(serde_json::Value::String(call.arguments.clone()));
            self.out.events.push(AgentEvent::Tool(ToolEvent::Requested {
                call: call.id.clone(),
                name: call.name.clone(),
                args,
            }));
        }
        self.open = tool_calls.to_vec();
    }

    fn tool_result(&mut self, call: &CallId, name: &str, result: &ToolResult) {
        // Only results of the open assistant message belong in the conversation; a stray one
        // (a hand-edited log) would make the request invalid.
        let Some(pos) = self.open.iter().position(|c| &c.id == call) else {
            return;
        };
        self.open.remove(pos);
        if let Some(todos) = todos_of(result) {
            self.out.todos = todos.to_vec();
        }
        self.out.messages.push(ChatMessage::Tool {
            tool_call_id: call.0.clone(),
            content: result.text.clone(),
        });
        self.out.events.push(AgentEvent::Tool(ToolEvent::Finished {
            call: call.clone(),
            name: name.to_string(),
            result: result.clone(),
        }));
    }

    /// Records that set what the session runs with: rules, mode, model, system prompt,
    /// loaded skills; false for any other record.
    pub(super) fn settings(&mut self, record: &Record) -> bool {
        let out = &mut self.out;
        match record {
            Record::SessionRule { prefix } => out.session_rules.push(prefix.clone()),
            Record::Mode { mode } => {
                out.mode = Some(*mode);
                out.events
                    .push(AgentEvent::Report(ReportEvent::ModeChanged { mode: *mode }));
            }
            Record::Model { model } => {
                out.model = Some(model.clone());
                out.events
                    .push(AgentEvent::Report(ReportEvent::ModelChanged {
                        model: model.clone(),
                    }));
            }
            Record::System { prompt, told } => {
                // The first is the session's start: the mode it ran in until a switch.
                if out.system.is_none() {
                    out.mode = Some(told.mode);
                    out.events
                        .push(AgentEvent::Report(ReportEvent::ModeChanged {
                            mode: told.mode,
                        }));
                }
                out.system = Some(prompt.clone());
                out.told = Some(told.clone());
            }
            Record::SkillLoaded { name, dir, text } => out.skills.push(LoadedSkill {
                name: name.clone(),
                dir: dir.clone(),
                text: text.clone(),
            }),
            Record::Meta { model, .. } => out.model = Some(model.clone()),
            _ => return false,
        }
        true
    }

    /// Records only shown again on a replay (usage, ends, decisions, reverts, restores), or
    /// kept for other readers of the log.
    pub(super) fn shown(&mut self, record: &Record) {
        let out = &mut self.out;
        let step = self.step;
        match record {
            Record::Usage(usage) => {
                out.costs.push((step, *usage));
                out.events
                    .push(AgentEvent::Report(ReportEvent::Usage(*usage)));
            }
            Record::Ended { reason } => {
                out.events
                    .push(AgentEvent::Conversation(ConversationEvent::RequestEnded {
                        last_step: StepId(step),
                        reason: reason.clone(),
                    }))
            }
            Record::Approval { call, decision } => {
                out.events.push(AgentEvent::Tool(ToolEvent::Decided {
                    call: call.clone(),
                    decision: decision.clone(),
                }))
            }
            Record::Revert {
                id,
                target,
                what,
                changes,
                ..
            } => out
                .events
                .push(AgentEvent::TimeTravel(TimeTravelEvent::Reverted {
                    id: id.clone(),
                    target: target.clone(),
                    what: what.clone(),
                    changes: changes.clone(),
                })),
            Record::Restored { what, done } => {
                out.events
                    .push(AgentEvent::TimeTravel(TimeTravelEvent::Restored {
                        what: what.clone(),
                        done: done.clone(),
                    }))
            }
            Record::User { .. }
            | Record::Assistant { .. }
            | Record::ToolResult { .. }
            | Record::Compacted { .. }
            | Record::ImageRemoved { .. }
            | Record::Note { .. }
            | Record::Shell { .. }
            | Record::Fork { .. }
            | Record::SessionRule { .. }
            | Record::Mode { .. }
            | Record::Model { .. }
            | Record::System { .. }
            | Record::SkillLoaded { .. }
            | Record::Meta { .. }
            | Record::Checkpoint { .. }
            | Record::Delivered { .. }
            | Record::Withdrawn { .. }
            | Record::Unanswered { .. }
            | Record::Returned { .. }
            | Record::Hook { .. } => {}
        }
    }
}
