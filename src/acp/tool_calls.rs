//! What the editor is told about one tool call: its kind, title and locations, and the diff an
//! edit makes (old and new text), from the call's arguments and its result.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    Diff, PlanEntry, PlanEntryPriority, PlanEntryStatus, ToolCallContent, ToolCallLocation,
    ToolKind,
};
use serde_json::Value;

use crate::tool_output::{FileChange, TodoItem, TodoStatus};

/// The ACP kind of a cairn tool (the editor picks its icon by it).
pub fn kind(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "read_image" | "list_dir" | "job_output" | "skill" => ToolKind::Read,
        "edit_file" | "write_file" => ToolKind::Edit,
        "glob" | "grep" | "lsp" => ToolKind::Search,
        "bash" | "job_kill" => ToolKind::Execute,
        "web_fetch" | "web_search" => ToolKind::Fetch,
        "todo_write" => ToolKind::Think,
        crate::bus::EXIT_PLAN_MODE => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

fn arg<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|key| args.get(key).and_then(Value::as_str))
}

/// The path a file tool names (`path`, or `file_path` as some models spell it).
fn path_arg(args: &Value) -> Option<&str> {
    arg(args, &["path", "file_path"])
}

/// A one-line title: the command for `bash`, the verb and path for the file tools.
pub fn title(tool: &str, args: &Value) -> String {
    let path = path_arg(args).unwrap_or("");
    let line = match tool {
        "bash" => arg(args, &["command"]).unwrap_or("bash").to_string(),
        "read_file" => format!("Read {path}"),
        "edit_file" => format!("Edit {path}"),
        "write_file" => format!("Write {path}"),
        "list_dir" => format!("List {}", if path.is_empty() { "." } else { path }),
        "glob" | "grep" => format!("{tool} {}", arg(args, &["pattern"]).unwrap_or("")),
        "web_fetch" => format!("Fetch {}", arg(args, &["url"]).unwrap_or("")),
        "web_search" => format!("Search the web: {}", arg(args, &["query"]).unwrap_or("")),
        "todo_write" => "Update the todo list".to_string(),
        crate::bus::EXIT_PLAN_MODE => "Ready to leave plan mode".to_string(),
        _ => format!("{tool} {}", crate::exec::summarize_args(args)),
    };
    one_line(&line)
}

fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim_end();
    let cut: String = first.chars().take(200).collect();
    if cut.len() < text.trim_end().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Where a call reads or writes, as absolute paths (with the first line read, when given).
pub fn locations(tool: &str, args: &Value, workspace: &Path) -> Vec<ToolCallLocation> {
    if !matches!(
        tool,
        "read_file" | "read_image" | "edit_file" | "write_file" | "list_dir"
    ) {
        return Vec::new();
    }
    let Some(path) = path_arg(args) else {
        return Vec::new();
    };
    let mut location = ToolCallLocation::new(absolute(workspace, path));
    if tool == "read_file"
        && let Some(offset) = args.get("offset").and_then(Value::as_u64)
    {
        location = location.line(u32::try_from(offset).ok());
    }
    vec![location]
}

pub fn absolute(workspace: &Path, path: &str) -> PathBuf {
    workspace.join(path)
}

/// The change an edit asks for, before it runs: each replacement's old and new text.
pub fn requested_diff(tool: &str, args: &Value, workspace: &Path) -> Vec<ToolCallContent> {
    let Some(path) = path_arg(args) else {
        return Vec::new();
    };
    let path = absolute(workspace, path);
    match tool {
        "edit_file" => {
            let mut pairs: Vec<(String, String)> = Vec::new();
            if let (Some(old), Some(new)) = (arg(args, &["old_string"]), arg(args, &["new_string"]))
            {
                pairs.push((old.into(), new.into()));
            }
            if let Some(edits) = args.get("edits").and_then(Value::as_array) {
                for edit in edits {
                    if let (Some(old), Some(new)) =
                        (arg(edit, &["old_string"]), arg(edit, &["new_string"]))
                    {
                        pairs.push((old.into(), new.into()));
                    }
                }
            }
            pairs
                .into_iter()
                .map(|(old, new)| {
                    ToolCallContent::Diff(Diff::new(path.clone(), new).old_text(Some(old)))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The change a write or edit made, hunk by hunk: each hunk's old and new text (its context
/// lines in both). A created file has no old text.
pub fn change_diffs(change: &FileChange, workspace: &Path) -> Vec<ToolCallContent> {
    let path = absolute(workspace, &change.path);
    hunks(&change.diff)
        .into_iter()
        .map(|(old, new)| {
            let old = (!change.created).then_some(old);
            ToolCallContent::Diff(Diff::new(path.clone(), new).old_text(old))
        })
        .collect()
}

/// The old and new text of each hunk of a unified diff.
pub fn hunks(diff: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in diff.lines() {
        if line.starts_with("@@") {
            out.extend(current.take());
            current = Some((String::new(), String::new()));
            continue;
        }
        let Some((old, new)) = current.as_mut() else {
            continue;
        };
        if let Some(both) = line.strip_prefix(' ') {
            old.push_str(both);
            old.push('\n');
            new.push_str(both);
            new.push('\n');
        } else if let Some(gone) = line.strip_prefix('-') {
            old.push_str(gone);
            old.push('\n');
        } else if let Some(added) = line.strip_prefix('+') {
            new.push_str(added);
            new.push('\n');
        } else if line.is_empty() {
            old.push('\n');
            new.push('\n');
        }
    }
    out.extend(current);
    out
}

/// The todo list as the editor's plan.
pub fn plan_entries(todos: &[TodoItem]) -> Vec<PlanEntry> {
    todos
        .iter()
        .map(|todo| {
            let status = match todo.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(todo.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn hunks_give_old_and_new_text_with_their_context() {
        let diff = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -9,1 +9,2 @@\n z\n+zz\n";
        assert_eq!(
            hunks(diff),
            vec![
                ("a\nb\nc\n".to_string(), "a\nB\nc\n".to_string()),
                ("z\n".to_string(), "z\nzz\n".to_string()),
            ]
        );
    }

    #[test]
    fn titles_kinds_and_locations() {
        let ws = Path::new("/w");
        let args = json!({"path": "src/a.rs", "offset": 12});
        assert_eq!(title("read_file", &args), "Read src/a.rs");
        assert_eq!(kind("read_file"), ToolKind::Read);
        assert_eq!(kind("bash"), ToolKind::Execute);
        assert_eq!(kind("edit_file"), ToolKind::Edit);
        let found = locations("read_file", &args, ws);
        assert_eq!(found[0].path, PathBuf::from("/w/src/a.rs"));
        assert_eq!(found[0].line, Some(12));
        assert_eq!(title("bash", &json!({"command": "ls\nrm x"})), "ls…");
        let edit = json!({"path": "a", "old_string": "x", "new_string": "y"});
        let ToolCallContent::Diff(diff) = &requested_diff("edit_file", &edit, ws)[0] else {
            panic!("no diff")
        };
        assert_eq!(diff.old_text.as_deref(), Some("x"));
        assert_eq!(diff.new_text, "y");
    }
}
