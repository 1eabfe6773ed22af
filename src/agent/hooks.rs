//! The agent's side of hooks (`crate::hooks`): it runs them at their points and acts on what
//! they said. `pre_tool` comes after a call is validated and before the gate's answer is
//! carried out: a deny is the call's result; a changed input is validated and judged by the
//! gate again as if the model had sent it; `allow` lets a call run as it would in `auto` (what
//! asks even there — a dangerous command, a protected path, a secret store, a write outside
//! the workspace, an ask rule — still asks, and deny rules and the sandbox hold); `ask` holds a
//! call the gate would run. `post_tool` context is appended to the result, `stop` can send
//! the model on (at most `max_stop_blocks` times a turn), `user_prompt` can refuse a message.
//! Every run is a `Record::Hook`; denials, failures and changed input are shown as one-line
//! cards (`AgentEvent::Hook`), what a hook asks to show as warnings.

use crate::bus::ReportEvent;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::bus::{AgentEvent, Mode, ToolResult};
use crate::hooks::{Context, Event, Outcome, Subject};
use crate::permissions::{Answer, Verdict};
use crate::session_log::Record;
use crate::tools::Access;

/// What the `pre_tool` hooks let through.
#[derive(Debug, Default)]
pub(super) struct Hooked {
    /// Some hook allowed (and the input is the model's own).
    pub allow: bool,
    /// The hook that asked, and why.
    pub ask: Option<(String, String)>,
    /// The input a hook put in place of the model's, and which hook.
    pub changed: Option<(String, Value)>,
    /// `additional_context` for the call's result.
    pub context: String,
}

impl Agent {
    fn hook_context(&self) -> Context {
        Context {
            session_id: self.session.id.0.clone(),
            workspace: self.settings.workspace.clone(),
            mode: self.shared.mode(),
            log_path: self.session.log.path().to_path_buf(),
        }
    }

    /// Runs the hooks of `event`, logs every run and shows what the user must see.
    pub(super) async fn run_hooks(
        &mut self,
        event: Event,
        subject: Subject,
        cancel: &CancellationToken,
    ) -> Option<Outcome> {
        self.log_late_hook_runs();
        let hooks = Arc::clone(&self.settings.hooks);
        if !hooks.any(event, subject.tool_name().as_deref()) {
            return None;
        }
        let cx = self.hook_context();
        let outcome = hooks.run(event, &cx, &subject, cancel).await;
        self.log_hook_runs(&outcome);
        Some(outcome)
    }

