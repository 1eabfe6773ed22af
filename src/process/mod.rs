//! How cairn runs another program, for whoever asks: the bash tool and its jobs, the user's
//! `!cmd`, hooks, MCP stdio servers, language servers. Each runs in its own session and
//! process group with a scrubbed environment, limits, optionally the Landlock sandbox, output
//! captured by reader threads into a bounded `Capture` (or, for a server, its pipes open), and
//! a group kill (SIGTERM, then SIGKILL after a grace period) that leaves no child, grandchild
//! or background leftover alive. A caller says what to run as a `Program` (an argv, not a
//! shell line) and gets it back finished (`run_program`) or serving (`serve`).

mod ansi;
pub mod capture;
mod cgroup;
mod fds;
mod group;
pub mod limits;
pub mod net_env;
pub mod protect;
pub mod reaper;
mod ring;
mod run;
pub mod sandbox;
mod served;
pub mod server_env;
mod spawn;

use crate::sync::MutexExt;
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::process::Child;

pub use capture::{Capture, View, Which};
pub use group::{Group, GroupGuard};
pub use run::{ForegroundEnd, OnTimeout, check, drain, run, run_program, signal_name, start_tail};
pub use sandbox::{Grant, SandboxPolicy};
pub use served::{Served, serve};
pub use spawn::{Input, hidden_vars, spawn_program};

/// How commands run, from the configuration: what the environment hides and lets through,
/// the kill grace, the sandbox, the limits and the network variables.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Environment variables removed from every command (the provider's key and the like).
    pub hidden_env: Vec<String>,
    /// Variables that look secret but the user lets through.
    pub allowed_env: Vec<String>,
    /// Grace period between SIGTERM and SIGKILL.
    pub kill_grace: std::time::Duration,
    /// Whether commands run in the Landlock sandbox, and what it allows.
    pub sandbox: Option<sandbox::SandboxPolicy>,
    /// Process and memory limits per command.
    pub limits: limits::CommandLimits,
    /// The proxy and CA variables of commands that may use the network.
    pub network_env: net_env::NetworkEnv,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            hidden_env: Vec::new(),
            allowed_env: Vec::new(),
            kill_grace: std::time::Duration::from_secs(3),
            sandbox: None,
            limits: limits::CommandLimits::default(),
            network_env: net_env::NetworkEnv::default(),
        }
    }
}

/// Receives live output of a running command, for the UI's tail.
pub type TailSink = Arc<dyn Fn(&str) + Send + Sync>;
use sandbox::PreparedSandbox;

/// A shell command to run and where: `bash -c COMMAND`.
pub struct CommandSpec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub settings: &'a Settings,
    /// How much the sandbox allows this command (when the sandbox is on).
    pub grant: Grant,
}

impl CommandSpec<'_> {
    /// The command as a program: `bash -c COMMAND`.
    pub fn program(&self) -> Program<'_> {
        Program::new(
            ["bash", "-c", self.command],
            self.cwd,
            self.settings,
            self.grant,
        )
    }
}

/// A program to run, as its argv (no shell in between unless the argv names one), where, how
/// (the settings: environment, limits, sandbox policy) and in which sandbox (`grant`), with
/// variables of its own on top of the scrubbed environment.
#[derive(Debug, Clone)]
pub struct Program<'a> {
    pub argv: Vec<OsString>,
    pub cwd: &'a Path,
    pub settings: &'a Settings,
    pub grant: Grant,
    /// Set after the environment is scrubbed: they reach the program whatever they look like.
    pub env: Vec<(OsString, OsString)>,
}

impl<'a> Program<'a> {
    pub fn new(
        argv: impl IntoIterator<Item = impl Into<OsString>>,
        cwd: &'a Path,
        settings: &'a Settings,
        grant: Grant,
    ) -> Self {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd,
            settings,
            grant,
            env: Vec::new(),
        }
    }

    /// The same program with `name=value` in its environment.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }
}

