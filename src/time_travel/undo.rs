//! `cairn undo [SESSION]`: takes the last turn of a session back to the checkpoint before its
//! first change. A file is put back only while it still is what the turn left; one the user
//! (or anything else) changed since is a conflict, named with the reason and left alone.
//! Undoing again goes one more turn back; `--redo` (and the TUI's `/redo`) puts back what the
//! last undo took away, until a later turn changes files. The same bookkeeping (`Ledger`)
//! serves the TUI's `/undo`, `/redo` and `/rewind`. What it prints is `subcommands::undo`'s.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::TimeTravelError;
use super::ledger::{Ledger, RevertHop, Turn};
use super::moves::{Reverted, action_of, plan_move, redo_turn, undo_turn, within};
use crate::bus::FileConflict;
use crate::checkpoint::{CheckpointError, CheckpointId, CheckpointKind, CheckpointStore};
use crate::session_log::{self, LogError, Record, SessionLog};

/// What `cairn undo` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UndoReport {
    pub session: String,
    /// The checkpoint the files went back to; None when there was nothing to undo.
    pub checkpoint: Option<String>,
    pub reverted: Vec<Reverted>,
    pub conflicts: Vec<FileConflict>,
}

/// Undoes the last turn of the session at `log_path` (or, with `redo`, puts back what the
/// last undo took away); `data_dir` holds the checkpoint stores.
pub fn undo_session(
    log_path: &Path,
    data_dir: &Path,
    redo: bool,
) -> Result<UndoReport, TimeTravelError> {
    match prepare(log_path, data_dir, redo)? {
        PreparedUndo::Nothing(report) => Ok(report),
        PreparedUndo::Ready(pending) => finish(*pending),
    }
}

/// What `cairn undo` found to do, before anything changed.
#[derive(Debug)]
pub enum PreparedUndo {
    /// No turn to undo (or undo to redo): the report says so.
    Nothing(UndoReport),
    Ready(Box<PendingUndo>),
}

/// An undo (or redo) worked out and not yet done: what it would change, for the user to
/// confirm. Nothing was written for it, not even to the session log.
#[derive(Debug)]
pub struct PendingUndo {
    log_path: PathBuf,
    data_dir: PathBuf,
    cwd: PathBuf,
    pub redo: bool,
    pub session: String,
    pub turn: Turn,
    /// A batch the session was killed in is closed by this record (appended when it runs).
    closing: Option<CheckpointId>,
    /// The turn's prompt, for the preview.
    pub prompt: Option<String>,
    /// The files it would move, and the ones it would leave alone.
    pub changes: Vec<Reverted>,
    pub conflicts: Vec<FileConflict>,
}

