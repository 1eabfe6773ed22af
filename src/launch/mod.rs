//! Puts an engine together from the command line and the configuration: provider client,
//! tools, permission gate, session (new or resumed). Shared by the TUI and `exec`.

pub mod network;
mod notices;
pub mod sandbox_setup;
mod session_tools;
use network::{command_network_env, network_stack, web_env};
use sandbox_setup::{SandboxSetup, SandboxSummary, sandbox_policy, with_limits_note};
pub use session_tools::with_mcp;
use session_tools::without_idle_skill;

use crate::process;
use std::sync::Arc;
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use tokio::sync::mpsc;

use crate::agent::{Agent, AgentSettings, ContextSettings, Engine, StartFrom};
use crate::bus::{self, FrontEnds, UserCommand};
use crate::cli::{RunArgs, UsageError};
use crate::config::{Config, ConfigError, FlagLayer};
use crate::dirs::Dirs;
use crate::fs::places::FilePolicy;
use crate::llm::client::HttpModel;
use crate::models::discover::WindowProbe;
use crate::net::Network;
use crate::permissions::policy::{PolicyGate, PolicySettings};
use crate::permissions::rules::RuleSet;
use crate::permissions::trust::{self, PendingTrust, ProjectRules, TrustStore};
use crate::permissions::web_hosts;
use crate::secret_stores::SecretStores;
use crate::session_log;
use crate::tools::registry::web_tools;
use crate::tools::{Registry, Tool, ToolEnv, registry::standard_tools};

/// A started engine and the front end's ends of its bus.
pub struct Launched {
    pub agent: Agent,
    pub front: FrontEnds,
    pub commands: mpsc::Receiver<UserCommand>,
    pub config: Config,
    /// For the status line's sandbox badge: `no sandbox: why` or `sandbox off: why` when
    /// commands run unsandboxed, what of the per-command limits does not bind, or none.
    pub sandbox_off: Option<String>,
    /// Project rules the TUI must show and ask to trust before they apply (the agent
    /// applies the answer).
    pub untrusted_rules: Option<crate::bus::UntrustedRules>,
    /// The canonical directory the session works in.
    pub workspace: std::path::PathBuf,
    /// How commands run, for the welcome screen.
    pub sandbox: SandboxSummary,
}

pub fn start(dirs: &Dirs, args: &RunArgs, interactive: bool) -> Result<Launched> {
    let workspace = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .wrap_err("finding the current directory")?;
    start_in(
        dirs,
        args,
        Front {
            interactive,
            asks_trust: interactive,
            buffers: None,
        },
        workspace,
    )
}

/// How the front end an engine is started for talks to the user.
#[derive(Clone)]
pub struct Front {
    /// Held calls are put to the user (otherwise they are refused, as in `exec`).
    pub interactive: bool,
    /// The user can be asked to trust the project's rules and processes (the TUI's start-up
    /// prompt); otherwise they are left out and a warning says so, as in `exec`.
    pub asks_trust: bool,
    /// The front end holds the files' text (an editor's buffers): the file tools read and
    /// write through it.
    pub buffers: Option<Arc<dyn crate::fs::buffers::Buffers>>,
}

