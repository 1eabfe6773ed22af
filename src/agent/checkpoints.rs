//! Checkpoints around the calls that may change the workspace: one before such a batch, one
//! after it, both in the session log (so `cairn undo` finds a turn's), and for a command the
//! files it created, changed or deleted, attached to its result like an edit's diff. After a
//! batch the store is packed in the background when it needs it.
//!
//! Off the critical path: the session's first snapshot (a walk of the whole workspace) starts
//! with its first request and goes on while the model answers and the calls that only read
//! run; the first batch that may change files waits for it. The checkpoint after a batch is
//! taken in two parts: the snapshot (the changed paths, from the notifications or the paths
//! the file tools wrote, looked at and hashed; its id known) and its write to disk
//! (`CheckpointStore::flush`), which starts as soon as the snapshot is taken and runs in the
//! background while the next request streams. A batch of file-tool writes takes its snapshot
//! in the background too, logged before the next reply; a command takes it on the path,
//! because its result lists what it changed (exact: the paths the notifications named, each
//! confirmed by stat and hash against the last checkpoint), and logs it at once. Where
//! nothing can have changed since the last checkpoint (the notification queue is empty, the
//! head on disk is ours), the answer is that checkpoint, read on the agent's thread
//! (`CheckpointStore::unchanged`). What runs in the background is `pending` until something
//! needs it, and everything that does waits for it first (`settle_checkpoint`): the next
//! checkpoint (so the next batch that may change files starts from a checkpoint on disk) and
//! the end of the request (so undo, redo, rewind and revert, which run between requests, and
//! other processes find it). The log keeps the order it always had: a batch's After before
//! the next assistant message.
//!
//! A cairn killed while a write is pending leaves a log naming an After the store does not
//! have, or a Before with no After; `cairn undo` takes either batch as one never closed and
//! completes it from the workspace as it is (see `time_travel::undo`).

use crate::bus::ReportEvent;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Agent;
use crate::bus::{AgentEvent, ToolResult};
use crate::checkpoint::phases::{self, Phase};
use crate::checkpoint::{
    CheckpointError, CheckpointId, CheckpointKind, CheckpointStore, Snapshot, StoreOptions,
    file_changes,
};
use crate::session_log::Record;
use crate::tool_output::{FileChange, ToolOutput};

/// Longest a snapshot may take before checkpoints are switched off for the session.
const SNAPSHOT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(15);

/// The store of this agent's workspace, opened on first use.
#[derive(Default)]
pub(super) struct Checkpoints {
    store: Option<Arc<CheckpointStore>>,
    /// Opening failed (no git?): said once, not tried again.
    unavailable: bool,
    /// What snapshots leave out was said.
    told_skipped: bool,
    /// A background `maintain` of the store is running.
    maintaining: Arc<AtomicBool>,
    /// Why the last checkpoint failed, until one succeeds again: the next change asks.
    failure: Option<String>,
    /// A snapshot being taken in the background.
    pending: Option<PendingCheckpoint>,
}

/// Work running off the critical path for the store.
struct PendingCheckpoint {
    store: Arc<CheckpointStore>,
    work: Work,
}

enum Work {
    /// A snapshot being taken, and the record it becomes (None: the session's first walk,
    /// recorded by the checkpoint that waits for it). A deferred one's write to disk is
    /// under way already: `then`, pending once the snapshot is recorded.
    Snapshot {
        kind: Option<CheckpointKind>,
        task: SnapshotTask,
        then: Option<WriteTask>,
    },
    /// A recorded checkpoint's write to disk.
    Write(WriteTask),
}

type Snapshotted = Result<Snapshot, CheckpointError>;

/// A background snapshot's answer: from a task of its own, or told by the task that goes on
/// to write it to disk.
enum SnapshotTask {
    Own(tokio::task::JoinHandle<Snapshotted>),
    Told(tokio::sync::oneshot::Receiver<Snapshotted>),
    /// Known without leaving the agent's thread (`CheckpointStore::unchanged`).
    Ready(Snapshot),
}

impl SnapshotTask {
    /// The snapshot, or why its task ended without an answer.
    async fn answer(self) -> Result<Snapshotted, String> {
        match self {
            SnapshotTask::Own(task) => task.await.map_err(|e| e.to_string()),
            SnapshotTask::Told(told) => told.await.map_err(|e| e.to_string()),
            SnapshotTask::Ready(snap) => Ok(Ok(snap)),
        }
    }
}

/// A background write to disk.
type WriteTask = tokio::task::JoinHandle<Result<(), CheckpointError>>;