/// Works out the undo (or redo) of the session at `log_path` without changing anything.
pub fn prepare(
    log_path: &Path,
    data_dir: &Path,
    redo: bool,
) -> Result<PreparedUndo, TimeTravelError> {
    let loaded = session_log::read_log(log_path)?;
    let Some(Record::Meta { id, cwd, .. }) = loaded.records.first() else {
        return Err(LogError::NoMeta {
            path: log_path.to_path_buf(),
        }
        .into());
    };
    let nothing = UndoReport {
        session: id.0.clone(),
        ..UndoReport::default()
    };
    let mut records = loaded.records.clone();
    let mut closing = None;
    drop_unwritten_after(&mut records, || {
        CheckpointStore::open(data_dir, Path::new(cwd))
    })?;
    if open_batch(&records) {
        // The session ended (killed) between a batch's checkpoint before and the one after:
        // what the batch did is the workspace now, recorded (when the undo runs) so the turn
        // can be undone.
        let store = CheckpointStore::open(data_dir, Path::new(cwd))?;
        let now = store.snapshot()?;
        records.push(Record::Checkpoint {
            commit: now.id.clone(),
            kind: CheckpointKind::After,
        });
        closing = Some(now.id);
    }
    let ledger = Ledger::of(&records);
    let turn = if redo {
        ledger.to_redo()
    } else {
        ledger.to_undo()
    };
    let Some(turn) = turn else {
        return Ok(PreparedUndo::Nothing(nothing));
    };
    let store = CheckpointStore::open(data_dir, Path::new(cwd))?;
    let (from, to, since) = if redo {
        (&turn.before, &turn.after, "since the undo")
    } else {
        (&turn.after, &turn.before, "since the turn")
    };
    let hops: &[RevertHop] = if redo { &[] } else { &turn.hops };
    let planned = plan_move(&store, from, to, hops, since)?;
    let own_after = if redo { turn.own_after.as_ref() } else { None };
    let (apply, conflicts) = within(&store, planned, from, own_after)?;
    let prompt = records
        .iter()
        .filter_map(|r| match r {
            Record::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .nth(turn.user);
    Ok(PreparedUndo::Ready(Box::new(PendingUndo {
        log_path: log_path.to_path_buf(),
        data_dir: data_dir.to_path_buf(),
        cwd: PathBuf::from(cwd),
        redo,
        session: id.0.clone(),
        turn,
        closing,
        prompt,
        changes: apply
            .iter()
            .map(|c| Reverted {
                path: c.path.clone(),
                action: action_of(c.kind),
            })
            .collect(),
        conflicts,
    })))
}

/// Does what `prepare` worked out. The files are judged again as they are now: one changed
/// while the user read the preview is a conflict, left alone.
pub fn finish(pending: PendingUndo) -> Result<UndoReport, TimeTravelError> {
    let PendingUndo {
        log_path,
        data_dir,
        cwd,
        redo,
        session,
        turn,
        closing,
        ..
    } = pending;
    let mut log = SessionLog::open_append(log_path)?;
    if let Some(commit) = closing {
        log.append(&Record::Checkpoint {
            commit,
            kind: CheckpointKind::After,
        })?;
    }
    let store = CheckpointStore::open(&data_dir, &cwd)?;
    let (reverted, conflicts) = if redo {
        redo_turn(&store, &turn.before, &turn.after, turn.own_after.as_ref())?
    } else {
        undo_turn(&store, &turn.before, &turn.after, &turn.hops)?
    };
    log.append(&Record::Checkpoint {
        commit: turn.before.clone(),
        kind: if redo {
            CheckpointKind::Redone
        } else {
            CheckpointKind::Undone
        },
    })?;
    Ok(UndoReport {
        session,
        checkpoint: Some(if redo { &turn.after.0 } else { &turn.before.0 }.clone()),
        reverted,
        conflicts,
    })
}

impl PendingUndo {
    /// Whether it would change any file.
    pub fn changes_files(&self) -> bool {
        !self.changes.is_empty()
    }
}

/// A session killed after logging a batch's `After` and before writing it to the store
/// (written in the background, see `agent::checkpoints`) names a checkpoint the store does not
/// have: that record is dropped, so the batch is one the session stopped in (`open_batch`),
/// completed from the workspace as it is now.
fn drop_unwritten_after(
    records: &mut Vec<Record>,
    open: impl FnOnce() -> Result<CheckpointStore, CheckpointError>,
) -> Result<(), CheckpointError> {
    let last = records
        .iter()
        .rposition(|r| matches!(r, Record::Checkpoint { .. }));
    let Some(at) = last else {
        return Ok(());
    };
    let Record::Checkpoint {
        commit,
        kind: CheckpointKind::After,
    } = &records[at]
    else {
        return Ok(());
    };
    if !open()?.has(commit) {
        records.remove(at);
    }
    Ok(())
}

/// Whether the last checkpoint record is a batch's `Before` with no `After` yet: the session
/// stopped while the batch ran.
fn open_batch(records: &[Record]) -> bool {
    records.iter().rev().find_map(|r| match r {
        Record::Checkpoint { kind, .. } => Some(*kind == CheckpointKind::Before),
        _ => None,
    }) == Some(true)
}

#[cfg(test)]
#[path = "undo_tests.rs"]
mod tests;
