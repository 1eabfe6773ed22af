//! The command line (SPEC §10). Spellings here are a public interface: keep them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::bus::Mode;
use crate::config::FlagLayer;

#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A terminal coding agent",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags shared by the full-screen UI and `exec`.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// How much runs without asking: ask, auto-edit (default), auto, never.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Provider preset: deepseek (default), openai, anthropic, openrouter, ollama, custom.
    #[arg(long)]
    pub provider: Option<String>,
    /// Model name as the provider spells it.
    #[arg(long)]
    pub model: Option<String>,
    /// API root including its version, e.g. http://localhost:11434/v1.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Wire format: chat (OpenAI-compatible chat completions), anthropic (Messages API),
    /// responses (OpenAI Responses API). Default: the preset's.
    #[arg(long, value_parser = parse_api)]
    pub api: Option<crate::llm::Api>,
    /// Reasoning effort for the formats that take one (chat, responses): minimal, low,
    /// medium, high.
    #[arg(long)]
    pub reasoning_effort: Option<String>,
    /// Anthropic thinking budget in tokens (thinking is off without it).
    #[arg(long)]
    pub thinking_budget: Option<u32>,
    /// An extra config file, over the user's own.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Model requests allowed per prompt.
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// Resume the latest session of this directory.
    #[arg(long, conflicts_with = "resume")]
    pub r#continue: bool,
    /// Resume a session by id (a picker when no id is given).
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// Apply the project's `.cairn/config.toml` rules without asking, for this run (they are
    /// otherwise ignored until trusted in the full-screen UI).
    #[arg(long)]
    pub trust_project: bool,
    /// The first prompt.
    pub prompt: Option<String>,
}

impl RunArgs {
    pub fn flags(&self) -> FlagLayer {
        FlagLayer {
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            mode: self.mode,
            config: self.config.clone(),
            api: self.api,
            reasoning_effort: self.reasoning_effort.clone(),
            thinking_budget: self.thinking_budget,
        }
    }
}

fn parse_api(value: &str) -> Result<crate::llm::Api, String> {
    value.parse()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run headless: print the final answer (or JSON events) and exit.
    Exec(ExecArgs),
    /// Serve an editor (Zed, JetBrains, Neovim) over the Agent Client Protocol on stdio.
    Acp(AcpArgs),
    /// List saved sessions, newest first.
    Sessions {
        #[arg(long)]
        json: bool,
    },
    /// Browse a past session read-only.
    Replay { id: String },
    /// Take back the file changes of a session's last turn (edits and what commands changed).
    Undo {
        /// The session (default: the latest one of this directory).
        session: Option<String>,
        #[arg(long)]
        json: bool,
        /// Put back what the last undo took away (until a later turn changed files).
        #[arg(long)]
        redo: bool,
        /// Do it without showing what would change and asking first (needed when standard
        /// input is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// The tools as the model sees them.
    #[command(subcommand)]
    Tool(ToolCommand),
    /// Would a command be held, and why.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The hooks: list them, run them on a sample input, trust a project's.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// The language servers: which are configured or found on PATH, and their state.
    #[command(subcommand)]
    Lsp(LspCommand),
    /// The MCP servers: start each as a session would and show its state and tools.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Internal: run a command inside the Landlock sandbox.
    #[command(name = "__sandbox", hide = true, disable_help_flag = true)]
    Sandbox {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// One JSON event per line on stdout.
    #[arg(long)]
    pub json: bool,
    /// Attach an image (PNG, JPEG, GIF or WebP) to the prompt; repeatable.
    #[arg(long = "image", value_name = "PATH")]
    pub images: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AcpArgs {
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Print every tool's schema exactly as a session would send it to the model (with the
    /// configuration's web search and image tools).
    List {
        /// An extra config file, over the user's own (as for a session).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Run one tool in the current directory and print what the model would see.
    ///
    /// The tool is confined as the agent's are, with the current directory as the workspace:
    /// `bash` runs in the workspace-write sandbox (writes only in the workspace, the temp
    /// directories and `sandbox.writable`; no network unless `sandbox.network = true`), and
    /// the file tools write only inside the workspace and read no secret store.
    Run {
        name: String,
        /// The arguments as a JSON object.
        args: String,
        /// Print the canonical value instead.
        #[arg(long)]
        json: bool,
        /// An extra config file, over the user's own (as for a session).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the decision for COMMAND, the reason and the matching rule.
    Check {
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        config: Option<PathBuf>,
        /// Apply the project's rules even when they are not trusted yet.
        #[arg(long)]
        trust_project: bool,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Show every hook with its origin and trust.
    List,
    /// Run the hooks of EVENT (pre_tool, post_tool, user_prompt, stop, session_start,
    /// pre_compact, notification) on a sample input and print what they decided.
    Test {
        event: String,
        /// The tool of a pre_tool or post_tool sample (default bash).
        #[arg(long)]
        tool: Option<String>,
        /// The sample call's arguments as a JSON object (a user_prompt sample's text).
        #[arg(long)]
        args: Option<String>,
    },
    /// Trust the project's hooks as they are now (their config and the scripts they name).
    Trust {
        /// Trust without asking (needed when standard input is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start every configured server as a session would, show its state (ready, failed,
    /// timed out) and the tools the model sees, then stop them.
    List {
        /// One JSON object: `servers` (name, transport, state, tools) and `disabled`.
        #[arg(long)]
        json: bool,
    },
    /// Log in to an HTTP server that asks for OAuth: opens the authorization page in the
    /// browser (or prints its URL) and keeps the token in cairn's data directory.
    Login {
        /// The server's name (`[mcp_servers.NAME]` in your config).
        name: String,
        /// Only print the URL; do not open a browser.
        #[arg(long)]
        no_browser: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum LspCommand {
    /// Show every language server of this directory: where it comes from, its files, its
    /// state, and why one does not run.
    List,
}

/// A mistake in how cairn was called (exit status 2), as opposed to a failure while running.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
