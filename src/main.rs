//! Entry point: parse arguments, install error and panic hooks, log to a file, dispatch.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use clap::Parser;
use color_eyre::eyre::Result;

use cairn::cli::{Cli, Command, PolicyCommand, ToolCommand, UsageError};
use cairn::config::ConfigError;
use cairn::dirs::Dirs;
use cairn::exec::status;
use cairn::process::reaper;
use cairn::process::sandbox::cli as sandbox_cli;
use cairn::session_log::LogError;
use cairn::visible::terminal;
use cairn::{exec, secrets, subcommands};

fn main() -> ExitCode {
    // The sandbox trampoline stays minimal: no runtime, no hooks, just restrict and exec; its
    // arguments go to it untouched (clap would take a leading `--`).
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw
        .first()
        .is_some_and(|first| first == sandbox_cli::SANDBOX_SUBCOMMAND)
    {
        return exit_code(sandbox_cli::sandbox_main(raw, &Dirs::from_env()));
    }
    let cli = Cli::parse();
    // Before any thread exists: secrets leave the environment block (this re-executes cairn
    // when there are any) and the process becomes non-dumpable.
    let protected = secrets::protect();
    // Orphans of the model's commands come to cairn, which ends them (`reaper`).
    let subreaper = reaper::become_subreaper();
    if let Err(err) = color_eyre::install() {
        eprintln!("cairn: {err}");
    }
    // cairn's directories, derived once; everything below is handed them.
    let dirs = Dirs::from_env();
    // Without a log file cairn still works; it just keeps no diagnostics.
    let _ = init_tracing(&dirs);
    if let secrets::Protected::Failed(reason) = &protected {
        tracing::warn!("secrets stay in cairn's initial environment: {reason}");
    }
    if let Err(err) = &subreaper {
        tracing::warn!("cannot become the reaper of orphaned commands: {err}");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cairn: could not start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(dispatch(&dirs, cli));
    // Do not wait for blocking tasks (a read of a huge file) to finish on the way out.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // Nothing the session's commands started survives it.
    reaper::sweep_blocking(None);
    match result {
        Ok(code) => exit_code(code),
        Err(err) => {
            // An error may quote a file name, a session or the model's words.
            eprintln!("cairn: {}", terminal::clean(&format!("{err:#}")));
            exit_code(status_of(&err))
        }
    }
}

/// Bad arguments, configuration or session ids are the caller's to fix (2); anything else
/// failed while running (1).
fn status_of(err: &color_eyre::Report) -> i32 {
    let usage = err.chain().any(|cause| {
        cause.is::<UsageError>() || cause.is::<ConfigError>() || cause.is::<LogError>()
    });
    if usage { status::USAGE } else { status::FAILED }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

async fn dispatch(dirs: &Dirs, cli: Cli) -> Result<i32> {
    match cli.command {
        None => {
            let (code, hint) = subcommands::run_tui(dirs, cli.run).await?;
            if let Some(hint) = hint {
                print_out(&hint, false);
            }
            Ok(code)
        }
        Some(Command::Exec(args)) => exec::run(dirs, args).await,
        Some(Command::Acp(args)) => cairn::acp::run(dirs, args.run).await,
        Some(Command::Sessions { json }) => {
            print_out(&subcommands::sessions_text(dirs, json), json);
            Ok(status::OK)
        }
        Some(Command::Replay { id }) => subcommands::replay(dirs, &id).await,
        Some(Command::Undo {
            session,
            json,
            redo,
            yes,
        }) => {
            let (text, code) = subcommands::undo(dirs, session.as_deref(), json, redo, yes)?;
            print_out(&text, json);
            Ok(code)
        }
        Some(Command::Tool(ToolCommand::List { config })) => {
            println!("{}", subcommands::tool_list_json(dirs, config)?);
            Ok(status::OK)
        }
        Some(Command::Tool(ToolCommand::Run {
            name,
            args,
            json,
            config,
        })) => {
            let (text, code) = subcommands::tool_run(dirs, &name, &args, json, config).await?;
            print_out(&text, json);
            Ok(code)
        }
        Some(Command::Policy(PolicyCommand::Check {
            mode,
            json,
            config,
            trust_project,
            command,
        })) => {
            let (text, code) =
                subcommands::policy_check(dirs, &command, mode, json, config, trust_project)?;
            print_out(&text, json);
            Ok(code)
        }
        Some(Command::Hooks(command)) => {
            let (text, code) = subcommands::hooks(dirs, command).await?;
            print_out(&text, false);
            Ok(code)
        }
        Some(Command::Lsp(cairn::cli::LspCommand::List)) => {
            let (text, code) = subcommands::lsp_list(dirs)?;
            print_out(&text, false);
            Ok(code)
        }
        Some(Command::Mcp(cairn::cli::McpCommand::List { json })) => {
            let (text, code) = subcommands::mcp_list(dirs, json).await?;
            print_out(&text, false);
            Ok(code)
        }
        Some(Command::Mcp(cairn::cli::McpCommand::Login { name, no_browser })) => {
            let (text, code) = subcommands::mcp_login(dirs, &name, !no_browser).await?;
            print_out(&text, false);
            Ok(code)
        }
        Some(Command::Sandbox { .. }) => Ok(status::USAGE),
    }
}

/// Prints a subcommand's answer: JSON exactly as made (control characters in it are already
/// escaped), text through the one terminal sanitiser, so no file name, session title or
/// command output can drive the user's terminal.
fn print_out(text: &str, json: bool) {
    if json {
        print!("{text}");
    } else {
        print!("{}", terminal::clean(text));
    }
}

/// Logs go to a file in the platform state/data directory, never to the screen.
fn init_tracing(dirs: &Dirs) -> Option<()> {
    std::fs::create_dir_all(dirs.data()).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dirs.log_file())
        .ok()?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init()
        .ok()?;
    Some(())
}