/// `start` for a workspace other than the current directory (`cairn acp`: the editor names
/// it per session); `workspace` must be canonical.
pub fn start_in(
    dirs: &Dirs,
    args: &RunArgs,
    front: Front,
    workspace: std::path::PathBuf,
) -> Result<Launched> {
    let interactive = front.interactive;
    let (config, notice) = load_config(dirs, &args.flags())?;
    // Setup notices reach the user as warnings, through the same bus as everything else.
    let mut notices: Vec<String> = notice.into_iter().collect();
    if args.resume.as_deref() == Some("") && !interactive {
        return Err(UsageError(
            "--resume needs a session id here (see `cairn sessions`), or use --continue".into(),
        )
        .into());
    }
    let from = start_from(args, dirs.sessions(), &workspace)?;

    // A key under a name the secret patterns miss is still redacted from tool output.
    if let (Some(name), Some(key)) = (&config.key_env, &config.provider.api_key) {
        crate::secrets::remember(name, key);
    }
    // The one HTTP stack, built before any request: the model client and discovery share it.
    let network = network_stack(&config.network)?;
    notices.extend(network.warnings().iter().cloned());
    // Its one failure is a base URL that is no URL: the caller's to fix (exit 2).
    let model = HttpModel::with_network(config.provider.clone(), &network)
        .map_err(|err| UsageError(err.to_string()))?
        .with_key_env(config.key_env.clone());
    let confined = confined_tools(dirs, &config, &workspace, &network, &mut notices)?;
    let (tools, sandbox, secrets) = (confined.env, confined.sandbox, confined.secrets);
    let store = TrustStore::in_data_dir(dirs.data());
    let (rules, untrusted) = load_rules(&config, &workspace, args.trust_project, &store)?;
    // What --trust-project trusts is said at every start, never shortened.
    let mut always: Vec<String> = Vec::new();
    if args.trust_project {
        let ledger = crate::trust::written::WrittenLedger::in_data_dir(dirs.data());
        always.extend(crate::trust::written::trust_project_warning(
            &ledger, &workspace,
        ));
    }
    let gate = Arc::new(
        PolicyGate::new(PolicySettings {
            rules,
            workspace: workspace.clone(),
            sandbox: tools.bash.sandbox.clone(),
            places: crate::permissions::classify::Places::with_dirs(dirs).with_secrets(secrets),
        })
        .asking_unsandboxed(sandbox.missing)
        .with_run_later(
            config
                .permissions
                .run_later
                .clone()
                .unwrap_or_else(crate::permissions::run_later::default_run_later),
        ),
    );
    let hooks = load_hooks(dirs, &config, &workspace, &tools.bash, args.trust_project)?;
    notices.extend(hooks.notices.iter().cloned());
    let lsp = session_lsp(dirs, &config, &workspace, &tools.bash, args.trust_project);
    notices.extend(lsp.notices.iter().cloned());
    // The project's MCP servers: the untrusted ones wait for the user's trust.
    let mut mcp_project = crate::mcp::project::ProjectServers::load(
        &workspace,
        &config.mcp_servers,
        crate::trust::ProcessTrust::new(dirs.data(), &workspace).trusting_all(args.trust_project),
    );
    notices.append(&mut mcp_project.notices);
    let mcp_untrusted = mcp_project.untrusted();
    let tools = match lsp.lsp.clone() {
        Some(servers) => match Arc::try_unwrap(tools) {
            Ok(env) => Arc::new(env.with_lsp(servers)),
            Err(shared) => shared,
        },
        None => tools,
    };
    // An editor that holds the files' text: the file tools go through it.
    let tools = match front.buffers.clone() {
        Some(buffers) => match Arc::try_unwrap(tools) {
            Ok(env) => Arc::new(env.with_buffers(Some(buffers))),
            Err(shared) => {
                tracing::warn!("the editor's buffers could not be given to the file tools");
                shared
            }
        },
        None => tools,
    };
    // Untrusted project rules and hooks: the TUI asks; a headless run leaves them out and
    // says so.
    let pending = PendingTrust {
        project: untrusted,
        workspace: workspace.clone(),
        store,
        processes: hooks
            .untrusted
            .iter()
            .chain(&lsp.untrusted)
            .chain(&mcp_untrusted)
            .cloned()
            .collect(),
        process_trust: hooks
            .hooks
            .trust
            .clone()
            .or_else(|| Some(mcp_project.trust.clone())),
    };
    let pending_trust = if pending.is_empty() {
        None
    } else if front.asks_trust {
        Some(pending)
    } else {
        notices.extend(pending.project.as_ref().map(trust::ignored_warning));
        notices.extend(hooks.untrusted_notice());
        if !lsp.untrusted.is_empty() {
            notices.push(format!(
                "{} (`cairn lsp list` lists them; `cairn hooks trust` trusts the project's processes)",
                crate::trust::skipped_warning(&lsp.untrusted)
            ));
        }
        if !mcp_untrusted.is_empty() {
            notices.push(format!(
                "{} (`cairn mcp list` lists them)",
                crate::trust::skipped_warning(&mcp_untrusted)
            ));
            // Headless: they cannot be trusted during this run.
            mcp_project
                .servers
                .retain(|name, _| !mcp_untrusted.iter().any(|j| j.process.name == *name));
        }
        None
    };
    let subagents = subagent_host(&config, &workspace, dirs, &mut notices);
    let (registry, mcp) = with_mcp(
        Registry::with_tools({
            let mut list = without_idle_skill(session_tools(&config), &workspace, dirs);
            list.extend(crate::tools::registry::lsp_tools(
                tools.lsp.as_ref().is_some_and(crate::lsp::Lsp::offered),
            ));
            list.push(Box::new(crate::agent::subagent::SubagentTool::new(
                Arc::clone(&subagents),
            )));
            list
        }),
        &config,
        &tools,
        &network,
        dirs.data(),
        Some(mcp_project),
    );
    let engine = Engine {
        model: Arc::new(model),
        registry: Arc::new(registry),
        tool_env: tools,
        gate,
        mcp,
        subagents: Some(subagents),
    };
    let settings = AgentSettings {
        workspace: workspace.clone(),
        provider: config.provider.provider.clone(),
        mode: args.mode.unwrap_or(config.mode),
        max_steps: args.max_steps.unwrap_or(config.max_steps),
        context_window: config.context_window,
        context: context_settings(&config, dirs, &network),
        interactive,
        dirs: dirs.clone(),
        vision: config.vision,
        checkpoints: crate::agent::CheckpointSettings::from_config(&config.checkpoints),
        skills: crate::agent::SkillSettings::new(
            crate::skills::Sources::with_dirs(&workspace, dirs),
            args.trust_project,
        ),
        untrusted_rules: pending_trust.clone(),
        hooks: Arc::new(hooks.hooks),
        child: None,
    };
    let (engine_ends, front) = bus::channel();
    let agent = Agent::start(settings, engine, from, engine_ends.events)
        .wrap_err("opening the session log")?;
    let notices = if interactive {
        notices::said_once(dirs.data(), &workspace, notices)
    } else {
        notices
    };
    for notice in always.iter().chain(&notices) {
        agent.warn(notice);
    }
    Ok(Launched {
        agent,
        front,
        commands: engine_ends.commands,
        config,
        sandbox_off: with_limits_note(sandbox.status_note),
        untrusted_rules: pending_trust.as_ref().map(PendingTrust::shown),
        workspace,
        sandbox: sandbox.summary,
    })
}

