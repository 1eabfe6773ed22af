//! The answers of every hook that ran for one event, folded into what the agent acts on: the
//! first deny wins (and ends the chain), ask wins over allow, an input a hook changed is
//! judged by the gate again, context is gathered in order. A guard hook (`pre_tool`,
//! `user_prompt`) that fails denies unless it says `on_error = "allow"`; any other failure is
//! only shown.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::answer::{HookDecision, Interpreted};
use super::{Event, Hook, OnError};
use crate::bus::{HookAct, HookNote};

/// One run of one hook, as the session log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    pub hook: String,
    pub event: Event,
    /// `none`, `allow`, `ask`, `deny`, or `failed`.
    pub decision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What went wrong, for a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changed_input: bool,
    pub millis: u64,
}

/// Why a hook stopped what it guards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub hook: String,
    pub why: String,
    /// The hook's stderr, for the user.
    pub stderr: String,
}

impl Blocked {
    /// What the model is told.
    pub fn model_text(&self) -> String {
        format!("blocked by hook {}: {}", self.hook, self.why)
    }
}

/// What the hooks of one event said together.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub runs: Vec<HookRun>,
    pub blocked: Option<Blocked>,
    /// The first hook that asked, and why.
    pub ask: Option<(String, String)>,
    /// Some hook allowed and none asked or denied.
    allowed: bool,
    /// The call's arguments as the last hook that changed them left them (cairn's keys), and
    /// which hook that was.
    pub updated_input: Option<(String, Value)>,
    /// `additional_context` (and plain text) of each hook, with the hook's name.
    pub context: Vec<(String, String)>,
    /// One-line warnings for the user (what a hook asked to be shown).
    pub notices: Vec<String>,
    /// Denials, failures and changed input, for the user's one-line cards.
    pub notes: Vec<HookNote>,
}

impl Outcome {
    /// A hook allowed, and none asked or denied.
    pub fn allowed(&self) -> bool {
        self.allowed && self.ask.is_none() && self.blocked.is_none()
    }

