//! Background jobs started by `bash` with `background: true`, or foreground commands that
//! outlived their timeout and were promoted: their captured output (same caps
//! as a foreground run), incremental reads for `job_output`, `job_kill`, and the guarantee that
//! every job's process group dies when the session ends (`kill_all`, or dropping the table).
//! The table also owns the session's spill files and removes them when it is dropped. Every
//! start and end goes to the sink the agent gave it (`publish_to`); what the user sees of the
//! jobs and does to them is in `jobs::user`.

use crate::sync::MutexExt;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub mod user;

use super::ToolError;
use super::bash::OUTPUT_BUDGET;
use crate::bus::{JobEnd, JobEvent, JobKiller, JobLine};
use crate::process::{self, Capture, CommandSpec, Group, Spawned, Which, capture::split_budget};
use crate::tool_output::JobReport;
use user::JobNews;

/// Most jobs running at once; a model that starts more is told to stop one first.
pub const MAX_RUNNING: usize = 16;
/// How long `job_kill` waits for the job's exit to be recorded after its group is gone.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// How long `pause_all` waits for a job's processes to be stopped.
const PAUSE_WAIT: Duration = Duration::from_secs(1);

/// Background jobs stopped while the workspace is restored; dropping it lets them go on.
#[must_use = "the jobs go on when this is dropped"]
pub struct PausedJobs {
    groups: Vec<Group>,
}

impl PausedJobs {
    /// How many jobs were paused.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

impl Drop for PausedJobs {
    fn drop(&mut self) {
        for group in &self.groups {
            group.resume();
        }
    }
}

/// Where the table tells of every job's start and end (the agent publishes them on the bus).
pub type JobSink = Arc<dyn Fn(JobEvent) + Send + Sync>;

/// The session's background jobs, by id (`job-1`, `job-2`, …).
#[derive(Default)]
pub struct JobTable {
    pub(super) jobs: Mutex<BTreeMap<u64, Arc<Job>>>,
    pub(super) next: AtomicU64,
    /// Spill files of foreground runs, removed at session end like the jobs' own.
    spills: Mutex<Vec<PathBuf>>,
    pub(super) sink: Mutex<Option<JobSink>>,
    /// What the model has yet to be told: jobs the user killed, jobs a restart ended.
    pub(super) news: Mutex<JobNews>,
}

pub(super) struct Job {
    pub(super) id: String,
    pub(super) command: String,
    group: Group,
    pub(super) capture: Arc<Capture>,
    started: Instant,
    grace: Duration,
    /// Set once the main process exited and the group was ended.
    end: watch::Receiver<Option<Exit>>,
    /// Stream offsets already returned by `job_output`.
    cursor: Mutex<(u64, u64)>,
    /// Who stopped it, when it was stopped on purpose.
    killer: Mutex<Option<JobKiller>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Exit {
    /// How long it ran.
    took: Duration,
    exit_code: Option<i32>,
    signal: Option<String>,
    /// What of the protected set a promoted foreground command changed and was put back.
    put_back: Vec<String>,
    /// The Unix sockets its sandbox refused it, and the limits it hit (as for a foreground
    /// command: `CommandRun::refused_sockets`, `limits_hit`).
    refused_sockets: Vec<String>,
    limits_hit: Vec<String>,
}

impl JobTable {
    /// Starts `spec` as a background job and returns its id at once.
    pub fn start(&self, spec: &CommandSpec<'_>) -> Result<String, ToolError> {
        let running = self.running_count();
        if running >= MAX_RUNNING {
            return Err(ToolError::Failed(format!(
                "{running} background jobs are already running; stop one with job_kill first"
            )));
        }
        // The strict profile (workspace entry by entry): a job runs on while the model works,
        // so no check after it could stop it from planting a git hook that runs first.
        let spawned = process::spawn(spec, false, process::Lifetime::Background)
            .map_err(|err| ToolError::io("could not start bash", err))?;
        Ok(self.adopt(spawned, spec.command, spec.settings.kill_grace, (0, 0)))
    }