    fn log_hook_runs(&mut self, outcome: &Outcome) {
        for run in &outcome.runs {
            self.record(&Record::Hook {
                hook: run.hook.clone(),
                event: run.event.as_str().to_string(),
                decision: run.decision.clone(),
                reason: run.reason.clone(),
                failure: run.failure.clone(),
                changed_input: run.changed_input,
                millis: run.millis,
            });
        }
        for note in &outcome.notes {
            self.emit(AgentEvent::Hook(note.clone()));
        }
        for notice in &outcome.notices {
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: notice.clone(),
            }));
        }
        if let Some(blocked) = &outcome.blocked
            && !blocked.stderr.trim().is_empty()
        {
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!(
                    "hook {} said: {}",
                    blocked.hook,
                    crate::llm::stream::cut(blocked.stderr.trim(), 2000)
                ),
            }));
        }
    }

    /// The `pre_tool` hooks of a call: the result it gets when one denies, or what they
    /// let through.
    pub(super) async fn pre_tool_hooks(
        &mut self,
        id: &str,
        name: &str,
        args: &Value,
        cancel: &CancellationToken,
    ) -> Result<Hooked, ToolResult> {
        let subject = Subject::Tool {
            name: name.to_string(),
            call_id: id.to_string(),
            arguments: args.clone(),
            result: None,
            is_error: false,
        };
        let Some(outcome) = self.run_hooks(Event::PreTool, subject, cancel).await else {
            return Ok(Hooked::default());
        };
        // Interrupted while a hook ran: the call is cancelled, not blocked.
        if cancel.is_cancelled() {
            return Err(ToolResult::cancelled());
        }
        if let Some(blocked) = &outcome.blocked {
            return Err(ToolResult::error(format!(
                "{}. Do not retry this call as it is.",
                blocked.model_text()
            )));
        }
        Ok(Hooked {
            // An allow speaks for the input the hook saw; a changed input is judged afresh.
            allow: outcome.allowed() && outcome.updated_input.is_none(),
            ask: outcome.ask.clone(),
            changed: outcome.updated_input.clone(),
            context: outcome.context_text(),
        })
    }

    /// The gate's answer with the hooks' opinion: `ask` holds what would run; `allow` lets
    /// through what would run in `auto` (never in plan mode, never past a deny or a refusal).
    pub(super) fn with_hook_opinion(
        &self,
        answer: Answer,
        hooked: &Hooked,
        call: &crate::permissions::Call<'_>,
    ) -> Answer {
        if let Some((hook, why)) = &hooked.ask
            && answer.verdict == Verdict::Run
            && answer.refusal.is_none()
        {
            return Answer {
                verdict: Verdict::Ask {
                    why: format!("hook {hook} asks: {why}"),
                    prefix: String::new(),
                },
                ..answer
            };
        }
        let asks = matches!(answer.verdict, Verdict::Ask { .. });
        if !hooked.allow || !asks || answer.refusal.is_some() || call.mode == Mode::Plan {
            return answer;
        }
        let in_auto = crate::permissions::Call {
            mode: Mode::Auto,
            ..*call
        };
        let auto = self.engine.gate.answer(&in_auto);
        if auto.verdict == Verdict::Run {
            auto
        } else {
            answer
        }
    }

    /// Re-validates a call whose input a hook changed: the arguments and what they touch.
    pub(super) fn revalidate(&self, name: &str, args: Value) -> Result<(Value, Access), String> {
        let Some(tool) = self.engine.registry.get(name) else {
            return Err(format!("unknown tool `{name}`"));
        };
        let cx = crate::tools::ToolCx::new(Arc::clone(&self.engine.tool_env));
        match super::guard::guarded(name, || tool.access(&args, &cx)) {
            Ok(Ok(access)) => Ok((args, access)),
            Ok(Err(err)) => Err(format!(
                "the input a hook put in its place is invalid: {err}"
            )),
            Err(panic) => Err(panic),
        }
    }

    /// The `post_tool` hooks of a finished call: their context is appended to the result the
    /// model reads.
    pub(super) async fn post_tool_hooks(
        &mut self,
        call: &crate::tools::runtime::PassedCall,
        result: &mut ToolResult,
        cancel: &CancellationToken,
    ) {
        let mut notes: Vec<String> = Vec::new();
        let subject = Subject::Tool {
            name: call.name.clone(),
            call_id: call.id.0.clone(),
            arguments: call.args.clone(),
            result: Some(result.text.clone()),
            is_error: result.is_error,
        };
        if let Some(outcome) = self.run_hooks(Event::PostTool, subject, cancel).await {
            if let Some(blocked) = &outcome.blocked {
                notes.push(format!("[hook {}] {}", blocked.hook, blocked.why));
            }
            let context = outcome.context_text();
            if !context.is_empty() {
                notes.push(context);
            }
        }
        if !notes.is_empty() {
            result.text = format!("{}\n\n{}", result.text.trim_end(), notes.join("\n"));
        }
    }

    /// The `stop` hooks, when the model ended its turn: true when one sends it back to work
    /// (its reason told to the model), at most `max_stop_blocks` times in a request.
    pub(super) async fn stop_hooks_continue(
        &mut self,
        blocks: &mut u32,
        cancel: &CancellationToken,
    ) -> bool {
        let subject = Subject::Stop { blocks: *blocks };
        let Some(outcome) = self.run_hooks(Event::Stop, subject, cancel).await else {
            return false;
        };
        let Some(blocked) = outcome.blocked else {
            return false;
        };
        let max = self.settings.hooks.max_stop_blocks;
        if *blocks >= max {
            self.warn(&format!(
                "hook {} would send the model on again, but it did so {max} times in this turn already (max_stop_blocks); the turn ends",
                blocked.hook
            ));
            return false;
        }
        *blocks += 1;
        self.tell_model(format!(
            "[cairn] The stop hook {} does not let you end here yet: {}. Go on with the work; end your turn when that is dealt with.",
            blocked.hook, blocked.why
        ));
        true
    }

    /// The `user_prompt` hooks of a message before it is sent: `Err(why)` when one refuses
    /// it; otherwise the context to tell the model after it.
    pub(super) async fn user_prompt_hooks(
        &mut self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let subject = Subject::Prompt {
            text: text.to_string(),
        };
        let Some(outcome) = self.run_hooks(Event::UserPrompt, subject, cancel).await else {
            return Ok(String::new());
        };
        match &outcome.blocked {
            Some(blocked) => Err(format!(
                "the message was not sent: {}",
                blocked.model_text()
            )),
            None => Ok(outcome.context_text()),
        }
    }

    /// Hooks that only inform (`session_start`, `pre_compact`, `notification`): run, logged;
    /// `session_start` context is told to the model.
    pub(super) async fn informing_hooks(&mut self, event: Event, subject: Subject) {
        let cancel = CancellationToken::new();
        let Some(outcome) = self.run_hooks(event, subject, &cancel).await else {
            return;
        };
        let context = outcome.context_text();
        if event == Event::SessionStart && !context.is_empty() {
            self.tell_model(format!(
                "[cairn] Context from the session's start hooks:\n{context}"
            ));
        }
    }

    /// The `session_start` hooks: `startup` for a new conversation, `resume` for one that
    /// has messages already.
    pub(super) async fn session_start_hooks(&mut self) {
        let source = if self.session.conversation.messages().is_empty() {
            "startup"
        } else {
            "resume"
        };
        let subject = Subject::SessionStart {
            source: source.into(),
        };
        self.informing_hooks(Event::SessionStart, subject).await;
    }

    /// A `notification` hook for an approval that waits: run beside the wait, so a slow
    /// hook never holds the prompt up; its runs are logged at the next hook point.
    pub(super) fn notify_in_background(&self, message: String) {
        let hooks = Arc::clone(&self.settings.hooks);
        if !hooks.any(Event::Notification, None) {
            return;
        }
        let cx = self.hook_context();
        let later = Arc::clone(&self.late_hook_runs);
        let events = self.events.clone();
        tokio::spawn(async move {
            let subject = Subject::Notification { message };
            let outcome = hooks
                .run(
                    Event::Notification,
                    &cx,
                    &subject,
                    &CancellationToken::new(),
                )
                .await;
            for note in &outcome.notes {
                let _ = events.send(AgentEvent::Hook(note.clone()));
            }
            for notice in &outcome.notices {
                let _ = events.send(AgentEvent::Report(ReportEvent::Warning {
                    message: notice.clone(),
                }));
            }
            crate::sync::MutexExt::locked(&*later).push(outcome);
        });
    }

    /// Logs the runs of background hooks that finished since the last time.
    pub(super) fn log_late_hook_runs(&mut self) {
        let done: Vec<Outcome> =
            std::mem::take(&mut *crate::sync::MutexExt::locked(&*self.late_hook_runs));
        for mut outcome in done {
            // Their notices were shown when they finished.
            outcome.notices.clear();
            outcome.notes.clear();
            outcome.blocked = None;
            self.log_hook_runs(&outcome);
        }
    }
}
