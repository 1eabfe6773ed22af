//! The event bus: typed commands into the engine and typed events out of it.
//! The agent publishes `AgentEvent`s after recording them in the session log; the TUI and the
//! headless printer are two consumers of the same stream and send `UserCommand`s back.

use std::fmt;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

mod attachments;
mod conversation;
mod end_reason;
mod jobs;
mod mode;
mod report;
mod restore;
mod shell;
mod tool_event;
mod tool_result;
mod usage;
pub use attachments::{Attachment, ImageChip};
pub use conversation::{ConversationEvent, QueueEvent};
pub use end_reason::EndReason;
pub use jobs::{JobEnd, JobEvent, JobKiller, JobLine, JobListEvent};
pub use mode::Mode;
pub use report::{
    McpPromptLine, McpResourceLine, ReportEvent, SessionSummary, SkillLine, SkillStatus,
};
pub use restore::{
    ChangeSource, FileConflict, Restore, RestorePlan, RevertConflict, RevertFile, RevertMismatch,
    RevertPlan, RevertTarget, RewindPoint, TimeTravelEvent, diff_fingerprint,
};
pub use shell::ShellEvent;
pub use tool_event::{HookAct, HookNote, SubagentStatus, ToolEvent};
pub use tool_result::ToolResult;
pub use usage::{CostRow, Usage};

/// The tool that ends plan mode by proposing the plan: its approval is the plan's (the
/// prompt offers the modes to carry it out in, not rules).
pub const EXIT_PLAN_MODE: &str = "exit_plan_mode";

/// Id of one tool call, as the model named it (or as we synthesised it when it named none).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(pub String);

impl CallId {
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One model step (a request/response round) within a user request ("turn" means the whole
/// user request). The event field that carries it keeps its old name `turn` on the wire:
/// `exec --json` scripts read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StepId(pub u64);

/// Id of a session: also the stem of its log file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the user decided about a held call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Run this call once.
    Approve,
    /// Run it, and let every later command starting with `prefix` run for the rest of the
    /// session (the rule is recorded in the session log, so a resume keeps it).
    ApproveForSession { prefix: String },
    /// Like `ApproveForSession`, and also save `prefix` as an allow rule in the project's
    /// `.cairn/config.toml`, so later sessions in this project run it without asking.
    ApproveForProject { prefix: String },
    /// Run this command once outside the sandbox (full file system and network access).
    ApproveUnsandboxed,
    /// Do not run it; the model is told, with the user's message when there is one. For a
    /// plan (`exit_plan_mode`) this is the user's feedback: planning goes on.
    Deny { message: Option<String> },
    /// The plan `exit_plan_mode` proposed is approved: the session switches to `mode`.
    /// Answers only an `exit_plan_mode` call; for any other call it counts as a denial.
    ApprovePlan { mode: Mode },
}

impl Decision {
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::Approve => DecisionKind::Approve,
            Decision::ApproveForSession { .. } => DecisionKind::ApproveForSession,
            Decision::ApproveForProject { .. } => DecisionKind::ApproveForProject,
            Decision::ApproveUnsandboxed => DecisionKind::ApproveUnsandboxed,
            Decision::Deny { .. } => DecisionKind::Deny,
            Decision::ApprovePlan { .. } => DecisionKind::ApprovePlan,
        }
    }
}

/// An answer the approval prompt offers for a held call; `AwaitingApproval` lists them, so
/// every front end offers the same and the engine takes no other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Approve,
    ApproveForSession,
    ApproveForProject,
    ApproveUnsandboxed,
    Deny,
    ApprovePlan,
}

impl DecisionKind {
    /// The one rule for what a held call offers. A plan (`exit_plan_mode`) is approved into
    /// a mode or sent back. A rule ("always") needs a prefix to make one of and is never
    /// offered for a dangerous command: one is approved once. A sandboxed command may be let
    /// out of its sandbox once.
    pub fn offered(tool: &str, prefix: &str, dangerous: bool, sandboxed: bool) -> Vec<Self> {
        if tool == EXIT_PLAN_MODE {
            return vec![DecisionKind::ApprovePlan, DecisionKind::Deny];
        }
        let mut offered = vec![DecisionKind::Approve];
        if sandboxed {
            offered.push(DecisionKind::ApproveUnsandboxed);
        }
        if !dangerous && !prefix.trim().is_empty() {
            offered.extend([
                DecisionKind::ApproveForSession,
                DecisionKind::ApproveForProject,
            ]);
        }
        offered.push(DecisionKind::Deny);
        offered
    }
}

