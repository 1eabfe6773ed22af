//! `todo_write`: the model replaces its whole plan each time. The tool validates and returns
//! the list; it keeps no state (the latest call in the session log is the current list).

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::tool_output::{TodoItem, ToolOutput};

/// Most items one list may hold.
pub const MAX_TODOS: usize = 50;
/// Longest item, in characters.
pub const MAX_CONTENT_CHARS: usize = 500;

#[derive(Debug, Deserialize)]
struct TodoArgs {
    todos: Vec<TodoItem>,
}

pub struct TodoWrite;

/// Validates a list: non-empty content (trimmed), known statuses, at most `MAX_TODOS` items.
pub fn resolve_todos(args: &serde_json::Value) -> Result<Vec<TodoItem>, ToolError> {
    let TodoArgs { todos } = parse_args(args)?;
    if todos.len() > MAX_TODOS {
        return Err(ToolError::InvalidArgs(format!(
            "{} items; a list holds at most {MAX_TODOS}: merge small steps",
            todos.len()
        )));
    }
    todos
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let content = item.content.trim();
            if content.is_empty() {
                return Err(ToolError::InvalidArgs(format!("item {}: `content` is empty", i + 1)));
            }
            if content.chars().count() > MAX_CONTENT_CHARS {
                return Err(ToolError::InvalidArgs(format!(
                    "item {}: `content` is longer than {MAX_CONTENT_CHARS} characters; keep items short",
                    i + 1
                )));
            }
            Ok(TodoItem { content: content.to_owned(), status: item.status })
        })
        .collect()
}

#[async_trait]
impl Tool for TodoWrite {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "todo_write",
            description: "Replace your task list (all of it each time); keep one item \
                in_progress, mark items completed once done.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": { "type": "string" },
                                "status": {
                                    "type": "string",
                                    "enum": ["pending", "in_progress", "completed"]
                                }
                            },
                            "required": ["content", "status"]
                        }
                    }
                },
                "required": ["todos"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        resolve_todos(args)?;
        Ok(Access::Session)
    }

    async fn run(&self, args: serde_json::Value, _cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Todos {
            todos: resolve_todos(&args)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_output::TodoStatus;

    #[test]
    fn lists_are_validated() {
        let ok = resolve_todos(&json!({"todos": [
            {"content": " plan ", "status": "completed"},
            {"content": "build", "status": "in_progress"},
            {"content": "test", "status": "pending"}
        ]}))
        .expect("valid");
        assert_eq!(
            ok[0],
            TodoItem {
                content: "plan".into(),
                status: TodoStatus::Completed
            }
        );
        assert_eq!(ok.len(), 3);
        assert!(
            resolve_todos(&json!({"todos": []}))
                .expect("an empty list clears")
                .is_empty()
        );
        let cases = [
            json!({"todos": [{"content": "  ", "status": "pending"}]}),
            json!({"todos": [{"content": "x", "status": "done"}]}),
            json!({"todos": [{"content": "x"}]}),
            json!({"todo": []}),
            json!({"todos": (0..51).map(|i| json!({"content": format!("{i}"), "status": "pending"})).collect::<Vec<_>>()}),
        ];
        for case in cases {
            assert!(resolve_todos(&case).is_err(), "{case}");
        }
    }
}
