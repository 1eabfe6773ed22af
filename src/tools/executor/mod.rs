//! Runs shell commands for `bash` and the job table: `bash -c` in its own session and process
//! group, stdin from /dev/null, a scrubbed environment, optional Landlock sandbox, output
//! captured by reader threads into a `Capture`, and a group kill (SIGTERM, then SIGKILL after a
//! grace period) that leaves no child, grandchild or background leftover alive.

pub mod capture;
mod group;

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::fcntl::OFlag;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{BashSettings, TailSink};
pub use capture::{Capture, View, Which};
pub use group::{Group, GroupGuard};

/// How often live output is handed to the tail sink.
const TAIL_EVERY: Duration = Duration::from_millis(50);
/// How long to wait for the pipes to close once the whole group is gone. Only a process that
/// left the session (setsid) and kept the pipe open can hold them longer.
const DRAIN_WAIT: Duration = Duration::from_millis(500);
/// Bytes per read from a pipe: large reads keep a command printing gigabytes cheap.
const READ_CHUNK: usize = 128 * 1024;

/// What to run and where.
pub struct CommandSpec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub settings: &'a BashSettings,
}

/// A started process: its main child, its group and its output.
pub struct Spawned {
    pub child: Child,
    pub group: Group,
    pub capture: Arc<Capture>,
    pub sandboxed: bool,
    pub started: Instant,
}

/// How a foreground run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited,
    TimedOut,
    Cancelled,
}

/// A finished foreground run.
pub struct Finished {
    pub status: ExitStatus,
    pub ending: Ending,
    pub capture: Arc<Capture>,
    pub sandboxed: bool,
    pub duration: Duration,
}

/// Starts `bash -c COMMAND` (through the sandbox launcher when configured) with reader threads
/// on both pipes.
pub fn spawn(spec: &CommandSpec<'_>, keep_tail: bool) -> std::io::Result<Spawned> {
    let (program, args) = program_and_args(spec)?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out_write))
        .stderr(Stdio::from(err_write))
        .kill_on_drop(true);
    for name in hidden_vars(spec.settings, std::env::vars_os().map(|(name, _)| name)) {
        command.env_remove(name);
    }
    command.envs([
        ("NO_COLOR", "1"),
        ("TERM", "dumb"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
    ]);
    // SAFETY: setsid, prctl and getppid are async-signal-safe and nothing here allocates or
    // touches memory of the parent. A new session gives the command its own process group (so
    // the whole group can be signalled) and no controlling terminal, so nothing it runs can stop
    // on, read from or draw over the TUI's terminal; password prompts that open /dev/tty fail at
    // once instead of hanging.
    let parent = std::process::id();
    unsafe {
        command.pre_exec(move || {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)?;
            // If cairn itself is killed (SIGKILL leaves no chance to clean up), the kernel
            // kills the command too instead of leaving it orphaned. prctl is signal-safe.
            // The signal follows the *thread* that forked: spawns happen on the runtime's
            // worker threads, which live as long as the runtime.
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // cairn died between fork and prctl: the signal will never come. (No
                // allocation after fork, so a plain errno.)
                if libc::getppid() as u32 != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    // The Command holds the parent's copies of the pipes' write ends: close them now, or the
    // readers would never see end of file.
    drop(command);
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the child exited before it was tracked"))?;
    let group = Group::new(pid, [inode(&out_read)?, inode(&err_read)?]);
    let capture = Arc::new(Capture::new(keep_tail));
    start_reader(out_read, Which::Stdout, capture.clone())?;
    start_reader(err_read, Which::Stderr, capture.clone())?;
    Ok(Spawned {
        child,
        group,
        capture,
        sandboxed: spec.settings.sandbox.is_some(),
        started: Instant::now(),
    })
}

/// Runs a command to its end: it exits, times out or is cancelled. On timeout or cancel the
/// group gets SIGTERM, then SIGKILL after `grace`; after a normal exit, whatever the command
/// left running in the group is ended the same way. Live output goes to `tail`.
pub async fn run(
    spec: &CommandSpec<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
    tail: Option<TailSink>,
) -> std::io::Result<Finished> {
    let grace = spec.settings.kill_grace;
    let Spawned {
        mut child,
        group,
        capture,
        sandboxed,
        started,
    } = spawn(spec, tail.is_some())?;
    let guard = GroupGuard::new(group);
    let ticker = tail.clone().map(|sink| start_tail(capture.clone(), sink));
    let ending = tokio::select! {
        status = child.wait() => {
            status?;
            Ending::Exited
        }
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
        () = cancel.cancelled() => Ending::Cancelled,
    };
    group.end(grace).await;
    let status = child.wait().await?;
    guard.disarm();
    drain(&capture, &group).await;
    if let Some(ticker) = ticker {
        ticker.abort();
    }
    if let Some(sink) = tail {
        let rest = capture.take_pending();
        if !rest.is_empty() {
            sink(&rest);
        }
    }
    Ok(Finished {
        status,
        ending,
        capture,
        sandboxed,
        duration: started.elapsed(),
    })
}

/// Waits until both pipes reached end of file. The group is gone by now, so only a process
/// that left its session can still hold them open: after `DRAIN_WAIT` those are killed, and the
/// output is taken as it is once they had a moment to go.
pub async fn drain(capture: &Capture, group: &Group) {
    if wait_finished(capture, DRAIN_WAIT).await {
        return;
    }
    let escapees = group.kill_pipe_holders();
    if !escapees.is_empty() {
        group::wait_pids_gone(&escapees, DRAIN_WAIT).await;
        if wait_finished(capture, DRAIN_WAIT).await {
            return;
        }
    }
    tracing::debug!("output pipes still open after the process group ended");
}

async fn wait_finished(capture: &Capture, wait: Duration) -> bool {
    let mut progress = capture.subscribe();
    let deadline = tokio::time::Instant::now() + wait;
    while !capture.finished() {
        if tokio::time::timeout_at(deadline, progress.changed())
            .await
            .is_err()
        {
            return capture.finished();
        }
    }
    true
}

/// Hands live output to `sink` every `TAIL_EVERY`, coalesced, until the capture ends.
pub fn start_tail(capture: Arc<Capture>, sink: TailSink) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(TAIL_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let text = capture.take_pending();
            if !text.is_empty() {
                sink(&text);
            }
            if capture.finished() {
                return;
            }
        }
    })
}

