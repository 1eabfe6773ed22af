//! What of the session's tools depends on what exists at its start: `skill` only when a skill
//! does, the MCP servers (started here, in the background) joining at the first request.

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

/// The registry with the tools of the MCP servers (the user's, and the project's trusted in
/// their current content: `project`), which start now in the background and join at the
/// first request; and the servers (none configured: `None`), for their prompts and resources.
/// OAuth logins (`cairn mcp login`) are read from the data directory `data`.
pub fn with_mcp(
    registry: Registry,
    config: &Config,
    tools: &ToolEnv,
    network: &crate::net::Network,
    data: &std::path::Path,
    project: Option<crate::mcp::project::ProjectServers>,
) -> (Registry, Option<Arc<crate::mcp::McpHub>>) {
    let servers: crate::config::McpServersFile = config
        .mcp_servers
        .iter()
        .filter(|(_, file)| file.is_enabled())
        .map(|(name, file)| (name.clone(), file.clone()))
        .collect();
    let project = project.filter(|p| !p.servers.is_empty());
    if servers.is_empty() && project.is_none() {
        return (registry, None);
    }
    crate::mcp::remember_secrets(&servers);
    let hub = crate::mcp::McpHub::start(
        &servers,
        project,
        crate::mcp::McpRunSettings {
            workspace: tools.workspace.clone(),
            process: tools.bash.clone(),
            network: Some(network.clone()),
            data: Some(data.to_path_buf()),
        },
    );
    let registry = registry.with_late(Arc::new(crate::mcp::late::HubTools {
        hub: hub.clone(),
        window_tokens: config.context_window,
    }));
    (registry, Some(hub))
}
