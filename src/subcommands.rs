//! The subcommands other than `exec`: the full-screen UI and replay, `sessions`, `tool list|run`
//! and `policy check`. Each returns its output and exit status; `main` prints.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr, eyre};

use crate::agent::subagent::replayed::Replayed;
use crate::bus::Mode;
use crate::bus::{self, UserCommand};
use crate::cli::RunArgs;
use crate::config::{Config, FlagLayer};
use crate::dirs::Dirs;
use crate::exec::status;
use crate::process::Grant;
use crate::session_log;
use crate::tools::runtime::{PassedCall, Runtime, Watch};
use crate::tools::{Access, Registry, ToolCx};
use crate::tui::{self, TuiOptions};
use crate::{launch, policy_cmd, visible};
use tokio_util::sync::CancellationToken;

mod hooks;
mod lsp;
mod mcp;
mod mcp_login;
mod undo;
pub use hooks::hooks;
pub use lsp::lsp_list;
pub use mcp::mcp_list;
pub use mcp_login::mcp_login;
pub use undo::undo;

/// The full-screen UI on a new or resumed session. Without an API key it shows the setup
/// panel first, then fails with the missing-key error (printed once the screen is restored;
/// a configuration error exits with status 2). On quit, what to print: how to resume the
/// session, when it has messages.
/// Messages of this directory's earlier sessions that Up brings back, at most.
const PROMPT_HISTORY: usize = 500;

