//! The engine's events as the editor's `session/update`s: streamed text and reasoning as
//! chunks, each call a `tool_call` and its progress `tool_call_update`s, the todo list as a
//! `plan`, the mode, the context's use. A resumed session's history (before the agent's first
//! `Idle`) comes through the same translation, the user's messages included.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, CurrentModeUpdate, Plan, SessionUpdate, TextContent,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};

use super::{terminal, tool_calls};
use crate::bus::{
    AgentEvent, ConversationEvent, ReportEvent, TimeTravelEvent, ToolEvent, ToolResult,
};
use crate::tool_output::ToolOutput;

/// Text as a content block.
pub fn text(text: impl Into<String>) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

fn message(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(self::text(text)))
}

/// Turns one session's events into updates; it keeps what a later event needs (the calls'
/// names and arguments, whether a step's text already streamed).
pub struct Translator {
    workspace: PathBuf,
    /// The agent was idle once: what comes now is live, not a resumed session's history.
    live: bool,
    streamed_text: bool,
    streamed_reasoning: bool,
    calls: HashMap<String, (String, serde_json::Value)>,
    /// The editor shows commands in its terminal view (`terminal`).
    terminal: bool,
    /// Commands whose output was mirrored while they ran.
    tailed: std::collections::HashSet<String>,
}

impl Translator {
    pub fn new(workspace: PathBuf) -> Self {
        Self {
            workspace,
            live: false,
            streamed_text: false,
            streamed_reasoning: false,
            calls: HashMap::new(),
            terminal: false,
            tailed: std::collections::HashSet::new(),
        }
    }

    /// Commands' output mirrored to the editor's terminal view.
    pub fn mirroring_commands(self, terminal: bool) -> Self {
        Self { terminal, ..self }
    }

