//! The hidden `cairn __sandbox` subcommand: runs one command in the sandbox a bash background
//! job would use, for trying the sandbox by hand.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use super::{EXIT_UNSANDBOXED, Grant, PreparedSandbox, SandboxPolicy, WorkspaceReach};
use crate::secret_stores::SecretStores;

/// The hidden subcommand `main` routes to `sandbox_main`.
pub const SANDBOX_SUBCOMMAND: &str = "__sandbox";

/// The parsed arguments of `cairn __sandbox`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SandboxArgs {
    policy: SandboxPolicy,
    grant: Grant,
    command: Vec<String>,
}

/// `own`: cairn's own directories (its config and data), which no command may read.
fn parse_args(args: &[String], own: &[PathBuf]) -> Result<SandboxArgs, String> {
    let args = match args.first() {
        Some(first) if first == SANDBOX_SUBCOMMAND => &args[1..],
        _ => args,
    };
    let mut policy = SandboxPolicy {
        workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        writable: Vec::new(),
        network: false,
        unix_sockets: Vec::new(),
        deny_read: SecretStores::new(&crate::secret_stores::known_homes(), own),
    };
    let mut grant = Grant::WorkspaceWrite;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--write" => {
                let dir = args.get(i + 1).ok_or("--write needs a directory")?;
                policy.writable.push(PathBuf::from(dir));
                i += 2;
            }
            "--workspace" => {
                let dir = args.get(i + 1).ok_or("--workspace needs a directory")?;
                policy.workspace = PathBuf::from(dir);
                i += 2;
            }
            "--unix-socket" => {
                let socket = args.get(i + 1).ok_or("--unix-socket needs a path")?;
                policy.unix_sockets.push(PathBuf::from(socket));
                i += 2;
            }
            "--network" => {
                policy.network = true;
                i += 1;
            }
            "--read-only" => {
                grant = Grant::ReadOnly;
                i += 1;
            }
            "--" => {
                let command = args[i + 1..].to_vec();
                if command.is_empty() {
                    return Err("no command after `--`".into());
                }
                return Ok(SandboxArgs {
                    policy,
                    grant,
                    command,
                });
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Err("usage: cairn __sandbox [--read-only] [--workspace DIR] [--write DIR]... [--unix-socket PATH]... [--network] -- COMMAND...".into())
}

/// Entry of the hidden `cairn __sandbox` subcommand: runs one command in the sandbox a bash
/// background job would use (workspace entry by entry), for trying the sandbox by hand, and returns its exit status (128 + N for a
/// signal) once its temp dir is removed: 2 for bad arguments, 126 when the sandbox cannot be
/// applied, 127 when the command cannot be executed.
pub fn sandbox_main(args: Vec<String>, dirs: &crate::dirs::Dirs) -> i32 {
    let parsed = match parse_args(&args, &dirs.own()) {
        Ok(parsed) => parsed,
        Err(message) => {
            say(&message);
            return 2;
        }
    };
    // The strict profile: no check runs after a command started this way.
    let mut prepared =
        match PreparedSandbox::build(&parsed.policy, parsed.grant, WorkspaceReach::Entries) {
            Ok(prepared) => prepared,
            Err(err) => {
                say(&format!("{err}; refusing to run the command unsandboxed"));
                return EXIT_UNSANDBOXED;
            }
        };
    let entry = prepared.entry();
    let mut command = std::process::Command::new(&parsed.command[0]);
    command
        .args(&parsed.command[1..])
        .env("TMPDIR", prepared.temp_dir());
    // SAFETY: `enter` and the descriptor marking make only raw system calls, safe between
    // fork and exec.
    unsafe {
        command.pre_exec(move || {
            crate::process::fds::close_inherited_on_exec()?;
            entry.enter()
        });
    }
    // A child, not exec: the temp dir is removed once the command ended.
    let status = match command.spawn().and_then(|mut child| {
        if let Err(err) = prepared.supervise() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(err);
        }
        child.wait()
    }) {
        Ok(status) => status,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            say(&format!("cannot run {}: {err}", parsed.command[0]));
            return 127;
        }
        Err(err) => {
            say(&format!(
                "running {} in the sandbox failed: {err}",
                parsed.command[0]
            ));
            return EXIT_UNSANDBOXED;
        }
    };
    drop(prepared);
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(1)
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "cairn sandbox: {message}");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments_parse_into_a_policy_and_a_grant() {
        let parsed = parse_args(
            &strings(&[
                "__sandbox",
                "--read-only",
                "--workspace",
                "/ws",
                "--write",
                "/cache",
                "--",
                "bash",
                "-c",
                "ls",
            ]),
            &[],
        )
        .unwrap();
        assert_eq!(parsed.grant, Grant::ReadOnly);
        assert_eq!(parsed.policy.workspace, PathBuf::from("/ws"));
        assert_eq!(parsed.policy.writable, [PathBuf::from("/cache")]);
        assert!(!parsed.policy.network);
        assert_eq!(parsed.command, strings(&["bash", "-c", "ls"]));
    }

    #[test]
    fn bad_arguments_are_reported() {
        assert_eq!(
            parse_args(&strings(&["--write"]), &[]).unwrap_err(),
            "--write needs a directory"
        );
        assert_eq!(
            parse_args(&strings(&["--frobnicate"]), &[]).unwrap_err(),
            "unknown argument `--frobnicate`"
        );
        assert_eq!(
            parse_args(&strings(&["--network", "--"]), &[]).unwrap_err(),
            "no command after `--`"
        );
        assert_eq!(
            sandbox_main(
                strings(&["__sandbox", "--bogus"]),
                &crate::dirs::Dirs::from_env()
            ),
            2
        );
    }
}