    /// Whether another job may run now.
    pub fn has_room(&self) -> bool {
        self.running_count() < MAX_RUNNING
    }

    fn running_count(&self) -> usize {
        self.snapshot().iter().filter(|job| job.running()).count()
    }

    /// Takes over a running command (a foreground run that outlived its timeout) as a job and
    /// returns its id. `shown`: the stdout and stderr offsets the model has already seen, where
    /// `job_output` starts.
    pub fn adopt(
        &self,
        spawned: Spawned,
        command: &str,
        grace: Duration,
        shown: (u64, u64),
    ) -> String {
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (end_tx, end_rx) = watch::channel(None::<Exit>);
        let job = Arc::new(Job {
            id: format!("job-{number}"),
            command: command.to_owned(),
            group: spawned.group,
            capture: spawned.capture.clone(),
            started: spawned.started,
            grace,
            end: end_rx,
            cursor: Mutex::new(shown),
            killer: Mutex::new(None),
        });
        let sink = self.sink.locked().clone();
        let ended = Arc::clone(&job);
        let mut child = spawned.child;
        let (group, capture) = (spawned.group, spawned.capture);
        // Kept until the job ended: its private temp dir goes with it.
        let sandbox = spawned.sandbox;
        // A foreground command promoted here keeps the sandbox it started with, the whole
        // workspace: its protected set is checked again when it ends.
        let protected = spawned.guard;
        // Its limits bind as long as it runs; its cgroup goes when it ended.
        let bounds = spawned.bounds;
        tokio::spawn(async move {
            let pid = child.id();
            let status = child.wait().await;
            if let Some(pid) = pid {
                process::reaper::forget(pid);
            }
            // Whatever the job left running in its group goes with it.
            group.end(grace).await;
            process::drain(&capture, &group).await;
            let put_back = process::check(protected.as_ref());
            let refused_sockets = sandbox
                .as_ref()
                .map(process::sandbox::PreparedSandbox::refused_sockets)
                .unwrap_or_default();
            // Without a cgroup a hit is judged from what it printed (its last stderr).
            let stderr_total = capture.total(Which::Stderr);
            let stderr_tail = capture
                .view(
                    Which::Stderr,
                    stderr_total.saturating_sub(OUTPUT_BUDGET as u64),
                    stderr_total,
                    OUTPUT_BUDGET,
                )
                .text;
            let limits_hit = bounds.hits(&stderr_tail);
            drop(sandbox);
            drop(bounds);
            let (exit_code, signal) = match status {
                Ok(status) => (status.code(), process::signal_name(&status)),
                Err(err) => {
                    tracing::warn!("waiting for a background job: {err}");
                    (None, None)
                }
            };
            let end = Exit {
                took: ended.started.elapsed(),
                exit_code,
                signal,
                put_back,
                refused_sockets,
                limits_hit,
            };
            let _ = end_tx.send(Some(end));
            if let Some(sink) = &sink {
                sink(JobEvent::Ended { job: ended.line() });
            }
        });
        let id = job.id.clone();
        let line = job.line();
        self.lock().insert(number, job);
        if let Some(sink) = self.sink.locked().clone() {
            sink(JobEvent::Started { job: line });
        }
        id
    }

    /// New output since the last read. With `wait`, waits up to that long for new output or
    /// the job's end when there is none yet; `cancel` cuts the wait short.
    pub async fn output(
        &self,
        id: &str,
        wait: Duration,
        cancel: &CancellationToken,
    ) -> Result<JobReport, ToolError> {
        let job = self.find(id)?;
        if !wait.is_zero() && !job.has_news() && job.running() {
            let mut progress = job.capture.subscribe();
            let mut end = job.end.clone();
            let deadline = tokio::time::Instant::now() + wait;
            while !job.has_news() && job.running() {
                tokio::select! {
                    changed = progress.changed() => if changed.is_err() { break },
                    changed = end.changed() => if changed.is_err() { break },
                    () = tokio::time::sleep_until(deadline) => break,
                    () = cancel.cancelled() => break,
                }
            }
        }
        let report = job.report();
        if !report.running && report.stopped_by_user {
            self.heard_of(&report.job_id);
        }
        Ok(report)
    }

