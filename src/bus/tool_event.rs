//! What happens to one tool call, and what a hook did to one.

use serde::{Deserialize, Serialize};

use super::{CallId, Decision, DecisionKind, ToolResult};
use crate::tool_output::FileChange;

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
        /// What the command's sandbox would let it reach beyond the workspace and temp dirs
        /// (the network, Unix sockets), when anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reach: Option<String>,
        /// The prefix "approve for the session" would allow.
        prefix: String,
        /// The answers on offer (`DecisionKind::offered`): the engine takes no other.
        #[serde(default)]
        decisions: Vec<DecisionKind>,
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
    /// A subagent this call runs moved on: its live card.
    Subagent {
        call: CallId,
        status: SubagentStatus,
    },
    /// One event of the subagent this call runs, as the child published it (its transcript,
    /// opened from the card; live, and again from its log on a resume or a replay). A
    /// grandchild's events come nested one level deeper.
    ChildEvent {
        call: CallId,
        inner: Box<super::AgentEvent>,
    },
}

/// Where a running subagent is, for its card in the parent's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentStatus {
    pub agent: String,
    pub description: String,
    /// Its own session (`cairn replay` opens it).
    pub session: String,
    pub step: u64,
    /// The tool it runs now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub tokens: u64,
    /// One of its calls waits for the user's approval.
    #[serde(default)]
    pub waiting: bool,
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
