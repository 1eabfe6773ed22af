//! `cairn undo [SESSION]`: takes the last turn of a session back to the checkpoint before its
//! first change. A file is put back only while it still is what the turn left; one the user
//! (or anything else) changed since is a conflict, named with the reason and left alone.
//! Undoing again goes one more turn back; `--redo` (and the TUI's `/redo`) puts back what the
//! last undo took away, until a later turn changes files. The same bookkeeping (`Ledger`)
//! serves the TUI's `/undo`, `/redo` and `/rewind`.
//!
//! A revert from the diff pane after the turn is cairn's change too: a file that went from
//! what the turn left through such reverts (and nothing else) to what it is now is still
//! cairn's, and an undo takes it back to before the turn; a redo then puts back what the
//! undo took away (the turn with the revert in it).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::checkpoint::{
    ChangeKind, CheckpointError, CheckpointId, CheckpointKind, CheckpointStore, PathChange,
};
use crate::session_log::{self, LogError, Record, SessionLog};
use crate::visible;

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

/// One user message's changes to the workspace: the first and the last checkpoint recorded
/// after it (before the next user message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The ordinal of its user message among all user messages of the log.
    pub user: usize,
    pub before: CheckpointId,
    pub after: CheckpointId,
    /// The reverts from the diff pane since the turn, as their (before, after) checkpoints,
    /// oldest first: what they changed is cairn's, not a conflict (filled by `to_undo`).
    pub hops: Vec<Hop>,
    /// For a redo, whose `after` is what cairn had left when the turn was undone: the turn's
    /// own end. Only the files the turn changed move (not a file that merely differs there).
    pub own_after: Option<CheckpointId>,
}

/// A change cairn made to the workspace outside a turn (a revert): its checkpoints.
pub type Hop = (CheckpointId, CheckpointId);

impl Turn {
    fn changed(&self) -> bool {
        self.before != self.after
    }
}

/// What a session's checkpoint records add up to: its turns, which were undone, what `/redo`
/// may put back, and the state cairn last left the workspace in. `Undone` and `Redone` name a
/// turn by its `before` checkpoint; the latest turn of that name (not yet undone, or undone)
/// is meant, so two turns that start from the same state stay apart.
#[derive(Debug, Default)]
pub struct Ledger {
    /// One slot per user message; None when it recorded no checkpoint.
    turns: Vec<Option<Turn>>,
    /// Undone turns, by index in `turns`.
    undone: HashSet<usize>,
    /// Undone turns that `/redo` may put back, the next one last.
    redo: Vec<usize>,
    /// What cairn had left the workspace in when each undone turn was undone: what a redo
    /// puts back.
    undone_from: HashMap<usize, CheckpointId>,
    /// The reverts, each with the number of user messages before it.
    reverts: Vec<(usize, Hop)>,
    last: Option<CheckpointId>,
}

impl Ledger {
    pub fn of(records: &[Record]) -> Self {
        let mut ledger = Ledger::default();
        let mut batch_before: Option<CheckpointId> = None;
        for record in records {
            match record {
                Record::User { .. } => ledger.turns.push(None),
                // A revert from the diff pane is a new change too; the workspace is then what
                // its `after` checkpoint recorded.
                Record::Revert { before, after, .. } => {
                    ledger.redo.clear();
                    if let (Some(before), Some(after)) = (before, after) {
                        ledger
                            .reverts
                            .push((ledger.turns.len(), (before.clone(), after.clone())));
                    }
                    if let Some(after) = after {
                        ledger.last = Some(after.clone());
                    }
                }
                Record::Checkpoint { commit, kind } => match kind {
                    CheckpointKind::Undone => {
                        if let Some(i) = ledger.find(commit, false) {
                            let from = ledger
                                .last
                                .clone()
                                .or_else(|| ledger.turns[i].as_ref().map(|t| t.after.clone()));
                            if let Some(from) = from {
                                ledger.undone_from.insert(i, from);
                            }
                            ledger.undone.insert(i);
                            ledger.redo.retain(|&r| r != i);
                            ledger.redo.push(i);
                        }
                        ledger.last = Some(commit.clone());
                    }
                    CheckpointKind::Redone => {
                        if let Some(i) = ledger.find(commit, true) {
                            ledger.undone.remove(&i);
                            ledger.redo.retain(|&r| r != i);
                            ledger.last = ledger.redo_target(i);
                        }
                    }
                    CheckpointKind::Before | CheckpointKind::After => {
                        // A batch that changed the workspace is a new change: what was undone
                        // before it cannot be redone on top of it (as in editors).
                        if *kind == CheckpointKind::Before {
                            batch_before = Some(commit.clone());
                        } else if batch_before.as_ref() != Some(commit) {
                            ledger.redo.clear();
                        }
                        ledger.last = Some(commit.clone());
                        ledger.extend_turn(commit);
                    }
                },
                _ => {}
            }
        }
        ledger
    }

