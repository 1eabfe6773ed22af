//! `mcp_search` and `mcp_call`: the two tools that stand for a whole MCP catalog when its
//! schemas would take more than a tenth of the window, when a server was not ready for the
//! first request, or when a server announces that its tools change (SPEC §11). The tools
//! array stays the same all session; schemas come back as results (appended, so the prompt
//! cache's prefix never changes), and `mcp_call` is judged by the gate exactly as the tool's
//! own `mcp__server__tool` would be.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::client::ListedTool;
use super::{McpHub, names};
use crate::tool_output::{McpCall, ToolOutput};
use crate::tools::{Access, Tool, ToolCx, ToolError, ToolSpec};

/// Tools one search returns at most.
const MATCHES: usize = 8;

pub const SEARCH: &str = "mcp_search";
pub const CALL: &str = "mcp_call";

pub struct McpSearchTool(pub Arc<McpHub>);
pub struct McpCallTool(pub Arc<McpHub>);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallArgs {
    server: String,
    tool: String,
    #[serde(default)]
    arguments: serde_json::Map<String, serde_json::Value>,
}

#[async_trait]
impl Tool for McpSearchTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: SEARCH,
            description: "Find tools of the user's MCP servers by words; returns each match's server, tool, description and argument schema. Call one with mcp_call.",
            parameters: json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "words to look for"}},
                "required": ["query"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        let _: SearchArgs = crate::tools::parse_args(args)?;
        Ok(Access::Session)
    }

    async fn run(&self, args: serde_json::Value, _cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: SearchArgs = crate::tools::parse_args(&args)?;
        let started = std::time::Instant::now();
        let catalog = self.0.catalog().await;
        let text = search_text(&catalog, &args.query);
        Ok(ToolOutput::Mcp(McpCall {
            server: String::new(),
            tool: SEARCH.into(),
            text,
            structured: None,
            spill_path: None,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }))
    }
}

#[async_trait]
impl Tool for McpCallTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: CALL,
            description: "Call a tool of the user's MCP servers found with mcp_search, with arguments that follow its schema.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string"},
                    "tool": {"type": "string"},
                    "arguments": {"type": "object"}
                },
                "required": ["server", "tool"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        let args: CallArgs = crate::tools::parse_args(args)?;
        let read_only = self.0.read_only_hint(&args.server, &args.tool);
        Ok(Access::Mcp {
            name: names::tool_name(&args.server, &args.tool),
            arguments: super::tool::shown_arguments(&serde_json::Value::Object(
                args.arguments.clone(),
            )),
            server: args.server,
            tool: args.tool,
            read_only,
        })
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: CallArgs = crate::tools::parse_args(&args)?;
        super::tool::run_call(&self.0, &args.server, &args.tool, args.arguments, cx).await
    }
}

/// The best matches of `query` in `catalog`, each with its schema.
pub fn search_text(catalog: &[(String, ListedTool)], query: &str) -> String {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &(String, ListedTool))> = catalog
        .iter()
        .map(|entry| {
            let (server, tool) = entry;
            let name = format!("{server} {}", tool.name).to_lowercase();
            let description = tool.description.to_lowercase();
            let score = words
                .iter()
                .map(|w| {
                    2 * usize::from(name.contains(w.as_str()))
                        + usize::from(description.contains(w.as_str()))
                })
                .sum();
            (score, entry)
        })
        .filter(|(score, _)| *score > 0 || words.is_empty())
        .collect();
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    if scored.is_empty() {
        let servers: std::collections::BTreeSet<&str> =
            catalog.iter().map(|(server, _)| server.as_str()).collect();
        return format!(
            "no MCP tool matches `{query}` ({} tools of {} servers: {}); try other words",
            catalog.len(),
            servers.len(),
            servers.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let shown = scored.len().min(MATCHES);
    let mut text = format!("{shown} of {} matching MCP tools:\n", scored.len());
    for (_, (server, tool)) in scored.into_iter().take(MATCHES) {
        let schema = serde_json::to_string(&tool.schema).unwrap_or_default();
        text.push_str(&format!(
            "\n- server `{server}`, tool `{}`{}: {}\n  arguments schema: {schema}\n",
            tool.name,
            if tool.read_only { " (read-only)" } else { "" },
            tool.description.trim()
        ));
    }
    text.push_str("\nCall one with mcp_call {server, tool, arguments}.");
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entry(server: &str, name: &str, description: &str) -> (String, ListedTool) {
        (
            server.into(),
            ListedTool {
                name: name.into(),
                description: description.into(),
                schema: json!({"type": "object"}),
                read_only: false,
            },
        )
    }

    #[test]
    fn search_ranks_names_over_descriptions_and_shows_schemas() {
        let catalog = vec![
            entry("gh", "create_issue", "Open an issue"),
            entry("gh", "list_pulls", "List pull requests mentioning an issue"),
            entry("db", "query", "Run SQL"),
        ];
        let text = search_text(&catalog, "issue");
        let first = text.find("create_issue").unwrap();
        let second = text.find("list_pulls").unwrap();
        assert!(first < second, "{text}");
        assert!(
            text.contains("arguments schema: {\"type\":\"object\"}"),
            "{text}"
        );
        assert!(!text.contains("query"), "{text}");
        let none = search_text(&catalog, "weather");
        assert!(
            none.contains("no MCP tool matches") && none.contains("db, gh"),
            "{none}"
        );
    }
}
