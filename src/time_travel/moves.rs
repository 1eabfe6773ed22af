//! Moving files between two checkpoints where they are still what cairn left: a file that
//! moved on since (the user's, or anything else's change) is a conflict, named with the reason
//! and left alone.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::ledger::RevertHop;
use crate::bus::FileConflict;
use crate::checkpoint::{ChangeKind, CheckpointError, CheckpointId, CheckpointStore, PathChange};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reverted {
    pub path: String,
    /// `removed` (the turn created it), `restored` (changed), `recreated` (deleted).
    pub action: &'static str,
}

/// What moving files from checkpoint `from` to `to` would do: the changes to apply, and the
/// files that moved on since `from` (conflicts, left alone). A file that moved only through
/// `hops` (cairn's own changes since `from`, oldest first) is not a conflict. `since` ends the
/// conflict's reason ("since the turn").
pub fn plan_move(
    store: &CheckpointStore,
    from: &CheckpointId,
    to: &CheckpointId,
    hops: &[RevertHop],
    since: &str,
) -> Result<(Vec<PathChange>, Vec<FileConflict>), CheckpointError> {
    let changes = store.diff(from, to)?;
    if changes.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let now = store.snapshot()?;
    let moved: HashMap<String, PathChange> = store
        .diff(from, &now.id)?
        .into_iter()
        .map(|c| (c.path.clone(), c))
        .collect();
    // What changed between cairn's changes (before the first, between two, after the last):
    // a file in none of these gaps was changed by cairn alone.
    let mut touched: HashSet<String> = HashSet::new();
    if !hops.is_empty() {
        let mut at = from;
        for (start, end) in hops {
            touched.extend(store.diff(at, start)?.into_iter().map(|c| c.path));
            at = end;
        }
        touched.extend(store.diff(at, &now.id)?.into_iter().map(|c| c.path));
    }
    let mut apply = Vec::new();
    let mut conflicts = Vec::new();
    for change in changes {
        let Some(moved) = moved.get(&change.path) else {
            apply.push(change);
            continue;
        };
        // Already what `to` has (the user made the same change): nothing to do, no conflict.
        if moved.after == change.after {
            continue;
        }
        if !hops.is_empty() && !touched.contains(&change.path) {
            apply.push(change);
            continue;
        }
        let why = match moved.kind {
            ChangeKind::Deleted => format!("deleted {since}"),
            ChangeKind::Created => format!("created again {since}"),
            ChangeKind::Changed => format!("changed {since} (it is no longer what cairn left)"),
        };
        conflicts.push(FileConflict {
            path: change.path.clone(),
            why: format!("{why}; left as it is"),
        });
    }
    Ok((apply, conflicts))
}

/// Keeps of a plan only the files that changed from `before` to `own_after` (the turn's own).
pub fn within(
    store: &CheckpointStore,
    (apply, conflicts): (Vec<PathChange>, Vec<FileConflict>),
    before: &CheckpointId,
    own_after: Option<&CheckpointId>,
) -> Result<(Vec<PathChange>, Vec<FileConflict>), CheckpointError> {
    let Some(own_after) = own_after else {
        return Ok((apply, conflicts));
    };
    let own: HashSet<String> = store
        .diff(before, own_after)?
        .into_iter()
        .map(|c| c.path)
        .collect();
    Ok((
        apply
            .into_iter()
            .filter(|c| own.contains(&c.path))
            .collect(),
        conflicts
            .into_iter()
            .filter(|c| own.contains(&c.path))
            .collect(),
    ))
}

/// Moves the files that changed from `from` to `to` where they are still what `from` has.
pub fn move_files(
    store: &CheckpointStore,
    from: &CheckpointId,
    to: &CheckpointId,
    hops: &[RevertHop],
    own_after: Option<&CheckpointId>,
    since: &str,
) -> Result<(Vec<Reverted>, Vec<FileConflict>), CheckpointError> {
    let planned = plan_move(store, from, to, hops, since)?;
    let (apply, conflicts) = within(store, planned, from, own_after)?;
    let reverted: Vec<Reverted> = apply
        .iter()
        .map(|change| Reverted {
            path: change.path.clone(),
            action: action_of(change.kind),
        })
        .collect();
    let paths: Vec<&str> = apply.iter().map(|c| c.path.as_str()).collect();
    if !paths.is_empty() {
        store.restore(to, &paths)?;
    }
    Ok((reverted, conflicts))
}

/// What a move does to a file, named as `cairn undo` reports it.
pub fn action_of(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Created => "recreated",
        ChangeKind::Changed => "restored",
        ChangeKind::Deleted => "removed",
    }
}

/// Puts back the files the turn changed from `before` to `after`, where they are still what
/// the turn left (or what cairn's reverts since, `hops`, made of that).
pub fn undo_turn(
    store: &CheckpointStore,
    before: &CheckpointId,
    after: &CheckpointId,
    hops: &[RevertHop],
) -> Result<(Vec<Reverted>, Vec<FileConflict>), CheckpointError> {
    move_files(store, after, before, hops, None, "since the turn")
}

/// Puts back what undoing the turn took away, where the files are still what the undo left;
/// with `own_after`, only the files the turn itself changed.
pub fn redo_turn(
    store: &CheckpointStore,
    before: &CheckpointId,
    after: &CheckpointId,
    own_after: Option<&CheckpointId>,
) -> Result<(Vec<Reverted>, Vec<FileConflict>), CheckpointError> {
    move_files(store, before, after, &[], own_after, "since the undo")
}
