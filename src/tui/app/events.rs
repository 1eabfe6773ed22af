//! How the `App` folds the engine's events into its state, by what they change: the reply
//! and its request, the figures and notices, and time travel (rewind, restore, revert).

use std::time::Duration;

use crate::bus::{
    AgentEvent, ConversationEvent, EndReason, QueueEvent, ReportEvent, TimeTravelEvent,
};
use crate::tui::app::App;
use crate::tui::modals::layers::Layer;
use crate::tui::modals::picker::SessionPicker;
use crate::tui::modals::rewind::{RestoreConfirm, RewindPicker};
use crate::tui::panes::status::Activity;
use crate::tui::panes::transcript::entry::NoticeLevel;

impl App {
    pub(super) fn fold(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Tool(tool) => self.apply_tool(tool),
            AgentEvent::Shell(shell) => self.apply_shell(shell),
            AgentEvent::Job(job) => self.apply_job(job),
            AgentEvent::JobList(list) => self.apply_job_list(list),
            AgentEvent::Hook(note) => self.transcript.push_hook(note),
            AgentEvent::Queue(queue) => self.fold_queue(queue),
            AgentEvent::Conversation(reply) => self.fold_reply(reply),
            AgentEvent::Report(report) => self.fold_report(report),
            AgentEvent::TimeTravel(travel) => self.fold_time_travel(travel),
        }
    }

    /// Queued messages delivered, taken back or returned.
    fn fold_queue(&mut self, event: &QueueEvent) {
        match event {
            QueueEvent::Delivered { id, step } => self.delivered(id, *step),
            QueueEvent::Withdrawn { id } => {
                self.queued.settle_withdrawal(id);
            }
            QueueEvent::Returned { ids } => self.returned(ids),
        }
    }

    /// The session, the user's message, the model's reply as it streams, retries and the
    /// request's end.
    fn fold_reply(&mut self, event: &ConversationEvent) {
        match event {
            ConversationEvent::SessionStarted {
                provider,
                model,
                mode,
                context_window,
                resumed,
                session,
            } => {
                self.status.provider.clone_from(provider);
                self.status.model.clone_from(model);
                self.status.mode = *mode;
                self.status.context_window = *context_window;
                self.session = Some(session.clone());
                if *resumed && !self.read_only {
                    self.notice(&format!("resumed session {session}"), NoticeLevel::Info);
                }
            }
            ConversationEvent::UserMessage {
                text,
                images,
                files,
                typed,
            } => {
                self.unconfirmed = None;
                // The user's words as typed; a command's expansion is what the model read.
                self.transcript
                    .push_user(typed.as_deref().unwrap_or(text), images, files);
                // What the model read instead opens under it.
                if typed.as_ref().is_some_and(|typed| typed != text) {
                    self.transcript
                        .set_details("what the model was sent", text.clone());
                }
            }
            ConversationEvent::RequestStarted | ConversationEvent::StepEnded { .. } => {}
            ConversationEvent::StepStarted { .. } => {
                self.busy = true;
                self.status.activity = Activity::Thinking;
            }
            ConversationEvent::TextDelta { step, text } => {
                self.transcript.text_delta(*step, text);
                self.status.activity = Activity::Streaming;
            }
            ConversationEvent::ReasoningDelta { step, text } => {
                self.transcript.reasoning_delta(*step, text);
                self.status.activity = Activity::Reasoning;
            }
            ConversationEvent::AssistantMessage {
                step,
                text,
                reasoning,
            } => {
                self.transcript.assistant_message(*step, text, reasoning);
            }
            ConversationEvent::Retrying {
                attempt,
                wait_ms,
                reason,
            } => {
                // A retry starts the reply again: what the failed attempt streamed goes.
                self.transcript.discard_streaming();
                let until = self.now + Duration::from_millis(*wait_ms);
                self.status.activity = Activity::Retrying {
                    until,
                    attempt: *attempt,
                    reason: reason.clone(),
                };
                let secs = wait_ms.div_ceil(1000);
                self.notice(
                    &format!("{reason}: retrying in {secs}s (attempt {attempt})"),
                    NoticeLevel::Warning,
                );
            }
            ConversationEvent::RequestEnded { reason, .. } => {
                self.turn_ended(reason);
                if matches!(reason, EndReason::Failed(_) | EndReason::Denied) {
                    self.restore_unsent();
                }
                self.unconfirmed = None;
            }
            ConversationEvent::Idle => self.idle(),
            ConversationEvent::Reset => {
                self.forget_jobs();
                self.transcript.clear();
                self.diffs.clear();
                self.todos.clear();
                self.approval.clear();
                self.status.reset_usage();
            }
        }
    }

    /// Figures (usage, context, cost), the notices the engine sends, and lists it answers with.
    fn fold_report(&mut self, event: &ReportEvent) {
        match event {
            ReportEvent::Usage(usage) => self.status.add_usage(usage),
            ReportEvent::Models {
                models,
                configured,
                unavailable,
            } => {
                if let Some(picker) = self.layers.model_picker_mut() {
                    picker.models_listed(models, configured, unavailable.as_deref());
                }
            }
            // Once a request runs, its own answer or error says more than the check did.
            ReportEvent::EndpointChecked {
                problem: Some(problem),
            } if !self.busy => self.notice(problem, NoticeLevel::Warning),
            ReportEvent::EndpointChecked { .. } => {}
            ReportEvent::Warning { message } => {
                // The agent answers a rewind's plan with a warning when there is nothing to
                // restore: the picker waiting for it closes.
                self.layers.close_waiting_rewind();
                self.notice(message, NoticeLevel::Warning);
            }
            ReportEvent::ModeChanged { mode } => self.mode_changed(*mode),
            ReportEvent::ModelChanged { model } => self.model_changed(model),
            ReportEvent::ProjectRulesTrusted {
                path,
                rules,
                processes,
                unremembered,
            } => {
                let message = crate::tui::modals::trust::trusted(
                    path,
                    *rules,
                    *processes,
                    unremembered.as_deref(),
                );
                self.notice(&message, NoticeLevel::Info);
            }
            ReportEvent::Skills { skills, budget } => {
                self.skills.clone_from(skills);
                self.skills_budget = *budget;
            }
            ReportEvent::Sessions { sessions, here } => self
                .layers
                .open_picker(SessionPicker::new(sessions.clone(), here.clone())),
            ReportEvent::Context {
                used,
                window,
                cost_usd,
            } => {
                self.status.used = Some(*used);
                self.status.context_window = *window;
                self.status.cost_usd = *cost_usd;
            }
            ReportEvent::Compacted {
                before,
                after,
                pruned,
                summarized,
                summary,
            } => {
                let text =
                    crate::tui::panes::cost::compaction_text(*before, *after, *pruned, *summarized);
                self.notice(&text, NoticeLevel::Info);
                if let Some(summary) = summary {
                    self.transcript.set_details("the summary", summary.clone());
                }
            }
            ReportEvent::LanguageServers { indicator, listing } => {
                self.status.lsp.clone_from(indicator);
                if let Some(listing) = listing {
                    self.notice(listing.trim_end(), NoticeLevel::Info);
                }
            }
            ReportEvent::McpOfferings { prompts, resources } => {
                self.palette.set_mcp(prompts);
                self.mention_finder.set_resources(resources);
            }
            ReportEvent::CostReport { rows } => {
                let text = crate::tui::panes::cost::report_text(rows, &self.status.model);
                self.notice(&text, NoticeLevel::Info);
            }
            ReportEvent::SessionUsage { totals, requests } => {
                self.status.set_session_usage(*totals, *requests)
            }
        }
    }

    /// Rewind points, restore plans and their results, revert previews and reverts.
    fn fold_time_travel(&mut self, event: &TimeTravelEvent) {
        match event {
            TimeTravelEvent::RewindPoints { points } if !self.read_only => self
                .layers
                .open_restore(Layer::Rewind(RewindPicker::new(points.clone()))),
            TimeTravelEvent::RestorePlan { what, plan } if !self.read_only => {
                let confirm = RestoreConfirm::new(what.clone(), plan, self.layers.rewind_waiting());
                self.layers.open_restore(Layer::Confirm(confirm));
            }
            TimeTravelEvent::RewindPoints { .. } | TimeTravelEvent::RestorePlan { .. } => {}
            TimeTravelEvent::Restored { what, done } => {
                // What it put back shows (and counts) in the diff pane, as no edit.
                for change in &done.files {
                    self.diffs.push_restore(change.clone());
                }
                let text = crate::tui::modals::rewind::restored_text(what, done);
                let level = if done.conflicts.is_empty() {
                    NoticeLevel::Info
                } else {
                    NoticeLevel::Warning
                };
                self.notice(&text, level);
            }
            TimeTravelEvent::Rewound { text, .. } => self.rewound(text),
            TimeTravelEvent::RevertPreview {
                target,
                what,
                plan,
                moved,
            } => {
                if let Some(modal) = self.layers.revert_mut(target) {
                    modal.show(what, plan.clone(), *moved);
                } else if *moved {
                    // The confirmation was closed meanwhile: still say nothing was applied.
                    self.notice(
                        &format!("not reverted: the files changed since the preview of {what}"),
                        NoticeLevel::Warning,
                    );
                }
            }
            TimeTravelEvent::Reverted {
                id,
                target,
                what,
                changes,
            } => {
                self.layers.close_revert(target);
                let source = crate::bus::ChangeSource::Revert(id.clone());
                for (file, change) in changes.iter().enumerate() {
                    self.diffs.push_from(change.clone(), source.clone(), file);
                }
                self.notice(&format!("reverted {what}"), NoticeLevel::Info);
            }
        }
    }
}
