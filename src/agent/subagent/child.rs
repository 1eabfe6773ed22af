//! One child: its settings and engine made from the parent's (the same mode, gate, sandbox
//! and workspace, narrowed by its definition), started on a new session linked to the
//! parent's, given the prompt, followed to its end (`drive`), and shut down, so nothing it
//! started outlives the call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::definitions::AgentDef;
use super::drive::{Follow, follow};
use super::read_only::ReadOnlyGate;
use super::{ParentLink, SUBAGENT_TOOL, SubagentArgs, SubagentHost, report};
use crate::agent::{Agent, AgentSettings, ChildOf, Engine, StartFrom};
use crate::bus::{CallId, UserCommand};
use crate::permissions::PermissionGate;
use crate::session_log::ParentRef;
use crate::tool_output::ToolOutput;
use crate::tools::registry::LateTools;
use crate::tools::{Registry, Tool, ToolCx, ToolError};

/// Makes the `subagent` tool a child is offered (the tool's own module knows it).
pub(super) type OfferTool = dyn Fn(Arc<SubagentHost>) -> Box<dyn Tool> + Send + Sync;

/// How long a child that was told to stop gets to wind down before it is dropped (its jobs
/// are killed either way).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Runs the child of one `subagent` call to its end: its report to the parent.
pub(super) async fn run(
    host: &Arc<SubagentHost>,
    args: SubagentArgs,
    agent: &str,
    cx: &ToolCx,
    offer: &OfferTool,
) -> Result<ToolOutput, ToolError> {
    let parent = host
        .parent()
        .ok_or_else(|| ToolError::Internal("subagent: the session is not linked".into()))?;
    let def = host
        .definitions()
        .get(Some(agent))
        .map_err(ToolError::InvalidArgs)?
        .clone();
    // The calls of one reply beyond `max_parallel` wait here for a running one to end.
    let _slot = tokio::select! {
        slot = Arc::clone(&host.slots).acquire_owned() => slot
            .map_err(|_| ToolError::Internal("subagent: no slots".into()))?,
        () = cx.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    let started = Instant::now();
    let number = host.next_number();
    let call = cx
        .call
        .clone()
        .unwrap_or_else(|| CallId(format!("subagent-{number}")));
    let description = args.description.trim().to_string();
    let link = ParentRef {
        session: parent.session.clone(),
        call: call.clone(),
        agent: def.name.clone(),
        description: description.clone(),
    };
    let (settings, engine) = child_parts(host, &parent, &def, link, cx, offer)?;
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let child = Agent::start(settings, engine, StartFrom::New, events_tx)
        .map_err(|err| ToolError::Failed(format!("the subagent's session log: {err}")))?;
    let session = child.session_id().clone();
    let (commands, commands_rx) = mpsc::channel(16);
    let mut task = tokio::spawn(child.run(commands_rx));
    let submit = UserCommand::Submit {
        text: args.prompt,
        attach: Vec::new(),
    };
    if commands.send(submit).await.is_err() {
        return Err(ToolError::Internal(
            "the subagent stopped before its task".into(),
        ));
    }
    let watched = Follow {
        parent: &parent,
        call: &call,
        agent: &def.name,
        description: &description,
        session: &session,
        stall: host.settings.stall,
    };
    let (ending, progress) = follow(&watched, &mut events, &commands, &cx.cancel).await;
    let _ = commands.send(UserCommand::Shutdown).await;
    if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
        .await
        .is_err()
    {
        task.abort();
    }
    Ok(ToolOutput::Subagent(report::run(
        &watched,
        &ending,
        &progress,
        started.elapsed(),
    )))
}

/// The child's settings and engine: the parent's, narrowed by the definition.
fn child_parts(
    host: &SubagentHost,
    parent: &ParentLink,
    def: &AgentDef,
    link: ParentRef,
    cx: &ToolCx,
    offer: &OfferTool,
) -> Result<(AgentSettings, Engine), ToolError> {
    let mut settings = parent.settings.clone();
    // The mode now, not the session's first: a child never runs looser than its parent.
    settings.mode = parent.shared.mode();
    settings.max_steps = def
        .max_steps
        .or(host.settings.max_steps)
        .unwrap_or(parent.settings.max_steps);
    // The parent's turn checkpoints (around the whole delegation) cover the child's changes,
    // so `/undo` of that turn takes them back; the child keeps none of its own.
    settings.checkpoints.enabled = false;
    settings.untrusted_rules = None;
    settings.child = Some(ChildOf {
        parent: link,
        prompt: def.prompt.clone(),
    });
    let model = match &def.model {
        None => Arc::clone(&parent.model),
        Some(name) => parent.model.with_model(name).ok_or_else(|| {
            ToolError::Failed(format!(
                "agent {} asks for the model `{name}`, and this provider's client cannot run a second model",
                def.name
            ))
        })?,
    };
    let gate: Arc<dyn PermissionGate> = if def.read_only {
        Arc::new(ReadOnlyGate::new(Arc::clone(&parent.gate), &def.name))
    } else {
        Arc::clone(&parent.gate)
    };
    let grandchildren = host.for_child();
    let mut tools: Vec<Box<dyn Tool>> = (host.tools)()
        .into_iter()
        .filter(|tool| {
            let name = tool.spec().name;
            name != SUBAGENT_TOOL && def.offers(name)
        })
        .collect();
    if let Some(next) = &grandchildren
        && def.offers(SUBAGENT_TOOL)
    {
        tools.push(offer(Arc::clone(next)));
    }
    let mut registry = Registry::with_tools(tools);
    if let Some(late) = &parent.late {
        registry = registry.with_late(Arc::new(Borrowed {
            inner: Arc::clone(late),
            def: def.clone(),
        }));
    }
    let engine = Engine {
        model,
        registry: Arc::new(registry),
        tool_env: Arc::new(cx.env.for_child()),
        gate,
        // The parent's servers' prompts and resources are the user's, in the parent's UI.
        mcp: None,
        subagents: grandchildren,
    };
    Ok((settings, engine))
}

/// The parent's late tools (MCP servers) as a child sees them: those its definition offers,
/// and never stopped by the child (they are the parent's).
struct Borrowed {
    inner: Arc<dyn LateTools>,
    def: AgentDef,
}

#[async_trait::async_trait]
impl LateTools for Borrowed {
    async fn tools(&self) -> (Vec<Box<dyn Tool>>, Vec<String>) {
        let (tools, _notices) = self.inner.tools().await;
        let kept = tools
            .into_iter()
            .filter(|tool| self.def.offers(tool.spec().name))
            .collect();
        (kept, Vec::new())
    }
}