    /// Ends the job's process group (SIGTERM, SIGKILL after the grace period) and reports what
    /// it printed since the last read.
    pub async fn kill(&self, id: &str) -> Result<JobReport, ToolError> {
        let job = self.find(id)?;
        job.stop(JobKiller::Model).await;
        let report = job.report();
        if report.stopped_by_user {
            self.heard_of(&report.job_id);
        }
        Ok(report)
    }

    /// Stops every running job's processes until the returned guard is dropped, which lets
    /// them go on (SIGCONT), however the work between ends: a restore of the workspace
    /// (undo, redo, rewind, revert) must not race a job writing into it.
    pub async fn pause_all(&self) -> PausedJobs {
        let groups: Vec<Group> = self
            .snapshot()
            .iter()
            .filter(|job| job.running())
            .map(|job| job.group)
            .collect();
        let paused = PausedJobs { groups };
        for group in &paused.groups {
            if !group.pause(PAUSE_WAIT).await {
                tracing::warn!("a background job's processes did not stop within {PAUSE_WAIT:?}");
            }
        }
        paused
    }

    /// Ends every running job's process group; for the end of a session.
    pub async fn kill_all(&self) {
        let jobs = self.snapshot();
        futures_util::future::join_all(
            jobs.iter()
                .filter(|job| job.running())
                .map(|job| job.stop(JobKiller::SessionEnd)),
        )
        .await;
        // And whatever any command of the session detached from itself.
        process::reaper::sweep(None).await;
    }

    /// Keeps spill files of a foreground run until the session ends.
    pub fn keep_spills(&self, paths: Vec<PathBuf>) {
        if !paths.is_empty() {
            let mut spills = self.spills.locked();
            spills.extend(paths);
        }
    }

    /// Number of jobs started in this session.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ids of the jobs still running.
    pub fn running(&self) -> Vec<String> {
        self.snapshot()
            .iter()
            .filter(|job| job.running())
            .map(|job| job.id.clone())
            .collect()
    }

    /// Finds a job by id; a bare number (`3`) means `job-3`.
    pub(super) fn find(&self, id: &str) -> Result<Arc<Job>, ToolError> {
        let id = id.trim();
        let wanted = match id.parse::<u64>() {
            Ok(number) => format!("job-{number}"),
            Err(_) => id.to_owned(),
        };
        let found = self.snapshot().into_iter().find(|job| job.id == wanted);
        if found.is_none()
            && let Some(gone) = self.left_behind().into_iter().find(|job| job.id == wanted)
        {
            return Err(ToolError::InvalidArgs(format!(
                "{} (`{}`) no longer runs: it was started before cairn restarted, and jobs do \
                 not survive a restart; start it again if it is still needed",
                gone.id, gone.command
            )));
        }
        found.ok_or_else(|| {
            let known: Vec<String> = self.snapshot().iter().map(|job| job.id.clone()).collect();
            let known = if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            };
            ToolError::InvalidArgs(format!("no job `{id}`; jobs of this session: {known}"))
        })
    }

    pub(super) fn snapshot(&self) -> Vec<Arc<Job>> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Job>>> {
        self.jobs.locked()
    }
}

impl Drop for JobTable {
    /// The session is over: nothing a job started may outlive it. There is no time for a grace
    /// period here, so running groups get SIGKILL. Spill files go too: only the log persists.
    fn drop(&mut self) {
        let mut spills = std::mem::take(crate::sync::unpoisoned(self.spills.get_mut()));
        for job in self.snapshot() {
            if job.running() {
                job.group.signal(Signal::SIGKILL);
            }
            if !job.capture.finished() {
                job.group.kill_pipe_holders();
            }
            spills.extend(job.capture.spill_paths());
        }
        for path in spills {
            if let Err(err) = std::fs::remove_file(&path) {
                tracing::debug!("removing spill file {}: {err}", path.display());
            }
        }
    }
}

impl Job {
    pub(super) fn running(&self) -> bool {
        self.end.borrow().is_none()
    }

