//! `cairn undo [SESSION]`: takes the last turn of a session back to the checkpoint before its
//! first change. A file is put back only while it still is what the turn left; one the user
//! (or anything else) changed since is a conflict, named with the reason and left alone.
//! Undoing again goes one more turn back.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::CheckpointKind;
use super::store::{ChangeKind, CheckpointError, CheckpointId, CheckpointStore};
use crate::session_log::{self, LogError, Record, SessionLog};

/// What `cairn undo` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UndoReport {
    pub session: String,
    /// The checkpoint the files went back to; None when there was nothing to undo.
    pub checkpoint: Option<String>,
    pub reverted: Vec<Reverted>,
    pub conflicts: Vec<Conflict>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reverted {
    pub path: String,
    /// `removed` (the turn created it), `restored` (changed), `recreated` (deleted).
    pub action: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub path: String,
    pub why: String,
}

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// The checkpoints (before, after) of the last turn that changed the workspace and was not
/// undone yet. A turn starts at a user message.
pub fn turn_to_undo(records: &[Record]) -> Option<(CheckpointId, CheckpointId)> {
    let mut turns: Vec<Vec<CheckpointId>> = Vec::new();
    let mut undone = HashSet::new();
    for record in records {
        match record {
            Record::User { .. } => turns.push(Vec::new()),
            Record::Checkpoint { commit, kind } => match kind {
                CheckpointKind::Undone => {
                    undone.insert(commit.clone());
                }
                CheckpointKind::Before | CheckpointKind::After => {
                    if let Some(turn) = turns.last_mut() {
                        turn.push(commit.clone());
                    }
                }
            },
            _ => {}
        }
    }
    turns.into_iter().rev().find_map(|turn| {
        let (first, last) = (turn.first()?, turn.last()?);
        (first != last && !undone.contains(first)).then(|| (first.clone(), last.clone()))
    })
}

/// Puts back the files the turn changed from `before` to `after`, where they are still what
/// the turn left.
pub fn undo_turn(
    store: &CheckpointStore,
    before: &CheckpointId,
    after: &CheckpointId,
) -> Result<(Vec<Reverted>, Vec<Conflict>), CheckpointError> {
    let changes = store.diff(before, after)?;
    let now = store.snapshot()?;
    let moved: HashMap<String, ChangeKind> = store
        .diff(after, &now.id)?
        .into_iter()
        .map(|c| (c.path, c.kind))
        .collect();
    let mut reverted = Vec::new();
    let mut conflicts = Vec::new();
    for change in &changes {
        if let Some(kind) = moved.get(&change.path) {
            let why = match kind {
                ChangeKind::Deleted => "deleted since the turn",
                ChangeKind::Created => "created again since the turn",
                ChangeKind::Changed => {
                    "changed since the turn (it is no longer what the turn left)"
                }
            };
            conflicts.push(Conflict {
                path: change.path.clone(),
                why: format!("{why}; left as it is"),
            });
            continue;
        }
        reverted.push(Reverted {
            path: change.path.clone(),
            action: match change.kind {
                ChangeKind::Created => "removed",
                ChangeKind::Changed => "restored",
                ChangeKind::Deleted => "recreated",
            },
        });
    }
    let paths: Vec<&str> = reverted.iter().map(|r| r.path.as_str()).collect();
    if !paths.is_empty() {
        store.restore(before, &paths)?;
    }
    Ok((reverted, conflicts))
}

/// Undoes the last turn of the session at `log_path`; `data_dir` holds the checkpoint stores.
pub fn undo_session(log_path: &Path, data_dir: &Path) -> Result<UndoReport, UndoError> {
    let loaded = session_log::read_log(log_path)?;
    let Some(Record::Meta { id, cwd, .. }) = loaded.records.first() else {
        return Err(LogError::NoMeta {
            path: log_path.to_path_buf(),
        }
        .into());
    };
    let mut report = UndoReport {
        session: id.0.clone(),
        ..UndoReport::default()
    };
    let Some((before, after)) = turn_to_undo(&loaded.records) else {
        return Ok(report);
    };
    let store = CheckpointStore::open(data_dir, Path::new(cwd))?;
    let (reverted, conflicts) = undo_turn(&store, &before, &after)?;
    let mut log = SessionLog::open_append(log_path.to_path_buf())?;
    log.append(&Record::Checkpoint {
        commit: before.clone(),
        kind: CheckpointKind::Undone,
    })?;
    report.checkpoint = Some(before.0);
    report.reverted = reverted;
    report.conflicts = conflicts;
    Ok(report)
}

/// `cairn undo [SESSION] [--json]`: the text to print and the exit status (1 when there was
/// nothing to undo or a file was left alone).
pub fn run(session: Option<&str>, json: bool, cwd: &Path) -> color_eyre::Result<(String, i32)> {
    let sessions = session_log::sessions_dir();
    let data_dir: PathBuf = super::data_dir_of(&sessions);
    let log_path = match session {
        Some(id) => session_log::find_session(&sessions, id)?,
        None => session_log::latest_in(&sessions, cwd)?,
    };
    let report = undo_session(&log_path, &data_dir)?;
    let code = i32::from(report.checkpoint.is_none() || !report.conflicts.is_empty());
    if json {
        return Ok((format!("{}\n", serde_json::to_string(&report)?), code));
    }
    Ok((report_text(&report), code))
}

fn report_text(report: &UndoReport) -> String {
    let Some(checkpoint) = &report.checkpoint else {
        return format!(
            "nothing to undo in session {}: no turn changed files (or all were undone)\n",
            report.session
        );
    };
    let short = &checkpoint[..checkpoint.len().min(12)];
    let mut out = format!(
        "undid the last turn of session {} (back to checkpoint {short})\n",
        report.session
    );
    for r in &report.reverted {
        out.push_str(&format!("  {:<9} {}\n", r.action, r.path));
    }
    if report.reverted.is_empty() {
        out.push_str("  no file was changed\n");
    }
    for c in &report.conflicts {
        out.push_str(&format!("  conflict  {}: {}\n", c.path, c.why));
    }
    out
}
