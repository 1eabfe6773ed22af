//! The tool runtime: runs calls that passed the gate. The calls of one reply go in batches of
//! one lane each (see `Lane`), in the reply's order; each call runs on its own task, writes of
//! one real path in the model's order; on interrupt, reads are abandoned at once while commands
//! and writes are awaited. The agent asks the gate, records the results and publishes the
//! events; `cairn tool run` runs its one call through the same runtime.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{Access, HostCheck, Registry, TailSink, ToolCx, ToolEnv, ToolError};
use crate::bus::{CallId, ToolResult};
use crate::process::Grant;

/// A call that passed validation and the gate: what it touches and the sandbox it runs in.
#[derive(Debug, Clone)]
pub struct PassedCall {
    pub id: CallId,
    pub name: String,
    pub args: Value,
    pub access: Access,
    /// The sandbox a command runs in.
    pub grant: Grant,
}

/// Which calls of one reply may run together. Reads run together, and so do writes (different
/// paths in parallel, one path in order); a command or a session call runs alone. Batches run
/// one after another in the reply's order, so a command sees every write before it and no
/// write after it, and a read sees the writes before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Read,
    Write,
    Alone,
    /// Subagents: the delegations of one reply run together (`[subagents] max_parallel`
    /// bounds how many at once); each child's own calls are scheduled by its own runtime.
    Delegate,
}

impl AsRef<PassedCall> for PassedCall {
    fn as_ref(&self) -> &PassedCall {
        self
    }
}

impl Lane {
    pub fn of(access: &Access) -> Lane {
        if access.is_read() {
            Lane::Read
        } else if matches!(access, Access::Delegate { .. }) {
            Lane::Delegate
        } else if access.written().is_some() {
            Lane::Write
        } else {
            Lane::Alone
        }
    }
}

/// A call of a reply as the gate left it: to run, or answered already (`D`: an error, a
/// denial, a cancellation — whatever the caller reports for it).
pub enum Planned<R, D> {
    Run(R),
    Answered(D),
}

/// The reply's calls in the order they are handled: a batch of one lane, or an answered call
/// (which ends the batch before it).
pub enum Step<R, D> {
    Batch(Vec<R>),
    Answered(D),
}

/// Groups consecutive calls of one lane into batches, keeping the reply's order. `R` is the
/// caller's own record of a passed call (it may carry more than the runtime needs).
pub fn in_batches<R: AsRef<PassedCall>, D>(plans: Vec<Planned<R, D>>) -> Vec<Step<R, D>> {
    let mut steps = Vec::new();
    let mut batch: Vec<R> = Vec::new();
    let flush = |batch: &mut Vec<R>, steps: &mut Vec<Step<R, D>>| {
        if !batch.is_empty() {
            steps.push(Step::Batch(std::mem::take(batch)));
        }
    };
    for plan in plans {
        match plan {
            Planned::Run(call) => {
                let lane = Lane::of(&call.as_ref().access);
                if batch.first().is_some_and(|first| {
                    lane == Lane::Alone || Lane::of(&first.as_ref().access) != lane
                }) {
                    flush(&mut batch, &mut steps);
                }
                batch.push(call);
            }
            Planned::Answered(answer) => {
                flush(&mut batch, &mut steps);
                steps.push(Step::Answered(answer));
            }
        }
    }
    flush(&mut batch, &mut steps);
    steps
}

/// What the caller watches of one running call.
pub struct Watch {
    /// Live output of a command.
    pub tail: Option<TailSink>,
    /// Called when the call really starts: after its approval and the calls it waits for.
    pub started: Box<dyn FnOnce() + Send>,
    /// What a fetch's redirect may follow (None: no other host).
    pub hosts: Option<HostCheck>,
}

impl Watch {
    /// Nothing watched.
    pub fn none() -> Self {
        Self {
            tail: None,
            started: Box::new(|| {}),
            hosts: None,
        }
    }
}

/// The registry and the session's tool environment: everything a call runs with.
pub struct Runtime {
    registry: Arc<Registry>,
    env: Arc<ToolEnv>,
}

/// A started batch: the calls not started because the user interrupted first (each ends in
/// `ToolResult::cancelled()`), and the running ones.
pub struct Started {
    pub not_started: Vec<PassedCall>,
    pub running: Running,
}

type ToolHandle = tokio::task::JoinHandle<ToolResult>;

/// The running calls of a batch, awaited in call order.
pub struct Running {
    calls: VecDeque<(PassedCall, ToolHandle)>,
    cancel: CancellationToken,
}

