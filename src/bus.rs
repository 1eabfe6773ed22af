//! The event bus: typed commands into the engine and typed events out of it.
//! The agent publishes `AgentEvent`s after recording them in the session log; the TUI and the
//! headless printer are two consumers of the same stream and send `UserCommand`s back.

use std::fmt;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::tool_output::FileChange;

mod attachments;
mod end_reason;
mod jobs;
mod mode;
mod restore;
mod shell;
mod tool_result;
mod usage;
pub use attachments::{Attachment, ImageChip};
pub use end_reason::EndReason;
pub use jobs::{JobEnd, JobEvent, JobKiller, JobLine};
pub use mode::Mode;
pub use restore::{
    ChangeSource, FileConflict, Restore, RestorePlan, RevertConflict, RevertFile, RevertMismatch,
    RevertPlan, RevertTarget, RewindPoint, diff_fingerprint,
};
pub use shell::ShellEvent;
pub use tool_result::ToolResult;
pub use usage::{CostRow, Usage};

/// How a held command's `why` says what its sandbox would let it reach beyond the workspace
/// (Unix sockets, the network): `"<reason>; in its sandbox it may …"`. The approval prompt
/// shows that part on its "sandboxed:" line.
pub const SANDBOX_REACH: &str = "in its sandbox it may ";

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

/// One saved session, as `cairn sessions` and the resume picker show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: SessionId,
    /// RFC 3339 start time.
    pub started: String,
    pub cwd: String,
    pub first_prompt: String,
}

/// The message `/continue` sends after an answer was cut at the output limit.
pub const CONTINUE_PROMPT: &str = "Your previous answer was cut off at the output limit. Continue it exactly where it stopped, without repeating what you already wrote.";

/// What happened to one tool call. Tagged `event`, not `type`: it travels inside
/// `AgentEvent::Tool`, whose own `type` tag shares the object (`{"type":"tool","event":…}`),
/// and a second `type` key would make every tool event a JSON object with a duplicate key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ToolEvent {
    /// The model asked for the call: it is checked and queued, not yet running.
    Requested {
        call: CallId,
        name: String,
        args: serde_json::Value,
    },
    /// The call really started running (after approval and after the calls it waits for).
    Started {
        call: CallId,
    },
    /// The gate holds the call until a `UserCommand::Decide` for it arrives.
    AwaitingApproval {
        call: CallId,
        name: String,
        /// The command, or the path for writes.
        subject: String,
        why: String,
        sandboxed: bool,
        /// The prefix "approve for the session" would allow.
        prefix: String,
        /// Every dangerous part of a held command, as `words — reason`, as the gate judged
        /// them in the workspace: the prompt lists them all and offers no "always" rule.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        dangers: Vec<String>,
        /// For a held write or edit: the change it would make.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<FileChange>,
    },
    Decided {
        call: CallId,
        decision: Decision,
    },
    /// The call runs unasked, but the user should know: it writes a file their own tools run
    /// or obey later (`.envrc`, `.vscode/tasks.json`, ...). Shown on the call's card.
    Warned {
        call: CallId,
        message: String,
    },
    /// A piece of a running command's output, for the live tail.
    OutputTail {
        call: CallId,
        chunk: String,
    },
    Finished {
        call: CallId,
        name: String,
        result: ToolResult,
    },
}

/// What a hook did that the user must see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookAct {
    /// It denied (what it guards does not happen; a `stop` hook sends the model on).
    Denied,
    /// It put another input in place of the call's (judged by the gate again).
    ChangedInput,
    /// It failed, and as a guard that fails closed it denies.
    FailedDenies,
    /// It failed; a guard with `on_error = "allow"` lets the call go on.
    FailedAllowed,
    /// It failed (a hook that only informs: nothing is stopped).
    Failed,
}

impl HookAct {
    /// The card's verb.
    pub fn label(self) -> &'static str {
        match self {
            HookAct::Denied => "denied",
            HookAct::ChangedInput => "changed the call's input",
            HookAct::FailedDenies => "failed, so it denies",
            HookAct::FailedAllowed => "failed (on_error = \"allow\": going on)",
            HookAct::Failed => "failed",
        }
    }
}

