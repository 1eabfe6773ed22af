//! The registry's late tools of a session with MCP servers: what joins the tools array at the
//! first request (the servers' own tools, or the `mcp_search`/`mcp_call` pair, or both), and
//! the servers' stop at the session's end.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;

use super::McpHub;
use super::tool::session_tools;
use crate::tools::Tool;

/// The hub's tools as the registry's late tools: the first request waits for the servers at
/// most `FIRST_REQUEST_WAIT`, and those not ready by then are named. When the servers' schemas
/// would take more than a tenth of the window (`window_tokens`), only `mcp_search` and
/// `mcp_call` are offered; they are offered beside the tools when a server was not ready or
/// announces that its tools change.
pub struct HubTools {
    pub hub: Arc<McpHub>,
    pub window_tokens: u64,
}

/// Bytes per token when judging the catalog's share of the window (the context meter's
/// estimate).
const BYTES_PER_TOKEN: u64 = 4;

#[async_trait]
impl crate::tools::registry::LateTools for HubTools {
    async fn tools(&self) -> (Vec<Box<dyn Tool>>, Vec<String>) {
        let started = Instant::now();
        self.hub.settle(super::FIRST_REQUEST_WAIT).await;
        tracing::info!(
            ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "waited for MCP servers"
        );
        let mut notices: Vec<String> = self
            .hub
            .reports()
            .into_iter()
            .filter(|r| !matches!(r.state, super::ServerState::Ready { .. }))
            .map(|r| match r.state {
                super::ServerState::Starting => format!(
                    "MCP server `{}` was not ready for the first request: mcp_search and mcp_call reach its tools once it is",
                    r.name
                ),
                state => format!("MCP server `{}`: {}", r.name, state.describe()),
            })
            .collect();
        let direct = session_tools(&self.hub);
        let bytes: u64 = direct
            .iter()
            .map(|t| serde_json::to_string(&t.spec()).map_or(0, |s| s.len() as u64))
            .sum();
        let too_big = bytes / BYTES_PER_TOKEN > self.window_tokens / 10;
        let search = too_big || !self.hub.all_ready() || self.hub.announces_changes();
        let mut tools = if too_big {
            notices.push(format!(
                "the MCP servers' {} tools would take about {} tokens, more than a tenth of the window: the model finds them with mcp_search and calls them with mcp_call",
                direct.len(),
                bytes / BYTES_PER_TOKEN
            ));
            Vec::new()
        } else {
            direct
        };
        if search {
            tools.push(Box::new(super::search::McpSearchTool(self.hub.clone())) as Box<dyn Tool>);
            tools.push(Box::new(super::search::McpCallTool(self.hub.clone())));
        }
        (tools, notices)
    }

    async fn shutdown(&self) {
        self.hub.shutdown().await;
    }
}
