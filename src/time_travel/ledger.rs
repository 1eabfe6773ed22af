//! The undo ledger: what a session's checkpoint records add up to (its turns, which were
//! undone, what `/redo` may put back, what a rewind undoes). `cairn undo`, the TUI's `/undo`,
//! `/redo` and `/rewind` all read it.
//!
//! A revert from the diff pane after the turn is cairn's change too: a file that went from
//! what the turn left through such reverts (and nothing else) to what it is now is still
//! cairn's, and an undo takes it back to before the turn; a redo then puts back what the
//! undo took away (the turn with the revert in it).

use std::collections::{HashMap, HashSet};

use crate::checkpoint::{CheckpointId, CheckpointKind};
use crate::session_log::Record;

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
    pub hops: Vec<RevertHop>,
    /// For a redo, whose `after` is what cairn had left when the turn was undone: the turn's
    /// own end. Only the files the turn changed move (not a file that merely differs there).
    pub own_after: Option<CheckpointId>,
}

/// A change cairn made to the workspace outside a turn (a revert): its checkpoints.
pub type RevertHop = (CheckpointId, CheckpointId);

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
    reverts: Vec<(usize, RevertHop)>,
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