    fn has_news(&self) -> bool {
        let (out, err) = *self.cursor();
        self.capture.total(Which::Stdout) > out || self.capture.total(Which::Stderr) > err
    }

    fn cursor(&self) -> std::sync::MutexGuard<'_, (u64, u64)> {
        self.cursor.locked()
    }

    /// Stops it on behalf of `by`; a job already ended (or already being stopped) keeps the
    /// ending it has.
    pub(super) async fn stop(&self, by: JobKiller) {
        if !self.running() {
            return;
        }
        self.killer.locked().get_or_insert(by);
        self.group.end(self.grace).await;
        let mut end = self.end.clone();
        let _ = tokio::time::timeout(EXIT_WAIT, end.wait_for(Option::is_some)).await;
    }

    /// What the job printed since the last report, and its state; advances the read cursor.
    fn report(&self) -> JobReport {
        let end = self.end.borrow().clone();
        let killer = *self.killer.locked();
        let mut cursor = self.cursor();
        let (out_from, err_from) = *cursor;
        let out_to = self.capture.total(Which::Stdout);
        let err_to = self.capture.total(Which::Stderr);
        let (out_budget, err_budget) = split_budget(
            OUTPUT_BUDGET,
            self.capture
                .shown_len(Which::Stdout, out_from, out_to, OUTPUT_BUDGET),
            self.capture
                .shown_len(Which::Stderr, err_from, err_to, OUTPUT_BUDGET),
        );
        let stdout = self
            .capture
            .view(Which::Stdout, out_from, out_to, out_budget);
        let stderr = self
            .capture
            .view(Which::Stderr, err_from, err_to, err_budget);
        *cursor = (out_to, err_to);
        JobReport {
            job_id: self.id.clone(),
            command: self.command.clone(),
            running: end.is_none(),
            exit_code: end.as_ref().and_then(|end| end.exit_code),
            signal: end.as_ref().and_then(|end| end.signal.clone()),
            refused_sockets: crate::tool_output::RareList::new(
                end.as_ref()
                    .map(|end| end.refused_sockets.clone())
                    .unwrap_or_default(),
            ),
            limits_hit: crate::tool_output::RareList::new(
                end.as_ref()
                    .map(|end| end.limits_hit.clone())
                    .unwrap_or_default(),
            ),
            put_back: crate::tool_output::PutBack::new(
                end.map(|end| end.put_back).unwrap_or_default(),
            ),
            killed: killer.is_some(),
            stopped_by_user: killer == Some(JobKiller::User),
            truncated: stdout.truncated || stderr.truncated,
            spill_path: stdout.spill_path,
            stderr_spill_path: stderr.spill_path,
            stdout: stdout.text,
            stderr: stderr.text,
            elapsed_ms: self.started.elapsed().as_millis() as u64,
        }
    }

    /// What the user sees of it: id, command, age and, once it ended, how.
    pub(super) fn line(&self) -> JobLine {
        let exit = self.end.borrow().clone();
        let took = exit
            .as_ref()
            .map_or_else(|| self.started.elapsed(), |e| e.took);
        let end = exit.map(|exit| match *self.killer.locked() {
            Some(by) => JobEnd::Killed { by },
            None => JobEnd::Exited {
                exit_code: exit.exit_code,
                signal: exit.signal,
            },
        });
        JobLine {
            id: self.id.clone(),
            command: self.command.clone(),
            elapsed_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            end,
        }
    }
}
