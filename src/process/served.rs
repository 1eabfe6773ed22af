//! A program that keeps running beside the session and talks over its pipes (an MCP stdio
//! server, a language server): started like every program (its own session and group, the
//! scrubbed environment, limits, the sandbox its grant names, `.git` and `.cairn` out of its
//! reach as for a background job), with its stdin and stdout open to the caller and its
//! stderr kept in a bounded capture. `stop()` ends its whole group and whatever it left
//! behind; dropping it unstopped kills the group.

use std::os::fd::OwnedFd;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use tokio::process::{Child, ChildStdin, ChildStdout};

use super::sandbox::{PreparedSandbox, WorkspaceReach};
use super::spawn::{Launch, LaunchedChild, inode, start_reader};
use super::{Capture, Group, GroupGuard, Program, Which, limits, reaper};

/// A running program on open pipes. Take `stdin` and `stdout` to talk to it.
pub struct Served {
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    child: Child,
    pid: u32,
    group: Group,
    guard: Option<GroupGuard>,
    stderr: Arc<Capture>,
    grace: std::time::Duration,
    start_ticks: Option<u64>,
    // Kept for the program's life: its temp dir and its cgroup go when these are dropped.
    _sandbox: Option<PreparedSandbox>,
    _bounds: limits::Bounds,
}

/// Starts `program` with its stdin and stdout as pipes to the caller.
pub fn serve(program: &Program<'_>) -> std::io::Result<Served> {
    let mut launch = Launch::new(program, WorkspaceReach::Entries)?;
    let (err_read, err_write) = pipe()?;
    launch
        .command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(err_write));
    let LaunchedChild {
        mut child,
        sandbox,
        guard: _,
        bounds,
    } = launch.start()?;
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the program exited before it was tracked"))?;
    let stdout = child.stdout.take();
    let out_inode = match &stdout {
        Some(out) => inode(out)?,
        None => 0,
    };
    let group = Group::new(pid, [out_inode, inode(&err_read)?]);
    let stderr = Arc::new(Capture::new(false));
    stderr.finish(Which::Stdout);
    start_reader(err_read, Which::Stderr, stderr.clone())?;
    Ok(Served {
        stdin: child.stdin.take(),
        stdout,
        guard: Some(GroupGuard::new(group)),
        group,
        child,
        pid,
        stderr,
        grace: program.settings.kill_grace,
        start_ticks: reaper::start_time(pid),
        _sandbox: sandbox,
        _bounds: bounds,
    })
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)
}

impl Served {
    /// The main process's id (its group's too).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The last of what it wrote to stderr (up to `budget` bytes), for the message when it
    /// fails.
    pub fn stderr_tail(&self, budget: usize) -> String {
        let total = self.stderr.total(Which::Stderr);
        let start = total.saturating_sub(budget.min(super::ring::TAIL_BYTES) as u64);
        self.stderr.view(Which::Stderr, start, total, budget).text
    }

    /// Waits at most `limit` until its stderr reached end of file (everything it wrote is in
    /// `stderr_tail` then); a child that keeps the pipe open makes this wait the whole limit.
    pub async fn stderr_drained(&self, limit: std::time::Duration) {
        let mut progress = self.stderr.subscribe();
        let stderr = self.stderr.clone();
        let _ = tokio::time::timeout(limit, progress.wait_for(|_| stderr.finished())).await;
    }

    /// Waits until the main process exits by itself.
    pub async fn exited(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Whether the main process has exited, without waiting.
    pub fn try_exited(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Ends the program: SIGTERM to its group, SIGKILL after the grace period, then whatever
    /// it left outside the group is swept. Nothing of it runs when this returns.
    pub async fn stop(mut self) -> Option<ExitStatus> {
        // Closing stdin first lets a well-behaved server leave on its own.
        drop(self.stdin.take());
        self.group.end(self.grace).await;
        let status = self.child.wait().await.ok();
        reaper::forget(self.pid);
        if let Some(guard) = self.guard.take() {
            guard.disarm();
        }
        reaper::sweep(self.start_ticks.or(Some(0))).await;
        status
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // Unstopped: the guard kills the group; tokio reaps the main process (kill_on_drop),
        // so the reaper may take its pid for an orphan from now on.
        if self.guard.is_some() {
            reaper::forget(self.pid);
        }
    }
}
