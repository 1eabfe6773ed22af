//! An in-process agent wired to the mock LLM, for tests that talk to the engine over the bus
//! the way the TUI does (submit, decide, interrupt) and watch its events.
#![allow(clippy::unwrap_used, dead_code)]

use cairn::bus::TimeTravelEvent;
use cairn::process;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairn::agent::{Agent, AgentSettings, ContextSettings, Engine, StartFrom};
use cairn::bus::Mode;
use cairn::bus::{self, AgentEvent, CallId, Decision, FrontEnds, UserCommand};
use cairn::fs::places::FilePolicy;
use cairn::llm::ProviderSettings;
use cairn::llm::client::HttpModel;
use cairn::permissions::policy::{PolicyGate, PolicySettings};
use cairn::permissions::rules::RuleSet;
use cairn::tools::registry::standard_tools;
use cairn::tools::{Registry, ToolEnv};

thread_local! {
    /// The web tools `with_web` hands to the next agent this thread spawns.
    static WEB: std::cell::RefCell<Option<Arc<cairn::web::WebEnv>>> =
        const { std::cell::RefCell::new(None) };
}

thread_local! {
    /// The `[subagents]` settings `with_subagents` hands to the next agent this thread spawns.
    static SUBAGENTS: std::cell::RefCell<Option<cairn::agent::subagent::SubagentSettings>> =
        const { std::cell::RefCell::new(None) };
}

/// The `subagent` tool on `tool_list`, with the workspace's agent definitions: the host the
/// agent links when it starts.
fn subagent_host(
    settings: cairn::agent::subagent::SubagentSettings,
    workspace: &Path,
    tool_list: &mut Vec<Box<dyn cairn::tools::Tool>>,
) -> Arc<cairn::agent::subagent::SubagentHost> {
    use cairn::agent::subagent::{Definitions, SubagentHost, SubagentTool};
    let definitions = Definitions::load(
        &workspace.join(".no-user-agents"),
        &workspace.join(".cairn/agents"),
    );
    let host = SubagentHost::new(settings, definitions, Arc::new(standard_tools));
    tool_list.push(Box::new(SubagentTool::new(Arc::clone(&host))));
    host
}

pub struct TestAgent {
    pub front: FrontEnds,
    /// The session's tool state (its write queue, jobs, read stamps), shared with the agent.
    pub tools: Arc<ToolEnv>,
    pub seen: Vec<AgentEvent>,
    pub log: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

pub fn provider(url: &str) -> ProviderSettings {
    ProviderSettings {
        provider: "custom".into(),
        base_url: url.to_string(),
        api_key: None,
        model: "mock-model".into(),
        max_retries: 2,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(50),
        idle_timeout: Duration::from_secs(30),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
        wire: Default::default(),
    }
}

impl TestAgent {
    pub async fn spawn(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
    ) -> TestAgent {
        Self::spawn_with_window(workspace, sessions, url, mode, from, 1_000_000).await
    }

    /// An agent that believes the model's window is `window` tokens.
    pub async fn spawn_with_window(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
        window: u64,
    ) -> TestAgent {
        let bash = process::Settings::default();
        let files = FilePolicy::from_env(&[]);
        Self::spawn_full(workspace, sessions, url, mode, from, window, bash, files).await
    }

    /// `spawn` with the bash tool's settings (a sandbox) given.
    pub async fn spawn_with(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
        bash: process::Settings,
    ) -> TestAgent {
        let files = FilePolicy::from_env(&[]);
        Self::spawn_full(workspace, sessions, url, mode, from, 1_000_000, bash, files).await
    }

    /// A fresh session in auto-edit whose commands run in a workspace-write sandbox with the
    /// network off.
    pub async fn sandboxed(workspace: &Path, sessions: &Path, url: &str) -> TestAgent {
        let bash = process::Settings {
            sandbox: Some(cairn::process::sandbox::SandboxPolicy {
                workspace: std::fs::canonicalize(workspace).unwrap(),
                writable: Vec::new(),
                network: false,
                unix_sockets: Vec::new(),
                deny_read: cairn::secret_stores::SecretStores::from_env(&[], &[]).unwrap(),
            }),
            ..process::Settings::default()
        };
        Self::spawn_with(
            workspace,
            sessions,
            url,
            Mode::AutoEdit,
            StartFrom::New,
            bash,
        )
        .await
    }