/// One hook's denial, changed input or failure, for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookNote {
    /// The event it ran for (`pre_tool`, ...).
    pub event: String,
    /// Its name: `pre_tool #1 (.cairn/config.toml)`.
    pub hook: String,
    /// Its command.
    pub command: String,
    pub act: HookAct,
    /// Its reason, what went wrong, or the input it put in place (cut).
    pub why: String,
}

impl HookNote {
    /// The note as one line of text (`exec`'s warning, `cairn hooks test`, the clipboard).
    pub fn text(&self) -> String {
        let why = if self.why.is_empty() {
            String::new()
        } else {
            format!(": {}", self.why)
        };
        format!("hook {} {}{why}", self.hook, self.act.label())
    }
}

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

/// One skill of the session, as `/skills` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillLine {
    pub name: String,
    /// As the model's list shows it (shortened when the budget made it so).
    pub description: String,
    /// Its `SKILL.md`.
    pub path: String,
    /// Where it was found: `.cairn/skills`, `~/.claude/skills`, …
    pub origin: String,
    pub status: SkillStatus,
}

/// What became of a skill in the model's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillStatus {
    Listed,
    /// Listed with its description cut to fit the budget.
    Shortened,
    /// Left out of the list: over the budget.
    Omitted,
    /// `disable-model-invocation`: never listed, `/name` only.
    UserOnly,
}

impl SkillStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SkillStatus::Listed => "listed",
            SkillStatus::Shortened => "shortened",
            SkillStatus::Omitted => "omitted",
            SkillStatus::UserOnly => "/name only",
        }
    }
}

