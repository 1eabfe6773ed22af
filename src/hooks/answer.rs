//! What a hook answered: its exit code and stdout read into a decision (pure; fed by `spawn`,
//! folded by `outcome`). cairn's convention: exit 0 with nothing on stdout is no opinion,
//! exit 0 with one JSON object `{"decision": "allow"|"deny"|"ask", "reason",
//! "updated_input", "additional_context"}` (Claude Code's `hookSpecificOutput` spelling read
//! too), exit 2 denies with stderr as the reason; any other code, a timeout, a signal, JSON
//! that does not parse or a command that cannot start is a `Failure`. Claude-format hooks
//! keep Claude Code's meanings (other exit codes only warn, plain stdout is ignored), except
//! that a timeout, a signal or a command that cannot start is a failure for them too.

use std::time::Duration;

use serde_json::Value;

use super::{Event, HookFormat};

/// How a hook's process ended, and what it printed (capped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    pub exit: Option<i32>,
    /// The signal that killed it (not at our timeout).
    pub signal: Option<String>,
    pub timed_out: Option<Duration>,
    /// It could not be started at all (the error).
    pub spawn_error: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
}

/// A hook's opinion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    Allow,
    Ask,
    Deny,
}

impl HookDecision {
    fn parse(text: &str) -> Option<HookDecision> {
        match text {
            "allow" | "approve" => Some(HookDecision::Allow),
            "ask" => Some(HookDecision::Ask),
            "deny" | "block" => Some(HookDecision::Deny),
            _ => None,
        }
    }
}

/// What went wrong with a hook.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("it could not be started: {0}")]
    CannotStart(String),
    #[error("it timed out after {}s and was killed", .0.as_secs_f32())]
    TimedOut(Duration),
    #[error("it was killed by {0}")]
    Signal(String),
    #[error("it exited with code {code}{}", stderr_note(.stderr))]
    Exit { code: i32, stderr: String },
    #[error("its answer is not valid JSON ({0})")]
    BadJson(String),
    #[error("it is not trusted in its current content: {0}")]
    Untrusted(String),
}

fn stderr_note(stderr: &str) -> String {
    let line = stderr.trim();
    if line.is_empty() {
        String::new()
    } else {
        format!(": {}", crate::llm::stream::cut(line, 300))
    }
}

/// A hook's answer, or its failure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interpreted {
    pub decision: Option<HookDecision>,
    pub reason: Option<String>,
    /// The call's new arguments, in cairn's keys.
    pub updated_input: Option<Value>,
    pub additional_context: Option<String>,
    pub failure: Option<Failure>,
    /// Something the user should see that is not a failure (a Claude hook's exit 1).
    pub warning: Option<String>,
    pub stderr: String,
    pub duration: Duration,
}

impl Interpreted {
    pub fn failed(failure: Failure, duration: Duration) -> Self {
        Self {
            failure: Some(failure),
            duration,
            ..Self::default()
        }
    }
}

/// Reads one run of a hook of `format` at `event`.
pub fn interpret(format: HookFormat, event: Event, ran: &Ran) -> Interpreted {
    let mut read = read_exit(format, event, ran);
    read.stderr = ran.stderr.clone();
    read.duration = ran.duration;
    read
}

fn read_exit(format: HookFormat, event: Event, ran: &Ran) -> Interpreted {
    let failed = |failure| Interpreted::failed(failure, ran.duration);
    if let Some(err) = &ran.spawn_error {
        return failed(Failure::CannotStart(err.clone()));
    }
    if let Some(after) = ran.timed_out {
        return failed(Failure::TimedOut(after));
    }
    if let Some(signal) = &ran.signal {
        return failed(Failure::Signal(signal.clone()));
    }
    let code = ran.exit.unwrap_or(-1);
    match code {
        0 => read_stdout(format, event, &ran.stdout),
        2 => {
            let reason = ran.stderr.trim();
            Interpreted {
                decision: Some(HookDecision::Deny),
                reason: Some(if reason.is_empty() {
                    "exit code 2".into()
                } else {
                    crate::llm::stream::cut(reason, 2000)
                }),
                ..Interpreted::default()
            }
        }
        // `sh -c` says so when the interpreter or script is missing (127) or cannot run (126).
        126 | 127 => failed(Failure::CannotStart(format!(
            "exit code {code}{}",
            stderr_note(&ran.stderr)
        ))),
        _ if format == HookFormat::Claude => Interpreted {
            warning: Some(format!(
                "exited with code {code}{} (a Claude Code hook's exit code other than 2 does not block)",
                stderr_note(&ran.stderr)
            )),
            ..Interpreted::default()
        },
        _ => failed(Failure::Exit {
            code,
            stderr: ran.stderr.clone(),
        }),
    }
}

