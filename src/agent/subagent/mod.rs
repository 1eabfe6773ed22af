//! Subagents (SPEC §11.5): the `subagent` tool hands a task to a child agent, the same engine
//! on a fresh conversation (its own system prompt and the given prompt, never the parent's
//! history), with its own session log linked to the parent's. The child inherits the parent's
//! mode, sandbox, rules and workspace and can only narrow them (`read_only`); its approvals
//! are asked in the parent's UI, labelled; its writes share the parent's write queue and fall
//! inside the parent's turn checkpoints. The parent gets the child's final text and a line of
//! figures; a child that did not finish says so.
//!
//! `SubagentHost` is what a session's `subagent` tool runs children with: the settings, the
//! agent definitions, the tool set, and the link to the parent agent (set by the agent when it
//! starts a session). `child` builds and starts a child, `drive` follows it to its end,
//! `report` writes what the parent reads.

mod child;
pub mod definitions;
mod drive;
pub mod read_only;
pub mod replayed;
mod report;
mod tool;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};

use super::{AgentSettings, RouterShared};
use crate::bus::{AgentEvent, SessionId};
use crate::llm::ChatModel;
use crate::permissions::PermissionGate;
use crate::sync::MutexExt;
use crate::tools::Tool;
use crate::tools::registry::LateTools;
pub use definitions::{AgentDef, Definitions};
pub use tool::SubagentTool;

/// The tool's name, as the model calls it.
pub const SUBAGENT_TOOL: &str = "subagent";

/// A `subagent` call's arguments.
#[derive(Debug, serde::Deserialize)]
struct SubagentArgs {
    description: String,
    prompt: String,
    #[serde(default)]
    agent: Option<String>,
}

/// The `[subagents]` settings, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentSettings {
    /// How deep delegation goes: 1, children are not offered `subagent`.
    pub max_depth: u32,
    pub max_parallel: u32,
    /// Model requests per child unless its definition says; None: the session's.
    pub max_steps: Option<u32>,
    /// No progress for this long: the child is stopped and reported stalled.
    pub stall: Duration,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        Self {
            max_depth: 1,
            max_parallel: 3,
            max_steps: None,
            stall: Duration::from_secs(300),
        }
    }
}

impl SubagentSettings {
    pub fn from_config(file: &crate::config::SubagentsFile) -> Self {
        let default = Self::default();
        Self {
            max_depth: file
                .max_depth
                .unwrap_or(default.max_depth)
                .min(crate::config::MAX_DEPTH_CEILING),
            max_parallel: file.max_parallel.unwrap_or(default.max_parallel).max(1),
            max_steps: file.max_steps.filter(|n| *n > 0),
            stall: file
                .stall_secs
                .map_or(default.stall, |s| Duration::from_secs(s.max(1))),
        }
    }
}

/// Makes the tools of a session (the same list the parent's registry was built from).
pub type ToolFactory = Arc<dyn Fn() -> Vec<Box<dyn Tool>> + Send + Sync>;

/// What a session's `subagent` tool runs children with.
pub struct SubagentHost {
    settings: SubagentSettings,
    /// The depth of the agent whose tool this is: 0 for the user's session.
    depth: u32,
    definitions: Arc<Definitions>,
    tools: ToolFactory,
    /// Children of this agent running at once: at most `max_parallel`.
    slots: Arc<Semaphore>,
    link: Mutex<Option<ParentLink>>,
    /// Numbers the children, for their approvals' ids in the parent's UI.
    started: AtomicU64,
}

/// The parent agent's side, set by the agent when a session starts (and again when it
/// switches sessions).
#[derive(Clone)]
pub(super) struct ParentLink {
    pub settings: AgentSettings,
    pub model: Arc<dyn ChatModel>,
    pub gate: Arc<dyn PermissionGate>,
    pub late: Option<Arc<dyn LateTools>>,
    pub events: mpsc::UnboundedSender<AgentEvent>,
    pub shared: Arc<RouterShared>,
    pub session: SessionId,
}

impl SubagentHost {
    /// The host of the user's session (depth 0).
    pub fn new(
        settings: SubagentSettings,
        definitions: Definitions,
        tools: ToolFactory,
    ) -> Arc<Self> {
        Arc::new(Self::at_depth(settings, Arc::new(definitions), tools, 0))
    }

    fn at_depth(
        settings: SubagentSettings,
        definitions: Arc<Definitions>,
        tools: ToolFactory,
        depth: u32,
    ) -> Self {
        Self {
            settings,
            depth,
            definitions,
            tools,
            slots: Arc::new(Semaphore::new(settings.max_parallel as usize)),
            link: Mutex::new(None),
            started: AtomicU64::new(0),
        }
    }

    /// Whether children of this agent may delegate in turn.
    fn children_delegate(&self) -> bool {
        self.depth + 2 <= self.settings.max_depth
    }

    /// The host a child's own `subagent` tool runs with, when its depth allows one.
    fn for_child(&self) -> Option<Arc<Self>> {
        self.children_delegate().then(|| {
            Arc::new(Self::at_depth(
                self.settings,
                Arc::clone(&self.definitions),
                Arc::clone(&self.tools),
                self.depth + 1,
            ))
        })
    }

    pub fn definitions(&self) -> &Definitions {
        &self.definitions
    }

    pub(super) fn link(&self, link: ParentLink) {
        *self.link.locked() = Some(link);
    }

    fn parent(&self) -> Option<ParentLink> {
        self.link.locked().clone()
    }

    fn next_number(&self) -> u64 {
        self.started.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl super::Agent {
    /// What a child changed (also by its commands, which its own runs cannot see: a child
    /// keeps no checkpoints) goes into its report, from the parent's checkpoints around it.
    pub(super) async fn attach_child_changes(
        &mut self,
        before: &crate::checkpoint::CheckpointId,
        result: &mut crate::bus::ToolResult,
    ) {
        if !matches!(
            result.output,
            Some(crate::tool_output::ToolOutput::Subagent(_))
        ) {
            return;
        }
        let Some((changes, note)) = self.changes_since(before).await else {
            return;
        };
        let Some(crate::tool_output::ToolOutput::Subagent(run)) = result.output.as_mut() else {
            return;
        };
        report::with_changes(run, changes, note.is_some());
        result.text.clone_from(&run.text);
    }

    /// A child's tokens are the session's: logged as a request of this step, they count in
    /// the status line, `/cost`, a resume and `cairn sessions --json`.
    pub(super) fn count_child_usage(&mut self, result: &crate::bus::ToolResult) {
        let Some(crate::tool_output::ToolOutput::Subagent(run)) = &result.output else {
            return;
        };
        let usage = crate::bus::Usage {
            prompt_tokens: run.prompt_tokens,
            completion_tokens: run.completion_tokens,
            cached_tokens: run.cached_tokens,
        };
        if usage == crate::bus::Usage::default() {
            return;
        }
        self.record(&crate::session_log::Record::Usage(usage));
        self.session.costs.push((self.step_counter, usage));
        // The status line's totals take the child's at once, as its live count leaves.
        self.report_context();
    }
}