/// Name of the signal that ended a process, like `SIGKILL`.
pub fn signal_name(status: &ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let number = status.signal()?;
    Some(match nix::sys::signal::Signal::try_from(number) {
        Ok(signal) => signal.as_str().to_owned(),
        Err(_) => format!("signal {number}"),
    })
}

/// Variables removed from a command's environment: the configured ones, and every name that
/// looks like a secret (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`) unless allowed.
pub fn hidden_vars(
    settings: &BashSettings,
    names: impl Iterator<Item = OsString>,
) -> Vec<OsString> {
    let allowed = |name: &str| settings.allowed_env.iter().any(|a| a == name);
    let mut hidden: Vec<OsString> = names
        .filter(|name| {
            let Some(name) = name.to_str() else {
                return false;
            };
            !allowed(name) && (looks_secret(name) || settings.hidden_env.iter().any(|h| h == name))
        })
        .collect();
    // Configured names go even when the current process does not have them (yet).
    for name in &settings.hidden_env {
        if !allowed(name) && !hidden.iter().any(|h| h == name.as_str()) {
            hidden.push(name.into());
        }
    }
    hidden
}

fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["API_KEY", "TOKEN", "SECRET"]
        .iter()
        .any(|suffix| upper == *suffix || upper.ends_with(&format!("_{suffix}")))
        || upper.contains("PASSWORD")
}

fn program_and_args(spec: &CommandSpec<'_>) -> std::io::Result<(PathBuf, Vec<OsString>)> {
    let Some(policy) = &spec.settings.sandbox else {
        return Ok(("bash".into(), vec!["-c".into(), spec.command.into()]));
    };
    // The launcher's own argument format, so the two sides cannot drift apart. Running
    // unsandboxed when Landlock is unavailable is not plumbed into the bash settings: refuse.
    let args = policy
        .child_args(spec.command, false)
        .into_iter()
        .map(OsString::from)
        .collect();
    Ok((std::env::current_exe()?, args))
}

fn inode(fd: &OwnedFd) -> std::io::Result<u64> {
    Ok(nix::sys::stat::fstat(fd)
        .map_err(std::io::Error::from)?
        .st_ino)
}

/// A pipe whose read end stays blocking (for the reader thread) and whose ends do not leak
/// into other children.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
    // A larger pipe means fewer wake-ups for a command printing a lot; failure is harmless.
    let _ = nix::fcntl::fcntl(&read, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    Ok((read, write))
}

/// Reads a pipe to its end on a plain thread: blocking reads of large chunks are the cheapest
/// way to move gigabytes, and a thread never holds up the async runtime's shutdown.
fn start_reader(fd: OwnedFd, which: Which, capture: Arc<Capture>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("cairn-output".into())
        .spawn(move || {
            use std::io::Read;
            let mut pipe = std::fs::File::from(fd);
            let mut buf = vec![0; READ_CHUNK];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => capture.push(which, &buf[..n]),
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        tracing::warn!("reading command {which:?}: {err}");
                        break;
                    }
                }
            }
            capture.finish(which);
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_hidden_unless_allowed() {
        let settings = BashSettings {
            hidden_env: vec!["DEEPSEEK_KEY".into()],
            allowed_env: vec!["GITHUB_TOKEN".into()],
            ..BashSettings::default()
        };
        let names = [
            "HOME",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "AWS_SECRET",
            "DB_PASSWORD_FILE",
            "PATH",
            "TOKENIZER",
        ];
        let hidden = hidden_vars(&settings, names.iter().map(OsString::from));
        let hidden: Vec<&str> = hidden.iter().filter_map(|n| n.to_str()).collect();
        assert_eq!(
            hidden,
            [
                "OPENAI_API_KEY",
                "NPM_TOKEN",
                "AWS_SECRET",
                "DB_PASSWORD_FILE",
                "DEEPSEEK_KEY"
            ]
        );
    }

    #[test]
    fn sandboxed_commands_go_through_the_launcher() {
        let settings = BashSettings {
            sandbox: Some(crate::permissions::sandbox::SandboxPolicy {
                writable: vec!["/w".into(), "/tmp".into()],
                network: false,
            }),
            ..BashSettings::default()
        };
        let spec = CommandSpec {
            command: "ls",
            cwd: Path::new("."),
            settings: &settings,
        };
        let (program, args) = program_and_args(&spec).expect("current exe");
        assert_eq!(program, std::env::current_exe().expect("current exe"));
        let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
        assert_eq!(
            args,
            [
                "__sandbox",
                "--write",
                "/w",
                "--write",
                "/tmp",
                "--no-network",
                "--",
                "bash",
                "-c",
                "ls"
            ]
        );
    }
}
