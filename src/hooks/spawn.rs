//! Starting one hook's process and waiting for it: `sh -c COMMAND` in the workspace, its JSON
//! on stdin, in a process group of its own that is killed whole at the timeout (nothing
//! survives it), with the scrubbed environment of commands (no provider key, no
//! secret-looking variable, no server socket) plus `CAIRN_SESSION_ID`, `CAIRN_WORKSPACE`,
//! `CAIRN_HOOK_EVENT`, `CAIRN_LOG_PATH` and, for Claude Code's scripts,
//! `CLAUDE_PROJECT_DIR`: the process service's `run_program`. The user's hooks run as the
//! user; a project's in the workspace-write sandbox. Its output is capped: an answer longer
//! than that is cut, and so does not parse.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::answer::Ran;
use super::{Context, Hook, RunSettings};
use crate::process::{self, Ending, Grant, Input, Program, Which};

/// Bytes of a hook's stdout read as its answer.
const STDOUT_CAP: usize = 64 * 1024;
/// Bytes of its stderr kept (a reason, a notice).
const STDERR_CAP: usize = 8 * 1024;

/// Runs `hook` on `stdin` to its end (exit, timeout, cancel).
pub(super) async fn run_hook(
    hook: &Hook,
    settings: &RunSettings,
    cx: &Context,
    stdin: Vec<u8>,
    cancel: &CancellationToken,
) -> Ran {
    let started = Instant::now();
    let mut ran = match spawn_and_wait(hook, settings, cx, stdin, cancel).await {
        Ok(ran) => ran,
        Err(err) => Ran {
            spawn_error: Some(err.to_string()),
            ..Ran::default()
        },
    };
    ran.duration = started.elapsed();
    ran
}

/// The one place a hook's process is started: `process::run_program`.
async fn spawn_and_wait(
    hook: &Hook,
    settings: &RunSettings,
    cx: &Context,
    stdin: Vec<u8>,
    cancel: &CancellationToken,
) -> std::io::Result<Ran> {
    let grant = if hook.origin.project {
        Grant::WorkspaceWrite
    } else {
        Grant::Unsandboxed
    };
    let mut program = Program::new(
        ["sh", "-c", hook.command.as_str()],
        &settings.workspace,
        &settings.process,
        grant,
    )
    .env("CAIRN_SESSION_ID", &cx.session_id)
    .env("CAIRN_WORKSPACE", &cx.workspace)
    .env("CAIRN_HOOK_EVENT", hook.event.as_str())
    .env("CAIRN_LOG_PATH", &cx.log_path);
    if hook.origin.format == super::HookFormat::Claude {
        program = program.env("CLAUDE_PROJECT_DIR", &cx.workspace);
    }
    let finished =
        process::run_program(&program, Input::Bytes(stdin), hook.timeout, cancel, None).await?;
    let capture = &finished.capture;
    let stdout = capture.total(Which::Stdout);
    let stderr = capture.total(Which::Stderr);
    Ok(Ran {
        exit: finished.status.code(),
        signal: match finished.ending {
            Ending::Exited => process::signal_name(&finished.status),
            _ => None,
        },
        timed_out: match finished.ending {
            Ending::TimedOut => Some(hook.timeout),
            _ => None,
        },
        spawn_error: match finished.ending {
            Ending::Cancelled => Some("cancelled".into()),
            _ => None,
        },
        stdout: capture.view(Which::Stdout, 0, stdout, STDOUT_CAP).text,
        stderr: capture.view(Which::Stderr, 0, stderr, STDERR_CAP).text,
        duration: finished.duration,
    })
}
