//! The sandbox the model's commands run in, decided once at the start of a session: Landlock
//! checked here (the user hears about a kernel without it once, not from every command), the
//! writable places and sockets from the config, and what the welcome screen and status line say.

use crate::config::Config;
use crate::process::sandbox::{LandlockStatus, SandboxPolicy, landlock_status};
use crate::secret_stores::SecretStores;

/// The sandbox commands run in, and what the user is told about it.
pub struct SandboxSetup {
    pub policy: Option<SandboxPolicy>,
    /// Landlock is missing: commands run unsandboxed, so everything not read-only asks.
    pub missing: bool,
    pub status_note: Option<String>,
    pub summary: SandboxSummary,
}

/// How the model's commands run, said once in full (the welcome screen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSummary {
    pub on: bool,
    /// What confines the commands, or why nothing does.
    pub text: String,
}

/// The sandbox for commands: on by default wherever Landlock works. Landlock is checked once
/// here, so the user hears about a kernel without it at the start and not from every command.
pub fn sandbox_policy(
    config: &Config,
    workspace: &std::path::Path,
    secrets: &SecretStores,
    notices: &mut Vec<String>,
) -> SandboxSetup {
    if !config.sandbox.enabled.unwrap_or(true) {
        return SandboxSetup {
            policy: None,
            missing: false,
            status_note: Some("sandbox off: sandbox.enabled = false".into()),
            summary: SandboxSummary {
                on: false,
                text:
                    "sandbox.enabled = false in the config; commands run with your full permissions"
                        .into(),
            },
        };
    }
    match landlock_status() {
        LandlockStatus::Available(abi) => {
            let mut writable = vec![std::env::temp_dir()];
            if std::path::Path::new("/tmp").is_dir() && !writable.iter().any(|d| d == "/tmp") {
                writable.push("/tmp".into());
            }
            for dir in config.sandbox.writable.iter().flatten() {
                let dir = expand_home(dir);
                if !writable.contains(&dir) {
                    writable.push(dir);
                }
            }
            SandboxSetup {
                policy: Some(SandboxPolicy {
                    workspace: workspace.to_path_buf(),
                    writable,
                    network: config.sandbox.network.unwrap_or(false),
                    unix_sockets: config
                        .sandbox
                        .allow_unix_sockets
                        .iter()
                        .flatten()
                        .map(|socket| expand_home(socket))
                        .collect(),
                    deny_read: secrets.clone(),
                }),
                missing: false,
                status_note: None,
                summary: SandboxSummary {
                    on: true,
                    text: sandboxed_text(abi, config.sandbox.network.unwrap_or(false)),
                },
            }
        }
        LandlockStatus::Unavailable(reason) => {
            let status_note = Some(format!("no sandbox: {reason}"));
            notices.push(format!(
                "no sandbox: {reason}. Commands run with your full permissions, so every command not known to be read-only asks first (set sandbox.enabled = false to silence this)"
            ));
            SandboxSetup {
                policy: None,
                missing: true,
                status_note,
                summary: SandboxSummary {
                    on: false,
                    text: format!("{reason}; every command not known to be read-only asks first"),
                },
            }
        }
    }
}

/// What confines a sandboxed command: Landlock, and the seccomp filter where cairn has one
/// for the architecture.
fn sandboxed_text(abi: u32, network: bool) -> String {
    let network = if network {
        "network allowed"
    } else {
        "network off"
    };
    if crate::process::sandbox::seccomp_available() {
        format!("Landlock (ABI {abi}) + seccomp socket filter, {network}")
    } else {
        format!("Landlock (ABI {abi}), no seccomp filter on this architecture, {network}")
    }
}

/// The status line's note, with what of the per-command limits does not bind here.
pub(super) fn with_limits_note(note: Option<String>) -> Option<String> {
    match (note, crate::process::limits::binding()) {
        (Some(note), Some(limits)) => Some(format!("{note} · {limits}")),
        (note, limits) => note.or(limits),
    }
}

/// `~/x` in a configured path means the home directory's `x`.
fn expand_home(path: &std::path::Path) -> std::path::PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}
