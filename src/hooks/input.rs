//! What a hook reads on stdin: one JSON object. cairn's keys: `event`, `session_id`,
//! `workspace`, `mode`, `log_path`, and per event `tool_name`, `arguments`, `call_id`,
//! `result` (post_tool), `prompt` (user_prompt), `stop_blocks` (stop), `source`
//! (session_start), `trigger` (pre_compact), `message` (notification). A Claude Code hook
//! gets Claude's keys instead: `hook_event_name`, `session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `tool_name` in Claude's spelling, `tool_input` in its keys,
//! `tool_use_id`, `tool_response`, `prompt`, `stop_hook_active`, `source`, `trigger`,
//! `message`.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::{Hook, HookFormat, claude};

/// The session a hook runs in.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub session_id: String,
    pub workspace: PathBuf,
    pub mode: crate::bus::Mode,
    pub log_path: PathBuf,
}

/// What an event is about.
#[derive(Debug, Clone)]
pub enum Subject {
    Tool {
        name: String,
        call_id: String,
        arguments: Value,
        /// The text the model would see (post_tool only).
        result: Option<String>,
        is_error: bool,
    },
    Prompt {
        text: String,
    },
    Stop {
        /// How often stop hooks sent the model back in this turn so far.
        blocks: u32,
    },
    SessionStart {
        /// `startup` or `resume`.
        source: String,
    },
    PreCompact {
        /// `manual` (`/compact`) or `auto`.
        trigger: String,
    },
    Notification {
        message: String,
    },
}

impl Subject {
    pub fn tool_name(&self) -> Option<String> {
        match self {
            Subject::Tool { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    /// A changed input for the hooks after the one that changed it.
    pub fn set_arguments(&mut self, updated: Value) {
        if let Subject::Tool { arguments, .. } = self {
            *arguments = updated;
        }
    }
}

/// The stdin JSON for `hook` about `subject`.
pub fn stdin_json(hook: &Hook, cx: &Context, subject: &Subject) -> Vec<u8> {
    let value = match hook.origin.format {
        HookFormat::Cairn => cairn_input(hook, cx, subject),
        HookFormat::Claude => claude_input(hook, cx, subject),
    };
    serde_json::to_vec(&value).unwrap_or_default()
}

fn cairn_input(hook: &Hook, cx: &Context, subject: &Subject) -> Value {
    let mut object = Map::new();
    object.insert("event".into(), json!(hook.event.as_str()));
    object.insert("hook".into(), json!(hook.name));
    object.insert("session_id".into(), json!(cx.session_id));
    object.insert("workspace".into(), json!(cx.workspace));
    object.insert("mode".into(), json!(cx.mode.to_string()));
    object.insert("log_path".into(), json!(cx.log_path));
    match subject {
        Subject::Tool {
            name,
            call_id,
            arguments,
            result,
            is_error,
        } => {
            object.insert("tool_name".into(), json!(name));
            object.insert("call_id".into(), json!(call_id));
            object.insert("arguments".into(), arguments.clone());
            if let Some(result) = result {
                object.insert(
                    "result".into(),
                    json!({"text": result, "is_error": is_error}),
                );
            }
        }
        Subject::Prompt { text } => {
            object.insert("prompt".into(), json!(text));
        }
        Subject::Stop { blocks } => {
            object.insert("stop_blocks".into(), json!(blocks));
        }
        Subject::SessionStart { source } => {
            object.insert("source".into(), json!(source));
        }
        Subject::PreCompact { trigger } => {
            object.insert("trigger".into(), json!(trigger));
        }
        Subject::Notification { message } => {
            object.insert("message".into(), json!(message));
        }
    }
    Value::Object(object)
}

fn claude_input(hook: &Hook, cx: &Context, subject: &Subject) -> Value {
    let mut object = Map::new();
    object.insert("hook_event_name".into(), json!(hook.event.claude_name()));
    object.insert("session_id".into(), json!(cx.session_id));
    object.insert("transcript_path".into(), json!(cx.log_path));
    object.insert("cwd".into(), json!(cx.workspace));
    object.insert("permission_mode".into(), json!(claude_mode(cx.mode)));
    match subject {
        Subject::Tool {
            name,
            call_id,
            arguments,
            result,
            is_error,
        } => {
            object.insert("tool_name".into(), json!(claude::tool_name(name)));
            object.insert(
                "tool_input".into(),
                claude::tool_input(name, arguments, &cx.workspace),
            );
            object.insert("tool_use_id".into(), json!(call_id));
            if let Some(result) = result {
                object.insert(
                    "tool_response".into(),
                    json!({"output": result, "is_error": is_error}),
                );
            }
        }
        Subject::Prompt { text } => {
            object.insert("prompt".into(), json!(text));
        }
        Subject::Stop { blocks } => {
            object.insert("stop_hook_active".into(), json!(*blocks > 0));
        }
        Subject::SessionStart { source } => {
            object.insert("source".into(), json!(source));
        }
        Subject::PreCompact { trigger } => {
            object.insert("trigger".into(), json!(trigger));
            object.insert("custom_instructions".into(), json!(""));
        }
        Subject::Notification { message } => {
            object.insert("message".into(), json!(message));
        }
    }
    Value::Object(object)
}

/// Claude Code's names for the modes nearest cairn's.
fn claude_mode(mode: crate::bus::Mode) -> &'static str {
    use crate::bus::Mode;
    match mode {
        Mode::Ask => "default",
        Mode::AutoEdit => "acceptEdits",
        Mode::Plan => "plan",
        Mode::Auto | Mode::Never => "bypassPermissions",
    }
}