    fn mirrored(&self, name: &str) -> bool {
        self.terminal && name == "bash"
    }

    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn translate(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::Conversation(event) => self.conversation(event),
            AgentEvent::Tool(event) => self.tool(event),
            AgentEvent::Report(report) => self.report(report),
            AgentEvent::TimeTravel(TimeTravelEvent::Restored { what, done }) => {
                let verb = match what {
                    crate::bus::Restore::Undo => "Undone",
                    crate::bus::Restore::Redo => "Redone",
                    crate::bus::Restore::Rewind { .. } => "Rewound",
                };
                let mut lines = vec![format!("{verb}: {} file(s) restored.", done.files.len())];
                lines.extend(done.files.iter().map(|f| format!("- {}", f.path)));
                lines.extend(
                    done.conflicts
                        .iter()
                        .map(|c| format!("- {} left alone: {}", c.path, c.why)),
                );
                lines.extend(done.note.clone());
                vec![message(lines.join("\n") + "\n")]
            }
            AgentEvent::Hook(note) if self.live => {
                vec![message(format!("\n> warning: {}\n", note.text()))]
            }
            _ => Vec::new(),
        }
    }

    fn conversation(&mut self, event: &ConversationEvent) -> Vec<SessionUpdate> {
        match event {
            ConversationEvent::Idle => {
                self.live = true;
                Vec::new()
            }
            ConversationEvent::StepStarted { .. } | ConversationEvent::Reset => {
                self.streamed_text = false;
                self.streamed_reasoning = false;
                Vec::new()
            }
            ConversationEvent::TextDelta { text, .. } if !text.is_empty() => {
                self.streamed_text = true;
                vec![message(text.clone())]
            }
            ConversationEvent::ReasoningDelta { text, .. } if !text.is_empty() => {
                self.streamed_reasoning = true;
                vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                    self::text(text.clone()),
                ))]
            }
            // Live, the text came as deltas; replayed, only the whole message comes.
            ConversationEvent::AssistantMessage {
                text, reasoning, ..
            } => {
                let mut out = Vec::new();
                if !self.streamed_reasoning && !reasoning.is_empty() {
                    out.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                        self::text(reasoning.clone()),
                    )));
                }
                if !self.streamed_text && !text.is_empty() {
                    out.push(message(text.clone()));
                }
                self.streamed_text = false;
                self.streamed_reasoning = false;
                out
            }
            ConversationEvent::Retrying { reason, .. } => {
                self.streamed_text = false;
                self.streamed_reasoning = false;
                vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                    self::text(format!("\n(retrying: {reason})\n")),
                ))]
            }
            // The editor shows what it sent; a resumed session's messages are replayed.
            ConversationEvent::UserMessage { text, typed, .. } if !self.live => {
                let shown = typed.clone().unwrap_or_else(|| text.clone());
                vec![SessionUpdate::UserMessageChunk(ContentChunk::new(
                    self::text(shown),
                ))]
            }
            _ => Vec::new(),
        }
    }

    fn tool(&mut self, event: &ToolEvent) -> Vec<SessionUpdate> {
        match event {
            ToolEvent::Requested { call, name, args } => {
                self.calls
                    .insert(call.0.clone(), (name.clone(), args.clone()));
                vec![SessionUpdate::ToolCall(self.tool_call(&call.0, name, args))]
            }
            ToolEvent::Started { call } => {
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call.0.clone(),
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                ))]
            }
            ToolEvent::OutputTail { call, chunk } if self.terminal => {
                self.tailed.insert(call.0.clone());
                vec![SessionUpdate::ToolCallUpdate(
                    ToolCallUpdate::new(call.0.clone(), ToolCallUpdateFields::new())
                        .meta(terminal::output(&call.0, chunk)),
                )]
            }
            ToolEvent::Finished { call, name, result } => {
                let mut out = vec![SessionUpdate::ToolCallUpdate(
                    self.finished(&call.0, name, result),
                )];
                if let Some(ToolOutput::Todos { todos }) = &result.output {
                    out.push(SessionUpdate::Plan(Plan::new(tool_calls::plan_entries(
                        todos,
                    ))));
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// A requested call as the permission prompt shows it (None: never requested here).
    pub fn requested(&self, id: &str) -> Option<ToolCall> {
        let (name, args) = self.calls.get(id)?;
        Some(self.tool_call(id, name, args))
    }

    /// A new call, as it is requested (pending).
    pub fn tool_call(&self, id: &str, name: &str, args: &serde_json::Value) -> ToolCall {
        let call = ToolCall::new(id.to_string(), tool_calls::title(name, args))
            .kind(tool_calls::kind(name))
            .status(ToolCallStatus::Pending)
            .locations(tool_calls::locations(name, args, &self.workspace))
            .raw_input(Some(args.clone()));
        if self.mirrored(name) {
            call.content(vec![terminal::view(id)])
                .meta(terminal::opened(id, &self.workspace))
        } else {
            call.content(tool_calls::requested_diff(name, args, &self.workspace))
        }
    }

    fn finished(&mut self, id: &str, name: &str, result: &ToolResult) -> ToolCallUpdate {
        let cancelled = result.text == crate::tool_output::CANCELLED;
        let status = if result.is_error || cancelled {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let mut fields = ToolCallUpdateFields::new().status(status);
        if self.mirrored(name) {
            // The terminal view shows the output; the update ends it.
            let run = match &result.output {
                Some(ToolOutput::Command(run)) => Some(run),
                _ => None,
            };
            let whole = !self.tailed.remove(id);
            let end = terminal::exited(id, run, status == ToolCallStatus::Failed, whole);
            if self.calls.remove(id).is_none() {
                fields = fields.title(name.to_string()).kind(tool_calls::kind(name));
            }
            // A command that never ran (denied, refused) has only the model's words to show.
            let content = match run {
                Some(_) => terminal::view(id),
                None => ToolCallContent::from(text(result.text.clone())),
            };
            return ToolCallUpdate::new(id.to_string(), fields.content(vec![content])).meta(end);
        }
        let content: Vec<ToolCallContent> = match &result.output {
            Some(ToolOutput::FileChanged(change)) => {
                let mut locations = vec![agent_client_protocol::v1::schema::ToolCallLocation::new(
                    tool_calls::absolute(&self.workspace, &change.path),
                )];
                if change.first_line > 0 {
                    locations = locations
                        .into_iter()
                        .map(|l| l.line(u32::try_from(change.first_line).ok()))
                        .collect();
                }
                fields = fields.locations(locations);
                tool_calls::change_diffs(change, &self.workspace)
            }
            // The plan shows the list; the call says it was updated.
            Some(ToolOutput::Todos { .. }) => Vec::new(),
            _ => vec![ToolCallContent::from(text(result.text.clone()))],
        };
        if self.calls.remove(id).is_none() {
            // A call never requested in this translation (a replay that starts mid-way):
            // it still gets its title.
            fields = fields.title(name.to_string()).kind(tool_calls::kind(name));
        }
        ToolCallUpdate::new(id.to_string(), fields.content(content))
    }

    fn report(&mut self, report: &ReportEvent) -> Vec<SessionUpdate> {
        match report {
            ReportEvent::ModeChanged { mode } => vec![SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(mode.as_str()),
            )],
            ReportEvent::Context {
                used,
                window,
                cost_usd,
            } => {
                let mut usage = UsageUpdate::new(*used, *window);
                if let Some(cost) = cost_usd {
                    usage = usage.cost(Some(Cost::new(*cost, "USD")));
                }
                vec![SessionUpdate::UsageUpdate(usage)]
            }
            ReportEvent::Warning { message: text } => {
                vec![message(format!("\n> warning: {text}\n"))]
            }
            ReportEvent::Compacted { before, after, .. } if self.live => vec![message(format!(
                "Context compacted: {before} → {after} tokens.\n"
            ))],
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
