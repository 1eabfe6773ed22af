//! The permission gate: every call passes it before it runs. It turns the call's `Access`,
//! the mode and the rules into run / ask / deny, with a reason a person can read, and answers
//! with everything the agent and the approval prompt need (`answer`: the sandbox, the dangers).
//! `classify` parses commands (with `commands`, `wrappers`, `fan_out`, `file_commands`, `dev_commands`,
//! `git`, `git_repo`, `git_values`, `outward`, `text_tools`, `builtins`, `arithmetic`, `assigning`, `redirects`, `opts`, `words`,
//! `locations`, `mentions`, `load`, `ps`),
//! `rules` holds prefix rules (`prefixes`: what approving offers), `policy` is the gate. The
//! sandbox commands run in lives with the process service (`process::sandbox`).

pub mod answer;
pub mod classify;
pub mod file_access;
pub mod mcp_calls;
pub mod plan;
pub mod policy;
pub mod prefixes;
pub mod project_file;
pub mod read_runs;
pub mod rules;
pub mod run_later;
pub mod trust;
pub mod web_hosts;

use crate::tools::Access;

use crate::bus::Mode;
pub use answer::{Answer, Call};

/// The gate's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    /// Hold the call for the user. `prefix` is what "approve for the session" would allow.
    Ask {
        why: String,
        prefix: String,
    },
    /// Refuse without asking (a deny rule).
    Deny {
        why: String,
    },
}

/// Decides whether a call runs, asks or is refused.
pub trait PermissionGate: Send + Sync {
    /// What the rules and the mode say about a call.
    fn check(&self, tool: &str, access: &Access, mode: Mode) -> Verdict;
    /// The whole answer the agent acts on: `check`'s verdict (a command the sandbox refused
    /// before asks again), the sandbox a command gets and its dangerous parts.
    fn answer(&self, call: &Call<'_>) -> Answer;
    /// Puts more rules in force (a project's, once the user trusted them).
    fn add_rules(&self, more: rules::RuleSet);
    /// "Approve this prefix for the session": later calls it covers run without asking.
    fn allow_for_session(&self, prefix: &str);
    /// Forgets every "approve for the session" rule (the session was replaced).
    fn clear_session_rules(&self);
    /// Allows `prefixes` while a skill is active (its `allowed-tools`, already judged
    /// trusted); deny rules, protected paths and the sandbox still apply.
    fn grant_for_skill(&self, _prefixes: &[String]) {}
    /// The skill's turn is over: its grants end.
    fn end_skill_grants(&self) {}
    /// What a call of `tool` returned to the model: in `auto`, a fetch whose URL carries a
    /// run of it asks (`read_runs`).
    fn note_read(&self, _tool: &str, _text: &str) {}
    /// The gate's own judgement of a command (read-only or not, and why); None for a gate
    /// that does not classify commands (a read-only agent then refuses every command).
    fn classify(&self, _command: &str) -> Option<classify::Classification> {
        None
    }
    /// Whether `bash` commands run sandboxed.
    fn sandboxed(&self) -> bool {
        false
    }
    /// Why writing `path` (real, or relative to the workspace) makes the user's own tools run
    /// something later (`.envrc`, `.vscode/`, a repository's `config`, ...); None for other
    /// files. The agent warns when such a write runs unasked and flags a command's.
    fn runs_later(&self, _path: &std::path::Path) -> Option<String> {
        None
    }
}
