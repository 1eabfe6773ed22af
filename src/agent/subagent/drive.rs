//! Following a running child: what it has done so far (steps, tool, tokens, files, its text)
//! for its live card and its report; its approvals put to the parent's UI, labelled, and the
//! answers carried back; and its end: it finished, or it was stopped because the parent was
//! interrupted or because it made no progress for `stall` (a pending approval pauses that
//! clock).

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::ParentLink;
use crate::bus::{
    AgentEvent, CallId, ConversationEvent, Decision, EndReason, ReportEvent, SessionId,
    SubagentStatus, ToolEvent, Usage, UserCommand,
};
use crate::tool_output::ToolOutput;

/// What a child is followed with.
pub(super) struct Follow<'a> {
    pub parent: &'a ParentLink,
    /// The parent's call that runs the child.
    pub call: &'a CallId,
    pub agent: &'a str,
    pub description: &'a str,
    pub session: &'a SessionId,
    pub stall: Duration,
}

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ChildEnd {
    /// Its request ended this way.
    Ended(EndReason),
    /// Stopped after no progress for this long.
    Stalled(Duration),
    /// Stopped because the parent was interrupted.
    Cancelled,
    /// Its task went away without saying how it ended.
    Lost,
}

/// What the child did so far.
#[derive(Debug, Default)]
pub(super) struct ChildProgress {
    pub steps: u64,
    pub tool: Option<String>,
    pub usage: Usage,
    pub requests: u64,
    pub files: BTreeSet<String>,
    /// Calls whose changes its file-tool count misses: the commands it ran and its own
    /// subagents that changed files (only the parent's checkpoints can tell what they did).
    pub uncounted: u64,
    /// Its last complete message with text.
    pub answer: String,
    /// Text streamed in the step that runs now.
    pub streaming: String,
}

impl ChildProgress {
    /// Everything the child wrote that the parent has not got yet: its last message, and
    /// what it was writing when it stopped.
    pub fn text(&self) -> String {
        match (self.answer.trim(), self.streaming.trim()) {
            (answer, "") => answer.to_string(),
            ("", streaming) => streaming.to_string(),
            (answer, streaming) => format!("{answer}\n{streaming}"),
        }
    }
}

/// Follows the child until its request ends; stops it first when `cancel` fires or it stalls.
pub(super) async fn follow(
    watched: &Follow<'_>,
    events: &mut mpsc::UnboundedReceiver<AgentEvent>,
    commands: &mpsc::Sender<UserCommand>,
    cancel: &CancellationToken,
) -> (ChildEnd, ChildProgress) {
    let mut progress = ChildProgress::default();
    let mut approvals = Approvals::default();
    let mut last_progress = Instant::now();
    let mut stopping: Option<ChildEnd> = None;
    watched.show(&progress, false);
    let ending = loop {
        let stall_at = tokio::time::Instant::from_std(last_progress + watched.stall);
        let event = tokio::select! {
            event = events.recv() => event,
            () = cancel.cancelled(), if stopping.is_none() => {
                stopping = Some(ChildEnd::Cancelled);
                let _ = commands.send(UserCommand::Interrupt).await;
                continue;
            }
            () = tokio::time::sleep_until(stall_at), if stopping.is_none() && approvals.is_empty() => {
                stopping = Some(ChildEnd::Stalled(watched.stall));
                let _ = commands.send(UserCommand::Interrupt).await;
                continue;
            }
        };
        let Some(event) = event else {
            break stopping.clone().unwrap_or(ChildEnd::Lost);
        };
        if moves(&event) {
            last_progress = Instant::now();
        }
        watched.forward(&event);
        match event {
            AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. }) => {
                break stopping.clone().unwrap_or(ChildEnd::Ended(reason));
            }
            AgentEvent::Conversation(ConversationEvent::StepStarted { .. }) => {
                progress.steps += 1;
                progress.streaming.clear();
                watched.show(&progress, !approvals.is_empty());
            }
            AgentEvent::Conversation(ConversationEvent::TextDelta { text, .. }) => {
                progress.streaming.push_str(&text);
            }
            AgentEvent::Conversation(ConversationEvent::Retrying { .. }) => {
                progress.streaming.clear();
            }
            AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) => {
                progress.streaming.clear();
                if !text.trim().is_empty() {
                    progress.answer = text;
                }
            }
            AgentEvent::Report(ReportEvent::SessionUsage { totals, requests }) => {
                progress.usage = totals;
                progress.requests = requests;
                watched.show(&progress, !approvals.is_empty());
            }
            AgentEvent::Tool(ToolEvent::Requested { name, .. }) => {
                progress.tool = Some(name);
                watched.show(&progress, !approvals.is_empty());
            }
            AgentEvent::Tool(ToolEvent::Finished { result, .. }) => {
                progress.tool = None;
                match &result.output {
                    Some(ToolOutput::FileChanged(change)) => {
                        progress.files.insert(change.path.clone());
                    }
                    Some(ToolOutput::Command(_)) => progress.uncounted += 1,
                    Some(ToolOutput::Subagent(run))
                        if run.files_changed > 0 || run.uncounted > 0 =>
                    {
                        progress.uncounted += 1;
                    }
                    _ => {}
                }
                watched.show(&progress, !approvals.is_empty());
            }
            AgentEvent::Tool(held @ ToolEvent::AwaitingApproval { .. }) => {
                approvals.ask(watched, held, commands);
                watched.show(&progress, true);
            }
            AgentEvent::Tool(ToolEvent::Decided { call, decision }) => {
                approvals.decided(watched, &call, decision);
                last_progress = Instant::now();
                watched.show(&progress, !approvals.is_empty());
            }
            _ => {}
        }
    };
    approvals.withdraw_all(watched);
    (ending, progress)
}

