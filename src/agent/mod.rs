//! The agent task: owns the session (log, conversation, todos) and serves `UserCommand`s.
//! A small router task answers interrupts and approval decisions at once, even while a
//! request is running; everything else is handled in order by the agent itself.

mod approval;
mod attach;
mod calls;
mod checkpoints;
mod compact;
mod context;
mod conversation;
mod endpoint_check;
mod guard;
pub mod history;
mod hooks;
mod inbox;
mod jobs;
mod local_time;
mod mcp;
mod overflow;
mod plan;
pub mod prompt;
mod read_images;
mod reply_kept;
mod revert;
mod rewind;
mod run_later;
mod run_loop;
mod session_open;
mod skills;
mod steering;
pub mod subagent;
mod turn;
pub mod user_shell;

use crate::bus::{ConversationEvent, ReportEvent};
use crate::sync::MutexExt;
pub use context::ContextSettings;
use context::WindowCell;
use conversation::Conversation;
pub use overflow::{is_context_overflow, window_in_error};
pub use reply_kept::{CUT_OFF_MARK, INTERRUPTED_MARK, INTERRUPTED_NOTE};
pub use skills::SkillSettings;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::bus::Mode;
use crate::bus::{AgentEvent, CallId, CostRow, Decision, SessionId, Usage};
use crate::llm::ChatModel;
use crate::models;
use crate::permissions::PermissionGate;
use crate::session_log::{self, LogError, Record, SessionLog, ToldState};
use crate::tool_output::TodoItem;
use crate::tools::{Registry, ToolEnv};
use prompt::WorkspaceFacts;
use session_open::open_session;

/// How the agent behaves; fixed for the life of the task.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    pub workspace: PathBuf,
    pub provider: String,
    pub mode: Mode,
    /// Model requests allowed per user request.
    pub max_steps: u32,
    /// The window at start: the config's, or the catalogue's for the model. The provider may
    /// tell another one (`context.probe`).
    pub context_window: u64,
    pub context: ContextSettings,
    /// False in headless runs: a call that would ask is denied and the run stops.
    pub interactive: bool,
    /// Where the session logs, checkpoint stores and trust store live.
    pub dirs: crate::dirs::Dirs,
    /// Whether the configured model takes images (config `vision`, else the known-models
    /// table); `None`: unknown. A model switched to later is looked up in the table.
    pub vision: Option<bool>,
    pub checkpoints: CheckpointSettings,
    /// Where skills and commands are found, and whether project skills are trusted.
    pub skills: SkillSettings,
    /// The project's rules the user was asked to trust at start-up (the TUI shows them);
    /// `UserCommand::TrustProjectRules` puts them in force.
    pub untrusted_rules: Option<crate::permissions::trust::PendingTrust>,
    /// The session's hooks (`crate::hooks`); `Hooks::none()` for none.
    pub hooks: Arc<crate::hooks::Hooks>,
    /// Set for a subagent's session: whose child it is, and its own system prompt.
    pub child: Option<ChildOf>,
}

/// A subagent's session: linked to its parent's (`Record::Meta::parent`), with the system
/// prompt of its agent definition (None: the standard one, told it is a subagent).
#[derive(Debug, Clone)]
pub struct ChildOf {
    pub parent: session_log::ParentRef,
    pub prompt: Option<String>,
}

/// How the session's checkpoints are kept (`[checkpoints]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// Off: no checkpoints, no undo (the benches' switch, and `enabled = false`).
    pub enabled: bool,
    pub notifications: bool,
    /// The store's size budget, in bytes.
    pub budget: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            notifications: true,
            budget: crate::checkpoint::DEFAULT_BUDGET_MB * 1024 * 1024,
        }
    }
}

impl CheckpointSettings {
    pub fn from_config(file: &crate::config::CheckpointsFile) -> Self {
        let default = Self::default();
        Self {
            enabled: file.enabled.unwrap_or(default.enabled),
            notifications: file.notifications.unwrap_or(default.notifications),
            budget: file
                .max_store_mb
                .map_or(default.budget, |mb| mb.saturating_mul(1024 * 1024)),
        }
    }
}

/// Answers `ListModels` off the agent's queue: asks the provider in a task of its own.
struct ModelLister {
    model: Arc<dyn ChatModel>,
    events: mpsc::UnboundedSender<AgentEvent>,
    configured: String,
}

