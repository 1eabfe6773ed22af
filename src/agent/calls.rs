//! The tool calls of one reply: validate each (unknown tool, invalid JSON and bad arguments
//! become correctable error results), pass it through the permission gate (asking the user
//! when it holds one), then hand them to the tool runtime (`tools::runtime`), which runs them
//! in batches of one lane in the reply's order, while the agent checkpoints around a batch,
//! records each result and publishes it. Every call gets exactly one result, also when the
//! user interrupts.

use crate::bus::ReportEvent;
use crate::process;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::approval::{Question, Refusal, subject_of};
use super::guard::guarded;
use super::history::todos_of;
use crate::bus::{AgentEvent, CallId, Decision, ToolEvent, ToolResult};
use crate::llm::{AssembledCall, ChatMessage, Completion};
use crate::permissions::{Answer, Call, Verdict};
use crate::session_log::Record;
use crate::tools::runtime::{self, PassedCall, Planned, Runtime, Started, Step, Watch};
use crate::tools::{Access, HostCheck, ToolCx};

/// What the request does after this step's calls.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum CallsOutcome {
    Continue,
    Interrupted,
    /// A call needed approval in a headless run; the run stops.
    DeniedHeadless,
}

/// A call that passed validation and the gate.
struct Ready {
    call: PassedCall,
    /// The dangerous parts of a command, in case a later question holds it.
    dangers: Vec<String>,
    /// The gate let it run without a question (a rule, the mode, a skill's grant).
    unasked: bool,
}

impl AsRef<PassedCall> for Ready {
    fn as_ref(&self) -> &PassedCall {
        &self.call
    }
}

/// A call answered without running: its result.
struct Done {
    call: CallId,
    name: String,
    /// Boxed: a result is large and most plans run.
    result: Box<ToolResult>,
}

type CallPlan = Planned<Ready, Done>;

impl Agent {
    pub(super) async fn run_calls(
        &mut self,
        completion: &Completion,
        cancel: &CancellationToken,
    ) -> CallsOutcome {
        let mut denied_headless = false;
        let mut plans = Vec::with_capacity(completion.tool_calls.len());
        for call in &completion.tool_calls {
            if cancel.is_cancelled() {
                plans.push(CallPlan::Answered(Done {
                    call: call.id.clone(),
                    name: call.name.clone(),
                    result: Box::new(ToolResult::cancelled()),
                }));
                continue;
            }
            let plan = self.plan_call(call, cancel, &mut denied_headless).await;
            plans.push(plan);
        }
        self.execute(plans, cancel).await;
        if cancel.is_cancelled() {
            CallsOutcome::Interrupted
        } else if denied_headless {
            CallsOutcome::DeniedHeadless
        } else {
            CallsOutcome::Continue
        }
    }

    /// Checks one call and puts it through the gate (asking the user when it holds it): a
    /// call to run, or the result it gets without running.
    async fn plan_call(
        &mut self,
        call: &AssembledCall,
        cancel: &CancellationToken,
        denied_headless: &mut bool,
    ) -> CallPlan {
        let done = |result| {
            CallPlan::Answered(Done {
                call: call.id.clone(),
                name: call.name.clone(),
                result: Box::new(result),
            })
        };
        let (mut args, mut access) = match self.validate(call) {
            Ok(valid) => valid,
            Err(message) => return done(ToolResult::error(message)),
        };
        let hooked = match self
            .pre_tool_hooks(&call.id.0, &call.name, &args, cancel)
            .await
        {
            Ok(hooked) => hooked,
            Err(result) => return done(result),
        };
        if let Some((hook, changed)) = &hooked.changed {
            // Judged from here on as if the model had sent it.
            match self.revalidate(&call.name, changed.clone()) {
                Ok(valid) => (args, access) = valid,
                Err(message) => {
                    return done(ToolResult::error(format!(
                        "hook {hook} changed this call's input, and {message}"
                    )));
                }
            }
            let shown = crate::llm::stream::cut(&changed.to_string(), 2000);
            self.hook_notes.insert(
                call.id.clone(),
                format!("[hook {hook} changed this call's input to: {shown}]"),
            );
        }
        if !hooked.context.is_empty() {
            let note = self.hook_notes.entry(call.id.clone()).or_default();
            if !note.is_empty() {
                note.push('\n');
            }
            note.push_str(&hooked.context);
        }
        let mode = self.shared.mode();
        self.recheck_skill_grants();
        let answer = match self.ask_gate(call, &access, mode, &hooked) {
            Ok(answer) => answer,
            Err(panic) => return done(ToolResult::error(panic)),
        };
        // A change while planning: no rule lets one through.
        if let Some(refusal) = answer.refusal {
            return done(ToolResult::error(refusal));
        }
        if let Some(result) = self.answer_before_gate(call, &args, mode, cancel).await {
            return done(result);
        }
        let unasked = answer.verdict == Verdict::Run;
        let grant = match answer.verdict {
            Verdict::Run => {
                self.warn_runs_later(&call.id, &access);
                answer.grant
            }
            Verdict::Deny { why } => {
                return done(ToolResult::error(format!(
                    "this call is denied by the user's rules: {why}. Do not retry it."
                )));
            }
            Verdict::Ask { why, prefix } => {
                let question = Question {
                    why,
                    prefix,
                    dangers: answer.dangers.clone(),
                    reach: answer.reach.clone(),
                };
                let asked =
                    self.put_to_user(call, (&args, &access), question, answer.grant, cancel);
                match asked.await {
                    Ok(grant) => grant,
                    Err(Refusal { result, headless }) => {
                        // A subagent goes on: the denial is its call's result, and its parent
                        // decides what to do with the answer.
                        *denied_headless |= headless && self.settings.child.is_none();
                        return done(result);
                    }
                }
            }
        };
        CallPlan::Run(Ready {
            call: PassedCall {
                id: call.id.clone(),
                name: call.name.clone(),
                args,
                access,
                grant,
            },
            dangers: answer.dangers,
            unasked,
        })
    }

