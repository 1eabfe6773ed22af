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
mod plan;
pub mod prompt;
mod revert;
mod rewind;
mod run_later;
mod skills;
mod steering;
mod turn;
pub mod user_shell;

use crate::sync::MutexExt;
pub use compact::{is_context_overflow, window_in_error};
pub use context::ContextSettings;
use context::WindowCell;
use conversation::Conversation;
pub use skills::SkillSettings;
pub use turn::{CUT_OFF_MARK, INTERRUPTED_MARK, INTERRUPTED_NOTE};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::bus::Mode;
use crate::bus::{AgentEvent, CallId, CostRow, Decision, SessionId, Usage, UserCommand};
use crate::llm::ChatModel;
use crate::models;
use crate::permissions::PermissionGate;
use crate::session_log::{self, LogError, Record, SessionLog, ToldState};
use crate::tool_output::TodoItem;
use crate::tools::{Registry, ToolEnv};
use prompt::WorkspaceFacts;

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
            let _ = events.send(AgentEvent::Models {
                models,
                configured,
                unavailable,
            });
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
}

/// State the router task shares with the agent.
#[derive(Default)]
struct Shared {
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

impl Shared {
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
    shared: Arc<Shared>,
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
        let shared = Arc::new(Shared::default());
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
        agent.publish_jobs();
        agent.announce(matches!(from, StartFrom::Resume(_)), history);
        for message in skill_warnings {
            agent.warn(&message);
        }
        Ok(agent)
    }

    pub fn session_id(&self) -> &SessionId {
        &self.session.id
    }

    /// Tells the front end something it should know (setup notices, before `run`).
    pub fn warn(&self, message: &str) {
        self.emit(AgentEvent::Warning {
            message: message.to_string(),
        });
    }

    pub fn log_path(&self) -> PathBuf {
        self.session.log.path().to_path_buf()
    }

