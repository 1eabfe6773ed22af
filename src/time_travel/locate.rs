//! Finding the change a revert names in the session log (the truth, also after a resume):
//! the files a call (or an earlier revert) changed, and the checkpoints around it, where the
//! whole contents of a deleted file or a diff cut for size are found again.

use std::collections::{HashMap, HashSet};

use super::TimeTravelError;
use super::patch;
use crate::bus::{ChangeSource, RevertTarget};
use crate::checkpoint::{CheckpointId, CheckpointKind};
use crate::session_log::Record;
use crate::tool_output::{FileChange, ToolOutput};

/// A change of the session, as the log has it.
#[derive(Debug, Clone)]
pub struct Located {
    pub changes: Vec<FileChange>,
    /// What made the change, in words, never an internal id: "the edit of src/x.py", "the
    /// command `make gen`", "the revert of the edit of src/x.py".
    pub label: String,
    /// Checkpoints around the change, when they are known to bracket it alone.
    pub before: Option<CheckpointId>,
    pub after: Option<CheckpointId>,
    /// Paths that more than one change between the checkpoints touched: their checkpoint
    /// contents are not this change's alone.
    pub shared: HashSet<String>,
}

impl Located {
    pub fn chosen(&self, target: &RevertTarget) -> Vec<&FileChange> {
        match target.file {
            Some(i) => self.changes.get(i).into_iter().collect(),
            None => self.changes.iter().collect(),
        }
    }

    /// The revert in words, for the confirmation ("Revert {what}."), the transcript
    /// ("reverted {what}") and the model: "the edit of src/x.py", "hunk 2 of 3 of the edit
    /// of src/x.py", "what the command `make` did to out/a.txt", "everything the command
    /// `make` changed (3 files)".
    pub fn what(&self, target: &RevertTarget) -> String {
        let chosen = target.file.and_then(|i| self.changes.get(i));
        let whole_file = |change: &FileChange| {
            if self.names_its_file() {
                self.label.clone()
            } else {
                format!(
                    "what {} did to {}",
                    self.label,
                    crate::visible::name(&change.path)
                )
            }
        };
        match (chosen, target.hunk) {
            (Some(change), Some(hunk)) => {
                let hunks = patch::parse(&change.diff).hunks.len();
                format!("hunk {} of {hunks} of {}", hunk + 1, whole_file(change))
            }
            (Some(change), None) => whole_file(change),
            (None, _) => match self.changes.as_slice() {
                [only] => whole_file(only),
                all => format!("everything {} changed ({} files)", self.label, all.len()),
            },
        }
    }

    /// Whether the label names the one file the change is about ("the edit of x.py").
    fn names_its_file(&self) -> bool {
        !self.label.starts_with("the command ")
            && !self.label.starts_with("the subagent ")
            && self.changes.len() == 1
    }
}

fn changes_of(output: Option<&ToolOutput>) -> Vec<FileChange> {
    match output {
        Some(ToolOutput::FileChanged(change)) => vec![change.clone()],
        Some(ToolOutput::Command(run)) => run.changes.clone(),
        Some(ToolOutput::Subagent(run)) => run.changes.clone(),
        _ => Vec::new(),
    }
}

/// What made a change, as the user knows it (never the call's id): the command, or the file
/// tool's kind of change to its file.
pub fn change_label(tool: &str, output: Option<&ToolOutput>, changes: &[FileChange]) -> String {
    if let Some(ToolOutput::Command(run)) = output {
        let (cut, more) = crate::fs::text::cut_chars(run.command.trim(), 60);
        return format!("the command `{cut}{}`", if more { "…" } else { "" });
    }
    if let Some(ToolOutput::Subagent(run)) = output {
        let (cut, more) = crate::fs::text::cut_chars(run.description.trim(), 60);
        return format!(
            "the subagent {} ({cut}{})",
            crate::visible::name(&run.agent),
            if more { "…" } else { "" }
        );
    }
    let Some(change) = changes.first() else {
        return format!("the {tool} change");
    };
    let path = crate::visible::name(&change.path);
    match tool {
        "edit_file" => format!("the edit of {path}"),
        "write_file" if change.created => format!("the creation of {path}"),
        "write_file" => format!("the rewrite of {path}"),
        _ if change.created => format!("the creation of {path} ({tool})"),
        _ => format!("the change to {path} ({tool})"),
    }
}

/// An earlier revert, named by what it reverted: "the revert of the edit of x.py".
fn revert_label(what: &str, changes: &[FileChange]) -> String {
    if what.is_empty() {
        let files = changes.len();
        let s = if files == 1 { "" } else { "s" };
        return format!("the earlier revert ({files} file{s})");
    }
    format!("the revert of {what}")
}

