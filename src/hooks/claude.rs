//! Claude Code's spelling of hooks, so a team's existing scripts run unchanged: its tool names
//! (`Bash`, `Read`, `Edit`, ... ; `mcp__…` as they are), its `tool_input` keys (`file_path`
//! for a path), and the hook blocks of its `settings.json`:
//! `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
//! "command": "…", "timeout": 60}]}]}}`.

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// cairn's tool names and Claude Code's.
const NAMES: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("read_file", "Read"),
    ("edit_file", "Edit"),
    ("write_file", "Write"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("list_dir", "LS"),
    ("web_fetch", "WebFetch"),
    ("web_search", "WebSearch"),
    ("todo_write", "TodoWrite"),
    ("skill", "Skill"),
    ("exit_plan_mode", "ExitPlanMode"),
];

/// Claude Code's name for a cairn tool; the name itself for tools it has no name for
/// (`mcp__server__tool` is spelled alike in both).
pub fn tool_name(cairn: &str) -> Cow<'_, str> {
    NAMES
        .iter()
        .find(|(ours, _)| *ours == cairn)
        .map_or(Cow::Borrowed(cairn), |(_, theirs)| Cow::Borrowed(theirs))
}

/// A call's arguments in Claude Code's keys: a file tool's `path` becomes an absolute
/// `file_path` (Claude's tools take absolute paths); everything else is passed as it is.
pub fn tool_input(tool: &str, args: &Value, workspace: &Path) -> Value {
    let mut input = args.clone();
    let file_tool = matches!(tool, "read_file" | "edit_file" | "write_file");
    if let (true, Some(object)) = (file_tool, input.as_object_mut())
        && let Some(Value::String(path)) = object.remove("path")
    {
        let absolute = if Path::new(&path).is_absolute() {
            path
        } else {
            workspace.join(&path).display().to_string()
        };
        object.insert("file_path".into(), Value::String(absolute));
    }
    input
}

/// Claude Code's `updatedInput` in cairn's keys (`file_path` becomes `path`; cairn's file
/// tools take absolute paths inside the workspace as well).
pub fn from_tool_input(tool: &str, input: Value) -> Value {
    let mut input = input;
    let file_tool = matches!(tool, "read_file" | "edit_file" | "write_file");
    if let (true, Some(object)) = (file_tool, input.as_object_mut())
        && let Some(path) = object.remove("file_path")
    {
        object.insert("path".into(), path);
    }
    input
}

/// One hook command of a Claude settings file, with the event and matcher it is under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeHook {
    pub event: String,
    pub matcher: Option<String>,
    pub command: String,
    pub timeout_secs: Option<u64>,
}

#[derive(Deserialize)]
struct ClaudeSettings {
    #[serde(default)]
    hooks: Option<std::collections::BTreeMap<String, Vec<ClaudeMatcherGroup>>>,
}

#[derive(Deserialize)]
struct ClaudeMatcherGroup {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<ClaudeHookCommand>,
}

#[derive(Deserialize)]
struct ClaudeHookCommand {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
}

/// The hook commands of a Claude Code `settings.json`, in file order per event (events in
/// name order). Entries that are not commands (`"type": "prompt"`) are left out.
pub fn parse_settings(text: &str) -> Result<Vec<ClaudeHook>, String> {
    let settings: ClaudeSettings = serde_json::from_str(text).map_err(|err| err.to_string())?;
    let mut found = Vec::new();
    for (event, groups) in settings.hooks.unwrap_or_default() {
        for group in groups {
            for command in group.hooks {
                if command.kind.as_deref().is_some_and(|k| k != "command") {
                    continue;
                }
                let Some(text) = command.command else {
                    continue;
                };
                found.push(ClaudeHook {
                    event: event.clone(),
                    matcher: group.matcher.clone(),
                    command: text,
                    timeout_secs: command
                        .timeout
                        .filter(|t| t.is_finite() && *t > 0.0)
                        .map(|t| t.ceil() as u64),
                });
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_keys_map_both_ways() {
        assert_eq!(tool_name("bash"), "Bash");
        assert_eq!(tool_name("edit_file"), "Edit");
        assert_eq!(
            tool_name("mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        let ws = Path::new("/w");
        let input = tool_input(
            "edit_file",
            &json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
            ws,
        );
        assert_eq!(
            input,
            json!({"file_path": "/w/src/a.rs", "old_string": "a", "new_string": "b"})
        );
        assert_eq!(
            from_tool_input("edit_file", input),
            json!({"path": "/w/src/a.rs", "old_string": "a", "new_string": "b"})
        );
        assert_eq!(
            tool_input("bash", &json!({"command": "ls"}), ws),
            json!({"command": "ls"})
        );
    }

    #[test]
    fn settings_hooks_are_read_in_order() {
        let text = r#"{"permissions": {}, "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "./guard.sh", "timeout": 5},
                    {"type": "prompt", "prompt": "is this ok?"}
                ]},
                {"hooks": [{"type": "command", "command": "echo all"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "make test"}]}]
        }}"#;
        let hooks = parse_settings(text).unwrap();
        let summary: Vec<(&str, Option<&str>, &str, Option<u64>)> = hooks
            .iter()
            .map(|h| {
                (
                    h.event.as_str(),
                    h.matcher.as_deref(),
                    h.command.as_str(),
                    h.timeout_secs,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("PreToolUse", Some("Bash"), "./guard.sh", Some(5)),
                ("PreToolUse", None, "echo all", None),
                ("Stop", None, "make test", None),
            ]
        );
        assert!(parse_settings("{\"hooks\": 3}").is_err());
        assert_eq!(parse_settings("{}").unwrap(), []);
    }
}
