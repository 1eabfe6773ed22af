//! Hooks: the user's own programs at fixed points of a session (SPEC §11.9): `pre_tool`,
//! `post_tool`, `user_prompt`, `stop`, `session_start`, `pre_compact`, `notification`. They
//! come from the user's config and `--config` (`config::HooksFile`), a project's
//! `.cairn/config.toml`, and Claude Code's `~/.claude/settings.json` and
//! `.claude/settings.json` (`load`, `claude`). The agent calls `Hooks::run` at each point;
//! `input` builds what a hook reads on stdin, `spawn` runs it (its own process group, the
//! scrubbed environment, killed at its timeout, output capped; a project's hooks in the
//! workspace-write sandbox and only while `trust::ProcessTrust` says their content is trusted),
//! `answer` reads its exit code and stdout, and `outcome` folds the answers of every matching
//! hook: the first deny wins, and a guard (`pre_tool`, `user_prompt`) that fails denies unless
//! it says `on_error = "allow"`.

pub mod answer;
pub mod claude;
pub mod input;
pub mod load;
pub mod outcome;
mod spawn;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

pub use crate::config::OnError;
pub use input::{Context, Subject};
pub use load::{LoadError, Loaded, load};
pub use outcome::{Blocked, HookRun, Outcome};

/// The points of a session where hooks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Before a call the gate let through (or would ask about) is carried out.
    PreTool,
    /// After a call's result, before the model sees it.
    PostTool,
    /// Before the user's message is sent.
    UserPrompt,
    /// When the model ends a turn (answers without tool calls).
    Stop,
    SessionStart,
    PreCompact,
    /// An approval waits, or a turn ended.
    Notification,
}

impl Event {
    pub const ALL: [Event; 7] = [
        Event::PreTool,
        Event::PostTool,
        Event::UserPrompt,
        Event::Stop,
        Event::SessionStart,
        Event::PreCompact,
        Event::Notification,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Event::PreTool => "pre_tool",
            Event::PostTool => "post_tool",
            Event::UserPrompt => "user_prompt",
            Event::Stop => "stop",
            Event::SessionStart => "session_start",
            Event::PreCompact => "pre_compact",
            Event::Notification => "notification",
        }
    }

    /// Claude Code's name for the event.
    pub fn claude_name(self) -> &'static str {
        match self {
            Event::PreTool => "PreToolUse",
            Event::PostTool => "PostToolUse",
            Event::UserPrompt => "UserPromptSubmit",
            Event::Stop => "Stop",
            Event::SessionStart => "SessionStart",
            Event::PreCompact => "PreCompact",
            Event::Notification => "Notification",
        }
    }

    /// The event of a name in either spelling (`pre_tool`, `PreToolUse`).
    pub fn parse(name: &str) -> Option<Event> {
        Self::ALL
            .into_iter()
            .find(|e| e.as_str() == name || e.claude_name() == name)
    }

    /// A guard: a hook that fails denies what it guards (unless `on_error = "allow"`).
    pub fn guards(self) -> bool {
        matches!(self, Event::PreTool | Event::UserPrompt)
    }

    /// The event concerns one tool call: its hooks' matchers apply.
    pub fn is_tool(self) -> bool {
        matches!(self, Event::PreTool | Event::PostTool)
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which conventions a hook follows: its stdin, and what its exit codes mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookFormat {
    /// cairn's: exit 0 no opinion (or a JSON answer), 2 deny, anything else a failure.
    Cairn,
    /// Claude Code's: its keys on stdin; exit 2 denies, other codes only warn; a timeout, a
    /// signal or a command that cannot start deny (where Claude Code lets the call run).
    Claude,
}

/// Where a hook was configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookOrigin {
    /// The file that defines it.
    pub file: PathBuf,
    /// From the project's files: runs only when trusted, in the workspace-write sandbox.
    pub project: bool,
    pub format: HookFormat,
}

impl HookOrigin {
    /// `user config`, `project .claude/settings.json`, ... for listings.
    pub fn label(&self) -> String {
        let whose = if self.project { "project" } else { "user" };
        let name = match self.format {
            HookFormat::Cairn if self.project => ".cairn/config.toml".to_string(),
            HookFormat::Cairn => self.file.display().to_string(),
            HookFormat::Claude if self.project => ".claude/settings.json".to_string(),
            HookFormat::Claude => "~/.claude/settings.json".to_string(),
        };
        format!("{whose} {name}")
    }
}

/// One configured hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// `pre_tool #1`: the event and its place among the event's hooks of its file, with the
    /// file: what notices and the log call it.
    pub name: String,
    pub event: Event,
    /// Matched whole against the tool's name (cairn's, or Claude's spelling for a Claude
    /// hook). `None`: every tool.
    pub matcher: Option<regex::Regex>,
    pub command: String,
    pub timeout: Duration,
    pub on_error: OnError,
    pub origin: HookOrigin,
    /// For a project hook: what its trust is judged by.
    pub process: Option<crate::trust::ProjectProcess>,
    /// A project hook not trusted when the session started: it is left out until the user
    /// trusts it as it is (`cairn hooks trust`), then runs, also in this session.
    pub awaiting_trust: bool,
}