/// Whether an event shows the child is alive: stream bytes, tool activity.
fn moves(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::Conversation(
            ConversationEvent::TextDelta { .. }
                | ConversationEvent::ReasoningDelta { .. }
                | ConversationEvent::AssistantMessage { .. }
                | ConversationEvent::StepStarted { .. }
                | ConversationEvent::Retrying { .. }
        ) | AgentEvent::Tool(
            ToolEvent::Requested { .. }
                | ToolEvent::Started { .. }
                | ToolEvent::OutputTail { .. }
                | ToolEvent::Finished { .. }
                // A grandchild at work is this child's progress too.
                | ToolEvent::Subagent { .. }
                | ToolEvent::ChildEvent { .. }
        )
    )
}

impl Follow<'_> {
    /// Publishes the child's card.
    fn show(&self, progress: &ChildProgress, waiting: bool) {
        let status = SubagentStatus {
            agent: self.agent.to_string(),
            description: self.description.to_string(),
            session: self.session.0.clone(),
            step: progress.steps,
            tool: progress.tool.clone(),
            tokens: progress.usage.prompt_tokens + progress.usage.completion_tokens,
            waiting,
        };
        let _ = self
            .parent
            .events
            .send(AgentEvent::Tool(ToolEvent::Subagent {
                call: self.call.clone(),
                status,
            }));
    }

    /// Hands one of the child's events to the parent's UI, for the child's transcript.
    fn forward(&self, event: &AgentEvent) {
        let _ = self
            .parent
            .events
            .send(AgentEvent::Tool(ToolEvent::ChildEvent {
                call: self.call.clone(),
                inner: Box::new(event.clone()),
            }));
    }

    /// The id of a child's held call in the parent's UI: unique across the parent's calls.
    fn outer(&self, inner: &CallId) -> CallId {
        CallId(format!("{}~{}", self.call.0, inner.0))
    }
}

/// The child's calls held for the parent's user: the outer id → the child's own id.
#[derive(Default)]
struct Approvals {
    held: HashMap<CallId, CallId>,
}

impl Approvals {
    fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Puts the child's held call to the parent's UI, labelled with the agent and its
    /// description; the user's answer (a `Decide` of the outer id) goes back to the child.
    fn ask(
        &mut self,
        watched: &Follow<'_>,
        mut held: ToolEvent,
        commands: &mpsc::Sender<UserCommand>,
    ) {
        let ToolEvent::AwaitingApproval { call, why, .. } = &mut held else {
            return;
        };
        let inner = call.clone();
        let outer = watched.outer(&inner);
        let (tx, rx) = oneshot::channel::<Decision>();
        watched.parent.shared.park_approval(outer.clone(), tx);
        let answers = commands.clone();
        let to_child = inner.clone();
        tokio::spawn(async move {
            if let Ok(decision) = rx.await {
                let _ = answers
                    .send(UserCommand::Decide {
                        call: to_child,
                        decision,
                    })
                    .await;
            }
        });
        self.held.insert(outer.clone(), inner);
        // The same question, under the parent's id and saying who asks.
        *call = outer;
        *why = format!(
            "agent {} ({}) asks: {why}",
            watched.agent, watched.description
        );
        let _ = watched.parent.events.send(AgentEvent::Tool(held));
    }

    /// The child carried out an answer: the parent's prompt for it is settled.
    fn decided(&mut self, watched: &Follow<'_>, inner: &CallId, decision: Decision) {
        let outer = watched.outer(inner);
        if self.held.remove(&outer).is_some() {
            let _ = watched
                .parent
                .events
                .send(AgentEvent::Tool(ToolEvent::Decided {
                    call: outer,
                    decision,
                }));
        }
    }

    /// The child ended with questions open (it was stopped): they leave the parent's UI.
    fn withdraw_all(&mut self, watched: &Follow<'_>) {
        for (outer, _) in self.held.drain() {
            watched.parent.shared.forget_approval(&outer);
            let _ = watched
                .parent
                .events
                .send(AgentEvent::Tool(ToolEvent::Decided {
                    call: outer,
                    decision: Decision::Deny {
                        message: Some("the subagent stopped".into()),
                    },
                }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child waiting on its own child is not stalled while the grandchild works.
    #[test]
    fn a_grandchild_at_work_is_progress_and_idling_is_not() {
        let call = CallId::new("s1");
        let grandchild = AgentEvent::Tool(ToolEvent::ChildEvent {
            call: call.clone(),
            inner: Box::new(AgentEvent::Conversation(ConversationEvent::TextDelta {
                step: crate::bus::StepId(1),
                text: "x".into(),
            })),
        });
        assert!(moves(&grandchild));
        let card = AgentEvent::Tool(ToolEvent::Subagent {
            call,
            status: SubagentStatus {
                agent: "explore".into(),
                description: "d".into(),
                session: "s".into(),
                step: 1,
                tool: None,
                tokens: 0,
                waiting: false,
            },
        });
        assert!(moves(&card));
        let idle = AgentEvent::Conversation(ConversationEvent::Idle);
        assert!(!moves(&idle));
    }
}
