//! Runs shell commands for `bash` and the job table: `bash -c` in its own session and process
//! group, stdin from /dev/null, a scrubbed environment, optional Landlock sandbox, output
//! captured by reader threads into a `Capture`, and a group kill (SIGTERM, then SIGKILL after a
//! grace period) that leaves no child, grandchild or background leftover alive.

pub mod capture;
mod cgroup;
mod gitconfig;
mod group;
pub mod limits;
pub mod net_env;
pub mod protect;
mod protect_fs;
mod protect_stamp;
pub mod read_grants;
pub mod reaper;
mod ring;
pub mod sandbox;
pub mod sandbox_cli;
mod seccomp;
pub mod server_env;
mod unix_supervisor;

use crate::sync::MutexExt;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::Path;
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
pub use sandbox::Grant;
use sandbox::{Prepared, Reach};

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
    /// How much the sandbox allows this command (when the sandbox is on).
    pub grant: Grant,
}

/// A started process: its main child, its group and its output.
pub struct Spawned {
    pub child: Child,
    pub group: Group,
    pub capture: Arc<Capture>,
    pub sandboxed: bool,
    pub started: Instant,
    /// The command's sandbox (its private temp dir is removed when this is dropped).
    pub sandbox: Option<Prepared>,
    /// When the main child started (clock ticks after boot): orphans started since are its.
    pub start_ticks: Option<u64>,
    /// The protected set as it was before a foreground workspace-write command (which may
    /// write the whole workspace): checked and put back once nothing of it runs.
    pub guard: Option<protect::ProtectedSet>,
    /// Its process and memory limits (its cgroup is removed when this is dropped).
    pub bounds: limits::Bounds,
}

/// Commands the sandbox refused in this session.
#[derive(Debug, Default)]
pub struct Refused(std::sync::Mutex<std::collections::HashSet<String>>);

impl Refused {
    pub fn add(&self, command: &str) {
        self.lock().insert(command.to_owned());
    }

    pub fn contains(&self, command: &str) -> bool {
        self.lock().contains(command)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
        self.0.locked()
    }
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
    /// What of the protected set (git config and hooks, `.cairn/`) the command changed and
    /// cairn put back.
    pub put_back: Vec<protect::PutBack>,
    /// The Unix sockets the sandbox refused it (paths, or kinds of socket).
    pub refused_sockets: Vec<String>,
    /// Its limits, to tell which it hit (`Bounds::hits`).
    pub bounds: limits::Bounds,
}

/// How long a command may live, which decides how its sandbox grants the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// Awaited by the call: checked afterwards, so it may write the whole workspace.
    Foreground,
    /// A background job: nothing checks it after, so `.git` and `.cairn` stay out of reach.
    Background,
}