impl ModelLister {
    fn spawn(&self) {
        let model = Arc::clone(&self.model);
        let events = self.events.clone();
        let configured = self.configured.clone();
        tokio::spawn(async move {
            let listed = model.list_models().await;
            let current = model.model();
            let (listed, unavailable) = match listed {
                Ok(listed) => (listed, None),
                Err(err) => (Vec::new(), Some(err.to_string())),
            };
            let models = crate::llm::listing::offered(&configured, &current, &listed);
            let _ = events.send(AgentEvent::Report(ReportEvent::Models {
                models,
                configured,
                unavailable,
            }));
        });
    }
}

/// Where the conversation comes from.
#[derive(Debug, Clone)]
pub enum StartFrom {
    New,
    /// Resume the session whose log is at this path.
    Resume(PathBuf),
}

/// The parts of the engine the agent drives.
pub struct Engine {
    pub model: Arc<dyn ChatModel>,
    pub registry: Arc<Registry>,
    /// What the tools share: the workspace, bash settings, jobs, read stamps, write queue.
    pub tool_env: Arc<ToolEnv>,
    pub gate: Arc<dyn PermissionGate>,
    /// The session's MCP servers, for their prompts and resources (their tools are the
    /// registry's).
    pub mcp: Option<Arc<crate::mcp::McpHub>>,
    /// What the `subagent` tool runs children with (None: the session offers no subagents).
    pub subagents: Option<Arc<subagent::SubagentHost>>,
}

/// State the router task shares with the agent.
#[derive(Default)]
struct RouterShared {
    approvals: Mutex<HashMap<CallId, oneshot::Sender<Decision>>>,
    /// The token of the latest submitted request (queued or running).
    cancel: Mutex<CancellationToken>,
    /// Parent of every request token: cancelled once, on shutdown, so nothing queued runs on.
    closing: CancellationToken,
    mode: Mutex<Mode>,
    /// Messages and commands sent while a request runs, for its next step boundary.
    inbox: Mutex<inbox::Inbox>,
    /// Stops the user's command that is running (`!cmd`), if one is.
    shell: Mutex<Option<CancellationToken>>,
    /// The current session's tools, for the `/jobs` commands the router serves at once.
    tools: Mutex<Option<Arc<ToolEnv>>>,
}

