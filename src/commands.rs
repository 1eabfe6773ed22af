//! The subcommands other than `exec`: the full-screen UI and replay, `sessions`, `tool list|run`
//! and `policy check`. Each returns its output and exit status; `main` prints.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::agent::history;
use crate::bus::{self, AgentEvent, CallId, UserCommand};
use crate::cli::RunArgs;
use crate::config::{Config, FlagLayer};
use crate::exec::status;
use crate::permissions::Mode;
use crate::session_log::{self, Record};
use crate::tools::{BashSettings, Registry, ToolCx, ToolEnv, registry::standard_tools};
use crate::tui::{self, TuiOptions};
use crate::{launch, policy_cmd};

/// The full-screen UI on a new or resumed session. Without an API key it shows the setup
/// panel first, then fails with the missing-key error (printed once the screen is restored;
/// a configuration error exits with status 2).
pub async fn run_tui(args: RunArgs) -> Result<i32> {
    let launched = match launch::start(&args, true) {
        Ok(launched) => launched,
        Err(err) => {
            let on_terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
            if let (Some(info), true) = (tui::setup::SetupInfo::from_error(&err), on_terminal) {
                // The panel is help on top of the error; if it cannot be shown, the error
                // below still says what to do.
                let _ = tui::setup::show_setup(&info).await;
            }
            return Err(err);
        }
    };
    let options = TuiOptions {
        provider: launched.config.provider.provider.clone(),
        model: launched.config.provider.model.clone(),
        mode: args.mode.unwrap_or(launched.config.mode),
        read_only: false,
        initial_prompt: args.prompt.clone(),
        sandbox_off: launched.sandbox_off.clone(),
    };
    let front = launched.front;
    if args.resume.as_deref() == Some("") {
        // `--resume` without an id: open the picker.
        let _ = front.commands.send(UserCommand::ListSessions).await;
    }
    let commands = front.commands.clone();
    let agent = tokio::spawn(launched.agent.run(launched.commands));
    let result = tui::run(front, options).await;
    let _ = commands.send(UserCommand::Shutdown).await;
    agent.await.wrap_err("the agent task failed")?;
    result.map(|()| status::OK)
}

/// A past session, read-only: its events are replayed into the UI and nothing runs.
pub async fn replay(id: &str) -> Result<i32> {
    let path = session_log::find_session(&session_log::sessions_dir(), id)?;
    let loaded = session_log::read_log(&path)?;
    let Some(Record::Meta {
        id,
        provider,
        model,
        ..
    }) = loaded.records.first().cloned()
    else {
        return Err(eyre!("{} is not a cairn session log", path.display()));
    };
    let rebuilt = history::rebuild(&loaded.records);
    let (engine, front) = bus::channel();
    let send = |event| {
        let _ = engine.events.send(event);
    };
    send(AgentEvent::SessionStarted {
        session: id,
        provider: provider.clone(),
        model: model.clone(),
        mode: Mode::Ask,
        context_window: 0,
        resumed: true,
    });
    loaded
        .warnings
        .into_iter()
        .for_each(|message| send(AgentEvent::Warning { message }));
    rebuilt.events.into_iter().for_each(send);
    send(AgentEvent::Idle);
    let options = TuiOptions {
        provider,
        model,
        mode: Mode::Ask,
        read_only: true,
        initial_prompt: None,
        sandbox_off: None,
    };
    // Keep the engine ends alive while the UI runs, so it does not see a closed bus.
    let result = tui::run(front, options).await;
    drop(engine);
    result.map(|()| status::OK)
}

/// `cairn sessions`: one line per session, newest first.
pub fn sessions_text(json: bool) -> String {
    let mut out = String::new();
    for session in session_log::list_sessions(&session_log::sessions_dir()) {
        if json {
            if let Ok(line) = serde_json::to_string(&session) {
                out.push_str(&line);
                out.push('\n');
            }
        } else {
            out.push_str(&format!(
                "{}  {}  {}  {}\n",
                session.id, session.started, session.cwd, session.first_prompt
            ));
        }
    }
    out
}

/// The tool schemas exactly as they go into the request's `tools` array.
pub fn tool_list_json() -> Result<String> {
    let registry = Registry::with_tools(standard_tools());
    let tools = crate::llm::client::wire_tools(registry.specs());
    Ok(serde_json::to_string_pretty(&tools)?)
}

/// Runs one tool in the current directory, as the model would, without the permission gate
/// (the user is the one asking). Files are treated as just read, so writes and edits work.
pub async fn tool_run(name: &str, args: &str, json: bool) -> Result<(String, i32)> {
    let registry = Registry::with_tools(standard_tools());
    let tool = registry.get(name).ok_or_else(|| {
        eyre!(
            "unknown tool `{name}`; the tools are: {}",
            registry.names().join(", ")
        )
    })?;
    let args: serde_json::Value =
        serde_json::from_str(args).wrap_err("the arguments are not valid JSON")?;
    let workspace = std::env::current_dir()?;
    let env = ToolEnv::new(workspace, BashSettings::default());
    let cx = ToolCx::new(Arc::clone(&env), CallId::new("cli"));
    if let (Some(path), Some(reader), false) = (
        args.get("path"),
        registry.get("read_file"),
        name == "read_file",
    ) {
        let read_args = serde_json::json!({ "path": path, "limit": 1 });
        // Only to record the file's state; a missing file is fine for a write.
        let _ = reader.run(read_args, &cx).await;
    }
    let outcome = tool.run(args, &cx).await;
    env.jobs.kill_all().await;
    match outcome {
        Ok(output) if json => Ok((
            format!("{}\n", serde_json::to_string_pretty(&output)?),
            status::OK,
        )),
        Ok(output) => Ok((ensure_newline(output.model_text()), status::OK)),
        Err(err) => Ok((format!("Error: {err}\n"), status::FAILED)),
    }
}

fn ensure_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// `cairn policy check`: the decision for a command under the user's and project's rules.
pub fn policy_check(
    command: &[String],
    mode: Option<Mode>,
    json: bool,
    config_file: Option<PathBuf>,
) -> Result<(String, i32)> {
    let workspace = std::env::current_dir()?;
    let flags = FlagLayer {
        config: config_file,
        ..FlagLayer::default()
    };
    // The key is irrelevant here; only the rules and the mode are read.
    let config = Config::load_with(&flags, &|name| {
        std::env::var(name)
            .ok()
            .or_else(|| name.ends_with("_API_KEY").then(String::new))
    })?;
    let rules = launch::load_rules(&config, &workspace)?;
    Ok(policy_cmd::run(
        command,
        mode.unwrap_or(config.mode),
        json,
        rules,
        &workspace,
    ))
}