    fn extend_turn(&mut self, commit: &CheckpointId) {
        let user = self.turns.len().saturating_sub(1);
        let Some(slot) = self.turns.last_mut() else {
            return;
        };
        match slot {
            Some(turn) => turn.after = commit.clone(),
            None => {
                *slot = Some(Turn {
                    user,
                    before: commit.clone(),
                    after: commit.clone(),
                    hops: Vec::new(),
                    own_after: None,
                })
            }
        }
    }

    /// The latest changing turn that starts at `before` and is (or is not) undone.
    fn find(&self, before: &CheckpointId, undone: bool) -> Option<usize> {
        self.turns.iter().enumerate().rev().find_map(|(i, t)| {
            let t = t.as_ref()?;
            (&t.before == before && t.changed() && self.undone.contains(&i) == undone).then_some(i)
        })
    }

    fn turns(&self) -> impl DoubleEndedIterator<Item = (usize, &Turn)> {
        self.turns
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, t.as_ref()?)))
    }

    /// The last turn that changed the workspace and is not undone, with the reverts since.
    pub fn to_undo(&self) -> Option<Turn> {
        let (i, turn) = self
            .turns()
            .rev()
            .find(|(i, t)| t.changed() && !self.undone.contains(i))?;
        let hops = self
            .reverts
            .iter()
            .filter(|(users, _)| *users > i)
            .map(|(_, hop)| hop.clone())
            .collect();
        Some(Turn {
            hops,
            ..turn.clone()
        })
    }

    /// The turn `/redo` puts back: the last one undone, unless something changed since. Its
    /// `after` is what cairn had left the workspace in when it was undone.
    pub fn to_redo(&self) -> Option<Turn> {
        let i = *self.redo.last()?;
        let turn = self.turns[i].as_ref()?;
        Some(Turn {
            after: self.redo_target(i)?,
            own_after: Some(turn.after.clone()),
            ..turn.clone()
        })
    }

    fn redo_target(&self, i: usize) -> Option<CheckpointId> {
        self.undone_from
            .get(&i)
            .cloned()
            .or_else(|| self.turns[i].as_ref().map(|t| t.after.clone()))
    }

    /// The state cairn last left the workspace in (what conflicts are judged against).
    pub fn last(&self) -> Option<&CheckpointId> {
        self.last.as_ref()
    }

    /// How many turns from the user message `user` on changed files and are not undone.
    pub fn changes_from(&self, user: usize) -> usize {
        self.turns_from(user).count()
    }

    fn turns_from(&self, user: usize) -> impl DoubleEndedIterator<Item = &Turn> {
        self.turns()
            .filter(move |(i, t)| t.user >= user && t.changed() && !self.undone.contains(i))
            .map(|(_, t)| t)
    }

    /// The workspace as it was when the user message `user` was sent (the first checkpoint
    /// after it), and the turns a rewind there undoes, newest first (so `/redo` puts them
    /// back oldest first). None when no file changed since.
    pub fn rewind_to(&self, user: usize) -> Option<(CheckpointId, Vec<CheckpointId>)> {
        let target = self.turns().find(|(_, t)| t.user >= user)?.1.before.clone();
        let undone: Vec<CheckpointId> = self
            .turns_from(user)
            .rev()
            .map(|t| t.before.clone())
            .collect();
        (!undone.is_empty()).then_some((target, undone))
    }
}

