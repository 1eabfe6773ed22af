//! `cairn lsp list`: the language servers of the current directory as a session would find
//! them (built-ins on `PATH`, `[lsp.NAME]`, the project's trusted ones and those waiting for
//! trust), with why one does not run. None is started here.

use color_eyre::eyre::{Result, WrapErr};

use crate::dirs::Dirs;
use crate::exec::status;

pub fn lsp_list(dirs: &Dirs) -> Result<(String, i32)> {
    let workspace = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .wrap_err("finding the current directory")?;
    let config = super::tools_config(dirs, None)?;
    if config.lsp.enabled == Some(false) {
        return Ok((
            "language servers are off ([lsp] enabled = false)\n".into(),
            status::OK,
        ));
    }
    // Only what the listing says of the sandbox depends on these settings.
    let sandboxed = config.sandbox.enabled != Some(false);
    let settings = crate::process::Settings {
        sandbox: sandboxed.then(|| crate::process::SandboxPolicy {
            workspace: workspace.clone(),
            writable: Vec::new(),
            network: false,
            unix_sockets: Vec::new(),
            deny_read: crate::secret_stores::SecretStores::default(),
        }),
        ..crate::process::Settings::default()
    };
    let found = crate::launch::session_lsp(dirs, &config, &workspace, &settings, false);
    let mut out = match &found.lsp {
        Some(lsp) => lsp.listing(&dirs.log_file()),
        None => String::new(),
    };
    for judged in &found.untrusted {
        out.push_str(&format!(
            "{} (the project's; `cairn hooks trust` trusts the project's processes)\n",
            judged.listing()
        ));
    }
    for notice in &found.notices {
        out.push_str(&format!("note: {notice}\n"));
    }
    Ok((out, status::OK))
}