    /// A fresh session whose file policy opens `readable` roots outside the workspace (the
    /// config's `permissions.readable`).
    pub async fn new_session_readable(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        readable: &[PathBuf],
    ) -> TestAgent {
        let files = FilePolicy::from_env(readable);
        let (bash, window) = (process::Settings::default(), 1_000_000);
        Self::spawn_full(
            workspace,
            sessions,
            url,
            mode,
            StartFrom::New,
            window,
            bash,
            files,
        )
        .await
    }

    /// A fresh session whose skills and commands come from `skills` (user places included).
    pub async fn with_skills(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
        skills: cairn::agent::SkillSettings,
    ) -> TestAgent {
        Self::adjusted_from(workspace, sessions, url, mode, from, |s| s.skills = skills).await
    }

    /// A fresh session with the web tools (`web_fetch`) on `web`.
    pub async fn with_web(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        web: Arc<cairn::web::WebEnv>,
    ) -> TestAgent {
        WEB.with(|cell| *cell.borrow_mut() = Some(web));
        Self::spawn_with_window(workspace, sessions, url, mode, StartFrom::New, 1_000_000).await
    }

    /// A fresh session whose checkpoints are kept as `checkpoints` says (`[checkpoints]`).
    pub async fn new_session_checkpoints(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        checkpoints: cairn::agent::CheckpointSettings,
    ) -> TestAgent {
        Self::adjusted(workspace, sessions, url, mode, |s| {
            s.checkpoints = checkpoints
        })
        .await
    }

    /// A fresh session whose settings `adjust` changes first (the configured model, …).
    pub async fn adjusted(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        adjust: impl FnOnce(&mut AgentSettings),
    ) -> TestAgent {
        Self::adjusted_from(workspace, sessions, url, mode, StartFrom::New, adjust).await
    }

    /// A session started from `from` whose settings `adjust` changes first.
    pub async fn adjusted_from(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
        adjust: impl FnOnce(&mut AgentSettings),
    ) -> TestAgent {
        let (bash, files) = (process::Settings::default(), FilePolicy::from_env(&[]));
        Self::spawn_adjusted(
            workspace, sessions, url, mode, from, 1_000_000, bash, files, adjust,
        )
        .await
    }

    /// A fresh session offering `subagent` with `subagents`, its settings adjusted first.
    pub async fn with_subagents(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        subagents: cairn::agent::subagent::SubagentSettings,
        adjust: impl FnOnce(&mut AgentSettings),
    ) -> TestAgent {
        SUBAGENTS.with(|cell| *cell.borrow_mut() = Some(subagents));
        Self::adjusted(workspace, sessions, url, mode, adjust).await
    }