impl RouterShared {
    /// `Interrupt` stops the user's own command first, when one runs: a second one stops
    /// the request.
    fn stop_shell(&self) -> bool {
        match self.shell.locked().take() {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
    fn set_tools(&self, tools: Arc<ToolEnv>) {
        *self.tools.locked() = Some(tools);
    }
    fn tools(&self) -> Option<Arc<ToolEnv>> {
        self.tools.locked().clone()
    }
    fn mode(&self) -> Mode {
        *self.mode.locked()
    }
    fn set_mode(&self, mode: Mode) {
        *self.mode.locked() = mode;
    }
    /// The token of a newly submitted request. Made when the request is submitted, not when
    /// it starts, so an interrupt sent right after a submit is never lost.
    fn fresh_cancel(&self) -> CancellationToken {
        let token = self.closing.child_token();
        *self.cancel.locked() = token.clone();
        token
    }
    /// Ends everything: running and queued requests, and any approval still waiting.
    fn close(&self) {
        self.closing.cancel();
        self.approvals.locked().clear();
    }
    fn forget_approval(&self, call: &CallId) {
        self.approvals.locked().remove(call);
    }
    fn cancel_current(&self) {
        self.cancel.locked().cancel();
    }
    fn park_approval(&self, call: CallId, tx: oneshot::Sender<Decision>) {
        self.approvals.locked().insert(call, tx);
    }
    fn decide(&self, call: &CallId, decision: Decision) {
        let tx = self.approvals.locked().remove(call);
        if let Some(tx) = tx {
            // The waiting call may have been cancelled meanwhile; then nobody listens.
            let _ = tx.send(decision);
        }
    }
}

/// One session's conversation and its log.
struct Session {
    id: SessionId,
    log: SessionLog,
    /// What the model was last told about the changing state (see `prompt::state_note`).
    told: ToldState,
    /// The system prompt and the messages, with the caches derived from them.
    conversation: Conversation,
    todos: Vec<TodoItem>,
    /// Usage of every model request: (step, usage); step 0 for a compaction's summary.
    costs: Vec<(u64, Usage)>,
    /// The user's words of the request being worked on (kept verbatim through compaction).
    request_text: String,
    /// Images `read_image` read in the running step, shown to the model after its results.
    seen_images: Vec<crate::content::ImageRef>,
    /// The skills found when the session started, and those loaded since.
    skills: skills::SessionSkills,
}

pub struct Agent {
    settings: AgentSettings,
    engine: Engine,
    events: mpsc::UnboundedSender<AgentEvent>,
    shared: Arc<RouterShared>,
    session: Session,
    facts: WorkspaceFacts,
    step_counter: u64,
    log_failed: bool,
    window: Arc<WindowCell>,
    /// Bytes of the tool schemas, sent with every request.
    tools_bytes: u64,
    checkpoints: checkpoints::Checkpoints,
    /// What a `pre_tool` hook changed of a call's input, told to the model with its result.
    hook_notes: HashMap<CallId, String>,
    /// Runs of hooks started in the background (notifications), to be logged.
    late_hook_runs: Arc<Mutex<Vec<crate::hooks::Outcome>>>,
}

impl Agent {
    /// Opens (or creates) the session and publishes its start and, when resumed, its history.
    pub fn start(
        settings: AgentSettings,
        engine: Engine,
        from: StartFrom,
        events: mpsc::UnboundedSender<AgentEvent>,
    ) -> Result<Self, LogError> {
        let shared = Arc::new(RouterShared::default());
        shared.set_mode(settings.mode);
        let (found, skill_warnings) = skills::discover(&settings.skills, settings.context_window);
        let facts = WorkspaceFacts::gather(&settings.workspace).with_skills(&found.listing.text);
        let (session, history) = open_session(&settings, &engine, &facts, &from, found)?;
        let window = Arc::new(WindowCell::new(settings.context_window));
        let tools_bytes = context::serialized_len(engine.registry.specs());
        let mut agent = Self {
            settings,
            engine,
            events,
            shared,
            session,
            facts,
            step_counter: 0,
            log_failed: false,
            window,
            tools_bytes,
            checkpoints: Default::default(),
            hook_notes: HashMap::new(),
            late_hook_runs: Arc::default(),
        };
        agent.link_subagents();
        agent.publish_jobs();
        agent.publish_mcp_offerings();
        agent.announce(matches!(from, StartFrom::Resume(_)), history);
        for message in skill_warnings {
            agent.warn(&message);
        }
        Ok(agent)
    }

    pub fn session_id(&self) -> &SessionId {
        &self.session.id
    }

    /// Tells the `subagent` tool which session its children belong to, and what they inherit.
    fn link_subagents(&self) {
        let Some(host) = &self.engine.subagents else {
            return;
        };
        host.link(subagent::ParentLink {
            settings: self.settings.clone(),
            model: Arc::clone(&self.engine.model),
            gate: Arc::clone(&self.engine.gate),
            late: self.engine.registry.late(),
            events: self.events.clone(),
            shared: Arc::clone(&self.shared),
            session: self.session.id.clone(),
        });
    }

    /// Tells the front end something it should know (setup notices, before `run`).
    pub fn warn(&self, message: &str) {
        self.emit(AgentEvent::Report(ReportEvent::Warning {
            message: message.to_string(),
        }));
    }

    pub fn log_path(&self) -> PathBuf {
        self.session.log.path().to_path_buf()
    }

    fn announce(&mut self, resumed: bool, history: Vec<AgentEvent>) {
        self.emit(AgentEvent::Conversation(
            ConversationEvent::SessionStarted {
                session: self.session.id.clone(),
                provider: self.settings.provider.clone(),
                model: self.engine.model.model(),
                mode: self.shared.mode(),
                context_window: self.window(),
                resumed,
            },
        ));
        for event in history {
            self.emit(event);
        }
        self.announce_left_jobs();
        self.announce_skills();
        for skill in self.session.skills.loaded.clone() {
            self.open_skill_dir(&skill.dir);
        }
        self.report_context();
        if resumed {
            // The history replays the session's old mode and model; what applies now is ours.
            self.emit(AgentEvent::Report(ReportEvent::ModeChanged {
                mode: self.shared.mode(),
            }));
            self.emit(AgentEvent::Report(ReportEvent::ModelChanged {
                model: self.engine.model.model(),
            }));
        }
    }

    /// Replaces the conversation. Nothing of the old session carries over: its jobs end, its
    /// reads no longer count, and its session rules stop applying (a resumed session brings
    /// its own back from its log).
    async fn switch_session(&mut self, from: StartFrom) {
        self.engine.tool_env.jobs.kill_all().await;
        // A new session starts with fresh read stamps and jobs, but the user's file policy
        // (readable roots from the config) stays what it was.
        self.engine.tool_env = Arc::new(self.engine.tool_env.fresh());
        self.publish_jobs();
        self.engine.gate.clear_session_rules();
        // A new session describes the workspace (and its skills) as they are now.
        let (found, skill_warnings) =
            skills::discover(&self.settings.skills, self.settings.context_window);
        self.facts =
            WorkspaceFacts::gather(&self.settings.workspace).with_skills(&found.listing.text);
        match open_session(&self.settings, &self.engine, &self.facts, &from, found) {
            Ok((session, history)) => {
                self.session = session;
                self.step_counter = 0;
                self.link_subagents();
                self.emit(AgentEvent::Conversation(ConversationEvent::Reset));
                self.announce(matches!(from, StartFrom::Resume(_)), history);
                for message in skill_warnings {
                    self.warn(&message);
                }
                self.session_start_hooks().await;
            }
            Err(err) => self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: err.to_string(),
            })),
        }
    }

    /// Asks the provider for the window of `model` in the background (once per model; the
    /// answer is cached on disk), unless the user set the window.
    fn ask_window(&self, model: String) {
        let Some(probe) = self.settings.context.probe.clone() else {
            return;
        };
        if self.settings.context.window_fixed || !probe.can_ask() {
            return;
        }
        let probe = models::discover::WindowProbe { model, ..probe };
        let window = Arc::clone(&self.window);
        let engine_model = Arc::clone(&self.engine.model);
        tokio::spawn(async move {
            if let Some(told) = probe.window().await
                && engine_model.model() == probe.model
            {
                window.set(told);
            }
        });
    }

    /// Every model request of the session with its cost, when the model's prices are known.
    fn cost_rows(&self) -> Vec<CostRow> {
        let prices = self.prices();
        self.session
            .costs
            .iter()
            .map(|&(step, usage)| CostRow {
                step,
                usage,
                cost_usd: prices.map(|p| {
                    p.cost(
                        usage.prompt_tokens,
                        usage.cached_tokens,
                        usage.completion_tokens,
                    )
                }),
            })
            .collect()
    }

    fn prices(&self) -> Option<models::Prices> {
        let context = &self.settings.context;
        context
            .prices
            .for_model(&self.engine.model.model(), &context.configured_model)
    }

    /// Publishes the window's fill and the session's cost.
    fn report_context(&mut self) {
        let used = self.estimate();
        // No cost before there is one (an empty sum would be -0.0).
        let rows = self.cost_rows();
        let cost_usd = (self.prices().is_some() && !rows.is_empty()).then(|| {
            rows.iter()
                .filter_map(|r| r.cost_usd)
                .fold(0.0, |sum, cost| sum + cost)
        });
        self.emit(AgentEvent::Report(ReportEvent::Context {
            used,
            window: self.window(),
            cost_usd,
        }));
        let totals = self
            .session
            .costs
            .iter()
            .fold(crate::bus::Usage::default(), |sum, (_, usage)| sum + *usage);
        self.emit(AgentEvent::Report(ReportEvent::SessionUsage {
            totals,
            requests: self.session.costs.len() as u64,
        }));
    }

    /// Record, then publish. A log that cannot be written is reported once; the work goes on,
    /// since stopping would lose more than it protects.
    /// Where this session's images are kept (beside its log).
    fn image_store(&self) -> session_log::images::ImageStore {
        session_log::images::ImageStore::beside(self.session.log.path())
    }

    fn record(&mut self, record: &Record) {
        if let Err(err) = self.session.log.append(record) {
            tracing::error!("{err}");
            if !self.log_failed {
                self.log_failed = true;
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: format!("the session log cannot be written: {err}"),
                }));
            }
        }
    }

    fn emit(&self, event: AgentEvent) {
        // A front end that went away cannot be told anything; the log still has it all.
        let _ = self.events.send(event);
    }
}
