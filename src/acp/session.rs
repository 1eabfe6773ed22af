//! One ACP session: an engine started for the editor's workspace, the task that turns its
//! events into `session/update`s (and held calls into `session/request_permission`), and the
//! prompt's life from `session/prompt` to its stop reason.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ContentBlock, RequestPermissionRequest, SessionMode, SessionModeState,
    SessionNotification, SessionUpdate, StopReason, ToolCall, ToolCallContent, ToolCallUpdate,
};
use tokio::sync::{mpsc, oneshot};

use super::permission;
use super::prompt::{self, PromptAsk};
use super::updates::{Translator, text};
use crate::bus::{
    AgentEvent, ConversationEvent, EndReason, Mode, ReportEvent, ToolEvent, UserCommand,
};
use crate::sync::MutexExt as _;

/// How a prompt ended, for its response.
pub enum TurnEnd {
    Stopped(StopReason),
    Failed(String),
}

/// The prompt running now: what ended its request, and whether the editor cancelled it.
struct PromptTurn {
    ended: Option<EndReason>,
    cancelled: bool,
    done: oneshot::Sender<TurnEnd>,
}

#[derive(Default)]
struct SessionState {
    turn: Option<PromptTurn>,
    /// Prefixes the editor rejected for the rest of the session.
    reject_rules: Vec<String>,
    /// Fired at the agent's first `Idle`: a resumed session's history was sent.
    ready: Option<oneshot::Sender<()>>,
}

pub struct AcpSession {
    pub id: String,
    pub workspace: PathBuf,
    pub mode: Mode,
    commands: mpsc::Sender<UserCommand>,
    state: Arc<Mutex<SessionState>>,
    agent: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The modes the editor can switch between: all of cairn's.
pub fn modes(current: Mode) -> SessionModeState {
    let all = [
        (Mode::Ask, "Ask", "Every change and command asks first"),
        (
            Mode::AutoEdit,
            "Auto-edit",
            "Edits in the workspace run; commands ask unless read-only",
        ),
        (
            Mode::Auto,
            "Auto",
            "Only dangerous commands and writes outside the workspace ask",
        ),
        (
            Mode::Plan,
            "Plan",
            "Read and plan only; the plan is proposed before anything changes",
        ),
        (
            Mode::Never,
            "Never ask",
            "Everything runs without asking (the sandbox still applies)",
        ),
    ];
    SessionModeState::new(
        current.as_str(),
        all.iter()
            .map(|(mode, name, about)| {
                SessionMode::new(mode.as_str(), *name).description(Some(about.to_string()))
            })
            .collect(),
    )
}

impl AcpSession {
    /// Starts the engine of `launched` and the task that speaks for it to the editor (with
    /// commands' output mirrored to its terminal view when `mirror_commands`). The returned
    /// receiver fires once the agent is idle (a resumed session's history is out).
    pub fn start(
        launched: crate::launch::Launched,
        cx: ConnectionTo<Client>,
        mirror_commands: bool,
    ) -> (Arc<AcpSession>, oneshot::Receiver<()>) {
        let id = launched.agent.session_id().0.clone();
        let workspace = launched.workspace.clone();
        let mode = launched.config.mode;
        let (ready_tx, ready_rx) = oneshot::channel();
        let state = Arc::new(Mutex::new(SessionState {
            ready: Some(ready_tx),
            ..SessionState::default()
        }));
        let agent = tokio::spawn(launched.agent.run(launched.commands));
        let session = Arc::new(AcpSession {
            id: id.clone(),
            workspace: workspace.clone(),
            mode,
            commands: launched.front.commands.clone(),
            state: Arc::clone(&state),
            agent: Mutex::new(Some(agent)),
        });
        let pump = Pump {
            id,
            workspace: workspace.clone(),
            cx,
            translator: Translator::new(workspace.clone()).mirroring_commands(mirror_commands),
            commands: launched.front.commands,
            state,
        };
        tokio::spawn(pump.run(launched.front.events));
        (session, ready_rx)
    }