/// Finds the change `source` names in the session's records.
pub fn locate(records: &[Record], target: &RevertTarget) -> Result<Located, TimeTravelError> {
    match &target.source {
        ChangeSource::Revert(id) => records
            .iter()
            .rev()
            .find_map(|r| match r {
                Record::Revert {
                    id: found,
                    changes,
                    before,
                    after,
                    what,
                    ..
                } if found == id => Some(Located {
                    changes: changes.clone(),
                    label: revert_label(what, changes),
                    before: before.clone(),
                    after: after.clone(),
                    shared: HashSet::new(),
                }),
                _ => None,
            })
            .ok_or(TimeTravelError::RevertNotLogged),
        ChangeSource::Call(call) => locate_call(records, call, target.shown.as_ref()),
    }
}

/// The last result of `call` with changes — of those, the one whose file `shown.0` has the
/// diff the user was shown, when that is known (call ids can repeat within a session).
fn locate_call(
    records: &[Record],
    call: &crate::bus::CallId,
    shown: Option<&(usize, String)>,
) -> Result<Located, TimeTravelError> {
    let is_shown = |changes: &[FileChange]| {
        shown.is_none_or(|(file, hash)| {
            changes
                .get(*file)
                .is_some_and(|c| crate::bus::diff_fingerprint(&c.diff) == *hash)
        })
    };
    let mut last_before: Option<usize> = None;
    let mut found = None;
    for (i, record) in records.iter().enumerate() {
        match record {
            Record::Checkpoint {
                kind: CheckpointKind::Before,
                ..
            } => last_before = Some(i),
            Record::ToolResult {
                call: id,
                name,
                result,
            } if id == call && {
                let changes = changes_of(result.output.as_ref());
                !changes.is_empty() && is_shown(&changes)
            } =>
            {
                found = Some((i, name.clone(), result.output.clone(), last_before));
            }
            _ => {}
        }
    }
    let Some((at, name, output, before_at)) = found else {
        return Err(TimeTravelError::ChangeNotLogged);
    };
    let changes = changes_of(output.as_ref());
    let label = change_label(&name, output.as_ref(), &changes);
    // A subagent alone in its reply is bracketed like a command: the After taken as it ended.
    let is_command = matches!(
        output,
        Some(ToolOutput::Command(_) | ToolOutput::Subagent(_))
    );
    let (before, after, range) = bracket(records, before_at, at, is_command);
    let mut seen: HashMap<String, usize> = HashMap::new();
    if let Some((from, to)) = range {
        for record in &records[from..to] {
            if let Record::ToolResult { result, .. } = record {
                for change in changes_of(result.output.as_ref()) {
                    *seen.entry(change.path).or_default() += 1;
                }
            }
        }
    }
    Ok(Located {
        changes,
        label,
        before,
        after,
        shared: seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(p, _)| p)
            .collect(),
    })
}

/// The checkpoints around the result at `at`: a command's (and a lone subagent's) are the
/// `Before` of its batch and the `After` just before its result; a batch of edits has its `After` after the results.
/// None when they cannot be told apart (a failed checkpoint left the batch without one).
#[allow(clippy::type_complexity)]
fn bracket(
    records: &[Record],
    before_at: Option<usize>,
    at: usize,
    is_command: bool,
) -> (
    Option<CheckpointId>,
    Option<CheckpointId>,
    Option<(usize, usize)>,
) {
    let none = (None, None, None);
    let Some(before_at) = before_at else {
        return none;
    };
    let commit = |i: usize| match &records[i] {
        Record::Checkpoint { commit, .. } => Some(commit.clone()),
        _ => None,
    };
    let is_after = |r: &Record| {
        matches!(
            r,
            Record::Checkpoint {
                kind: CheckpointKind::After,
                ..
            }
        )
    };
    let between = before_at + 1..at;
    let after_at = if is_command {
        // The After of this command, with no other result between it and ours.
        let Some(i) = between.clone().rev().find(|&i| is_after(&records[i])) else {
            return none;
        };
        if records[i + 1..at]
            .iter()
            .any(|r| matches!(r, Record::ToolResult { .. }))
        {
            return none;
        }
        i
    } else {
        if records[between].iter().any(is_after) {
            return none;
        }
        let Some(i) = (at + 1..records.len()).find(|&i| {
            is_after(&records[i])
                || matches!(
                    records[i],
                    Record::Checkpoint {
                        kind: CheckpointKind::Before,
                        ..
                    }
                )
        }) else {
            return none;
        };
        if !is_after(&records[i]) {
            return none;
        }
        i
    };
    (
        commit(before_at),
        commit(after_at),
        Some((before_at, after_at)),
    )
}

#[cfg(test)]
#[path = "locate_tests.rs"]
mod tests;