    fn announce(&mut self, resumed: bool, history: Vec<AgentEvent>) {
        self.emit(AgentEvent::SessionStarted {
            session: self.session.id.clone(),
            provider: self.settings.provider.clone(),
            model: self.engine.model.model(),
            mode: self.shared.mode(),
            context_window: self.window(),
            resumed,
        });
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
            self.emit(AgentEvent::ModeChanged {
                mode: self.shared.mode(),
            });
            self.emit(AgentEvent::ModelChanged {
                model: self.engine.model.model(),
            });
        }
    }

    /// Serves commands until `Shutdown` or until every sender is gone. Background jobs and
    /// anything tools started die before this returns.
    pub async fn run(mut self, mut commands: mpsc::Receiver<UserCommand>) {
        let (work_tx, mut work_rx) = mpsc::unbounded_channel();
        let shared = Arc::clone(&self.shared);
        let events = self.events.clone();
        let lister = ModelLister {
            model: Arc::clone(&self.engine.model),
            events: self.events.clone(),
            configured: self.settings.context.configured_model.clone(),
        };
        let gate = Arc::clone(&self.engine.gate);
        let mut untrusted = self.settings.untrusted_rules.take();
        let router = tokio::spawn(async move {
            while let Some(command) = commands.recv().await {
                // Like a mode change, trust applies to the very next gate check.
                if matches!(command, UserCommand::TrustProjectRules) {
                    let _ = events.send(trust_project_rules(untrusted.take(), gate.as_ref()));
                    continue;
                }
                if matches!(
                    command,
                    UserCommand::ListJobs
                        | UserCommand::ShowJobOutput { .. }
                        | UserCommand::KillJob { .. }
                ) {
                    // The user's view of the jobs never waits for a running request.
                    jobs::serve(&shared, &events, command);
                    continue;
                }
                if shared.inbox.locked().hold(&command) {
                    continue;
                }
                let token = match &command {
                    UserCommand::Interrupt => {
                        if !shared.stop_shell() {
                            shared.cancel_current();
                        }
                        continue;
                    }
                    // The picker waits for it: never behind a running request.
                    UserCommand::ListModels => {
                        lister.spawn();
                        continue;
                    }
                    UserCommand::Withdraw { id, text, sent } => {
                        let mut inbox = shared.inbox.locked();
                        if !sent {
                            inbox.note_withdrawn(id.clone(), text.clone());
                        } else if inbox.withdraw(id) {
                            let _ = events.send(AgentEvent::Withdrawn { id: id.clone() });
                        }
                        // The agent logs it when it gets to it.
                        CancellationToken::new()
                    }
                    UserCommand::Submit { .. } | UserCommand::Steer { .. } => {
                        shared.inbox.locked().request_forwarded();
                        shared.fresh_cancel()
                    }
                    UserCommand::Decide { call, decision } => {
                        shared.decide(call, decision.clone());
                        continue;
                    }
                    UserCommand::Shutdown => break,
                    UserCommand::Compact { .. } => shared.fresh_cancel(),
                    // A mode change applies to the very next gate check, also mid-request;
                    // the agent records it when it gets to it.
                    UserCommand::SetMode { mode } => {
                        shared.set_mode(*mode);
                        CancellationToken::new()
                    }
                    _ => CancellationToken::new(),
                };
                if work_tx.send((command, token)).is_err() {
                    break;
                }
            }
            // Shutdown, or every sender is gone: nothing may keep the agent waiting now.
            shared.close();
            let _ = work_tx.send((UserCommand::Shutdown, CancellationToken::new()));
        });
        self.ask_window(self.engine.model.model());
        self.check_endpoint_in_background();
        self.session_start_hooks().await;
        self.emit(AgentEvent::Idle);
        while let Some((command, cancel)) = work_rx.recv().await {
            match command {
                UserCommand::Submit { text, attach } => {
                    let request = steering::Request {
                        queued: None,
                        text,
                        attach,
                    };
                    self.serve(request, &cancel).await;
                    self.emit(AgentEvent::Idle);
                }
                UserCommand::Steer { id, text, attach } => {
                    let request = steering::Request {
                        queued: Some(id),
                        text,
                        attach,
                    };
                    self.serve(request, &cancel).await;
                    self.emit(AgentEvent::Idle);
                }
                UserCommand::Shell {
                    id,
                    command,
                    context,
                } => self.run_user_shell(id, command, context).await,
                UserCommand::Withdraw { .. } => self.log_withdrawn(),
                UserCommand::SetMode { mode } => {
                    self.shared.set_mode(mode);
                    self.record(&Record::Mode { mode });
                    self.emit(AgentEvent::ModeChanged { mode });
                }
                UserCommand::SetModel { model } => {
                    self.engine.model.set_model(&model);
                    self.record(&Record::Model {
                        model: model.clone(),
                    });
                    self.emit(AgentEvent::ModelChanged {
                        model: model.clone(),
                    });
                    if !self.settings.context.window_fixed
                        && let Some(info) = crate::models::lookup(&model)
                    {
                        self.window.set(info.context_window);
                    }
                    self.ask_window(model);
                    self.report_context();
                }
                UserCommand::Compact { focus } => {
                    self.compact(compact::Why::Asked, focus, &cancel).await;
                    self.emit(AgentEvent::Idle);
                }
                UserCommand::ShowCost => {
                    let rows = self.cost_rows();
                    self.emit(AgentEvent::CostReport { rows });
                }
                // Handled in order, like a request: never while one runs.
                UserCommand::ListRewindPoints => self.list_rewind_points(),
                UserCommand::Restore { what, apply } => self.restore(what, apply).await,
                UserCommand::PreviewRevert { target } => self.preview_revert(target).await,
                UserCommand::Revert { target, stamp } => self.apply_revert(target, stamp).await,
                UserCommand::ListSessions => {
                    let here = &self.settings.workspace;
                    let sessions =
                        session_log::list_sessions_for(self.settings.dirs.sessions(), here);
                    self.emit(AgentEvent::Sessions {
                        sessions,
                        here: here.display().to_string(),
                    });
                }
                UserCommand::NewSession => self.switch_session(StartFrom::New).await,
                UserCommand::Resume { session } => {
                    let (dir, here) = (self.settings.dirs.sessions(), &self.settings.workspace);
                    match session_log::find_session_in(dir, &session.0, here) {
                        Ok(path) => self.switch_session(StartFrom::Resume(path)).await,
                        Err(err) => self.emit(AgentEvent::Warning {
                            message: err.to_string(),
                        }),
                    }
                }
                UserCommand::TrustSkill { name } => self.trust_skill(&name),
                UserCommand::Shutdown => break,
                UserCommand::Interrupt
                | UserCommand::TrustProjectRules
                | UserCommand::Decide { .. }
                | UserCommand::ListJobs
                | UserCommand::ShowJobOutput { .. }
                | UserCommand::KillJob { .. }
                | UserCommand::ListModels => {}
            }
        }
        router.abort();
        // A grace period for jobs to exit (dropping the table would only SIGKILL them).
        self.engine.tool_env.jobs.kill_all().await;
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
                self.emit(AgentEvent::Reset);
                self.announce(matches!(from, StartFrom::Resume(_)), history);
                for message in skill_warnings {
                    self.warn(&message);
                }
                self.session_start_hooks().await;
            }
            Err(err) => self.emit(AgentEvent::Warning {
                message: err.to_string(),
            }),
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
        self.emit(AgentEvent::Context {
            used,
            window: self.window(),
            cost_usd,
        });
        let mut totals = crate::bus::Usage::default();
        for (_, usage) in &self.session.costs {
            totals.prompt_tokens += usage.prompt_tokens;
            totals.completion_tokens += usage.completion_tokens;
            totals.cached_tokens += usage.cached_tokens;
        }
        self.emit(AgentEvent::SessionUsage {
            totals,
            requests: self.session.costs.len() as u64,
        });
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
                self.emit(AgentEvent::Warning {
                    message: format!("the session log cannot be written: {err}"),
                });
            }
        }
    }

    fn emit(&self, event: AgentEvent) {
        // A front end that went away cannot be told anything; the log still has it all.
        let _ = self.events.send(event);
    }
}