/// What moving files from checkpoint `from` to `to` would do: the changes to apply, and the
/// files that moved on since `from` (conflicts, left alone). A file that moved only through
/// `hops` (cairn's own changes since `from`, oldest first) is not a conflict. `since` ends the
/// conflict's reason ("since the turn").
pub fn plan_move(
    store: &CheckpointStore,
    from: &CheckpointId,
    to: &CheckpointId,
    hops: &[Hop],
    since: &str,
) -> Result<(Vec<PathChange>, Vec<Conflict>), CheckpointError> {
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
        conflicts.push(Conflict {
            path: change.path.clone(),
            why: format!("{why}; left as it is"),
        });
    }
    Ok((apply, conflicts))
}

/// Keeps of a plan only the files that changed from `before` to `own_after` (the turn's own).
pub fn within(
    store: &CheckpointStore,
    (apply, conflicts): (Vec<PathChange>, Vec<Conflict>),
    before: &CheckpointId,
    own_after: Option<&CheckpointId>,
) -> Result<(Vec<PathChange>, Vec<Conflict>), CheckpointError> {
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
    hops: &[Hop],
    own_after: Option<&CheckpointId>,
    since: &str,
) -> Result<(Vec<Reverted>, Vec<Conflict>), CheckpointError> {
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
    hops: &[Hop],
) -> Result<(Vec<Reverted>, Vec<Conflict>), CheckpointError> {
    move_files(store, after, before, hops, None, "since the turn")
}

/// Puts back what undoing the turn took away, where the files are still what the undo left;
/// with `own_after`, only the files the turn itself changed.
pub fn redo_turn(
    store: &CheckpointStore,
    before: &CheckpointId,
    after: &CheckpointId,
    own_after: Option<&CheckpointId>,
) -> Result<(Vec<Reverted>, Vec<Conflict>), CheckpointError> {
    move_files(store, before, after, &[], own_after, "since the undo")
}

/// Undoes the last turn of the session at `log_path` (or, with `redo`, puts back what the
/// last undo took away); `data_dir` holds the checkpoint stores.
pub fn undo_session(log_path: &Path, data_dir: &Path, redo: bool) -> Result<UndoReport, UndoError> {
    match prepare(log_path, data_dir, redo)? {
        Prepared::Nothing(report) => Ok(report),
        Prepared::Ready(pending) => finish(*pending),
    }
}

/// What `cairn undo` found to do, before anything changed.
#[derive(Debug)]
pub enum Prepared {
    /// No turn to undo (or undo to redo): the report says so.
    Nothing(UndoReport),
    Ready(Box<Pending>),
}

/// An undo (or redo) worked out and not yet done: what it would change, for the user to
/// confirm. Nothing was written for it, not even to the session log.
#[derive(Debug)]
pub struct Pending {
    log_path: PathBuf,
    data_dir: PathBuf,
    cwd: PathBuf,
    redo: bool,
    session: String,
    turn: Turn,
    /// A batch the session was killed in is closed by this record (appended when it runs).
    closing: Option<CheckpointId>,
    /// The turn's prompt, for the preview.
    prompt: Option<String>,
    /// The files it would move, and the ones it would leave alone.
    pub changes: Vec<Reverted>,
    pub conflicts: Vec<Conflict>,
}

