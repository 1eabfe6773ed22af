//! Headless driver (`cairn exec`): the same engine and bus as the TUI, with a printer in place
//! of the panes. The final answer goes to stdout, progress and errors to stderr; `--json`
//! writes every event as one JSON line instead.
#![allow(clippy::print_stderr)]

use crate::bus::{ConversationEvent, ReportEvent};
use std::io::{IsTerminal, Read, Write};

use color_eyre::eyre::{Result, WrapErr};

use crate::bus::{AgentEvent, CONTINUE_PROMPT, EndReason, ToolEvent, UserCommand};
use crate::cli::{ExecArgs, UsageError};
use crate::launch;
use crate::visible::terminal;

/// A line of progress on stderr, through the terminal sanitiser (it quotes the model).
macro_rules! progress {
    ($($arg:tt)*) => {
        eprintln!("{}", terminal::clean(&format!($($arg)*)))
    };
}

/// Exit statuses scripts can rely on.
pub mod status {
    pub const OK: i32 = 0;
    /// Provider error after retries, truncated stream, or another failure.
    pub const FAILED: i32 = 1;
    /// Bad arguments or configuration.
    pub const USAGE: i32 = 2;
    /// A call needed an approval that a headless run cannot give.
    pub const DENIED: i32 = 3;
    /// The step limit ended the run before the model finished.
    pub const STEP_LIMIT: i32 = 4;
    pub const INTERRUPTED: i32 = 130;
}

pub async fn run(dirs: &crate::dirs::Dirs, args: ExecArgs) -> Result<i32> {
    let prompt = match args.run.prompt.clone() {
        Some(prompt) => prompt,
        None if std::io::stdin().is_terminal() => {
            return Err(UsageError(
                "no prompt: pass it as an argument or on standard input".into(),
            )
            .into());
        }
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .wrap_err("reading the prompt from standard input")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(UsageError("the prompt is empty".into()).into());
    }
    // As in the UI: `/continue` asks for the rest of an answer cut at the output limit.
    let prompt = if prompt.trim() == "/continue" {
        CONTINUE_PROMPT.to_string()
    } else {
        prompt
    };
    check_command(dirs, &prompt)?;
    check_images(&args.images)?;
    let attach = args
        .images
        .iter()
        .map(|path| crate::bus::Attachment::ImagePath { path: path.clone() })
        .collect();
    let launched = launch::start(dirs, &args.run, false)?;
    let (agent, mut front) = (launched.agent, launched.front);
    let agent_task = tokio::spawn(agent.run(launched.commands));
    front
        .commands
        .send(UserCommand::Submit {
            text: prompt,
            attach,
        })
        .await
        .wrap_err("starting the agent")?;

    let mut printer = Printer::new(args.json);
    let mut ctrl_c_count = 0;
    let mut shutting_down = false;
    loop {
        tokio::select! {
            event = front.events.recv() => {
                let Some(event) = event else { break };
                printer.print(&event);
                // Drain what is already queued before flushing: one write per burst, not per delta.
                while let Ok(more) = front.events.try_recv() {
                    printer.print(&more);
                }
                printer.flush();
                if printer.exit.is_some() && !shutting_down {
                    shutting_down = true;
                    let _ = front.commands.send(UserCommand::Shutdown).await;
                }
            }
            _ = tokio::signal::ctrl_c() => {
                ctrl_c_count += 1;
                if ctrl_c_count > 1 {
                    // The agent did not stop in time; commands die with us (PDEATHSIG).
                    eprintln!("interrupted twice; exiting");
                    std::process::exit(status::INTERRUPTED);
                }
                shutting_down = true;
                let _ = front.commands.send(UserCommand::Interrupt).await;
                let _ = front.commands.send(UserCommand::Shutdown).await;
            }
        }
    }
    agent_task.await.wrap_err("the agent task failed")?;
    printer.finish();
    Ok(printer.exit.unwrap_or(status::INTERRUPTED))
}