/// Starts `bash -c COMMAND` (inside its sandbox when the sandbox is on) with reader threads
/// on both pipes.
pub fn spawn(
    spec: &CommandSpec<'_>,
    keep_tail: bool,
    lifetime: Lifetime,
) -> std::io::Result<Spawned> {
    let reach = match lifetime {
        Lifetime::Foreground => Reach::Root,
        Lifetime::Background => Reach::Entries,
    };
    let mut sandbox = match (&spec.settings.sandbox, spec.grant) {
        (Some(policy), grant) if grant != Grant::Unsandboxed => Some(
            Prepared::build(policy, grant, reach)
                .map_err(|err| std::io::Error::other(format!("{err}; the command did not run")))?,
        ),
        _ => None,
    };
    // Recorded before the command can touch anything.
    let guard = match (&spec.settings.sandbox, spec.grant, reach) {
        (Some(policy), Grant::WorkspaceWrite, Reach::Root) => {
            Some(protect::ProtectedSet::take(&policy.workspace))
        }
        _ => None,
    };
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let mut command = Command::new("bash");
    command
        .args(["-c", spec.command])
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out_write))
        .stderr(Stdio::from(err_write))
        .kill_on_drop(true);
    let hidden = hidden_vars(spec.settings, std::env::vars_os());
    for name in &hidden {
        command.env_remove(name);
    }
    // Secrets taken out of cairn's own environment at start-up that the user lets through.
    for (name, value) in crate::secrets::stashed() {
        if spec.settings.allowed_env.contains(&name) {
            command.env(name, value);
        }
    }
    // The proxy and CA variables: what a command that may use the network needs to reach it
    // as cairn does; none of them for one that may not.
    let network = match (&spec.settings.sandbox, spec.grant) {
        (None, _) | (_, Grant::Unsandboxed) => true,
        (Some(policy), Grant::WorkspaceWrite) => policy.network,
        (Some(_), Grant::ReadOnly) => false,
    };
    for change in spec
        .settings
        .network_env
        .changes(network, &spec.settings.allowed_env)
    {
        match change {
            net_env::EnvChange::Set(name, value) => command.env(name, value),
            net_env::EnvChange::Remove(name) => command.env_remove(name),
        };
    }
    command.envs([
        ("NO_COLOR", "1"),
        ("TERM", "dumb"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
    ]);
    if let Some(sandbox) = &sandbox {
        command.env("TMPDIR", sandbox.temp_dir());
    }
    let entry = sandbox.as_ref().map(Prepared::entry);
    // Unsandboxed commands (sandbox off, or `u`) are bounded like workspace-write ones.
    let grant = if sandbox.is_some() {
        spec.grant
    } else {
        Grant::Unsandboxed
    };
    let bounds = limits::Bounds::prepare(spec.settings.limits.for_grant(grant));
    let bounds_entry = bounds.entry();
    // SAFETY: setsid, prctl, getppid and the sandbox's raw system calls are async-signal-safe
    // and nothing here allocates or touches memory of the parent. A new session gives the
    // command its own process group (so the whole group can be signalled) and no controlling
    // terminal, so nothing it runs can stop on, read from or draw over the TUI's terminal;
    // password prompts that open /dev/tty fail at once instead of hanging.
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
            // Into its cgroup (or under its rlimits) before anything of the command runs.
            bounds_entry.apply()?;
            // Last, so nothing above runs restricted; the command itself never runs outside.
            if let Some(entry) = &entry {
                entry.enter()?;
            }
            Ok(())
        });
    }
    let mut child = reaper::spawn_known(|| command.spawn(), Child::id)?;
    // The Command holds the parent's copies of the pipes' write ends: close them now, or the
    // readers would never see end of file.
    drop(command);
    if let Some(sandbox) = &mut sandbox
        && let Err(err) = sandbox.supervise()
    {
        // Without its supervisor the command's socket calls would fail oddly: it does not run.
        let _ = child.start_kill();
        return Err(std::io::Error::other(format!(
            "starting the sandbox's socket supervisor failed: {err}; the command did not run"
        )));
    }
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
        sandboxed: sandbox.is_some(),
        started: Instant::now(),
        start_ticks: reaper::start_time(pid),
        sandbox,
        guard,
        bounds,
    })
}

/// What to do with a foreground command that outlives its timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnTimeout {
    /// End its group, as on cancel.
    Kill,
    /// Leave it running and hand it back, to become a background job.
    Background,
}

/// How a foreground run came back: finished, or promoted to a background job.
pub enum ForegroundEnd {
    Finished(Finished),
    /// It outlived its timeout with `OnTimeout::Background`: still running, its group no
    /// longer guarded here. The caller must hand it to something that ends it (the job table).
    /// `put_back`: what it had changed of the protected set by then.
    Promoted {
        spawned: Box<Spawned>,
        put_back: Vec<protect::PutBack>,
    },
}

/// Runs a command to its end: it exits, times out or is cancelled. On cancel (or timeout with
/// `OnTimeout::Kill`) the group gets SIGTERM, then SIGKILL after `grace`; after a normal exit,
/// whatever the command left running in the group is ended the same way. Live output goes to
/// `tail` while the call runs.
pub async fn run(
    spec: &CommandSpec<'_>,
    timeout: Duration,
    cancel: &CancellationToken,
    tail: Option<TailSink>,
    on_timeout: OnTimeout,
) -> std::io::Result<ForegroundEnd> {
    let grace = spec.settings.kill_grace;
    let Spawned {
        mut child,
        group,
        capture,
        sandboxed,
        started,
        sandbox,
        start_ticks,
        guard,
        bounds,
    } = spawn(spec, tail.is_some(), Lifetime::Foreground)?;
    let pid = child.id();
    let protected = guard;
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
    if ending == Ending::TimedOut && on_timeout == OnTimeout::Background {
        // The call is over but the command is not: its live tail ends with the call.
        if let Some(ticker) = ticker {
            ticker.abort();
        }
        flush_tail(&capture, tail);
        guard.disarm();
        // It goes on with the whole workspace writable: what it changed so far is put back
        // now, and again when the job ends (`jobs`).
        let put_back = check(protected.as_ref());
        return Ok(ForegroundEnd::Promoted {
            spawned: Box::new(Spawned {
                child,
                group,
                capture,
                sandboxed,
                started,
                sandbox,
                start_ticks,
                guard: protected,
                bounds,
            }),
            put_back,
        });
    }
    group.end(grace).await;
    let status = child.wait().await;
    if let Some(pid) = pid {
        reaper::forget(pid);
    }
    let status = status?;
    guard.disarm();
    // Whatever left the group and the session (setsid, double forks) and was re-parented to
    // cairn goes too; without a start time, every orphan does.
    reaper::sweep(start_ticks.or(Some(0))).await;
    drain(&capture, &group).await;
    // Nothing of the command runs any more (its group ended, its orphans were swept): what
    // it left in the protected set stays as it is unless put back now.
    let put_back = check(protected.as_ref());
    let refused_sockets = sandbox
        .as_ref()
        .map(Prepared::refused_sockets)
        .unwrap_or_default();
    drop(sandbox);
    if let Some(ticker) = ticker {
        ticker.abort();
    }
    flush_tail(&capture, tail);
    Ok(ForegroundEnd::Finished(Finished {
        status,
        ending,
        capture,
        sandboxed,
        duration: started.elapsed(),
        put_back,
        refused_sockets,
        bounds,
    }))
}

