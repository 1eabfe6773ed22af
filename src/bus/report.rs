//! Figures, notices and the answers to the user's questions: usage and context, warnings,
//! models, sessions, skills, cost, the project's rules.

use serde::{Deserialize, Serialize};

use super::{CostRow, Mode, SessionId, Usage};

/// Figures, notices and answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReportEvent {
    Usage(Usage),
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
    /// Answer to `UserCommand::ListSessions`: this directory's sessions first, then the
    /// others (each newest first). `here` is the directory the session works in; a session
    /// recorded elsewhere resumes only there.
    Sessions {
        sessions: Vec<SessionSummary>,
        #[serde(default)]
        here: String,
    },
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
        /// The summary that took the older messages' place, when there is one (the user
        /// can open it under the compaction's line).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// Answer to `UserCommand::ShowCost`: every model request of the session.
    CostReport {
        rows: Vec<CostRow>,
    },
    /// The language servers' states for the status line (`indicator`: `rust-analyzer
    /// ready`; none before any started), sent when they change; with `listing` (every
    /// server, why one does not run, the log path) as the answer to `UserCommand::ShowLsp`.
    LanguageServers {
        indicator: Option<String>,
        listing: Option<String>,
    },
    /// The MCP servers' prompts (the `/` palette's `/mcp:server:name`) and resources (the
    /// `@` finder's `@server:uri`), sent once every server's start ended, when there are any.
    McpOfferings {
        prompts: Vec<McpPromptLine>,
        resources: Vec<McpResourceLine>,
    },
}

/// An MCP server's prompt as the `/` palette offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPromptLine {
    /// The command, with its `/`: `/mcp:server:name`.
    pub command: String,
    /// Its arguments: `<required> [optional]`.
    pub args: String,
    pub description: String,
    pub server: String,
}

/// An MCP server's resource as the `@` finder offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpResourceLine {
    /// How it is mentioned, without the `@`: `server:uri`.
    pub mention: String,
    pub name: String,
}

/// One saved session, as `cairn sessions` and the resume picker show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: SessionId,
    /// RFC 3339 start time.
    pub started: String,
    pub cwd: String,
    pub first_prompt: String,
    /// A subagent's session: its parent's id (listed under it, never continued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
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

fn is_zero(n: &usize) -> bool {
    *n == 0
}