fn spawn_snapshot(store: &Arc<CheckpointStore>, written: Vec<std::path::PathBuf>) -> SnapshotTask {
    let store = Arc::clone(store);
    SnapshotTask::Own(tokio::task::spawn_blocking(move || {
        let written: Vec<&std::path::Path> = written.iter().map(|p| p.as_path()).collect();
        store.snapshot_paths(&written)
    }))
}

/// A snapshot whose new objects stay in memory, then their write to disk (`flush`), one
/// after the other on one blocking thread: the first task answers once the snapshot is
/// taken, the second once it is on disk. The write starts at once, not when somebody
/// records the snapshot: it overlaps the next request from its first byte.
fn spawn_deferred(
    store: &Arc<CheckpointStore>,
    written: Vec<std::path::PathBuf>,
) -> (SnapshotTask, WriteTask) {
    let store = Arc::clone(store);
    let (taken, snapshot) = tokio::sync::oneshot::channel();
    let write = tokio::task::spawn_blocking(move || {
        let written: Vec<&std::path::Path> = written.iter().map(|p| p.as_path()).collect();
        let snap = store.snapshot_deferred(&written);
        let ok = snap.is_ok();
        let _ = taken.send(snap);
        // A failed snapshot is told by the first task, and left nothing to write.
        if ok { store.flush() } else { Ok(()) }
    });
    (SnapshotTask::Told(snapshot), write)
}

impl Checkpoints {
    /// Why the last checkpoint failed (None when it did not, or checkpoints are off).
    pub(super) fn last_failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}

impl Agent {
    pub(super) fn checkpoint_store(&mut self) -> Option<Arc<CheckpointStore>> {
        if self.checkpoints.unavailable || !self.settings.checkpoints.enabled {
            return None;
        }
        if self.checkpoints.store.is_none() {
            let options = StoreOptions {
                session_start: true,
                notifications: self.settings.checkpoints.notifications,
            };
            match CheckpointStore::open_with(
                self.settings.dirs.data(),
                &self.settings.workspace,
                options,
            ) {
                Ok(store) => {
                    let store = store.with_budget(self.settings.checkpoints.budget);
                    self.checkpoints.store = Some(Arc::new(store));
                }
                Err(err) => {
                    self.checkpoints.unavailable = true;
                    self.emit(AgentEvent::Report(ReportEvent::Warning {
                        message: format!("no checkpoints this session (undo is off): {err}"),
                    }));
                    return None;
                }
            }
        }
        self.checkpoints.store.clone()
    }

    /// Records the workspace now; None when checkpoints are off or the snapshot failed (said
    /// once as a warning).
    pub(super) async fn checkpoint(&mut self, kind: CheckpointKind) -> Option<CheckpointId> {
        self.checkpoint_with(kind, Vec::new()).await
    }

    /// Like `checkpoint`, also looking at `written` (paths file tools just wrote), so a batch
    /// of writes needs no scan where notifications are off.
    pub(super) async fn checkpoint_with(
        &mut self,
        kind: CheckpointKind,
        written: Vec<std::path::PathBuf>,
    ) -> Option<CheckpointId> {
        self.settle_checkpoint().await;
        let store = self.checkpoint_store()?;
        // Most batches follow one that changed nothing since the last checkpoint: answered
        // from the notifications here, without a snapshot on a blocking thread.
        let task = match written.is_empty().then(|| store.unchanged()).flatten() {
            Some(snap) => SnapshotTask::Ready(snap),
            None => spawn_snapshot(&store, written),
        };
        self.finish_snapshot(Some(kind), store, task).await
    }

    /// The checkpoint after a batch that ran a command: taken now (the changed paths looked
    /// at and hashed: its result lists them), logged at once, and written to disk in the
    /// background while the next request streams (see the module's note on who waits).
    pub(super) async fn checkpoint_after(&mut self) -> Option<CheckpointId> {
        self.settle_checkpoint().await;
        let store = self.checkpoint_store()?;
        if let Some(snap) = store.unchanged() {
            // A command that changed nothing (`ls`, `wc`, a test run that writes nowhere).
            let task = SnapshotTask::Ready(snap);
            return self
                .finish_snapshot(Some(CheckpointKind::After), store, task)
                .await;
        }
        let (task, write) = spawn_deferred(&store, Vec::new());
        let id = self
            .finish_snapshot(Some(CheckpointKind::After), Arc::clone(&store), task)
            .await?;
        self.checkpoints.pending = Some(PendingCheckpoint {
            store,
            work: Work::Write(write),
        });
        Some(id)
    }

