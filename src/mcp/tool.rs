//! An MCP server's tool as one of the session's tools: named `mcp__<server>__<tool>`, the
//! server's description and input schema as its spec, an `Access::Mcp` for the gate, and a run
//! that goes through the hub. The spec's strings live for the process: the tools array is
//! fixed once per session, so this costs a few kilobytes once.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;

use super::client::{ListedTool, McpProgress};
use super::{McpHub, names, result};
use crate::tool_output::{McpCall, ToolOutput};
use crate::tools::{Access, Tool, ToolCx, ToolError, ToolSpec};

/// Characters of a server's tool description that go out with every request.
const MAX_DESCRIPTION: usize = 1_000;
/// Characters of the arguments the approval prompt shows (elided in the middle).
const SHOWN_ARGUMENTS: usize = 600;

pub struct McpTool {
    hub: Arc<McpHub>,
    server: String,
    tool: String,
    name: &'static str,
    description: &'static str,
    schema: serde_json::Value,
    /// Its read-only hint, trusted (the server is in the user's own config).
    read_only: bool,
}

impl McpTool {
    pub fn new(hub: Arc<McpHub>, server: &str, listed: &ListedTool) -> Self {
        let mut description: String = listed.description.chars().take(MAX_DESCRIPTION).collect();
        if description.len() < listed.description.len() {
            description.push('…');
        }
        let mut schema = listed.schema.clone();
        if !schema.is_object() {
            schema = serde_json::json!({});
        }
        if schema.get("type").is_none()
            && let Some(object) = schema.as_object_mut()
        {
            object.insert("type".into(), "object".into());
        }
        Self {
            hub,
            server: server.to_string(),
            tool: listed.name.clone(),
            name: Box::leak(names::tool_name(server, &listed.name).into_boxed_str()),
            description: Box::leak(description.into_boxed_str()),
            schema,
            read_only: listed.read_only,
        }
    }
}

/// The session's tools of every server ready now, sorted by name.
pub fn session_tools(hub: &Arc<McpHub>) -> Vec<Box<dyn Tool>> {
    hub.ready_tools()
        .iter()
        .map(|(server, listed)| {
            Box::new(McpTool::new(hub.clone(), server, listed)) as Box<dyn Tool>
        })
        .collect()
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name,
            description: self.description,
            parameters: self.schema.clone(),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        if !args.is_object() {
            return Err(ToolError::InvalidArgs(
                "the arguments must be a JSON object".into(),
            ));
        }
        Ok(Access::Mcp {
            server: self.server.clone(),
            tool: self.tool.clone(),
            name: self.name.to_string(),
            read_only: self.read_only,
            arguments: shown_arguments(args),
        })
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let serde_json::Value::Object(arguments) = args else {
            return Err(ToolError::InvalidArgs(
                "the arguments must be a JSON object".into(),
            ));
        };
        run_call(&self.hub, &self.server, &self.tool, arguments, cx).await
    }
}

/// Calls `tool` of `server` through the hub: progress to the call's tail, Esc cancels, the
/// answer as the model reads it (an `isError` answer is the call's error).
pub async fn run_call(
    hub: &McpHub,
    server: &str,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
    cx: &ToolCx,
) -> Result<ToolOutput, ToolError> {
    let started = Instant::now();
    let progress = cx.tail.clone().map(|tail| {
        Arc::new(move |p: McpProgress| tail(&progress_line(&p))) as super::client::ProgressSink
    });
    let answer = hub
        .call(server, tool, arguments, &cx.cancel, progress)
        .await;
    if cx.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let answer = result::answer(&answer.map_err(ToolError::Failed)?);
    if answer.is_error {
        return Err(ToolError::Failed(format!(
            "the tool `{tool}` of the MCP server `{server}` reported an error: {}",
            answer.text
        )));
    }
    Ok(ToolOutput::Mcp(McpCall {
        server: server.to_string(),
        tool: tool.to_string(),
        text: answer.text,
        structured: answer.structured,
        spill_path: answer.spill_path,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }))
}

/// A progress notification as a line of the call's card.
fn progress_line(p: &McpProgress) -> String {
    let amount = match p.total {
        Some(total) => format!("{}/{}", p.progress, total),
        None => format!("{}", p.progress),
    };
    match &p.message {
        Some(message) => format!("progress {amount}: {message}\n"),
        None => format!("progress {amount}\n"),
    }
}

/// The arguments as the approval prompt shows them: pretty JSON, elided in the middle.
pub fn shown_arguments(args: &serde_json::Value) -> String {
    let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
    let chars: Vec<char> = pretty.chars().collect();
    if chars.len() <= SHOWN_ARGUMENTS {
        return pretty;
    }
    let half = SHOWN_ARGUMENTS / 2;
    let head: String = chars[..half].iter().collect();
    let tail: String = chars[chars.len() - half..].iter().collect();
    format!("{head}\n…\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_are_elided_in_the_middle() {
        let args = serde_json::json!({"a": "x".repeat(2_000), "z": "end"});
        let shown = shown_arguments(&args);
        assert!(shown.starts_with("{\n  \"a\""), "{shown}");
        assert!(shown.contains("\n…\n") && shown.ends_with('}'), "{shown}");
        assert!(shown.chars().count() < 700);
        let short = serde_json::json!({"q": 1});
        assert_eq!(shown_arguments(&short), "{\n  \"q\": 1\n}");
    }
}
