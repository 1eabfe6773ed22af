//! The files of an undo, a redo or a rewind: which checkpoints they move between (from the
//! ledger), and the move itself, planned for the user to confirm or done. The agent's
//! `/undo`, `/redo` and `/rewind` handlers log `log` and tell the model.

use super::ledger::{Ledger, RevertHop};
use super::moves::{plan_move, within};
use crate::bus::RestorePlan;
use crate::checkpoint::{
    CheckpointError, CheckpointId, CheckpointKind, CheckpointStore, file_changes,
};

/// The files a restore moves: from the state cairn left to the target, and what to log.
#[derive(Debug, Clone)]
pub struct FileMove {
    from: CheckpointId,
    to: CheckpointId,
    /// cairn's own changes since `from` (reverts): what they changed is no conflict.
    hops: Vec<RevertHop>,
    /// A redo moves only the files the turn itself changed (to its own end).
    own_after: Option<CheckpointId>,
    /// How a conflict's reason ends ("since the turn").
    since: &'static str,
    /// The checkpoint records the move is logged as, once done.
    pub log: Vec<(CheckpointId, CheckpointKind)>,
}

impl FileMove {
    /// The undo of the last turn that changed files and is not undone.
    pub fn undo(ledger: &Ledger) -> Option<Self> {
        let turn = ledger.to_undo()?;
        Some(Self {
            from: turn.after.clone(),
            to: turn.before.clone(),
            hops: turn.hops.clone(),
            own_after: None,
            since: "since the turn",
            log: vec![(turn.before, CheckpointKind::Undone)],
        })
    }

    /// The redo of the last undo, unless something changed since.
    pub fn redo(ledger: &Ledger) -> Option<Self> {
        let turn = ledger.to_redo()?;
        Some(Self {
            from: turn.before.clone(),
            to: turn.after.clone(),
            hops: Vec::new(),
            own_after: turn.own_after.clone(),
            since: "since the undo",
            log: vec![(turn.before, CheckpointKind::Redone)],
        })
    }

    /// The files back to when the user message `user` was sent; None when no file changed
    /// since.
    pub fn rewind(ledger: &Ledger, user: usize) -> Option<Self> {
        let (target, undone) = ledger.rewind_to(user)?;
        let last = ledger.last()?;
        Some(Self {
            from: last.clone(),
            to: target,
            hops: Vec::new(),
            own_after: None,
            since: "since cairn last recorded it",
            log: undone
                .into_iter()
                .map(|c| (c, CheckpointKind::Undone))
                .collect(),
        })
    }

    /// Plans the move (and with `apply`, does it). Blocking: git objects are read.
    pub fn run(
        &self,
        store: &CheckpointStore,
        apply: bool,
    ) -> Result<RestorePlan, CheckpointError> {
        let planned = plan_move(store, &self.from, &self.to, &self.hops, self.since)?;
        let (changes, conflicts) = within(store, planned, &self.from, self.own_after.as_ref())?;
        let (files, note) = file_changes(store, &changes)?;
        if apply {
            let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
            if !paths.is_empty() {
                store.restore(&self.to, &paths)?;
            }
        }
        Ok(RestorePlan {
            files,
            conflicts,
            note,
        })
    }
}