    /// The checkpoint after a batch of file-tool writes: taken while the next request
    /// streams, logged before its reply, written to disk after (see the module's note).
    pub(super) async fn checkpoint_after_in_background(
        &mut self,
        written: Vec<std::path::PathBuf>,
    ) {
        self.settle_checkpoint().await;
        let Some(store) = self.checkpoint_store() else {
            return;
        };
        let (task, write) = spawn_deferred(&store, written);
        self.checkpoints.pending = Some(PendingCheckpoint {
            store,
            work: Work::Snapshot {
                kind: Some(CheckpointKind::After),
                task,
                then: Some(write),
            },
        });
    }

    /// Starts the session's first walk of the workspace in the background, so the first
    /// change does not wait for all of it.
    pub(super) fn prime_checkpoints(&mut self) {
        if self.checkpoints.store.is_some() || self.checkpoints.pending.is_some() {
            return;
        }
        let Some(store) = self.checkpoint_store() else {
            return;
        };
        let task = spawn_snapshot(&store, Vec::new());
        self.checkpoints.pending = Some(PendingCheckpoint {
            store,
            work: Work::Snapshot {
                kind: None,
                task,
                then: None,
            },
        });
    }

    /// Waits for what runs in the background, if anything: the snapshot (recorded) and its
    /// write to disk.
    pub(super) async fn settle_checkpoint(&mut self) {
        while let Some(pending) = self.checkpoints.pending.take() {
            let _timer = phases::time_wall(Phase::Settle);
            match pending.work {
                Work::Snapshot { kind, task, then } => {
                    self.record_snapshot(pending.store, kind, task, then).await;
                }
                Work::Write(task) => self.finish_write(task).await,
            }
        }
    }

    /// Waits for the snapshot running in the background to be recorded, if there is one; its
    /// write to disk goes on (as the next pending).
    pub(super) async fn settle_checkpoint_record(&mut self) {
        // The session's first walk (no record of its own) goes on until a change needs it.
        if let Some(PendingCheckpoint {
            work: Work::Snapshot { kind: Some(_), .. },
            ..
        }) = &self.checkpoints.pending
            && let Some(PendingCheckpoint {
                store,
                work: Work::Snapshot { kind, task, then },
            }) = self.checkpoints.pending.take()
        {
            let _timer = phases::time_wall(Phase::Settle);
            self.record_snapshot(store, kind, task, then).await;
        }
    }

    async fn record_snapshot(
        &mut self,
        store: Arc<CheckpointStore>,
        kind: Option<CheckpointKind>,
        task: SnapshotTask,
        then: Option<WriteTask>,
    ) {
        let taken = self.finish_snapshot(kind, Arc::clone(&store), task).await;
        if let (Some(write), Some(_)) = (then, taken) {
            self.checkpoints.pending = Some(PendingCheckpoint {
                store,
                work: Work::Write(write),
            });
        }
    }

    /// Waits for a checkpoint's write to disk (within the deadline).
    async fn finish_write(&mut self, task: WriteTask) {
        let failed = match tokio::time::timeout(SNAPSHOT_DEADLINE, task).await {
            Ok(Ok(Ok(()))) => return,
            Ok(Ok(Err(err))) => err.to_string(),
            Ok(Err(err)) => format!("the checkpoint task failed: {err}"),
            Err(_) => format!(
                "writing the checkpoint took over {} s",
                SNAPSHOT_DEADLINE.as_secs()
            ),
        };
        tracing::warn!("writing a checkpoint: {failed}");
        self.emit(AgentEvent::Report(ReportEvent::Warning {
            message: format!(
                "checkpoint failed, this change cannot be undone; the next change asks first: {failed}"
            ),
        }));
        self.checkpoints.failure = Some(failed);
    }