    /// Announces the call and checks that it names a tool, that its arguments parse and what
    /// it would touch; the error the model can correct otherwise.
    fn validate(&self, call: &AssembledCall) -> Result<(Value, Access), String> {
        let args = parse_arguments(&call.arguments);
        self.emit(AgentEvent::Tool(ToolEvent::Requested {
            call: call.id.clone(),
            name: call.name.clone(),
            args: args
                .clone()
                .unwrap_or_else(|_| Value::String(call.arguments.clone())),
        }));
        let Some(tool) = self.engine.registry.get(&call.name) else {
            let names = self.engine.registry.names().join(", ");
            return Err(format!(
                "unknown tool `{}`; the tools are: {names}",
                call.name
            ));
        };
        let args = args?;
        let cx = ToolCx::new(Arc::clone(&self.engine.tool_env));
        match guarded(&call.name, || tool.access(&args, &cx)) {
            Ok(Ok(access)) => Ok((args, access)),
            Ok(Err(err)) => Err(err.to_string()),
            Err(panic) => Err(panic),
        }
    }

    /// The calls answered before the gate's verdict: the plan itself (answered by the user;
    /// a headless run, with nobody to ask, runs the tool, which says so) and loading a skill
    /// (from the session's own list, logged so compaction and resume keep it).
    async fn answer_before_gate(
        &mut self,
        call: &AssembledCall,
        args: &Value,
        mode: crate::bus::Mode,
        cancel: &CancellationToken,
    ) -> Option<ToolResult> {
        if call.name == crate::tools::EXIT_PLAN_MODE
            && (mode != crate::bus::Mode::Plan || self.settings.interactive)
        {
            return Some(self.answer_plan(call, args, mode, cancel).await);
        }
        if call.name == crate::skills::SKILL_TOOL {
            return Some(self.answer_skill(args));
        }
        None
    }

    /// The gate's answer for the call (a panic in it becomes an error for the model).
    fn ask_gate(
        &self,
        call: &AssembledCall,
        access: &Access,
        mode: crate::bus::Mode,
        hooked: &super::hooks::Hooked,
    ) -> Result<Answer, String> {
        let question = Call {
            tool: &call.name,
            access,
            mode,
            interactive: self.settings.interactive,
            attachment: false,
            refused: &self.engine.tool_env.refused,
        };
        guarded(&call.name, || {
            let answer = self.engine.gate.answer(&question);
            self.with_hook_opinion(answer, hooked, &question)
        })
    }

    /// Runs the planned calls in batches of one lane each, in the reply's order.
    async fn execute(&mut self, plans: Vec<CallPlan>, cancel: &CancellationToken) {
        for step in runtime::in_batches(plans) {
            match step {
                Step::Batch(batch) => {
                    let batch = self.still_granted(batch);
                    self.run_batch(batch, cancel).await
                }
                Step::Answered(Done { call, name, result }) => self.finish(call, name, *result),
            }
        }
    }