/// What the session's `subagent` tool runs children with: `[subagents]`, the agent
/// definitions (their mistakes go to `notices`), and the session's own tools (a child is
/// offered those its definition names; language servers stay the parent's).
fn subagent_host(
    config: &Config,
    workspace: &std::path::Path,
    dirs: &Dirs,
    notices: &mut Vec<String>,
) -> Arc<crate::agent::subagent::SubagentHost> {
    use crate::agent::subagent::{Definitions, SubagentHost, SubagentSettings};
    let definitions = Definitions::for_workspace(workspace, dirs);
    notices.extend(definitions.warnings.iter().cloned());
    let offered: Vec<&'static str> = without_idle_skill(session_tools(config), workspace, dirs)
        .iter()
        .map(|tool| tool.spec().name)
        .collect();
    let settings = SubagentSettings::from_config(&config.subagents);
    let config = config.clone();
    let tools = Arc::new(move || {
        let mut list = session_tools(&config);
        list.retain(|tool| offered.contains(&tool.spec().name));
        list
    });
    SubagentHost::new(settings, definitions, tools)
}

/// The session's hooks (the user's, and the project's: those not trusted in their current
/// content wait for the user's trust; `--trust-project` trusts them all for this run), with
/// the notices about them.
pub fn load_hooks(
    dirs: &Dirs,
    config: &Config,
    workspace: &std::path::Path,
    bash: &crate::process::Settings,
    trust_project: bool,
) -> Result<crate::hooks::Loaded> {
    let trust = crate::trust::ProcessTrust::new(dirs.data(), workspace).trusting_all(trust_project);
    let run = crate::hooks::RunSettings {
        workspace: workspace.to_path_buf(),
        process: bash.clone(),
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let loaded = crate::hooks::load(
        &config.hooks,
        &config.config_path,
        home.as_deref(),
        run,
        trust,
    )
    .map_err(|err| UsageError(err.to_string()))?;
    Ok(loaded)
}

/// The session's language servers (built-ins on `PATH`, `[lsp.NAME]`, the project's that are
/// trusted; `--trust-project` trusts them for this run), the project's that wait for trust,
/// and what to tell the user. None when `[lsp] enabled = false`.
pub struct SessionLsp {
    pub lsp: Option<crate::lsp::Lsp>,
    pub untrusted: Vec<crate::trust::Judged>,
    pub notices: Vec<String>,
}

pub fn session_lsp(
    dirs: &Dirs,
    config: &Config,
    workspace: &std::path::Path,
    bash: &crate::process::Settings,
    trust_project: bool,
) -> SessionLsp {
    let trust = crate::trust::ProcessTrust::new(dirs.data(), workspace).trusting_all(trust_project);
    let path = std::env::var_os("PATH");
    let found = crate::lsp::servers::find(&config.lsp, workspace, Some(&trust), path.as_deref());
    let settings = crate::lsp::LspSettings {
        workspace: workspace.to_path_buf(),
        process: bash.clone(),
        wait: Duration::from_millis(config.lsp.wait_ms.unwrap_or(crate::lsp::WAIT_MS)),
        warnings: config.lsp.warnings.unwrap_or(false),
        servers: found.servers,
        missing: found.missing,
    };
    let mut notices = found.notices;
    let lsp = if config.lsp.enabled == Some(false) {
        None
    } else {
        match crate::lsp::Lsp::new(settings) {
            Ok(lsp) => Some(lsp),
            Err(err) => {
                notices.push(format!("language servers are off: {err}"));
                None
            }
        }
    };
    SessionLsp {
        lsp,
        untrusted: found.untrusted,
        notices,
    }
}

/// The tools of a session: decided here, once, so the tools array stays byte-identical.
pub fn session_tools(config: &Config) -> Vec<Box<dyn Tool>> {
    let mut tools = tools_for(config.vision);
    tools.extend(web_tools(config.web.search.is_some()));
    tools
}

/// The tools with the confinement of a session: the secret stores, the readable roots, the
/// sandbox for commands (its workspace is `workspace`), the hidden key, the passed variables,
/// the limits and the network environment. Setup notices (no Landlock) go to `notices`.
/// `cairn tool run` builds its tools here too, so a tool run by hand is confined as the
/// agent's are.
pub fn confined_tools(
    dirs: &Dirs,
    config: &Config,
    workspace: &std::path::Path,
    network: &Network,
    notices: &mut Vec<String>,
) -> Result<ConfinedTools> {
    // The one list of secret stores, for the file tools, the classifier and the sandbox.
    let secrets = SecretStores::from_env(
        &dirs.own(),
        config.sandbox.deny_read.as_deref().unwrap_or_default(),
    )
    .map_err(|err| UsageError(err.to_string()))?;
    let sandbox = sandbox_policy(config, workspace, &secrets, notices);
    let bash = process::Settings {
        hidden_env: config
            .key_env
            .iter()
            .cloned()
            .chain(crate::mcp::secret_names(&config.mcp_servers))
            .collect(),
        allowed_env: config.pass_env.clone(),
        sandbox: sandbox.policy.clone(),
        limits: crate::process::limits::CommandLimits::configured(
            config.sandbox.max_processes,
            config.sandbox.max_memory_mb,
            config.sandbox.read_only_max_processes,
            config.sandbox.read_only_max_memory_mb,
        ),
        network_env: command_network_env(network, config)?,
        ..process::Settings::default()
    };
    let readable = config.permissions.readable.clone().unwrap_or_default();
    let files = FilePolicy::with_dirs(dirs, &readable).with_secrets(secrets.clone());
    let env = Arc::new(
        ToolEnv::new(workspace.to_path_buf(), dirs, bash)
            .with_files(files)
            .with_web(web_env(config, network)?),
    );
    Ok(ConfinedTools {
        env,
        sandbox,
        secrets,
    })
}

/// What `confined_tools` built.
pub struct ConfinedTools {
    pub env: Arc<ToolEnv>,
    /// How commands are sandboxed (its policy is the one `env` runs commands in).
    pub sandbox: SandboxSetup,
    pub secrets: SecretStores,
}

/// How the agent manages the window: the config's threshold and prices, and where to ask the
/// provider for the window (cached in the data directory).
fn context_settings(config: &Config, dirs: &Dirs, network: &Network) -> ContextSettings {
    let cache = dirs.models_cache();
    ContextSettings {
        threshold: config.compact_threshold,
        reply_reserve: u64::from(config.provider.max_tokens.unwrap_or(0))
            .max(config.max_output.min(16_384)),
        probe: (!config.context_window_set).then(|| WindowProbe {
            provider: config.provider.provider.clone(),
            base_url: config.provider.base_url.clone(),
            api_key: config.provider.api_key.clone(),
            model: config.provider.model.clone(),
            cache,
            timeout: Duration::from_secs(3),
            http: Some(network.client()),
        }),
        window_fixed: config.context_window_set,
        prices: config.prices.clone(),
        configured_model: config.provider.model.clone(),
    }
}

/// The user's rules from the config, then the project's from `.cairn/config.toml` when the
/// user trusted that content (or `trust_project`: `--trust-project`). Untrusted project rules
/// come back apart, for the TUI to ask about or a headless run to warn about.
pub fn load_rules(
    config: &Config,
    workspace: &std::path::Path,
    trust_project: bool,
    store: &TrustStore,
) -> Result<(RuleSet, Option<ProjectRules>)> {
    let permissions = &config.permissions;
    // `[web] allow`/`deny` are host rules, kept with the command rules they rank with.
    let with_hosts = |rules: Option<&Vec<String>>, hosts: &[String]| -> Vec<String> {
        let mut all = rules.cloned().unwrap_or_default();
        all.extend(hosts.iter().map(|host| web_hosts::host_rule(host)));
        all
    };
    // A server listed in `[web] allow_private` is reachable *and* allowed: its host needs no
    // approval (the egress policy still lets only the listed port of a private address).
    let mut allowed = config.web.allow.clone();
    allowed.extend(
        config
            .web
            .allow_private
            .iter()
            .filter_map(|entry| crate::web::target::HostPort::parse(entry).ok())
            .map(|listed| listed.host),
    );
    let mut rules = RuleSet::from_config(
        &with_hosts(permissions.allow.as_ref(), &allowed),
        permissions.ask.as_deref().unwrap_or_default(),
        &with_hosts(permissions.deny.as_ref(), &config.web.deny),
    );
    match ProjectRules::load(workspace)? {
        Some(project) if trust_project || store.is_trusted(workspace, &project.hash) => {
            rules.extend(project.rules);
            Ok((rules, None))
        }
        untrusted => Ok((rules, untrusted)),
    }
}

/// Loads the configuration. With nothing configured at all, a local Ollama that answers is
/// used (and the user told so); otherwise the missing key is reported with what to set.
pub fn load_config(dirs: &Dirs, flags: &FlagLayer) -> Result<(Config, Option<String>)> {
    match Config::load(dirs, flags) {
        Ok(config) => Ok((config, None)),
        Err(ConfigError::MissingKey { .. }) if nothing_chosen(dirs, flags) && ollama_answers() => {
            let flags = FlagLayer {
                provider: Some("ollama".into()),
                ..flags.clone()
            };
            let config = Config::load(dirs, &flags)?;
            let notice = format!(
                "no API key configured; using the local Ollama at {} (model {}). Set DEEPSEEK_API_KEY or OPENAI_API_KEY, or `provider` in {}, to use another.",
                config.provider.base_url,
                config.provider.model,
                config.config_path.display()
            );
            Ok((config, Some(notice)))
        }
        Err(err) => Err(eyre!(err)),
    }
}

fn nothing_chosen(dirs: &Dirs, flags: &FlagLayer) -> bool {
    flags.provider.is_none()
        && flags.base_url.is_none()
        && flags.model.is_none()
        && flags.config.is_none()
        && std::env::var_os("CAIRN_MODEL").is_none()
        && std::env::var_os("CAIRN_PROVIDER").is_none()
        && std::env::var_os("CAIRN_BASE_URL").is_none()
        && !dirs.config_file().is_file()
}

/// A quick connect, so a machine without Ollama never waits on it.
fn ollama_answers() -> bool {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 11434));
    std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok()
}

fn start_from(
    args: &RunArgs,
    sessions_dir: &std::path::Path,
    workspace: &std::path::Path,
) -> Result<StartFrom> {
    if args.r#continue {
        return Ok(StartFrom::Resume(session_log::latest_in(
            sessions_dir,
            workspace,
        )?));
    }
    match args.resume.as_deref() {
        Some("") | None => Ok(StartFrom::New),
        Some(id) => Ok(StartFrom::Resume(session_log::find_session_in(
            sessions_dir,
            id,
            workspace,
        )?)),
    }
}

/// The tools of a session, decided once at its start (the tools array stays byte-identical
/// for the whole session): `read_image` only for a model known to take images, or said to
/// in the config.
fn tools_for(vision: Option<bool>) -> Vec<Box<dyn Tool>> {
    let mut tools = standard_tools();
    if vision == Some(true) {
        tools.push(Box::new(crate::tools::read_image::ReadImage));
    }
    tools
}
