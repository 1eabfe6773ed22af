//! Running a program to its end: a command awaited by its call (`run`), any program awaited by
//! its caller (`run_program`), and what follows every end: the group ended, what it left
//! behind swept, the protected set checked, the pipes drained, the live tail flushed.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::sandbox::PreparedSandbox;
use super::spawn::{Input, spawn_program};
use super::{
    Capture, CommandSpec, Ending, Finished, Group, GroupGuard, Lifetime, Program, Spawned,
    TailSink, group, protect, reaper,
};

/// How often live output is handed to the tail sink.
const TAIL_EVERY: Duration = Duration::from_millis(50);
/// How long to wait for the pipes to close once the whole group is gone. Only a process that
/// left the session (setsid) and kept the pipe open can hold them longer.
const DRAIN_WAIT: Duration = Duration::from_millis(500);

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
    let program = spec.program();
    let spawned = spawn_program(&program, Input::Null, tail.is_some(), Lifetime::Foreground)?;
    run_spawned(
        spawned,
        spec.settings.kill_grace,
        timeout,
        cancel,
        tail,
        on_timeout,
    )
    .await
}

/// Runs `program` to its end as `run` runs a command: it exits, times out or is cancelled,
/// and then nothing of its group or what it left behind runs any more. `input` is its stdin.
/// For a caller that is not a shell command (a hook, a check): the argv runs as given.
pub async fn run_program(
    program: &Program<'_>,
    input: Input,
    timeout: Duration,
    cancel: &CancellationToken,
    tail: Option<TailSink>,
) -> std::io::Result<Finished> {
    let spawned = spawn_program(program, input, tail.is_some(), Lifetime::Foreground)?;
    let grace = program.settings.kill_grace;
    match run_spawned(spawned, grace, timeout, cancel, tail, OnTimeout::Kill).await? {
        ForegroundEnd::Finished(finished) => Ok(finished),
        // Only `OnTimeout::Background` promotes.
        ForegroundEnd::Promoted { .. } => Err(std::io::Error::other("a program was promoted")),
    }
}

async fn run_spawned(
    spawned: Spawned,
    grace: Duration,
    timeout: Duration,
    cancel: &CancellationToken,
    tail: Option<TailSink>,
    on_timeout: OnTimeout,
) -> std::io::Result<ForegroundEnd> {
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
    } = spawned;
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
        .map(PreparedSandbox::refused_sockets)
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