impl Runtime {
    pub fn new(registry: Arc<Registry>, env: Arc<ToolEnv>) -> Self {
        Self { registry, env }
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub fn env(&self) -> &Arc<ToolEnv> {
        &self.env
    }

    /// Starts the calls of one batch, each on its own task with a child of `cancel`. A write
    /// starts only once the batch's previous write of the same real path is done.
    pub fn start(
        &self,
        batch: Vec<PassedCall>,
        cancel: &CancellationToken,
        mut watch: impl FnMut(&PassedCall) -> Watch,
    ) -> Started {
        let mut not_started = Vec::new();
        let mut calls = VecDeque::with_capacity(batch.len());
        // The last call of this batch writing each real path: a later write of the same path
        // starts only once it is done, so same-path writes keep the model's order.
        let mut last_of_path: HashMap<PathBuf, oneshot::Receiver<()>> = HashMap::new();
        for call in batch {
            if cancel.is_cancelled() {
                not_started.push(call);
                continue;
            }
            let order = call.access.written().map(|path| {
                let (done, next) = oneshot::channel();
                let after = last_of_path.insert(path.key(), next);
                Order { after, done }
            });
            let Watch {
                tail,
                started,
                hosts,
            } = watch(&call);
            let cx = ToolCx {
                env: Arc::clone(&self.env),
                cancel: cancel.child_token(),
                tail,
                grant: call.grant,
                passed: Some(call.access.clone()),
                hosts,
                call: Some(call.id.clone()),
            };
            let handle = spawn_tool(Arc::clone(&self.registry), &call, cx, order, started);
            calls.push_back((call, handle));
        }
        Started {
            not_started,
            running: Running {
                calls,
                cancel: cancel.clone(),
            },
        }
    }

    /// Runs one call alone and waits for its result.
    pub async fn run_one(
        &self,
        call: PassedCall,
        cancel: &CancellationToken,
        watch: Watch,
    ) -> ToolResult {
        let mut watch = Some(watch);
        let started = self.start(vec![call], cancel, |_| {
            watch.take().unwrap_or_else(Watch::none)
        });
        if !started.not_started.is_empty() {
            return ToolResult::cancelled();
        }
        let mut running = started.running;
        match running.next().await {
            Some((_, result)) => result,
            None => ToolResult::cancelled(),
        }
    }
}

impl Running {
    /// The next call of the batch, in call order, with its result.
    pub async fn next(&mut self) -> Option<(PassedCall, ToolResult)> {
        let (call, handle) = self.calls.pop_front()?;
        let result = await_tool(&call, handle, &self.cancel).await;
        Some((call, result))
    }
}

/// The place of a write among the writes of its path in one batch.
struct Order {
    /// Resolves when the previous write of the same path is done (None: it is the first).
    after: Option<oneshot::Receiver<()>>,
    /// Dropped when this write is done, which lets the next one of its path start.
    done: oneshot::Sender<()>,
}

/// Runs the tool on its own task, so a panic in it becomes an error result, not a crash.
fn spawn_tool(
    registry: Arc<Registry>,
    call: &PassedCall,
    cx: ToolCx,
    order: Option<Order>,
    started: impl FnOnce() + Send + 'static,
) -> ToolHandle {
    let name = call.name.clone();
    let args = call.args.clone();
    let checked = call.access.clone();
    tokio::spawn(async move {
        // Held until this task ends, however it ends (a panic drops it too).
        let _done = match order {
            Some(Order { after, done }) => {
                if let Some(after) = after {
                    // An error only means the previous task is gone: it is done either way.
                    let _ = after.await;
                }
                Some(done)
            }
            None => None,
        };
        let Some(tool) = registry.get(&name) else {
            return ToolResult::error(format!("unknown tool `{name}`"));
        };
        // An earlier call of the same reply may have changed the file system since the gate
        // looked (a symlink created by a command): what the call touches now must be what was
        // allowed, or it does not run.
        match tool.access(&args, &cx) {
            Ok(now) if now == checked => {}
            Ok(_) => {
                return ToolResult::error(
                    "the target changed (an earlier call of this turn moved or linked it) since the call was checked; send the call again",
                );
            }
            Err(err) => return ToolResult::error(err),
        }
        // Only now does it run: earlier it waited for its approval and for the calls before it.
        started();
        let before = super::lsp::before_call(&cx, &checked);
        match tool.run(args, &cx).await {
            Ok(output) => {
                let mut result = ToolResult::ok(output);
                super::lsp::after_call(&cx, &checked, before, &mut result).await;
                result
            }
            Err(ToolError::Cancelled) => ToolResult::cancelled(),
            Err(err) => ToolResult::error(err),
        }
    })
}

/// Waits for a call. On interrupt, reads are abandoned at once; commands and writes are awaited
/// (commands kill their process group and report `[cancelled]`; writes are atomic and short).
async fn await_tool(
    call: &PassedCall,
    mut handle: ToolHandle,
    cancel: &CancellationToken,
) -> ToolResult {
    let joined = if call.access.is_read() {
        tokio::select! {
            joined = &mut handle => joined,
            () = cancel.cancelled() => {
                handle.abort();
                return ToolResult::cancelled();
            }
        }
    } else {
        handle.await
    };
    match joined {
        Ok(result) => result,
        Err(err) => {
            tracing::error!(tool = %call.name, "tool task failed: {err}");
            ToolResult::error(ToolError::Internal(format!(
                "{} (details in cairn's log)",
                call.name
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn call(id: &str, access: Access) -> PassedCall {
        PassedCall {
            id: CallId(id.into()),
            name: id.into(),
            args: Value::Null,
            access,
            grant: Grant::default(),
        }
    }

    fn command() -> Access {
        Access::Command {
            command: "true".into(),
            background: false,
        }
    }

    /// The ids of each step: a batch's calls, or `!answer`.
    fn shape(steps: &[Step<PassedCall, &'static str>]) -> Vec<String> {
        steps
            .iter()
            .map(|step| match step {
                Step::Batch(calls) => calls
                    .iter()
                    .map(|c| c.id.0.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                Step::Answered(answer) => format!("!{answer}"),
            })
            .collect()
    }

    #[test]
    fn consecutive_calls_of_one_lane_share_a_batch_and_the_reply_order_holds() {
        let plans = vec![
            Planned::Run(call("r1", Access::Read)),
            Planned::Run(call("r2", Access::Read)),
            Planned::Run(call("c1", command())),
            Planned::Run(call("c2", command())),
            Planned::Run(call("s1", Access::Session)),
            Planned::Run(call("r3", Access::Read)),
            Planned::Answered("denied"),
            Planned::Run(call("r4", Access::Read)),
        ];
        assert_eq!(
            shape(&in_batches(plans)),
            ["r1,r2", "c1", "c2", "s1", "r3", "!denied", "r4"]
        );
        assert!(in_batches::<PassedCall, ()>(Vec::new()).is_empty());
    }

    /// A whole tool, as a new one is written: its file holds the arguments, the schema, what
    /// a call touches and what it does; the registry line makes the runtime run it.
    struct Greet;

    #[async_trait::async_trait]
    impl super::super::Tool for Greet {
        fn spec(&self) -> super::super::ToolSpec {
            super::super::ToolSpec {
                name: "greet",
                description: "Greets someone.",
                parameters: serde_json::json!({
                    "type": "object",
                    "properties": { "who": { "type": "string" } },
                    "required": ["who"]
                }),
            }
        }
        fn access(&self, args: &Value, _cx: &ToolCx) -> Result<Access, ToolError> {
            super::super::parse_args::<GreetArgs>(args)?;
            Ok(Access::Session)
        }
        async fn run(
            &self,
            args: Value,
            _cx: &ToolCx,
        ) -> Result<crate::tool_output::ToolOutput, ToolError> {
            let GreetArgs { who } = super::super::parse_args(&args)?;
            Ok(crate::tool_output::ToolOutput::Skill(
                crate::tool_output::SkillLoad {
                    name: "greet".into(),
                    dir: String::new(),
                    text: format!("hello, {who}"),
                },
            ))
        }
    }

    #[derive(serde::Deserialize)]
    struct GreetArgs {
        who: String,
    }

    #[tokio::test]
    async fn a_tool_in_the_registry_runs_on_the_runtime_and_a_call_not_started_is_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = crate::dirs::Dirs::new(dir.path().join("config"), dir.path().join("data"));
        let env = Arc::new(ToolEnv::new(
            dir.path().to_path_buf(),
            &dirs,
            Default::default(),
        ));
        let registry = Arc::new(Registry::with_tools(vec![Box::new(Greet)]));
        let runtime = Runtime::new(registry, env);
        let greet = |who: &str| PassedCall {
            id: CallId(format!("greet-{who}")),
            name: "greet".into(),
            args: serde_json::json!({ "who": who }),
            access: Access::Session,
            grant: Grant::default(),
        };
        let cancel = CancellationToken::new();
        let result = runtime.run_one(greet("you"), &cancel, Watch::none()).await;
        assert!(!result.is_error, "{}", result.text);
        assert!(result.text.contains("hello, you"), "{}", result.text);

        // What it touches is checked again as it starts: a call whose access changed since
        // the gate passed it does not run.
        let mut moved = greet("me");
        moved.access = Access::Read;
        let result = runtime.run_one(moved, &cancel, Watch::none()).await;
        assert!(
            result.text.contains("the target changed"),
            "{}",
            result.text
        );

        cancel.cancel();
        let started = runtime.start(vec![greet("a"), greet("b")], &cancel, |_| Watch::none());
        let ids: Vec<_> = started.not_started.iter().map(|c| c.id.0.clone()).collect();
        assert_eq!(ids, ["greet-a", "greet-b"]);
        let result = runtime.run_one(greet("late"), &cancel, Watch::none()).await;
        assert_eq!(result, ToolResult::cancelled());
    }
}