/// Works out the undo (or redo) of the session at `log_path` without changing anything.
pub fn prepare(log_path: &Path, data_dir: &Path, redo: bool) -> Result<Prepared, UndoError> {
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
        return Ok(Prepared::Nothing(nothing));
    };
    let store = CheckpointStore::open(data_dir, Path::new(cwd))?;
    let (from, to, since) = if redo {
        (&turn.before, &turn.after, "since the undo")
    } else {
        (&turn.after, &turn.before, "since the turn")
    };
    let hops: &[Hop] = if redo { &[] } else { &turn.hops };
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
    Ok(Prepared::Ready(Box::new(Pending {
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
pub fn finish(pending: Pending) -> Result<UndoReport, UndoError> {
    let Pending {
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

impl Pending {
    /// Whether it would change any file.
    pub fn changes_files(&self) -> bool {
        !self.changes.is_empty()
    }

    /// What it would do, for the user to read before confirming: the turn (its prompt), the
    /// checkpoint the files go to, then each file and what happens to it. Names are escaped.
    pub fn preview(&self) -> String {
        let target = if self.redo {
            &self.turn.after
        } else {
            &self.turn.before
        };
        let short = &target.0[..target.0.len().min(12)];
        let what = if self.redo {
            "put back the last undone turn"
        } else {
            "take back the last turn"
        };
        let prompt = self
            .prompt
            .as_deref()
            .map(|p| {
                let line: String = p.trim().chars().take(60).collect();
                let more = if p.trim().chars().count() > 60 {
                    "…"
                } else {
                    ""
                };
                format!(" (\"{}{more}\")", visible::name(&line))
            })
            .unwrap_or_default();
        let mut out = format!(
            "cairn undo will {what} of session {}{prompt}, to checkpoint {short}:\n",
            visible::name(&self.session)
        );
        for change in &self.changes {
            let verb = match change.action {
                "removed" => "remove",
                "recreated" => "recreate",
                _ => "restore",
            };
            out.push_str(&format!("  {verb:<9} {}\n", visible::name(&change.path)));
        }
        if self.changes.is_empty() {
            out.push_str("  no file would change\n");
        }
        for c in &self.conflicts {
            out.push_str(&format!(
                "  leave     {}: {}\n",
                visible::name(&c.path),
                visible::name(&c.why)
            ));
        }
        out
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

/// The log of the session `cairn undo [SESSION]` works on: the named one, or the latest of
/// `cwd`; and the directory of the checkpoint stores.
pub fn session_paths(
    dirs: &crate::dirs::Dirs,
    session: Option<&str>,
    cwd: &Path,
) -> color_eyre::Result<(PathBuf, PathBuf)> {
    let log_path = match session {
        Some(id) => session_log::find_session(dirs.sessions(), id)?,
        None => session_log::latest_in(dirs.sessions(), cwd)?,
    };
    Ok((log_path, dirs.data().to_path_buf()))
}

/// What `cairn undo` prints for a report, and its exit status (1 when there was nothing to
/// undo or a file was left alone).
pub fn report_output(
    report: &UndoReport,
    json: bool,
    redo: bool,
) -> color_eyre::Result<(String, i32)> {
    let code = i32::from(report.checkpoint.is_none() || !report.conflicts.is_empty());
    if json {
        return Ok((format!("{}\n", serde_json::to_string(report)?), code));
    }
    Ok((report_text(report, redo), code))
}

fn report_text(report: &UndoReport, redo: bool) -> String {
    let Some(checkpoint) = &report.checkpoint else {
        if redo {
            return format!(
                "nothing to redo in session {}: no undo to take back (or a later turn changed files)\n",
                report.session
            );
        }
        return format!(
            "nothing to undo in session {}: no turn changed files (or all were undone)\n",
            report.session
        );
    };
    let short = &checkpoint[..checkpoint.len().min(12)];
    let mut out = if redo {
        format!(
            "redid the last undone turn of session {} (forward to checkpoint {short})\n",
            report.session
        )
    } else {
        format!(
            "undid the last turn of session {} (back to checkpoint {short})\n",
            report.session
        )
    };
    // Names escaped one by one: a name holding a newline or an escape sequence cannot forge
    // a line of this report or drive the terminal.
    for r in &report.reverted {
        out.push_str(&format!("  {:<9} {}\n", r.action, visible::name(&r.path)));
    }
    if report.reverted.is_empty() {
        out.push_str("  no file was changed\n");
    }
    for c in &report.conflicts {
        out.push_str(&format!(
            "  conflict  {}: {}\n",
            visible::name(&c.path),
            visible::name(&c.why)
        ));
    }
    out
}

#[cfg(test)]
#[path = "undo_tests.rs"]
mod tests;