/// Exit 0: the JSON answer, plain text (context where the event takes it), or nothing.
fn read_stdout(format: HookFormat, event: Event, stdout: &str) -> Interpreted {
    let text = stdout.trim();
    if text.is_empty() {
        return Interpreted::default();
    }
    if !text.starts_with('{') {
        // Plain text is context where an event adds it; elsewhere cairn's hooks must answer
        // in JSON (a stray line could hide a cut answer), Claude's may print anything.
        return match (format, event) {
            (_, Event::PostTool | Event::UserPrompt | Event::SessionStart) => Interpreted {
                additional_context: Some(text.to_string()),
                ..Interpreted::default()
            },
            (HookFormat::Claude, _) => Interpreted::default(),
            (HookFormat::Cairn, _) => Interpreted::failed(
                Failure::BadJson(format!(
                    "stdout is not a JSON object: {}",
                    crate::llm::stream::cut(text, 200)
                )),
                Duration::ZERO,
            ),
        };
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => read_object(&object),
        Ok(_) => Interpreted::failed(Failure::BadJson("not an object".into()), Duration::ZERO),
        Err(err) => Interpreted::failed(Failure::BadJson(err.to_string()), Duration::ZERO),
    }
}

/// The keys of cairn's answer, then Claude Code's: `hookSpecificOutput`'s
/// `permissionDecision`, `permissionDecisionReason`, `updatedInput`, `additionalContext`,
/// and the top-level `decision: "block"`, `reason`, `continue: false` with `stopReason`,
/// `systemMessage` (shown to the user).
fn read_object(object: &serde_json::Map<String, Value>) -> Interpreted {
    let specific = object.get("hookSpecificOutput").and_then(Value::as_object);
    let text = |key: &str| -> Option<String> {
        object
            .get(key)
            .or_else(|| specific.and_then(|s| s.get(key)))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let decision_text = text("decision").or_else(|| text("permissionDecision"));
    let mut decision = match decision_text.as_deref() {
        None | Some("") => None,
        Some(word) => match HookDecision::parse(word) {
            Some(decision) => Some(decision),
            None => {
                return Interpreted::failed(
                    Failure::BadJson(format!(
                        "`decision` must be \"allow\", \"deny\" or \"ask\", not {word:?}"
                    )),
                    Duration::ZERO,
                );
            }
        },
    };
    let mut reason = text("reason").or_else(|| text("permissionDecisionReason"));
    if object.get("continue") == Some(&Value::Bool(false)) {
        decision = Some(HookDecision::Deny);
        reason = reason.or_else(|| text("stopReason"));
    }
    let updated_input = object
        .get("updated_input")
        .or_else(|| specific.and_then(|s| s.get("updatedInput")))
        .filter(|v| !v.is_null())
        .cloned();
    if let Some(input) = &updated_input
        && !input.is_object()
    {
        return Interpreted::failed(
            Failure::BadJson("`updated_input` must be an object of the tool's arguments".into()),
            Duration::ZERO,
        );
    }
    Interpreted {
        decision,
        reason,
        updated_input,
        additional_context: text("additional_context").or_else(|| text("additionalContext")),
        // Claude Code's line for the user.
        warning: text("systemMessage"),
        ..Interpreted::default()
    }
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
