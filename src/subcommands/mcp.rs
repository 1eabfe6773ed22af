//! `cairn mcp list [--json]`: the MCP servers of the user's config and the project's (these
//! only when trusted in their current content), started as a session would start them (in the
//! background, each within its `startup_timeout_secs`), with their state and the tools the
//! model would see; all stopped again before it returns.

use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr};

use crate::dirs::Dirs;
use crate::exec::status;

pub async fn mcp_list(dirs: &Dirs, json: bool) -> Result<(String, i32)> {
    let workspace = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .wrap_err("finding the current directory")?;
    let config = super::tools_config(dirs, None)?;
    let project = crate::mcp::project::ProjectServers::load(
        &workspace,
        &config.mcp_servers,
        crate::trust::ProcessTrust::new(dirs.data(), &workspace),
    );
    let longest = config
        .mcp_servers
        .values()
        .chain(project.servers.values())
        .filter(|file| file.is_enabled())
        .map(|file| {
            file.startup_timeout_secs
                .unwrap_or(crate::config::STARTUP_TIMEOUT_SECS)
        })
        .max()
        .unwrap_or(0);
    let settings = crate::process::Settings {
        hidden_env: config
            .key_env
            .iter()
            .cloned()
            .chain(crate::mcp::secret_names(&config.mcp_servers))
            .collect(),
        allowed_env: config.pass_env.clone(),
        ..crate::process::Settings::default()
    };
    let notices = project.notices.clone();
    let network = crate::launch::network::network_stack(&config.network)?;
    let hub = crate::mcp::McpHub::start(
        &config.mcp_servers,
        Some(project),
        crate::mcp::McpRunSettings {
            workspace,
            process: settings,
            network: Some(network),
            data: Some(dirs.data().to_path_buf()),
        },
    );
    // Every start ends by its own timeout; a second more for the process to be stopped.
    hub.settle(Duration::from_secs(longest + 1)).await;
    let reports = hub.reports();
    hub.shutdown().await;
    let disabled: Vec<&String> = config
        .mcp_servers
        .iter()
        .filter(|(_, file)| !file.is_enabled())
        .map(|(name, _)| name)
        .collect();
    if json {
        let value = serde_json::json!({
            "servers": reports,
            "disabled": disabled,
            "notices": notices,
        });
        return Ok((
            format!("{}\n", serde_json::to_string_pretty(&value)?),
            status::OK,
        ));
    }
    if reports.is_empty() && disabled.is_empty() && notices.is_empty() {
        return Ok((
            "no MCP servers are configured ([mcp_servers.NAME] in the config)\n".into(),
            status::OK,
        ));
    }
    let mut out = String::new();
    for report in &reports {
        let origin = if report.origin == "project" {
            ", the project's"
        } else {
            ""
        };
        out.push_str(&format!(
            "{} ({}{origin}): {}\n",
            report.name,
            report.transport,
            report.state.describe()
        ));
        for tool in &report.tools {
            out.push_str(&format!("  {tool}\n"));
        }
    }
    for name in disabled {
        out.push_str(&format!("{name}: disabled (enabled = false)\n"));
    }
    for notice in notices {
        out.push_str(&format!("{notice}\n"));
    }
    Ok((out, status::OK))
}