/// `--image` files are checked before anything starts: a missing file, or one whose bytes are
/// no image cairn can send, is the caller's to fix (exit 2, said once).
fn check_images(paths: &[String]) -> Result<()> {
    for path in paths {
        let bytes =
            std::fs::read(path).map_err(|err| UsageError(format!("--image {path}: {err}")))?;
        use image::ImageFormat::{Gif, Jpeg, Png, WebP};
        if !matches!(image::guess_format(&bytes), Ok(Png | Jpeg | Gif | WebP)) {
            return Err(UsageError(format!(
                "--image {path} is not an image cairn can send: its bytes are not PNG, JPEG, GIF or WebP (whatever its name says)"
            ))
            .into());
        }
    }
    Ok(())
}

/// A prompt that is a `/name` line must name something `exec` can run: `/continue`, `/init`,
/// or a command or skill of the user's or the project's. Anything else is refused before a
/// request (the model would get the text as a message, which is never what was meant).
fn check_command(dirs: &crate::dirs::Dirs, prompt: &str) -> Result<()> {
    use crate::skills::commands::{BUILT_IN, discover_commands, parse_invocation};
    let Some((name, _)) = parse_invocation(prompt) else {
        return Ok(());
    };
    // An MCP server's prompt: the servers say whether it exists once they started.
    if prompt.trim_end().contains('\n')
        || matches!(name, "continue" | "init")
        || name.starts_with(crate::mcp::offerings::COMMAND_PREFIX)
    {
        return Ok(());
    }
    let workspace = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .wrap_err("finding the current directory")?;
    let sources = crate::skills::Sources::with_dirs(&workspace, dirs);
    let found = discover_commands(&sources);
    if found.items.iter().any(|c| c.name == name) {
        return Ok(());
    }
    let why = if BUILT_IN.contains(&name) {
        format!(
            "/{name} works in the full-screen UI only (cairn exec runs /continue, /init and your commands and skills)"
        )
    } else {
        let mut known: Vec<String> = found.items.iter().map(|c| format!("/{}", c.name)).collect();
        known.sort();
        let known = if known.is_empty() {
            "none are defined (.cairn/commands/NAME.md or a skill)".to_string()
        } else {
            known.join(", ")
        };
        format!("unknown command /{name}; commands here: /continue, /init; yours: {known}")
    };
    Err(UsageError(why).into())
}

fn exit_status(reason: &EndReason) -> i32 {
    match reason {
        EndReason::Completed => status::OK,
        EndReason::Interrupted => status::INTERRUPTED,
        EndReason::StepLimit => status::STEP_LIMIT,
        EndReason::Denied => status::DENIED,
        EndReason::Failed(_) | EndReason::OutputLimit => status::FAILED,
    }
}

/// Writes events for a person (stderr progress, stdout answer) or for a script (JSON lines).
struct Printer {
    json: bool,
    out: std::io::BufWriter<std::io::Stdout>,
    answer: String,
    /// Set once the agent is first idle: what came before is a resumed session's history,
    /// which is not this run's progress, answer or outcome.
    live: bool,
    ended: Option<i32>,
    /// This run's exit status, once its request ended and the agent is idle again.
    exit: Option<i32>,
    /// The answer was cut at the output limit.
    cut: bool,
}

impl Printer {
    fn new(json: bool) -> Self {
        Self {
            json,
            out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
            answer: String::new(),
            live: false,
            ended: None,
            exit: None,
            cut: false,
        }
    }