    /// Every call of a reply is judged before any runs, so an earlier call of the same reply
    /// (an edit of a skill's helper) can change a skill whose grant let a later one through:
    /// before each batch the granting skills are checked again, and when one changed, a call
    /// the gate let through unasked that it would not let through now is not run.
    fn still_granted(&mut self, batch: Vec<Ready>) -> Vec<Ready> {
        if !self.recheck_skill_grants() {
            return batch;
        }
        let mode = self.shared.mode();
        let mut kept = Vec::with_capacity(batch.len());
        for ready in batch {
            let call = &ready.call;
            if ready.unasked
                && self.engine.gate.check(&call.name, &call.access, mode) != Verdict::Run
            {
                let result = ToolResult::error(
                    "not run: the skill whose allowed-tools let this call through changed before it ran, so its grant ended. Ask again (the user will be asked)",
                );
                self.finish(call.id.clone(), call.name.clone(), result);
            } else {
                kept.push(ready);
            }
        }
        kept
    }

    /// Runs a batch of one lane together; results are recorded in call order.
    async fn run_batch(&mut self, batch: Vec<Ready>, cancel: &CancellationToken) {
        if batch.is_empty() {
            return;
        }
        // A checkpoint before anything that may change the workspace, so it can be undone.
        let changing = batch
            .iter()
            .any(|r| !r.call.access.is_read() && !matches!(r.call.access, Access::Session));
        let before = if changing && !cancel.is_cancelled() {
            let _timer =
                crate::checkpoint::phases::time_wall(crate::checkpoint::phases::Phase::Before);
            self.checkpoint(crate::checkpoint::CheckpointKind::Before)
                .await
        } else {
            None
        };
        let batch = if before.is_none() && changing {
            self.confirm_uncheckpointed(batch, cancel).await
        } else {
            batch
        };
        let mut commands = 0;
        let delegates = batch
            .iter()
            .filter(|r| matches!(r.call.access, Access::Delegate { .. }))
            .count();
        // What the batch's file tools write: looked at directly by the checkpoint after it.
        let written: Vec<PathBuf> = batch
            .iter()
            .filter_map(|r| r.call.access.written().map(|p| p.key()))
            .collect();
        let batch = batch.into_iter().map(|ready| ready.call).collect();
        let Started {
            not_started,
            mut running,
        } = self
            .runtime()
            .start(batch, cancel, |call| self.watch(&call.id));
        for call in not_started {
            self.finish(call.id, call.name, ToolResult::cancelled());
        }
        while let Some((call, mut result)) = running.next().await {
            if let Some(crate::tool_output::ToolOutput::Command(run)) = &result.output
                && !run.put_back.is_empty()
            {
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: format!(
                        "a sandboxed command changed git config, hooks or the agent settings (.cairn/, .agents/, .claude/); cairn put back {}",
                        run.put_back.items().join(", ")
                    ),
                }));
            }
            if let (Some(before), Access::Command { .. }) = (&before, &call.access) {
                // A command runs alone: what changed since the checkpoint is its doing.
                commands += 1;
                self.attach_command_changes(before, &mut result).await;
                self.flag_runs_later(&mut result);
            }
            if let (Some(before), Access::Delegate { .. }, 1) = (&before, &call.access, delegates) {
                // A child alone in its reply: what changed since the checkpoint is its doing.
                self.attach_child_changes(before, &mut result).await;
            }
            self.post_tool_hooks(&call, &mut result, cancel).await;
            self.finish(call.id, call.name, result);
        }
        if before.is_some() && delegates > 0 {
            // Children change what they change anywhere in the workspace: the checkpoint
            // after them looks at all of it, so undo of this turn takes their changes back.
            self.checkpoint_after().await;
        } else if before.is_some() && commands == 0 {
            self.checkpoint_after_in_background(written).await;
        }
    }

    /// The checkpoint before this batch failed just now: each change in it asks before it
    /// runs without undo (headless, nobody can answer: not run). The read and session calls
    /// of the batch go through. Where checkpoints are off for the session, nothing asks.
    async fn confirm_uncheckpointed(
        &mut self,
        batch: Vec<Ready>,
        cancel: &CancellationToken,
    ) -> Vec<Ready> {
        let Some(failure) = self.checkpoints.last_failure().map(str::to_string) else {
            return batch;
        };
        if self.shared.mode() == crate::bus::Mode::Never {
            return batch;
        }
        let why =
            format!("the checkpoint before this change failed ({failure}): it could not be undone");
        let mut kept = Vec::with_capacity(batch.len());
        for ready in batch {
            if ready.call.access.is_read() || matches!(ready.call.access, Access::Session) {
                kept.push(ready);
                continue;
            }
            if !self.settings.interactive {
                let text = format!(
                    "{why}, and nobody can approve that in this headless run. It was not run."
                );
                self.finish(ready.call.id, ready.call.name, ToolResult::error(text));
                continue;
            }
            let call = AssembledCall {
                id: ready.call.id.clone(),
                name: ready.call.name.clone(),
                arguments: ready.call.args.to_string(),
            };
            let subject = subject_of(&call, &ready.call.access);
            let question = Question {
                dangers: ready.dangers.clone(),
                ..Question::plain(why.clone())
            };
            let decision = self.ask(&call, subject, question, None, cancel).await;
            match decision {
                Some(Decision::Deny { .. } | Decision::ApprovePlan { .. }) => self.finish(
                    ready.call.id,
                    ready.call.name,
                    ToolResult::error("the user chose not to run this change without a checkpoint. Do not retry it until the user says so."),
                ),
                None => self.finish(ready.call.id, ready.call.name, ToolResult::cancelled()),
                Some(_) => kept.push(ready),
            }
        }
        kept
    }

    /// What a fetch's redirect may follow: a host the gate would run unasked in this mode.
    fn host_check(&self) -> HostCheck {
        let gate = Arc::clone(&self.engine.gate);
        let mode = self.shared.mode();
        Arc::new(move |host: &str, url: &str| {
            let access = Access::Network {
                host: host.to_string(),
                url: url.to_string(),
            };
            gate.check("web_fetch", &access, mode) == Verdict::Run
        })
    }

    /// The runtime over this session's tools.
    fn runtime(&self) -> Runtime {
        Runtime::new(
            Arc::clone(&self.engine.registry),
            Arc::clone(&self.engine.tool_env),
        )
    }

    /// What the agent watches of a running call: its live output, its start, and the hosts
    /// its redirects may follow.
    fn watch(&self, call: &CallId) -> Watch {
        let events = self.events.clone();
        let started = call.clone();
        Watch {
            tail: Some(self.tail_sink(call)),
            started: Box::new(move || {
                let _ = events.send(AgentEvent::Tool(ToolEvent::Started { call: started }));
            }),
            hosts: Some(self.host_check()),
        }
    }

    fn tail_sink(&self, call: &CallId) -> process::TailSink {
        let events = self.events.clone();
        let call = call.clone();
        Arc::new(move |chunk: &str| {
            let _ = events.send(AgentEvent::Tool(ToolEvent::OutputTail {
                call: call.clone(),
                chunk: crate::secrets::redact(chunk).into_owned(),
            }));
        })
    }

    /// Records the result, adds it to the conversation and publishes it.
    fn finish(&mut self, call: CallId, name: String, result: ToolResult) {
        let mut result = result;
        if let Some(note) = self.hook_notes.remove(&call) {
            result.text = format!("{note}\n{}", result.text);
        }
        // A secret a command printed goes no further: not to the model, the log or the screen.
        let result = self.keep_image(crate::secrets::redact_value(result));
        if let Some(todos) = todos_of(&result) {
            self.session.todos = todos.to_vec();
        }
        // What the model read: a URL that carries it asks in auto.
        self.engine.gate.note_read(&name, &result.text);
        self.count_child_usage(&result);
        self.record(&Record::ToolResult {
            call: call.clone(),
            name: name.clone(),
            result: result.clone(),
        });
        self.session.conversation.push(ChatMessage::Tool {
            tool_call_id: call.0.clone(),
            content: result.text.clone(),
        });
        self.emit(AgentEvent::Tool(ToolEvent::Finished { call, name, result }));
    }
}

/// `""` (some providers send no arguments for parameterless calls) means `{}`. The error quotes
/// what the model sent: the history carries `{}` in its place (strict servers reject the rest).
fn parse_arguments(raw: &str) -> Result<Value, String> {
    let raw = crate::llm::wire::blank_as_empty_object(raw);
    let sent = crate::llm::stream::cut(raw, 300);
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, got {} ({sent}); send the call again with an object of the tool's parameters",
            kind_of(&other)
        )),
        Err(err) => Err(format!(
            "the arguments are not valid JSON ({err}): {sent}\nSend the call again with a valid JSON object"
        )),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_validated_with_correctable_messages() {
        assert_eq!(parse_arguments(""), Ok(Value::Object(Default::default())));
        assert!(parse_arguments("{\"a\":1}").is_ok());
        let err = parse_arguments("{\"a\":").err().unwrap_or_default();
        assert!(
            err.contains("not valid JSON") && err.contains("Send the call again"),
            "{err}"
        );
        let err = parse_arguments("[1]").err().unwrap_or_default();
        assert!(err.contains("an array"), "{err}");
    }
}