/// A started process: its main child, its group and its output.
pub struct Spawned {
    pub child: Child,
    pub group: Group,
    pub capture: Arc<Capture>,
    pub sandboxed: bool,
    pub started: Instant,
    /// The command's sandbox (its private temp dir is removed when this is dropped).
    pub sandbox: Option<PreparedSandbox>,
    /// When the main child started (clock ticks after boot): orphans started since are its.
    pub start_ticks: Option<u64>,
    /// The protected set as it was before a foreground workspace-write command (which may
    /// write the whole workspace): checked and put back once nothing of it runs.
    pub guard: Option<protect::ProtectedSet>,
    /// Its process and memory limits (its cgroup is removed when this is dropped).
    pub bounds: limits::Bounds,
}

/// Commands the sandbox refused in this session.
#[derive(Debug, Default)]
pub struct SandboxRefusals(std::sync::Mutex<std::collections::HashSet<String>>);

impl SandboxRefusals {
    pub fn add(&self, command: &str) {
        self.lock().insert(command.to_owned());
    }

    pub fn contains(&self, command: &str) -> bool {
        self.lock().contains(command)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.0.locked()
    }
}

/// How a foreground run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited,
    TimedOut,
    Cancelled,
}

/// A finished foreground run.
pub struct Finished {
    pub status: ExitStatus,
    pub ending: Ending,
    pub capture: Arc<Capture>,
    pub sandboxed: bool,
    pub duration: Duration,
    /// What of the protected set (git config and hooks, `.cairn/`) the command changed and
    /// cairn put back.
    pub put_back: Vec<protect::PutBack>,
    /// The Unix sockets the sandbox refused it (paths, or kinds of socket).
    pub refused_sockets: Vec<String>,
    /// Its limits, to tell which it hit (`Bounds::hits`).
    pub bounds: limits::Bounds,
}

/// How long a command may live, which decides how its sandbox grants the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// Awaited by the call: checked afterwards, so it may write the whole workspace.
    Foreground,
    /// A background job: nothing checks it after, so `.git` and `.cairn` stay out of reach.
    Background,
}

/// Starts `bash -c COMMAND` (inside its sandbox when the sandbox is on) with reader threads
/// on both pipes and stdin from `/dev/null`.
pub fn spawn(
    spec: &CommandSpec<'_>,
    keep_tail: bool,
    lifetime: Lifetime,
) -> std::io::Result<Spawned> {
    spawn_program(&spec.program(), Input::Null, keep_tail, lifetime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_variables_are_hidden_unless_allowed() {
        let settings = Settings {
            hidden_env: vec!["DEEPSEEK_KEY".into()],
            allowed_env: vec!["GITHUB_TOKEN".into(), "WAYLAND_DISPLAY".into()],
            ..Settings::default()
        };
        let vars = [
            ("HOME", "/home/u"),
            ("OPENAI_API_KEY", "sk-1"),
            ("GITHUB_TOKEN", "ghp"),
            ("NPM_TOKEN", "n"),
            ("AWS_SECRET_ACCESS_KEY", "a"),
            ("DB_PASSWORD_FILE", "/x"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("TMUX", "/tmp/tmux-1000/default,4242,0"),
            ("DATABASE_URL", "postgres://app:hunter2@db/app"),
            ("DISPLAY", ":0"),
            ("PLAIN_URL", "https://example.com/a@b"),
            ("WAYLAND_DISPLAY", "wayland-0"),
            ("PATH", "/bin"),
        ];
        let hidden = hidden_vars(
            &settings,
            vars.iter()
                .map(|(n, v)| (OsString::from(n), OsString::from(v))),
        );
        let hidden: Vec<&str> = hidden.iter().filter_map(|n| n.to_str()).collect();
        assert_eq!(
            hidden,
            [
                "OPENAI_API_KEY",
                "NPM_TOKEN",
                "AWS_SECRET_ACCESS_KEY",
                "DB_PASSWORD_FILE",
                "SSH_AUTH_SOCK",
                "TMUX",
                "DATABASE_URL",
                "DISPLAY",
                "DEEPSEEK_KEY"
            ]
        );
    }
}