    /// A fresh session with `hooks`.
    pub async fn with_hooks(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        hooks: Arc<cairn::hooks::Hooks>,
    ) -> TestAgent {
        let (bash, files) = (process::Settings::default(), FilePolicy::from_env(&[]));
        Self::spawn_adjusted(
            workspace,
            sessions,
            url,
            mode,
            StartFrom::New,
            1_000_000,
            bash,
            files,
            |settings| settings.hooks = hooks,
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn spawn_full(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
        window: u64,
        bash: process::Settings,
        files: FilePolicy,
    ) -> TestAgent {
        Self::spawn_adjusted(
            workspace,
            sessions,
            url,
            mode,
            from,
            window,
            bash,
            files,
            |_| {},
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn spawn_adjusted(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
        from: StartFrom,
        window: u64,
        bash: process::Settings,
        files: FilePolicy,
        adjust: impl FnOnce(&mut AgentSettings),
    ) -> TestAgent {
        let workspace = std::fs::canonicalize(workspace).unwrap();
        let sandbox = bash.sandbox.clone();
        let web = WEB.with(|cell| cell.borrow_mut().take());
        let mut tool_list = standard_tools();
        let subagents = SUBAGENTS
            .with(|cell| cell.borrow_mut().take())
            .map(|settings| subagent_host(settings, &workspace, &mut tool_list));
        let tools = Arc::new(match web {
            Some(web) => {
                tool_list.extend(cairn::tools::registry::web_tools(false));
                ToolEnv::new(workspace.clone(), &cairn::dirs::Dirs::from_env(), bash)
                    .with_files(files)
                    .with_web(web)
            }
            None => ToolEnv::new(workspace.clone(), &cairn::dirs::Dirs::from_env(), bash)
                .with_files(files),
        });
        let engine = Engine {
            model: Arc::new(HttpModel::new(provider(url)).unwrap()),
            registry: Arc::new(Registry::with_tools(tool_list)),
            tool_env: Arc::clone(&tools),
            gate: Arc::new(PolicyGate::new(PolicySettings {
                rules: RuleSet::default(),
                workspace: workspace.clone(),
                sandbox,
                places: cairn::permissions::classify::Places::from_env(),
            })),
            mcp: None,
            subagents,
        };
        let mut settings = AgentSettings {
            provider: "custom".into(),
            mode,
            max_steps: 20,
            context_window: window,
            context: ContextSettings::default(),
            interactive: true,
            dirs: cairn::dirs::Dirs::for_sessions(sessions),
            vision: None,
            checkpoints: Default::default(),
            skills: cairn::agent::SkillSettings::workspace_only(&workspace),
            untrusted_rules: None,
            hooks: cairn::hooks::Hooks::none(),
            child: None,
            workspace,
        };
        adjust(&mut settings);
        let (ends, front) = bus::channel();
        let agent = Agent::start(settings, engine, from, ends.events).unwrap();
        let log = agent.log_path();
        let task = tokio::spawn(agent.run(ends.commands));
        TestAgent {
            front,
            tools,
            seen: Vec::new(),
            log,
            task,
        }
    }

    pub async fn send(&self, command: UserCommand) {
        self.front.commands.send(command).await.unwrap();
    }

    /// Applies `what` (undo, redo, a rewind) and waits until it is done: the `Restored` event.
    pub async fn restore(&mut self, what: bus::Restore) -> AgentEvent {
        self.send(UserCommand::Restore { what, apply: true }).await;
        self.wait_for(|e| matches!(e, AgentEvent::TimeTravel(TimeTravelEvent::Restored { .. })))
            .await
    }

    /// A fresh session in `workspace`, its logs under `sessions`.
    pub async fn new_session(
        workspace: &Path,
        sessions: &Path,
        url: &str,
        mode: Mode,
    ) -> TestAgent {
        Self::spawn(workspace, sessions, url, mode, StartFrom::New).await
    }

    /// Answers the held call `call`.
    pub async fn decide(&self, call: &str, decision: Decision) {
        self.send(UserCommand::Decide {
            call: CallId::new(call),
            decision,
        })
        .await;
    }

    pub async fn submit(&self, text: &str) {
        self.send(UserCommand::Submit {
            text: text.into(),
            attach: Vec::new(),
        })
        .await;
    }

    /// Waits for an event matching `pred` (the timeout is only a guard) and returns it.
    pub async fn wait_for(&mut self, pred: impl Fn(&AgentEvent) -> bool) -> AgentEvent {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let event = tokio::time::timeout_at(deadline, self.front.events.recv())
                .await
                .expect("timed out waiting for an event")
                .expect("the agent stopped");
            self.seen.push(event.clone());
            if pred(&event) {
                return event;
            }
        }
    }

    pub async fn shutdown(self) {
        let _ = self.front.commands.send(UserCommand::Shutdown).await;
        self.task.await.unwrap();
    }
}
