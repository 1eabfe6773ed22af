//! The agent's loop over the user's commands: a request runs as one piece of work while the
//! loop keeps serving what may come meanwhile (steering, a decision, an interrupt, a mode),
//! and everything else waits for the agent to be idle.

use crate::bus::{ConversationEvent, QueueEvent, ReportEvent};
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::session_open::trust_project_rules;
use super::{Agent, ModelLister, StartFrom, compact, jobs, steering};
use crate::bus::{AgentEvent, UserCommand};
use crate::session_log::{self, Record};
use crate::sync::MutexExt;

impl Agent {
    /// Serves commands until `Shutdown` or until every sender is gone. Background jobs and
    /// anything tools started die before this returns.
    pub async fn run(mut self, mut commands: mpsc::Receiver<UserCommand>) {
        let (work_tx, mut work_rx) = mpsc::unbounded_channel();
        let shared = Arc::clone(&self.shared);
        let events = self.events.clone();
        let lister = ModelLister {
            model: Arc::clone(&self.engine.model),
            events: self.events.clone(),
            configured: self.settings.context.configured_model.clone(),
        };
        let gate = Arc::clone(&self.engine.gate);
        let mut untrusted = self.settings.untrusted_rules.take();
        let router = tokio::spawn(async move {
            while let Some(command) = commands.recv().await {
                // Like a mode change, trust applies to the very next gate check.
                if matches!(command, UserCommand::TrustProjectRules) {
                    let _ = events.send(trust_project_rules(untrusted.take(), gate.as_ref()));
                    continue;
                }
                if matches!(
                    command,
                    UserCommand::ListJobs
                        | UserCommand::ShowJobOutput { .. }
                        | UserCommand::KillJob { .. }
                ) {
                    // The user's view of the jobs never waits for a running request.
                    jobs::serve(&shared, &events, command);
                    continue;
                }
                if shared.inbox.locked().hold(&command) {
                    continue;
                }
                let token = match &command {
                    UserCommand::Interrupt => {
                        if !shared.stop_shell() {
                            shared.cancel_current();
                        }
                        continue;
                    }
                    // The picker waits for it: never behind a running request.
                    UserCommand::ListModels => {
                        lister.spawn();
                        continue;
                    }
                    UserCommand::Withdraw { id, text, sent } => {
                        let mut inbox = shared.inbox.locked();
                        if !sent {
                            inbox.note_withdrawn(id.clone(), text.clone());
                        } else if inbox.withdraw(id) {
                            let _ = events
                                .send(AgentEvent::Queue(QueueEvent::Withdrawn { id: id.clone() }));
                        }
                        // The agent logs it when it gets to it.
                        CancellationToken::new()
                    }
                    UserCommand::Submit { .. } | UserCommand::Steer { .. } => {
                        shared.inbox.locked().request_forwarded();
                        shared.fresh_cancel()
                    }
                    UserCommand::Decide { call, decision } => {
                        shared.decide(call, decision.clone());
                        continue;
                    }
                    UserCommand::Shutdown => break,
                    UserCommand::Compact { .. } => shared.fresh_cancel(),
                    // A mode change applies to the very next gate check, also mid-request;
                    // the agent records it when it gets to it.
                    UserCommand::SetMode { mode } => {
                        shared.set_mode(*mode);
                        CancellationToken::new()
                    }
                    _ => CancellationToken::new(),
                };
                if work_tx.send((command, token)).is_err() {
                    break;
                }
            }
            // Shutdown, or every sender is gone: nothing may keep the agent waiting now.
            shared.close();
            let _ = work_tx.send((UserCommand::Shutdown, CancellationToken::new()));
        });
        self.ask_window(self.engine.model.model());
        self.check_endpoint_in_background();
        self.session_start_hooks().await;
        self.emit(AgentEvent::Conversation(ConversationEvent::Idle));
        while let Some((command, cancel)) = work_rx.recv().await {
            match command {
                UserCommand::Submit { text, attach } => {
                    let request = steering::Request {
                        queued: None,
                        text,
                        attach,
                    };
                    self.serve(request, &cancel).await;
                    self.emit(AgentEvent::Conversation(ConversationEvent::Idle));
                }
                UserCommand::Steer { id, text, attach } => {
                    let request = steering::Request {
                        queued: Some(id),
                        text,
                        attach,
                    };
                    self.serve(request, &cancel).await;
                    self.emit(AgentEvent::Conversation(ConversationEvent::Idle));
                }
                UserCommand::Shell {
                    id,
                    command,
                    context,
                } => self.run_user_shell(id, command, context).await,
                UserCommand::Withdraw { .. } => self.log_withdrawn(),
                UserCommand::SetMode { mode } => {
                    self.shared.set_mode(mode);
                    self.record(&Record::Mode { mode });
                    self.emit(AgentEvent::Report(ReportEvent::ModeChanged { mode }));
                }
                UserCommand::SetModel { model } => {
                    self.engine.model.set_model(&model);
                    self.record(&Record::Model {
                        model: model.clone(),
                    });
                    self.emit(AgentEvent::Report(ReportEvent::ModelChanged {
                        model: model.clone(),
                    }));
                    if !self.settings.context.window_fixed
                        && let Some(info) = crate::models::lookup(&model)
                    {
                        self.window.set(info.context_window);
                    }
                    self.ask_window(model);
                    self.report_context();
                }
                UserCommand::Compact { focus } => {
                    self.compact(compact::Why::Asked, focus, &cancel).await;
                    self.emit(AgentEvent::Conversation(ConversationEvent::Idle));
                }
                UserCommand::ShowCost => {
                    let rows = self.cost_rows();
                    self.emit(AgentEvent::Report(ReportEvent::CostReport { rows }));
                }
                UserCommand::ShowLsp => self.show_lsp(),
                // Handled in order, like a request: never while one runs.
                UserCommand::ListRewindPoints => self.list_rewind_points(),
                UserCommand::Restore { what, apply } => self.restore(what, apply).await,
                UserCommand::PreviewRevert { target } => self.preview_revert(target).await,
                UserCommand::Revert { target, stamp } => self.apply_revert(target, stamp).await,
                UserCommand::ListSessions => {
                    let here = &self.settings.workspace;
                    let sessions =
                        session_log::list_sessions_for(self.settings.dirs.sessions(), here);
                    self.emit(AgentEvent::Report(ReportEvent::Sessions {
                        sessions,
                        here: here.display().to_string(),
                    }));
                }
                UserCommand::NewSession => self.switch_session(StartFrom::New).await,
                UserCommand::Resume { session } => {
                    let (dir, here) = (self.settings.dirs.sessions(), &self.settings.workspace);
                    match session_log::find_session_in(dir, &session.0, here) {
                        Ok(path) => self.switch_session(StartFrom::Resume(path)).await,
                        Err(err) => self.emit(AgentEvent::Report(ReportEvent::Warning {
                            message: err.to_string(),
                        })),
                    }
                }
                UserCommand::TrustSkill { name } => self.trust_skill(&name),
                UserCommand::Shutdown => break,
                UserCommand::Interrupt
                | UserCommand::TrustProjectRules
                | UserCommand::Decide { .. }
                | UserCommand::ListJobs
                | UserCommand::ShowJobOutput { .. }
                | UserCommand::KillJob { .. }
                | UserCommand::ListModels => {}
            }
        }
        router.abort();
        // A grace period for jobs to exit (dropping the table would only SIGKILL them).
        self.engine.tool_env.jobs.kill_all().await;
        // MCP servers stop with their process groups.
        self.engine.registry.shutdown().await;
        // Language servers: shutdown, exit, and their process groups (nothing survives).
        if let Some(lsp) = &self.engine.tool_env.lsp {
            lsp.shutdown().await;
        }
    }
}