pub async fn run_tui(dirs: &Dirs, args: RunArgs) -> Result<(i32, Option<String>)> {
    let launched = match launch::start(dirs, &args, true) {
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
        trust: launched.untrusted_rules.clone(),
        welcome: Some(welcome(&launched)),
        command_sources: Some(crate::skills::Sources::with_dirs(&launched.workspace, dirs)),
        // Up brings back what was sent in this directory before, from its session logs.
        history: crate::session_log::prompt_history(
            dirs.sessions(),
            &launched.workspace,
            PROMPT_HISTORY,
        ),
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
    result.map(|session| (status::OK, session.as_ref().map(resume_hint)))
}

/// What quitting prints under a session with messages: the two ways back into it.
pub fn resume_hint(session: &crate::bus::SessionId) -> String {
    format!(
        "Resume this session with: cairn --resume {session}
(or cairn --continue: the latest session in this directory)
"
    )
}

/// The first screen's facts: the workspace as the user knows it, its branch, the sandbox and
/// the `AGENTS.md` the system prompt includes.
fn welcome(launched: &launch::Launched) -> tui::panes::welcome::Welcome {
    use tui::panes::welcome::{Sandbox, Welcome, display_path};
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .map(|home| std::fs::canonicalize(&home).unwrap_or(home));
    let shown = |path: &std::path::Path| display_path(path, home.as_deref());
    let root = &launched.workspace;
    Welcome {
        workspace: shown(root),
        branch: crate::agent::prompt::git_branch(root),
        sandbox: if launched.sandbox.on {
            Sandbox::On(launched.sandbox.text.clone())
        } else {
            Sandbox::Off(launched.sandbox.text.clone())
        },
        agents_md: crate::agent::prompt::agents_md_found(root)
            .map(|(path, bytes)| (shown(&path), bytes)),
    }
}

/// A past session, read-only: its events are replayed into the UI and nothing runs.
pub async fn replay(dirs: &Dirs, id: &str) -> Result<i32> {
    let path = session_log::find_session(dirs.sessions(), id)?;
    let Replayed {
        provider,
        model,
        mode,
        events,
        ..
    } = crate::agent::subagent::replayed::replay(&path)?;
    let (engine, front) = bus::channel();
    for event in events {
        let _ = engine.events.send(event);
    }
    let options = TuiOptions::read_only(provider, model, mode);
    // Keep the engine ends alive while the UI runs, so it does not see a closed bus.
    let result = tui::run(front, options).await;
    drop(engine);
    result.map(|_| status::OK)
}

/// `cairn sessions`: one line per session, newest first. With `--json` each line also has the
/// session's token counts, its cost in dollars (null when a model's price is unknown: see
/// `[prices]`) and the share of prompt tokens served from the provider's cache.
pub fn sessions_text(dirs: &Dirs, json: bool) -> String {
    let mut out = String::new();
    let dir = dirs.sessions();
    // Prices from the user's config file when it reads; the built-in ones otherwise.
    let prices = crate::config::ConfigFile::load(&dirs.config_file())
        .ok()
        .and_then(|file| file.prices.map(|p| (p, file.model.unwrap_or_default())))
        .unwrap_or_default();
    for (session, child) in with_children_under_parents(session_log::list_sessions(dir)) {
        if json {
            let mut row = serde_json::to_value(&session).unwrap_or_default();
            let usage = session_log::usage_by_model(&dir.join(format!("{}.jsonl", session.id)));
            add_cost_fields(&mut row, &usage, &prices.0, &prices.1);
            if let Ok(line) = serde_json::to_string(&row) {
                out.push_str(&line);
                out.push('\n');
            }
        } else {
            // Each field on its own: a prompt or directory holding a newline cannot start a line.
            // A subagent's session is indented under its parent's.
            out.push_str(&format!(
                "{}{}  {}  {}  {}\n",
                if child { "  └ " } else { "" },
                visible::name(&session.id.to_string()),
                visible::name(&session.started),
                visible::name(&session.cwd),
                visible::name(&session.first_prompt)
            ));
        }
    }
    out
}

/// The sessions in their order, each subagent's right after its parent (`true`: a child);
/// a child whose parent is gone keeps its own place.
fn with_children_under_parents(
    sessions: Vec<crate::bus::SessionSummary>,
) -> Vec<(crate::bus::SessionSummary, bool)> {
    let ids: std::collections::HashSet<String> = sessions.iter().map(|s| s.id.0.clone()).collect();
    let (children, tops): (Vec<_>, Vec<_>) = sessions
        .into_iter()
        .partition(|s| s.parent.as_ref().is_some_and(|p| ids.contains(&p.0)));
    let mut out = Vec::with_capacity(tops.len() + children.len());
    for top in tops {
        let id = top.id.clone();
        out.push((top, false));
        out.extend(
            children
                .iter()
                .filter(|c| c.parent.as_ref() == Some(&id))
                .rev()
                .map(|c| (c.clone(), true)),
        );
    }
    out
}

/// Totals of a session's requests: tokens, dollars, cache-hit ratio.
fn add_cost_fields(
    row: &mut serde_json::Value,
    usage: &[(String, crate::bus::Usage)],
    prices: &crate::config::PricesFile,
    configured: &str,
) {
    let (mut prompt, mut cached, mut completion) = (0u64, 0u64, 0u64);
    let mut cost = Some(0.0);
    for (model, u) in usage {
        prompt += u.prompt_tokens;
        cached += u.cached_tokens;
        completion += u.completion_tokens;
        let one = prices
            .for_model(model, configured)
            .map(|p| p.cost(u.prompt_tokens, u.cached_tokens, u.completion_tokens));
        cost = cost.zip(one).map(|(a, b)| a + b);
    }
    let Some(map) = row.as_object_mut() else {
        return;
    };
    map.insert("requests".into(), usage.len().into());
    map.insert("prompt_tokens".into(), prompt.into());
    map.insert("cached_tokens".into(), cached.into());
    map.insert("completion_tokens".into(), completion.into());
    map.insert("cost_usd".into(), cost.into());
    let ratio = (prompt > 0).then(|| cached.min(prompt) as f64 / prompt as f64);
    map.insert("cache_hit_ratio".into(), ratio.into());
}

/// The tool schemas exactly as they go into the request's `tools` array.
pub fn tool_list_json(dirs: &Dirs, config: Option<std::path::PathBuf>) -> Result<String> {
    let config = tools_config(dirs, config)?;
    let registry = Registry::with_tools(crate::launch::session_tools(&config));
    let tools = crate::llm::client::wire_tools(registry.specs());
    Ok(serde_json::to_string_pretty(&tools)?)
}

/// What a call typed by hand may not do, because a command run the same way could not: a
/// file tool keeps its writes inside the workspace and reads no secret store, as the
/// sandbox keeps `bash`. (In a session the gate would ask; here nobody can.)
fn beyond_the_wall(access: &crate::tools::Access) -> Option<String> {
    use crate::tools::Access;
    match access {
        Access::Write { path, display } | Access::WriteProtected { path, display, .. }
            if !path.inside_workspace() =>
        {
            Some(format!(
                "`{display}` is outside the workspace (the current directory): `cairn tool run` \
                 writes only inside it, as its commands' sandbox does; run it from a directory \
                 that contains the file"
            ))
        }
        Access::ReadGuarded {
            sensitive: Some(why),
            ..
        } => Some(format!(
            "{why}: `cairn tool run` does not read it, as its commands' sandbox does not"
        )),
        _ => None,
    }
}

/// Runs one tool in the current directory, as the model would, without the permission gate
/// (the user is the one asking), on the agent's tool runtime. Files are treated as just read,
/// so writes and edits work.
pub async fn tool_run(
    dirs: &Dirs,
    name: &str,
    args: &str,
    json: bool,
    config: Option<std::path::PathBuf>,
) -> Result<(String, i32)> {
    let config = tools_config(dirs, config)?;
    let mut tools = crate::launch::session_tools(&config);
    // No model here, so no question of whether it takes images: the user asked for one.
    if !tools.iter().any(|tool| tool.spec().name == "read_image") {
        tools.push(Box::new(crate::tools::read_image::ReadImage));
    }
    let registry = Arc::new(Registry::with_tools(tools));
    let Some(tool) = registry.get(name) else {
        return Err(eyre!(
            "unknown tool `{name}`; the tools are: {}",
            registry.names().join(", ")
        ));
    };
    let args: serde_json::Value =
        serde_json::from_str(args).wrap_err("the arguments are not valid JSON")?;
    let workspace = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .wrap_err("finding the current directory")?;
    // The same proxy and CAs as a session: `[network]` and the environment.
    let network = crate::launch::network::network_stack(&config.network)?;
    // The same confinement as a session's tools, with the current directory as the
    // workspace: commands run in its sandbox, the file tools keep to its roots.
    // The only setup notice is a missing Landlock; it speaks of asking, which a call the
    // user typed does not do, so it is said here as it applies.
    let mut notices = Vec::new();
    let confined =
        crate::launch::confined_tools(dirs, &config, &workspace, &network, &mut notices)?;
    if !confined.sandbox.summary.on && name == "bash" {
        #[allow(clippy::print_stderr)]
        {
            let why = if confined.sandbox.missing {
                "Landlock is unavailable"
            } else {
                "sandbox.enabled = false in the config"
            };
            eprintln!("warning: no sandbox ({why}): the command runs with your full permissions");
        }
    }
    let env = confined.env;
    let runtime = Runtime::new(Arc::clone(&registry), Arc::clone(&env));
    let cancel = CancellationToken::new();
    let cx = ToolCx::new(Arc::clone(&env));
    if let (Some(path), Some(reader), false) = (
        args.get("path"),
        registry.get("read_file"),
        name == "read_file",
    ) {
        let read_args = serde_json::json!({ "path": path, "limit": 1 });
        // Only to record the file's state; a missing file is fine for a write.
        if let Ok(access) = reader.access(&read_args, &cx) {
            let read = by_hand("read_file", read_args, access, Grant::default());
            let _ = runtime.run_one(read, &cancel, Watch::none()).await;
        }
    }
    // The user asked for exactly this call: it runs as if the gate had passed it, and a
    // command gets the sandbox of a command the user approved in a session.
    let access = match tool.access(&args, &cx) {
        Ok(access) => access,
        Err(err) => return Ok((format!("Error: {err}\n"), status::FAILED)),
    };
    if let Some(refusal) = beyond_the_wall(&access) {
        return Ok((format!("Error: {refusal}\n"), status::FAILED));
    }
    let call = by_hand(name, args, access, Grant::WorkspaceWrite);
    let result = runtime.run_one(call, &cancel, Watch::none()).await;
    env.jobs.kill_all().await;
    let code = if result.is_error {
        status::FAILED
    } else {
        status::OK
    };
    match result.output {
        Some(output) if json => Ok((
            format!("{}\n", serde_json::to_string_pretty(&output)?),
            code,
        )),
        _ => Ok((ensure_newline(result.text), code)),
    }
}

/// A call the user typed, as if the gate had passed it.
fn by_hand(name: &str, args: serde_json::Value, access: Access, grant: Grant) -> PassedCall {
    PassedCall {
        id: bus::CallId(format!("tool-run-{name}")),
        name: name.to_string(),
        args,
        access,
        grant,
    }
}

/// The config for running a tool by hand: a session's, but without a key being needed (no
/// request is made), so a missing key only means the provider is left unset.
/// The configuration the tools see: the user's, `--config FILE` over it, the environment.
pub(crate) fn tools_config(dirs: &Dirs, config: Option<std::path::PathBuf>) -> Result<Config> {
    let flags = FlagLayer {
        config,
        ..FlagLayer::default()
    };
    match Config::load(dirs, &flags) {
        Ok(config) => Ok(config),
        Err(crate::config::ConfigError::MissingKey { .. }) => Ok(Config::load(
            dirs,
            &FlagLayer {
                // A provider that needs no key; tools never talk to it.
                provider: Some("ollama".into()),
                ..flags
            },
        )?),
        Err(err) => Err(err.into()),
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
    dirs: &Dirs,
    command: &[String],
    mode: Option<Mode>,
    json: bool,
    config_file: Option<PathBuf>,
    trust_project: bool,
) -> Result<(String, i32)> {
    let workspace = std::env::current_dir()?;
    let flags = FlagLayer {
        config: config_file,
        ..FlagLayer::default()
    };
    // The key is irrelevant here; only the rules and the mode are read.
    let config = Config::load_with(dirs, &flags, &|name| {
        std::env::var(name)
            .ok()
            .or_else(|| name.ends_with("_API_KEY").then(String::new))
    })?;
    let store = crate::permissions::trust::TrustStore::in_data_dir(dirs.data());
    let real = std::fs::canonicalize(&workspace).unwrap_or_else(|_| workspace.clone());
    let (rules, untrusted) = launch::load_rules(&config, &real, trust_project, &store)?;
    if let Some(project) = untrusted {
        // stdout is the answer (maybe JSON); the warning goes beside it.
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "warning: {}",
                crate::visible::terminal::clean(&crate::permissions::trust::ignored_warning(
                    &project
                ))
            );
        }
    }
    Ok(policy_cmd::run(
        command,
        mode.unwrap_or(config.mode),
        json,
        rules,
        &workspace,
        dirs,
    ))
}