    /// The commands announcement, sent by the caller once the session's id is known to the
    /// editor (after the response).
    pub fn commands_update(&self, dirs: &crate::dirs::Dirs) -> SessionNotification {
        SessionNotification::new(
            self.id.clone(),
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
                prompt::available_commands(dirs, &self.workspace),
            )),
        )
    }

    /// Runs one prompt to its end.
    pub async fn prompt(&self, blocks: &[ContentBlock]) -> TurnEnd {
        let ask = match prompt::read(blocks, &self.workspace) {
            Ok(ask) => ask,
            Err(why) => return TurnEnd::Failed(why),
        };
        let (done, ended) = oneshot::channel();
        {
            let mut state = self.state.locked();
            if state.turn.is_some() {
                return TurnEnd::Failed("a prompt is already running in this session".into());
            }
            state.turn = Some(PromptTurn {
                ended: None,
                cancelled: false,
                done,
            });
        }
        let command = match ask {
            PromptAsk::Submit(command) | PromptAsk::Command(command) => command,
        };
        // `ShowCost` is answered in order after the command: its answer marks the end of
        // everything the command did (a request, an undo, a compaction).
        for command in [command, UserCommand::ShowCost] {
            if self.commands.send(command).await.is_err() {
                self.state.locked().turn = None;
                return TurnEnd::Failed("the agent has stopped".into());
            }
        }
        ended
            .await
            .unwrap_or_else(|_| TurnEnd::Failed("the agent has stopped".into()))
    }

    /// `session/cancel`: the running prompt stops (its commands' process groups with it) and
    /// ends with `cancelled`.
    pub async fn cancel(&self) {
        if let Some(turn) = self.state.locked().turn.as_mut() {
            turn.cancelled = true;
        }
        let _ = self.commands.send(UserCommand::Interrupt).await;
    }

    pub async fn set_mode(&self, mode: Mode) {
        let _ = self.commands.send(UserCommand::SetMode { mode }).await;
    }

    /// Stops the engine and waits for it (jobs, servers and commands end with it).
    pub async fn shutdown(&self) {
        let _ = self.commands.send(UserCommand::Interrupt).await;
        let _ = self.commands.send(UserCommand::Shutdown).await;
        let task = self.agent.locked().take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// The task between one engine and the editor.
struct Pump {
    id: String,
    workspace: PathBuf,
    cx: ConnectionTo<Client>,
    translator: Translator,
    commands: mpsc::Sender<UserCommand>,
    state: Arc<Mutex<SessionState>>,
}

impl Pump {
    async fn run(mut self, mut events: mpsc::UnboundedReceiver<AgentEvent>) {
        while let Some(event) = events.recv().await {
            self.handle(&event);
        }
        // The engine is gone: a prompt still waiting ends.
        if let Some(turn) = self.state.locked().turn.take() {
            let _ = turn
                .done
                .send(TurnEnd::Failed("the agent has stopped".into()));
        }
    }

    fn send(&self, update: SessionUpdate) {
        if let Err(err) = self
            .cx
            .send_notification(SessionNotification::new(self.id.clone(), update))
        {
            tracing::warn!("acp: an update could not be sent: {err}");
        }
    }

    fn handle(&mut self, event: &AgentEvent) {
        if let AgentEvent::Report(ReportEvent::Warning { message }) = event {
            tracing::warn!("acp session {}: {message}", self.id);
        }
        match event {
            AgentEvent::Report(ReportEvent::CostReport { .. }) => {
                self.end_turn();
                return;
            }
            AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. })
                if self.translator.is_live() =>
            {
                if let Some(turn) = self.state.locked().turn.as_mut() {
                    turn.ended = Some(reason.clone());
                }
            }
            AgentEvent::Conversation(ConversationEvent::Idle) => {
                if let Some(ready) = self.state.locked().ready.take() {
                    let _ = ready.send(());
                }
            }
            AgentEvent::Tool(ToolEvent::AwaitingApproval {
                call,
                name,
                subject,
                why,
                prefix,
                decisions,
                dangers,
                diff,
                ..
            }) => {
                let held = PermissionAsk {
                    call: call.clone(),
                    tool_call: self.translator.requested(&call.0).unwrap_or_else(|| {
                        ToolCall::new(call.0.clone(), format!("{name} {subject}"))
                    }),
                    why: why.clone(),
                    prefix: prefix.clone(),
                    decisions: decisions.clone(),
                    dangers: dangers.clone(),
                    diff: diff.clone(),
                };
                self.ask(held);
            }
            _ => {}
        }
        for update in self.translator.translate(event) {
            self.send(update);
        }
    }

    /// The barrier after a prompt's command was answered: the prompt ends.
    fn end_turn(&self) {
        let Some(turn) = self.state.locked().turn.take() else {
            return;
        };
        let end = if turn.cancelled {
            TurnEnd::Stopped(StopReason::Cancelled)
        } else {
            match turn.ended {
                None | Some(EndReason::Completed) | Some(EndReason::Denied) => {
                    TurnEnd::Stopped(StopReason::EndTurn)
                }
                Some(EndReason::Interrupted) => TurnEnd::Stopped(StopReason::Cancelled),
                Some(EndReason::StepLimit) => TurnEnd::Stopped(StopReason::MaxTurnRequests),
                Some(EndReason::OutputLimit) => TurnEnd::Stopped(StopReason::MaxTokens),
                Some(EndReason::Failed(message)) => TurnEnd::Failed(message),
            }
        };
        let _ = turn.done.send(end);
    }

    /// Puts a held call to the editor (in its own task: the events go on meanwhile), or
    /// denies it at once when the session rejected its prefix.
    fn ask(&self, held: PermissionAsk) {
        let commands = self.commands.clone();
        if permission::rejected_by(&self.state.locked().reject_rules, &held.prefix) {
            let call = held.call;
            tokio::spawn(async move {
                let decision = crate::bus::Decision::Deny {
                    message: Some(
                        "the user rejected commands starting with this prefix for this session"
                            .into(),
                    ),
                };
                let _ = commands.send(UserCommand::Decide { call, decision }).await;
            });
            return;
        }
        let cx = self.cx.clone();
        let id = self.id.clone();
        let workspace = self.workspace.clone();
        let state = Arc::clone(&self.state);
        tokio::spawn(async move {
            let options = permission::options(&held.decisions, &held.prefix);
            let mut shown: ToolCallUpdate = held.tool_call.into();
            // The prompt shows what the call would do; a command's terminal opens when it runs.
            shown.meta = None;
            let mut content = Vec::new();
            if let Some(change) = &held.diff {
                content.extend(super::tool_calls::change_diffs(change, &workspace));
            }
            let mut note = held.why.clone();
            for danger in &held.dangers {
                note.push_str(&format!("\n- {danger}"));
            }
            content.push(ToolCallContent::from(text(note)));
            shown.fields.content = Some(content);
            let request = RequestPermissionRequest::new(id, shown, options);
            let answer = cx.send_request(request).block_task().await;
            let (decision, reject_always) = match answer {
                Ok(answer) => permission::decision(&answer.outcome, &held.prefix),
                Err(err) => {
                    tracing::warn!("acp: the permission request failed: {err}");
                    (crate::bus::Decision::Deny { message: None }, false)
                }
            };
            if reject_always && !held.prefix.trim().is_empty() {
                state
                    .locked()
                    .reject_rules
                    .push(held.prefix.trim().to_string());
            }
            let _ = commands
                .send(UserCommand::Decide {
                    call: held.call,
                    decision,
                })
                .await;
        });
    }
}

/// What a held call's prompt needs.
struct PermissionAsk {
    call: crate::bus::CallId,
    tool_call: ToolCall,
    why: String,
    prefix: String,
    decisions: Vec<crate::bus::DecisionKind>,
    dangers: Vec<String>,
    diff: Option<crate::tool_output::FileChange>,
}
