//! What of the session's tools depends on what exists at its start: `skill` only when a skill
//! does, the user's MCP servers (started here, in the background) joining at the first request.

use std::sync::Arc;

use crate::config::Config;
use crate::dirs::Dirs;
use crate::tools::{Registry, Tool, ToolEnv};

/// The tools without `skill` when no skill exists at the session's start (it would only take
/// room in every request; a skill added later is offered from the next session on).
pub(super) fn without_idle_skill(
    mut tools: Vec<Box<dyn Tool>>,
    workspace: &std::path::Path,
    dirs: &Dirs,
) -> Vec<Box<dyn Tool>> {
    let sources = crate::skills::Sources::with_dirs(workspace, dirs);
    if crate::skills::discover_skills(&sources).items.is_empty() {
        tools.retain(|tool| tool.spec().name != crate::skills::SKILL_TOOL);
    }
    tools
}

/// The registry with the tools of the user's MCP servers, which start now in the background
/// and join at the first request (a project's servers are not read here).
pub fn with_mcp(registry: Registry, config: &Config, tools: &ToolEnv) -> Registry {
    let servers: crate::config::McpServersFile = config
        .mcp_servers
        .iter()
        .filter(|(_, file)| file.is_enabled())
        .map(|(name, file)| (name.clone(), file.clone()))
        .collect();
    if servers.is_empty() {
        return registry;
    }
    let hub = crate::mcp::McpHub::start(
        &servers,
        crate::mcp::McpRunSettings {
            workspace: tools.workspace.clone(),
            process: tools.bash.clone(),
        },
    );
    registry.with_late(Arc::new(crate::mcp::late::HubTools {
        hub,
        window_tokens: config.context_window,
    }))
}