    fn print(&mut self, event: &AgentEvent) {
        if self.json
            && let Ok(line) = serde_json::to_string(event)
        {
            let _ = writeln!(self.out, "{line}");
        }
        match event {
            AgentEvent::Conversation(ConversationEvent::Idle) if !self.live => {
                self.live = true;
                return;
            }
            AgentEvent::Conversation(ConversationEvent::Idle) => self.exit = self.ended,
            AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. })
                if self.live =>
            {
                self.ended = Some(exit_status(reason));
                self.cut = *reason == EndReason::OutputLimit;
            }
            _ => {}
        }
        let is_warning = matches!(
            event,
            AgentEvent::Report(ReportEvent::Warning { .. }) | AgentEvent::Hook(_)
        );
        if !self.json && (self.live || is_warning) {
            self.progress(event);
        }
    }

    fn progress(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) => {
                self.answer.clone_from(text)
            }
            AgentEvent::Tool(ToolEvent::Requested { name, args, .. }) => {
                progress!("→ {name} {}", summarize_args(args));
            }
            AgentEvent::Tool(ToolEvent::ChildEvent { inner, .. }) => child_progress(inner, 1),
            AgentEvent::Tool(ToolEvent::Finished { result, .. }) if result.is_error => {
                progress!("  {}", first_line(&result.text));
            }
            AgentEvent::Tool(ToolEvent::Warned { message, .. }) => {
                progress!("  warning: {message}");
            }
            AgentEvent::Tool(ToolEvent::Finished {
                result:
                    crate::bus::ToolResult {
                        output: Some(crate::tool_output::ToolOutput::Command(run)),
                        ..
                    },
                ..
            }) if !run.runs_later.is_empty() => {
                progress!(
                    "  warning: the command changed files your tools run or obey later: {}",
                    run.runs_later.items().join(", ")
                );
            }
            AgentEvent::Conversation(ConversationEvent::Retrying {
                attempt,
                wait_ms,
                reason,
            }) => {
                progress!(
                    "retrying in {:.1}s (attempt {attempt}): {reason}",
                    *wait_ms as f64 / 1000.0
                );
            }
            AgentEvent::Report(ReportEvent::Warning { message }) => progress!("warning: {message}"),
            AgentEvent::Hook(note) => progress!("warning: {}", note.text()),
            AgentEvent::Report(ReportEvent::Compacted { before, after, .. }) => {
                progress!("context compacted: {before} → {after} tokens");
            }
            AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. }) => {
                match reason {
                    EndReason::Completed => {}
                    EndReason::Failed(message) => progress!("error: {message}"),
                    EndReason::Denied => {
                        progress!(
                            "error: a call needed approval, which a headless run cannot give; use --mode auto or never, or a rule in the config"
                        )
                    }
                    EndReason::StepLimit => progress!("error: the step limit ended the run"),
                    EndReason::OutputLimit => progress!(
                        "warning: the answer was cut at the output limit (finish_reason \"length\"); raise max_tokens, or continue it with: cairn exec --continue /continue"
                    ),
                    EndReason::Interrupted => progress!("interrupted"),
                }
            }
            _ => {}
        }
    }

    fn flush(&mut self) {
        let _ = self.out.flush();
    }

    fn finish(&mut self) {
        // A failed run has no final answer: text sent along with tool calls is not one. An
        // answer cut at the output limit is printed (the warning on stderr and the exit
        // status say it is incomplete).
        if !self.json && !self.answer.is_empty() && (self.exit == Some(status::OK) || self.cut) {
            // The model's answer: no escape sequence in it reaches the terminal (`--json` keeps
            // it exact, escaped by JSON).
            let _ = writeln!(self.out, "{}", terminal::clean(self.answer.trim_end()));
        }
        self.flush();
    }
}

/// What a subagent does, under its call and indented by its depth: its calls, the errors and
/// denials they met (headless, a child's call that needs approval is denied at once: said here,
/// not only to the child), its warnings.
fn child_progress(event: &AgentEvent, depth: usize) {
    let indent = "  ".repeat(depth);
    match event {
        AgentEvent::Tool(ToolEvent::Requested { name, args, .. }) => {
            progress!("{indent}↳ {name} {}", summarize_args(args));
        }
        AgentEvent::Tool(ToolEvent::Finished { result, .. }) if result.is_error => {
            progress!("{indent}    {}", first_line(&result.text));
        }
        AgentEvent::Tool(ToolEvent::ChildEvent { inner, .. }) => child_progress(inner, depth + 1),
        AgentEvent::Report(ReportEvent::Warning { message }) => {
            progress!("{indent}  warning: {message}");
        }
        _ => {}
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// A one-line view of a call's arguments for the progress log.
pub fn summarize_args(args: &serde_json::Value) -> String {
    let main = ["command", "path", "pattern", "description", "url", "query"]
        .iter()
        .find_map(|key| args.get(key).and_then(|v| v.as_str()))
        .map(str::to_string)
        .unwrap_or_else(|| args.to_string());
    let line = first_line(&main);
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(100).collect::<String>())
    } else {
        line.to_string()
    }
}