/// What the user asks of the agent. Imperative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserCommand {
    /// A request. `@` mentions in `text` attach what they name; `attach` adds images the
    /// user gave apart from the text (`cairn exec --image`, a paste, the clipboard).
    Submit {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attach: Vec<Attachment>,
    },
    Decide {
        call: CallId,
        decision: Decision,
    },
    /// Stop the running stream and tools; every open call gets a `[cancelled]` result.
    Interrupt,
    SetMode {
        mode: Mode,
    },
    SetModel {
        model: String,
    },
    /// Ask for `AgentEvent::Models`: the provider's models (the `/model` picker). Answered in
    /// the background, also while a request runs.
    ListModels,
    /// Start a fresh session (the TUI's `/new`).
    NewSession,
    /// Ask for `AgentEvent::Sessions` (the `/resume` picker).
    ListSessions,
    /// Switch to a saved session; its history is replayed as events.
    Resume {
        session: SessionId,
    },
    /// Compact the conversation now (the TUI's `/compact [focus]`): prune old tool results,
    /// then summarise the older turns, keeping what `focus` names.
    Compact {
        focus: Option<String>,
    },
    /// Ask for `AgentEvent::CostReport` (the TUI's `/cost`).
    ShowCost,
    /// Ask for `ReportEvent::LanguageServers` with the listing (the TUI's `/lsp`).
    ShowLsp,
    /// Ask for `AgentEvent::RewindPoints` (the `/rewind` picker).
    ListRewindPoints,
    /// `/undo`, `/redo`, `/rewind`. With `apply` false only the plan is published
    /// (`AgentEvent::RestorePlan`, for the user to confirm); with `apply` true it is done
    /// (`AgentEvent::Restored`), judged again against the files as they are then.
    Restore {
        what: Restore,
        apply: bool,
    },
    /// Ask what reverting `target` would do now (`AgentEvent::RevertPreview` answers).
    PreviewRevert {
        target: RevertTarget,
    },
    /// Revert `target` as previewed: applied only when the files are still what `stamp` says.
    Revert {
        target: RevertTarget,
        stamp: String,
    },
    /// Trust the project's rules the start-up prompt showed (`UntrustedRules`): they apply
    /// from now on, also to a request already running, and their content is remembered.
    /// `AgentEvent::ProjectRulesTrusted` answers.
    TrustProjectRules,
    /// Trust the project skill `name` as it is now (its content hash is remembered), so its
    /// `allowed-tools` apply when it is active (`/skills trust NAME`).
    TrustSkill {
        name: String,
    },
    /// The user's own command (`!cmd`, `!!cmd`): run as the user (no gate, no sandbox) in the
    /// workspace, its output streamed as `ShellEvent`s. With `context` (`!cmd`) the command
    /// and its output (capped, secrets redacted) join the conversation for the model's next
    /// request; without (`!!cmd`) they stay in the transcript. While a request runs it waits
    /// for the next step boundary; `Interrupt` stops it (its whole process group).
    Shell {
        id: String,
        command: String,
        context: bool,
    },
    /// A message typed while the agent works ("steering"): it joins the conversation at the
    /// next step boundary (after the current tool results, before the next request); one that
    /// comes after the model's last step extends the request. With no request running it is
    /// a request of its own. `Delivered` says when it entered the conversation.
    Steer {
        id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attach: Vec<Attachment>,
    },
    /// Takes back a queued message or command not delivered yet. `sent`: it was sent as a
    /// `Steer`/`Shell` (`Withdrawn` answers when it was still waiting); otherwise the front
    /// end held it (queued for after the turn) and only the log is told.
    Withdraw {
        id: String,
        text: String,
        sent: bool,
    },
    /// Ask for `AgentEvent::Jobs` (the `/jobs` view). Answered at once, also mid-request.
    ListJobs,
    /// Ask for `AgentEvent::JobOutput`: the end of what `job` printed. Reading it does not
    /// move the model's `job_output` cursor.
    ShowJobOutput {
        job: String,
    },
    /// Stop `job` and everything it started (the user, from `/jobs`). The model is told in
    /// its next request.
    KillJob {
        job: String,
    },
    Shutdown,
}

/// The message `/continue` sends after an answer was cut at the output limit.
pub const CONTINUE_PROMPT: &str = "Your previous answer was cut off at the output limit. Continue it exactly where it stopped, without repeating what you already wrote.";

/// Project rules the user has not trusted yet (a cloned repository's `.cairn/config.toml`
/// may ship `allow = ["rm -rf"]`), as the start-up prompt lists them: they do not apply
/// until `UserCommand::TrustProjectRules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntrustedRules {
    /// The project config they come from.
    pub path: std::path::PathBuf,
    /// One rule a line, its kind first (`allow make`); empty when only processes ask.
    pub listing: Vec<String>,
    /// The project's processes (hooks) not trusted in their current content, one a line:
    /// kind, name, the command, the scripts it runs, and why it asks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<String>,
}

/// What happened. Past tense or a state; never a request.
// A finished command (its run and the files it changed) is the largest event; events are few
// per second, so boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    Tool(ToolEvent),
    /// A user's own command (`!cmd`, `!!cmd`).
    Shell(ShellEvent),
    /// A background job started or ended (live only: the log keeps the calls, not this).
    Job(JobEvent),
    /// A hook denied, changed a call's input or failed (the TUI's one-line card; `exec`
    /// prints it as a warning).
    Hook(HookNote),
    /// The session, the user's messages, the model's reply as it streams, the request's end.
    #[serde(untagged)]
    Conversation(ConversationEvent),
    /// Queued messages delivered, withdrawn or returned.
    #[serde(untagged)]
    Queue(QueueEvent),
    /// Figures, notices and answers to the user's questions (models, sessions, skills, cost).
    #[serde(untagged)]
    Report(ReportEvent),
    /// Rewind, restore and revert.
    #[serde(untagged)]
    TimeTravel(TimeTravelEvent),
    /// Answers to the user's questions about background jobs.
    #[serde(untagged)]
    JobList(JobListEvent),
}

/// The engine's ends of the bus.
pub struct EngineEnds {
    pub commands: mpsc::Receiver<UserCommand>,
    pub events: mpsc::UnboundedSender<AgentEvent>,
}

/// The front end's ends of the bus (TUI or headless printer).
pub struct FrontEnds {
    pub commands: mpsc::Sender<UserCommand>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
}

/// Commands are bounded (a user cannot outrun the engine); events are unbounded because a
/// dropped delta would corrupt the transcript.
pub fn channel() -> (EngineEnds, FrontEnds) {
    let (command_tx, command_rx) = mpsc::channel(64);
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    (
        EngineEnds {
            commands: command_rx,
            events: event_tx,
        },
        FrontEnds {
            commands: command_tx,
            events: event_rx,
        },
    )
}

#[cfg(test)]
#[path = "bus_tests.rs"]
mod tests;