    /// Waits for `task` (within the deadline) and records its checkpoint as `kind`.
    async fn finish_snapshot(
        &mut self,
        kind: Option<CheckpointKind>,
        store: Arc<CheckpointStore>,
        task: SnapshotTask,
    ) -> Option<CheckpointId> {
        // A workspace too big to snapshot quickly (a home directory, a monorepo) must not hold
        // up every call of the session: checkpoints go off for it, once, with a warning.
        let Ok(snapshot) = tokio::time::timeout(SNAPSHOT_DEADLINE, task.answer()).await else {
            self.checkpoints.unavailable = true;
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!(
                    "checkpoints off for this session (undo is off): the workspace took over {} s to snapshot",
                    SNAPSHOT_DEADLINE.as_secs()
                ),
            }));
            return None;
        };
        let snap = match snapshot {
            Ok(Ok(snap)) => snap,
            Ok(Err(err)) => {
                tracing::warn!("checkpoint failed: {err}");
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: format!(
                        "checkpoint failed, this change cannot be undone; the next change asks first: {err}"
                    ),
                }));
                self.checkpoints.failure = Some(err.to_string());
                return None;
            }
            Err(err) => {
                tracing::error!("checkpoint task: {err}");
                self.checkpoints.failure = Some(format!("the checkpoint task failed: {err}"));
                return None;
            }
        };
        self.checkpoints.failure = None;
        if !snap.skipped.is_empty() && !self.checkpoints.told_skipped {
            self.checkpoints.told_skipped = true;
            let list: Vec<String> = snap
                .skipped
                .iter()
                .take(5)
                .map(|s| format!("{} ({})", s.path, s.why))
                .collect();
            let more = snap.skipped.len().saturating_sub(5);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!("checkpoints (undo) leave out {}{more}", list.join(", ")),
            }));
        }
        let kind = kind?;
        self.record(&Record::Checkpoint {
            commit: snap.id.clone(),
            kind,
        });
        if kind == CheckpointKind::After && store.maintenance_due(false) {
            self.maintain_in_background(store);
        }
        Some(snap.id)
    }

    /// Between requests (the request's checkpoints settled): the store's maintenance, when it
    /// is due, in the background while the user reads the answer.
    pub(super) fn maintain_checkpoints_when_due(&self) {
        if let Some(store) = &self.checkpoints.store
            && store.maintenance_due(true)
        {
            self.maintain_in_background(Arc::clone(store));
        }
    }

    /// Packs the store when enough loose objects piled up (see `CheckpointStore::maintain`):
    /// off the critical path, one at a time, never awaited.
    fn maintain_in_background(&self, store: Arc<CheckpointStore>) {
        if self.checkpoints.maintaining.swap(true, Ordering::AcqRel) {
            return;
        }
        let running = Arc::clone(&self.checkpoints.maintaining);
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(err) = store.maintain() {
                tracing::warn!("packing the checkpoint store: {err}");
            }
            match store.keep_to_budget() {
                Ok(Some(pruned)) => {
                    let _ = events.send(AgentEvent::Report(ReportEvent::Warning {
                        message: pruned_message(&pruned),
                    }));
                }
                Ok(None) => {}
                Err(err) => tracing::warn!("keeping the checkpoint store to its budget: {err}"),
            }
            running.store(false, Ordering::Release);
        });
    }

    /// Takes the checkpoint after a command and attaches what it changed since `before` to
    /// its result; the model is told which files changed.
    pub(super) async fn attach_command_changes(
        &mut self,
        before: &CheckpointId,
        result: &mut ToolResult,
    ) {
        let _timer = phases::time_wall(Phase::CommandAfter);
        let Some((changes, note)) = self.changes_since(before).await else {
            return;
        };
        let Some(ToolOutput::Command(run)) = result.output.as_mut() else {
            return;
        };
        if changes.is_empty() {
            return;
        }
        let mut told = String::from("\n[files changed by this command: ");
        let names: Vec<String> = changes.iter().take(20).map(FileChange::label).collect();
        told.push_str(&names.join(", "));
        if changes.len() > 20 || note.is_some() {
            told.push_str(", …");
        }
        told.push(']');
        result.text.push_str(&told);
        run.changes = changes;
        run.changes_note = note;
    }

    /// Takes the checkpoint after a call and finds what changed since `before`: the files,
    /// and a note when there were more than are kept. None when nothing can tell.
    pub(super) async fn changes_since(
        &mut self,
        before: &CheckpointId,
    ) -> Option<(Vec<FileChange>, Option<String>)> {
        let after = self.checkpoint_after().await?;
        if after == *before {
            return Some((Vec::new(), None));
        }
        let store = self.checkpoints.store.clone()?;
        let before = before.clone();
        let found = tokio::task::spawn_blocking(move || {
            let _timer = phases::time(Phase::Changes);
            let changes = store.diff(&before, &after)?;
            file_changes(&store, &changes)
        })
        .await;
        match found {
            Ok(Ok(found)) => Some(found),
            Ok(Err(err)) => {
                tracing::warn!("diff of checkpoints around a call: {err}");
                None
            }
            Err(_) => None,
        }
    }
}

/// What the user is told when the budget dropped checkpoints.
fn pruned_message(pruned: &crate::checkpoint::Pruned) -> String {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    if pruned.dropped == 0 {
        return format!(
            "the checkpoint store was over its {:.0} MiB budget ({:.1} MiB); packing brought it to {:.1} MiB",
            mib(pruned.budget),
            mib(pruned.bytes_before),
            mib(pruned.bytes_after)
        );
    }
    format!(
        "the checkpoint store was over its {:.0} MiB budget ({:.1} MiB): the {} oldest checkpoints were dropped ({:.1} MiB now); undo cannot go back past them ([checkpoints] max_store_mb sets the budget)",
        mib(pruned.budget),
        mib(pruned.bytes_before),
        pruned.dropped,
        mib(pruned.bytes_after)
    )
}