    /// The context of every hook as one text for the model (empty: none).
    pub fn context_text(&self) -> String {
        self.context
            .iter()
            .map(|(hook, text)| format!("[hook {hook}] {}", text.trim()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Adds one hook's answer; true when the chain stops here (a deny).
    pub(super) fn add(&mut self, hook: &Hook, answer: Interpreted) -> bool {
        let mut run = HookRun {
            hook: hook.name.clone(),
            event: hook.event,
            decision: "none".into(),
            reason: answer.reason.clone(),
            failure: None,
            changed_input: answer.updated_input.is_some(),
            millis: millis(answer.duration),
        };
        if let Some(warning) = &answer.warning {
            self.notices.push(format!("hook {}: {warning}", hook.name));
        }
        if let Some(failure) = &answer.failure {
            run.decision = "failed".into();
            run.failure = Some(failure.to_string());
            self.runs.push(run);
            return self.failed(hook, failure.to_string(), &answer.stderr);
        }
        if let Some(context) = answer.additional_context.filter(|c| !c.trim().is_empty()) {
            self.context.push((hook.name.clone(), context));
        }
        if let Some(input) = answer.updated_input {
            let shown = crate::llm::stream::cut(&input.to_string(), 200);
            self.note(hook, HookAct::ChangedInput, shown);
            self.updated_input = Some((hook.name.clone(), input));
        }
        let reason = answer
            .reason
            .clone()
            .unwrap_or_else(|| "no reason given".into());
        run.decision = match answer.decision {
            None => "none",
            Some(HookDecision::Allow) => "allow",
            Some(HookDecision::Ask) => "ask",
            Some(HookDecision::Deny) => "deny",
        }
        .into();
        self.runs.push(run);
        match answer.decision {
            Some(HookDecision::Deny) => {
                self.note(hook, HookAct::Denied, reason.clone());
                self.blocked = Some(Blocked {
                    hook: hook.name.clone(),
                    why: reason,
                    stderr: answer.stderr,
                });
                true
            }
            Some(HookDecision::Ask) => {
                if self.ask.is_none() {
                    self.ask = Some((hook.name.clone(), reason));
                }
                false
            }
            Some(HookDecision::Allow) => {
                self.allowed = true;
                false
            }
            None => false,
        }
    }

    /// A hook failed: a guard that fails closed denies; otherwise the user is told.
    fn failed(&mut self, hook: &Hook, why: String, stderr: &str) -> bool {
        if hook.event.guards() && hook.on_error == OnError::Deny {
            self.note(hook, HookAct::FailedDenies, why.clone());
            self.blocked = Some(Blocked {
                hook: hook.name.clone(),
                why,
                stderr: stderr.to_string(),
            });
            return true;
        }
        let act = if hook.event.guards() {
            HookAct::FailedAllowed
        } else {
            HookAct::Failed
        };
        self.note(hook, act, why);
        false
    }

    fn note(&mut self, hook: &Hook, act: HookAct, why: String) {
        self.notes.push(HookNote {
            event: hook.event.as_str().to_string(),
            hook: hook.name.clone(),
            command: hook.command.clone(),
            act,
            why,
        });
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::hooks::answer::Failure;
    use crate::hooks::{HookFormat, HookOrigin};

    fn hook(n: usize, event: Event, on_error: OnError) -> Hook {
        Hook {
            name: format!("{event} #{n}"),
            event,
            matcher: None,
            command: "x".into(),
            timeout: Duration::from_secs(1),
            on_error,
            origin: HookOrigin {
                file: "c.toml".into(),
                project: false,
                format: HookFormat::Cairn,
            },
            process: None,
            awaiting_trust: false,
        }
    }

    fn said(decision: HookDecision) -> Interpreted {
        Interpreted {
            decision: Some(decision),
            reason: Some(format!("{decision:?}")),
            ..Interpreted::default()
        }
    }

    #[test]
    fn the_first_deny_wins_and_ask_wins_over_allow() {
        let mut outcome = Outcome::default();
        assert!(!outcome.add(
            &hook(1, Event::PreTool, OnError::Deny),
            said(HookDecision::Allow)
        ));
        assert!(outcome.allowed());
        assert!(!outcome.add(
            &hook(2, Event::PreTool, OnError::Deny),
            said(HookDecision::Ask)
        ));
        assert!(!outcome.allowed());
        assert_eq!(outcome.ask, Some(("pre_tool #2".into(), "Ask".into())));
        assert!(outcome.add(
            &hook(3, Event::PreTool, OnError::Deny),
            said(HookDecision::Deny)
        ));
        assert_eq!(outcome.blocked.as_ref().unwrap().hook, "pre_tool #3");
        let decisions: Vec<&str> = outcome.runs.iter().map(|r| r.decision.as_str()).collect();
        assert_eq!(decisions, ["allow", "ask", "deny"]);
    }

    #[test]
    fn a_failing_guard_denies_unless_it_allows_and_other_events_only_tell() {
        let failed = || {
            Interpreted::failed(
                Failure::Exit {
                    code: 1,
                    stderr: "boom".into(),
                },
                Duration::ZERO,
            )
        };
        let mut outcome = Outcome::default();
        assert!(outcome.add(&hook(1, Event::PreTool, OnError::Deny), failed()));
        assert_eq!(
            outcome.blocked.unwrap().model_text(),
            "blocked by hook pre_tool #1: it exited with code 1: boom"
        );
        for (event, on_error) in [
            (Event::PreTool, OnError::Allow),
            (Event::UserPrompt, OnError::Allow),
            (Event::PostTool, OnError::Deny),
            (Event::Stop, OnError::Deny),
        ] {
            let mut outcome = Outcome::default();
            assert!(!outcome.add(&hook(1, event, on_error), failed()), "{event}");
            assert!(outcome.blocked.is_none(), "{event}");
            assert_eq!(outcome.runs[0].decision, "failed");
            assert_eq!(outcome.notes.len(), 1, "{event}");
        }
    }
}