/// Puts back what a command changed of the protected set; what it put back.
pub fn check(record: Option<&protect::ProtectedSet>) -> Vec<protect::PutBack> {
    let Some(record) = record else {
        return Vec::new();
    };
    let put_back = record.restore();
    if !put_back.is_empty() {
        tracing::warn!("a sandboxed command changed protected files; put back: {put_back:?}");
    }
    put_back
}

/// Hands what the ticker has not sent yet to the tail sink.
fn flush_tail(capture: &Capture, tail: Option<TailSink>) {
    if let Some(sink) = tail {
        let rest = capture.take_pending();
        if !rest.is_empty() {
            sink(&rest);
        }
    }
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

/// Variables removed from a command's environment: the configured ones, and every one that
/// looks like a secret (see `secrets::looks_secret`) or names a server that could run
/// something outside the sandbox (see `server_env`), unless allowed (`pass_env`).
pub fn hidden_vars(
    settings: &BashSettings,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<OsString> {
    let allowed = |name: &str| settings.allowed_env.iter().any(|a| a == name);
    let mut hidden: Vec<OsString> = vars
        .filter(|(name, value)| {
            let Some(name) = name.to_str() else {
                return false;
            };
            !allowed(name)
                && (crate::secrets::looks_secret(name, &value.to_string_lossy())
                    || server_env::names_a_server(name, &value.to_string_lossy())
                    || settings.hidden_env.iter().any(|h| h == name))
        })
        .map(|(name, _)| name)
        .collect();
    // Configured names go even when the current process does not have them (yet).
    for name in &settings.hidden_env {
        if !allowed(name) && !hidden.iter().any(|h| h == name.as_str()) {
            hidden.push(name.into());
        }
    }
    hidden
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
    fn secret_looking_variables_are_hidden_unless_allowed() {
        let settings = BashSettings {
            hidden_env: vec!["DEEPSEEK_KEY".into()],
            allowed_env: vec!["GITHUB_TOKEN".into(), "WAYLAND_DISPLAY".into()],
            ..BashSettings::default()
        };
        let vars = [
            ("HOME", "/home/u"),
            ("OPENAI_API_KEY", "sk-1"),
            ("GITHUB_TOKEN", "ghp"),
            ("NPM_TOKEN", "n"),
            ("AWS_SECRET_ACCESS_KEY", "a"),
            ("DB_PASSWORD_FILE", "/x"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("TMUX", "/tmp/tmux-1000/default,4242,0"),
            ("DATABASE_URL", "postgres://app:hunter2@db/app"),
            ("DISPLAY", ":0"),
            ("PLAIN_URL", "https://example.com/a@b"),
            ("WAYLAND_DISPLAY", "wayland-0"),
            ("PATH", "/bin"),
        ];
        let hidden = hidden_vars(
            &settings,
            vars.iter()
                .map(|(n, v)| (OsString::from(n), OsString::from(v))),
        );
        let hidden: Vec<&str> = hidden.iter().filter_map(|n| n.to_str()).collect();
        assert_eq!(
            hidden,
            [
                "OPENAI_API_KEY",
                "NPM_TOKEN",
                "AWS_SECRET_ACCESS_KEY",
                "DB_PASSWORD_FILE",
                "SSH_AUTH_SOCK",
                "TMUX",
                "DATABASE_URL",
                "DISPLAY",
                "DEEPSEEK_KEY"
            ]
        );
    }
}