/// Creates a new session log, or reads one back and rebuilds its state.
fn open_session(
    settings: &AgentSettings,
    engine: &Engine,
    facts: &WorkspaceFacts,
    from: &StartFrom,
    mut skills: skills::SessionSkills,
) -> Result<(Session, Vec<AgentEvent>), LogError> {
    let told_now = ToldState {
        mode: settings.mode,
        git_branch: facts.git_branch.clone(),
    };
    match from {
        StartFrom::New => {
            let id = session_log::new_session_id();
            let mut log = SessionLog::create(settings.dirs.sessions(), &id)?;
            log.append(&Record::Meta {
                id: id.clone(),
                cwd: settings.workspace.display().to_string(),
                provider: settings.provider.clone(),
                model: engine.model.model(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                started: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                    .to_string(),
            })?;
            let system = prompt::system_prompt(facts, &told_now);
            log.append(&Record::System {
                prompt: system.clone(),
                told: told_now.clone(),
            })?;
            Ok((
                Session {
                    id,
                    log,
                    told: told_now,
                    conversation: Conversation::new(system, Vec::new()),
                    todos: Vec::new(),
                    costs: Vec::new(),
                    request_text: String::new(),
                    seen_images: Vec::new(),
                    skills,
                },
                Vec::new(),
            ))
        }
        StartFrom::Resume(path) => {
            let loaded = session_log::read_log(path)?;
            let id = match loaded.records.first() {
                Some(Record::Meta { id, .. }) => id.clone(),
                _ => return Err(LogError::NoMeta { path: path.clone() }),
            };
            let store = session_log::images::ImageStore::beside(path);
            let rebuilt =
                history::rebuild_loading(&loaded.records, &|image| store.get(&image.hash).ok());
            let mut log = SessionLog::open_append(path.clone())?;
            // The prompt the session was started with goes out again unchanged. A log from
            // before prompts were recorded gets one now, so later resumes agree with this one.
            let (system, told) = match (rebuilt.system, rebuilt.told) {
                (Some(system), Some(told)) => (system, told),
                _ => {
                    let system = prompt::system_prompt(facts, &told_now);
                    log.append(&Record::System {
                        prompt: system.clone(),
                        told: told_now.clone(),
                    })?;
                    (system, told_now)
                }
            };
            for prefix in &rebuilt.session_rules {
                engine.gate.allow_for_session(prefix);
            }
            // Jobs do not survive a restart: the model is told which of its jobs are gone.
            let (left, highest) = jobs::left_behind(&loaded.records);
            engine.tool_env.jobs.continue_after_restart(left, highest);
            // Resumed in another mode or with another model: the log says so from here on, so
            // a replay shows what the rest ran in.
            if rebuilt.mode.is_some_and(|mode| mode != settings.mode) {
                log.append(&Record::Mode {
                    mode: settings.mode,
                })?;
            }
            let model = engine.model.model();
            if rebuilt
                .model
                .as_ref()
                .is_some_and(|logged| *logged != model)
            {
                log.append(&Record::Model { model })?;
            }
            let mut events: Vec<AgentEvent> = loaded
                .warnings
                .into_iter()
                .map(|message| AgentEvent::Warning { message })
                .collect();
            events.extend(rebuilt.events);
            skills.loaded = rebuilt.skills;
            Ok((
                Session {
                    id,
                    log,
                    told,
                    conversation: Conversation::new(system, rebuilt.messages),
                    todos: rebuilt.todos,
                    costs: rebuilt.costs,
                    request_text: rebuilt.request_text,
                    seen_images: Vec::new(),
                    skills,
                },
                events,
            ))
        }
    }
}

/// Carries out the user's trust in the project's rules (once: a second answer finds none).
fn trust_project_rules(
    untrusted: Option<crate::permissions::trust::PendingTrust>,
    gate: &dyn PermissionGate,
) -> AgentEvent {
    match untrusted {
        Some(pending) => pending.accept(gate),
        None => AgentEvent::Warning {
            message: "no project rules are waiting to be trusted".into(),
        },
    }
}