impl Hook {
    /// Whether the hook runs for a call of `tool` (cairn's name). Hooks of other events
    /// than the tool events run whatever the tool.
    pub fn matches(&self, tool: Option<&str>) -> bool {
        let (Some(matcher), Some(tool)) = (&self.matcher, tool) else {
            return true;
        };
        let name = match self.origin.format {
            HookFormat::Cairn => std::borrow::Cow::Borrowed(tool),
            HookFormat::Claude => claude::tool_name(tool),
        };
        matcher.is_match(&name)
    }

    /// What the user reads about it in `cairn hooks list`: name, origin, matcher, command.
    pub fn describe(&self) -> String {
        let matcher = self
            .matcher
            .as_ref()
            .map(|m| format!(" matcher {}", trim_anchors(m.as_str())))
            .unwrap_or_default();
        let on_error = match self.on_error {
            OnError::Allow => " on_error=allow",
            OnError::Deny => "",
        };
        format!(
            "{} ({}){matcher} timeout {}s{on_error}: {}",
            self.name,
            self.origin.label(),
            self.timeout.as_secs(),
            self.command
        )
    }
}

fn trim_anchors(pattern: &str) -> &str {
    pattern
        .strip_prefix("^(?:")
        .and_then(|p| p.strip_suffix(")$"))
        .unwrap_or(pattern)
}

/// How hooks are run: the workspace, and the settings their processes get (the scrubbed
/// environment, the sandbox a project's hooks run in, the kill grace).
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    pub workspace: PathBuf,
    pub process: crate::process::Settings,
}

/// Every hook of a session, in config order: the user's (config, `--config`, Claude's user
/// settings), then the project's (`.cairn/config.toml`, `.claude/settings.json`).
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pub hooks: Vec<Hook>,
    /// How often `stop` hooks may send the model back in one turn.
    pub max_stop_blocks: u32,
    pub run: RunSettings,
    /// Judges the project's hooks before every run (an edited script is caught).
    pub trust: Option<crate::trust::ProcessTrust>,
}

/// The default of `max_stop_blocks`.
pub const MAX_STOP_BLOCKS: u32 = 3;
/// The default of `timeout_secs` (Claude Code's hooks default to 60, as there).
pub const TIMEOUT_SECS: u64 = 30;

impl Hooks {
    pub fn none() -> Arc<Hooks> {
        Arc::new(Hooks {
            max_stop_blocks: MAX_STOP_BLOCKS,
            ..Hooks::default()
        })
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Whether any hook would run for `event` (and `tool`).
    pub fn any(&self, event: Event, tool: Option<&str>) -> bool {
        self.matching(event, tool).next().is_some()
    }

    fn matching(&self, event: Event, tool: Option<&str>) -> impl Iterator<Item = &Hook> {
        self.hooks
            .iter()
            .filter(move |h| h.event == event && h.matches(tool))
    }

    /// Runs every hook of `event` that matches, in config order, and folds their answers (see
    /// `outcome`). A deny stops the chain: the hooks after it do not run. An input a hook
    /// changed is what the hooks after it see.
    pub async fn run(
        &self,
        event: Event,
        cx: &Context,
        subject: &Subject,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Outcome {
        let tool = subject.tool_name();
        let mut outcome = Outcome::default();
        let mut subject = subject.clone();
        for hook in self.matching(event, tool.as_deref()) {
            if hook.awaiting_trust && self.check_trust(hook).is_err() {
                continue;
            }
            let run = self.run_one(hook, cx, &subject, cancel).await;
            if let Some(updated) = &run.updated_input {
                subject.set_arguments(updated.clone());
            }
            let stop = outcome.add(hook, run);
            if stop || cancel.is_cancelled() {
                break;
            }
        }
        outcome
    }

    /// Runs one hook: its trust first (a project hook whose config or scripts changed since
    /// they were trusted does not run: it fails), then the process, then its answer.
    async fn run_one(
        &self,
        hook: &Hook,
        cx: &Context,
        subject: &Subject,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> answer::Interpreted {
        if let Err(failure) = self.check_trust(hook) {
            return answer::Interpreted::failed(failure, std::time::Duration::ZERO);
        }
        let stdin = input::stdin_json(hook, cx, subject);
        let ran = spawn::run_hook(hook, &self.run, cx, stdin, cancel).await;
        let mut read = answer::interpret(hook.origin.format, hook.event, &ran);
        // A changed input means something only for a call; Claude's is in Claude's keys.
        read.updated_input = match (subject.tool_name(), read.updated_input.take()) {
            (Some(tool), Some(input)) if hook.origin.format == HookFormat::Claude => {
                Some(claude::from_tool_input(&tool, input))
            }
            (Some(_), input) => input,
            (None, _) => None,
        };
        read
    }

    fn check_trust(&self, hook: &Hook) -> Result<(), answer::Failure> {
        let Some(process) = &hook.process else {
            return Ok(());
        };
        let Some(trust) = &self.trust else {
            return Err(answer::Failure::Untrusted("no trust store".into()));
        };
        match trust.judge(process) {
            Ok(judged) if judged.trusted() => Ok(()),
            Ok(judged) => Err(answer::Failure::Untrusted(judged.listing())),
            Err(err) => Err(answer::Failure::Untrusted(err.to_string())),
        }
    }
}