/// What happened. Past tense or a state; never a request.
// A finished command (its run and the files it changed) is the largest event; events are few
// per second, so boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    SessionStarted {
        session: SessionId,
        provider: String,
        model: String,
        mode: Mode,
        context_window: u64,
        resumed: bool,
    },
    /// A user message entered the conversation (also replayed on resume), with the images
    /// attached to it (from `@`, a paste, Ctrl+V or `--image`), for their chips.
    UserMessage {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageChip>,
        /// What the user typed, when `text` (what the model got) expands it: a `/name args`
        /// command or skill, `/init`. The transcript shows this.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        typed: Option<String>,
    },
    /// A user request began: one `RequestEnded` follows, after all its steps.
    RequestStarted,
    /// One model step of the request began (a reply, then its tool calls); one `StepEnded`
    /// with the same id follows before the next step or the request's end.
    StepStarted {
        #[serde(rename = "turn")]
        step: StepId,
    },
    StepEnded {
        #[serde(rename = "turn")]
        step: StepId,
    },
    TextDelta {
        #[serde(rename = "turn")]
        step: StepId,
        text: String,
    },
    ReasoningDelta {
        #[serde(rename = "turn")]
        step: StepId,
        text: String,
    },
    /// The assistant message of a step is complete (also replayed on resume).
    AssistantMessage {
        #[serde(rename = "turn")]
        step: StepId,
        text: String,
        reasoning: String,
    },
    /// The model request failed and is tried again after `wait_ms`: the reply starts over,
    /// so text and reasoning streamed since `StepStarted` are void.
    Retrying {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
    Usage(Usage),
    Tool(ToolEvent),
    /// A user's own command (`!cmd`, `!!cmd`).
    Shell(ShellEvent),
    /// A queued message (`UserCommand::Steer`) entered the conversation after model step
    /// `step` of the session.
    Delivered {
        id: String,
        step: u64,
    },
    /// A queued message or command was taken back before it was delivered.
    Withdrawn {
        id: String,
    },
    /// Queued messages the request ended without (interrupted, failed, denied): not
    /// delivered, back with the user, who decides again.
    Returned {
        ids: Vec<String>,
    },
    ModeChanged {
        mode: Mode,
    },
    ModelChanged {
        model: String,
    },
    /// Answer to `UserCommand::ListModels`: the models to offer, the configured one first
    /// (then the current one, then what the provider's `/models` listed, in its order);
    /// `unavailable` says why the provider's list is missing, when it is.
    Models {
        models: Vec<String>,
        /// The model of the configuration (empty when none was configured).
        configured: String,
        unavailable: Option<String>,
    },
    /// Something the user should know that did not end the request.
    Warning {
        message: String,
    },
    /// A hook denied, changed a call's input or failed (the TUI's one-line card; `exec`
    /// prints it as a warning).
    Hook(HookNote),
    /// Answer to `UserCommand::TrustProjectRules`: the `rules` rules of `path` apply now,
    /// and `processes` of the project's hooks run from their next call.
    ProjectRulesTrusted {
        path: std::path::PathBuf,
        rules: usize,
        #[serde(default, skip_serializing_if = "is_zero")]
        processes: usize,
        /// Why the decision could not be remembered (then they apply for this session only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unremembered: Option<String>,
    },
    /// The start-up check of the model endpoint (TUI only) is done: `problem` is `None` when
    /// it answered, else what the user should check (the URL, the key variable).
    EndpointChecked {
        problem: Option<String>,
    },
    /// The session's skills and what became of each in the model's list (sent at the start of
    /// a session; `/skills` shows it). `budget` is the characters the list may take.
    Skills {
        skills: Vec<SkillLine>,
        budget: usize,
    },
    /// The request that `RequestStarted` opened is over; `last_step` is its last step.
    RequestEnded {
        #[serde(rename = "turn")]
        last_step: StepId,
        reason: EndReason,
    },
    /// The agent is idle and waits for the next `Submit`.
    Idle,
    /// Answer to `UserCommand::ListSessions`: this directory's sessions first, then the
    /// others (each newest first). `here` is the directory the session works in; a session
    /// recorded elsewhere resumes only there.
    Sessions {
        sessions: Vec<SessionSummary>,
        #[serde(default)]
        here: String,
    },
    /// The conversation was replaced (new or resumed session): clear the transcript, diffs and
    /// todos; the history of a resumed session follows as ordinary events.
    Reset,
    /// How full the context window is: `used` tokens (the last reported prompt and reply plus
    /// an estimate of what was added since) of `window`; and the session's cost so far.
    Context {
        used: u64,
        window: u64,
        /// Dollars, when the model's prices are known.
        cost_usd: Option<f64>,
    },
    /// What every model request of the session used in all (also the requests of branches a
    /// rewind left: tokens paid for stay counted), and how many there were. Sent with each
    /// `Context`; the status line's counters follow it.
    SessionUsage {
        totals: Usage,
        requests: u64,
    },
    /// The conversation was compacted (also replayed on resume): `pruned` old tool results
    /// were replaced by stubs and `summarized` older messages by a summary.
    Compacted {
        before: u64,
        after: u64,
        pruned: usize,
        summarized: usize,
    },
    /// Answer to `UserCommand::ShowCost`: every model request of the session.
    CostReport {
        rows: Vec<CostRow>,
    },
    /// Answer to `UserCommand::ListRewindPoints`: the current branch's user messages, newest
    /// first.
    RewindPoints {
        points: Vec<RewindPoint>,
    },
    /// What a `Restore` would do, for the user to confirm.
    RestorePlan {
        what: Restore,
        plan: RestorePlan,
    },
    /// A `Restore` was done: the files it changed and the ones it left alone.
    Restored {
        what: Restore,
        done: RestorePlan,
    },
    /// The conversation was rewound to just before the user message `at` (whose text
    /// follows); live, the transcript of the new branch was replayed after a `Reset`. In a
    /// replay it marks where a branch was left.
    Rewound {
        at: usize,
        text: String,
    },
    /// Answer to `PreviewRevert` (and to a `Revert` whose files moved since the preview:
    /// then `moved` is true and nothing was changed).
    RevertPreview {
        target: RevertTarget,
        /// What is reverted, in words: "hunk 2 of the edit of src/lib.rs".
        what: String,
        plan: RevertPlan,
        #[serde(default)]
        moved: bool,
    },
    /// The user reverted a change (also replayed on resume). `changes` are the revert's own
    /// diffs: the diff pane shows them as a change of source `Revert(id)`.
    Reverted {
        id: String,
        target: RevertTarget,
        what: String,
        changes: Vec<FileChange>,
    },
    /// A background job started or ended (live only: the log keeps the calls, not this).
    Job(JobEvent),
    /// Answer to `UserCommand::ListJobs`: the jobs of this run of the session, oldest first.
    Jobs {
        jobs: Vec<JobLine>,
    },
    /// Answer to `UserCommand::ShowJobOutput`: the last of each stream, cleaned for a
    /// terminal like the model's view.
    JobOutput {
        job: JobLine,
        stdout: String,
        stderr: String,
    },
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

fn is_zero(n: &usize) -> bool {
    *n == 0
}
