//! What a revert would do, computed against the files as they are now: the change found in
//! the session log (`locate`), then for each of its files the reverse patch (`tools::patch`),
//! or — for a created file, a deleted one, or a diff cut for size — the whole contents from
//! the checkpoints around the change. A file that moved on since is a conflict; the plan then
//! changes nothing.

use std::collections::{HashMap, HashSet};
use std::fs::Metadata;

use crate::bus::{
    ChangeSource, RevertConflict, RevertFile as ShownFile, RevertMismatch, RevertPlan, RevertTarget,
};
use crate::checkpoint::{CheckpointId, CheckpointKind, CheckpointStore};
use crate::session_log::Record;
use crate::tool_output::{FileChange, ToolOutput};
use crate::tools::diff::diff_files;
use crate::tools::revert_files::RevertFile;
use crate::tools::{ToolEnv, encoding, patch};

/// Contents over this size (or with a NUL byte) are summarised, not diffed, as checkpoints do.
const MAX_DIFF_INPUT: usize = 1024 * 1024;

/// A change of the session, as the log has it.
#[derive(Debug, Clone)]
pub(super) struct Located {
    pub changes: Vec<FileChange>,
    /// "the edit_file call c2", "the command `make gen`", "the revert revert-1".
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

    /// The revert in words, for the confirmation, the transcript and the model.
    pub fn what(&self, target: &RevertTarget) -> String {
        let label = &self.label;
        match (target.file.and_then(|i| self.changes.get(i)), target.hunk) {
            (Some(change), Some(hunk)) => {
                let hunks = patch::parse(&change.diff).hunks.len();
                format!("hunk {} of {hunks} in {} ({label})", hunk + 1, change.path)
            }
            (Some(change), None) if self.changes.len() == 1 => {
                format!("{label} to {}", change.path)
            }
            (Some(change), None) => format!("what {label} did to {}", change.path),
            (None, _) if self.changes.len() == 1 => {
                format!("{label} to {}", self.changes[0].path)
            }
            (None, _) => format!("everything {label} changed ({} files)", self.changes.len()),
        }
    }
}

fn changes_of(output: Option<&ToolOutput>) -> Vec<FileChange> {
    match output {
        Some(ToolOutput::FileChanged(change)) => vec![change.clone()],
        Some(ToolOutput::Command(run)) => run.changes.clone(),
        _ => Vec::new(),
    }
}

/// Finds the change `source` names in the session's records.
pub(super) fn locate(records: &[Record], target: &RevertTarget) -> Result<Located, String> {
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
                    ..
                } if found == id => Some(Located {
                    changes: changes.clone(),
                    label: format!("the revert {id}"),
                    before: before.clone(),
                    after: after.clone(),
                    shared: HashSet::new(),
                }),
                _ => None,
            })
            .ok_or_else(|| format!("no revert {id} in this session's log")),
        ChangeSource::Call(call) => locate_call(records, call, target.shown.as_ref()),
    }
}

/// The last result of `call` with changes — of those, the one whose file `shown.0` has the
/// diff the user was shown, when that is known (call ids can repeat within a session).
fn locate_call(
    records: &[Record],
    call: &crate::bus::CallId,
    shown: Option<&(usize, String)>,
) -> Result<Located, String> {
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
        return Err(format!("no change of call {call} in this session's log"));
    };
    let changes = changes_of(output.as_ref());
    let label = match &output {
        Some(ToolOutput::Command(run)) => {
            let (cut, more) = crate::tools::text::cut_chars(run.command.trim(), 60);
            format!("the command `{cut}{}`", if more { "…" } else { "" })
        }
        _ => format!("the {name} call {call}"),
    };
    let is_command = matches!(output, Some(ToolOutput::Command(_)));
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

/// The checkpoints around the result at `at`: a command's are the `Before` of its batch and
/// the `After` just before its result; a batch of edits has its `After` after the results.
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

/// What happens to one file.
#[derive(Debug)]
enum Outcome {
    Write { bytes: Vec<u8>, executable: bool },
    Delete,
    Conflict(RevertConflict),
}

#[derive(Debug)]
struct Step {
    file: RevertFile,
    /// The file as found: its bytes and metadata (None: absent).
    found: Option<(Vec<u8>, Metadata)>,
    outcome: Outcome,
    /// The revert's own diff (found → result).
    change: FileChange,
}

/// A revert, computed.
#[derive(Debug)]
pub(super) struct Plan {
    steps: Vec<Step>,
}

impl Plan {
    pub fn is_clean(&self) -> bool {
        !self.steps.is_empty()
            && self
                .steps
                .iter()
                .all(|s| !matches!(s.outcome, Outcome::Conflict(_)))
    }

    /// Names the files' contents as found (FNV-1a over paths and bytes).
    pub fn stamp(&self) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                hash ^= u64::from(*b);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for step in &self.steps {
            eat(step.file.display.as_bytes());
            eat(&[0]);
            match &step.found {
                Some((bytes, _)) => {
                    eat(&bytes.len().to_le_bytes());
                    eat(bytes);
                }
                None => eat(b"absent"),
            }
        }
        format!("{hash:016x}")
    }

    pub fn to_plan(&self) -> RevertPlan {
        if self.steps.is_empty() {
            return RevertPlan::Refused {
                reason: "nothing to revert: the files are already as they were before the change"
                    .into(),
            };
        }
        let conflicts: Vec<RevertConflict> = self
            .steps
            .iter()
            .filter_map(|s| match &s.outcome {
                Outcome::Conflict(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        if !conflicts.is_empty() {
            return RevertPlan::Conflict { conflicts };
        }
        RevertPlan::Ready {
            files: self
                .steps
                .iter()
                .map(|s| ShownFile {
                    change: s.change.clone(),
                    warning: s.file.warning.clone(),
                })
                .collect(),
            stamp: self.stamp(),
        }
    }

    /// Writes the plan. On a failure, the changes made so far and the error.
    pub fn apply(self) -> Result<Vec<FileChange>, (Vec<FileChange>, String)> {
        let mut done = Vec::new();
        for step in self.steps {
            let meta = step.found.as_ref().map(|(_, m)| m);
            let result = match &step.outcome {
                Outcome::Write { bytes, executable } => step.file.write(meta, bytes, *executable),
                Outcome::Delete => step.file.remove(),
                Outcome::Conflict(_) => continue,
            };
            match result {
                Ok(()) => done.push(step.change),
                Err(err) => return Err((done, err.to_string())),
            }
        }
        Ok(done)
    }
}

/// Computes the revert of `target` against the files as they are now.
pub(super) fn plan(
    env: &ToolEnv,
    store: Option<&CheckpointStore>,
    located: &Located,
    target: &RevertTarget,
) -> Result<Plan, String> {
    let chosen = located.chosen(target);
    if chosen.is_empty() {
        return Err("the change has no such file".into());
    }
    let whole = Contents::load(store, located);
    let mut steps = Vec::new();
    for change in chosen {
        let file = RevertFile::resolve(env, &change.path).map_err(|e| e.to_string())?;
        let found = file
            .read()
            .map_err(|e| e.to_string())?
            .map(|f| (f.bytes, f.meta));
        let outcome = outcome(
            change,
            target.hunk,
            found.as_ref().map(|f| &f.0[..]),
            &whole,
        );
        let now = found.as_ref().map(|f| &f.0[..]);
        let change = match &outcome {
            Outcome::Write { bytes, .. } if now == Some(&bytes[..]) => continue,
            Outcome::Write { bytes, .. } => own_change(&file.display, now, Some(bytes)),
            Outcome::Delete => own_change(&file.display, now, None),
            Outcome::Conflict(_) => FileChange::default(),
        };
        steps.push(Step {
            file,
            found,
            outcome,
            change,
        });
    }
    Ok(Plan { steps })
}

/// A path's whole contents in the change's checkpoints: before (with its git mode), after.
type Whole = (Option<(Vec<u8>, String)>, Option<Vec<u8>>);

/// Whole contents of the change's files from its checkpoints.
#[derive(Default)]
struct Contents {
    by_path: HashMap<String, Whole>,
}

impl Contents {
    fn load(store: Option<&CheckpointStore>, located: &Located) -> Self {
        let (Some(store), Some(before), Some(after)) = (store, &located.before, &located.after)
        else {
            return Self::default();
        };
        let wanted: HashSet<&str> = located
            .changes
            .iter()
            .map(|c| c.path.as_str())
            .filter(|p| !located.shared.contains(*p))
            .collect();
        let Ok(diff) = store.diff(before, after) else {
            return Self::default();
        };
        let mut by_path = HashMap::new();
        for change in diff.iter().filter(|c| wanted.contains(c.path.as_str())) {
            let ids: Vec<&str> = [&change.before, &change.after]
                .into_iter()
                .flatten()
                .map(|b| b.id.as_str())
                .collect();
            let Ok(mut blobs) = store.blobs(&ids) else {
                continue;
            };
            let after = change
                .after
                .as_ref()
                .map(|_| blobs.pop().unwrap_or_default());
            let before = change
                .before
                .as_ref()
                .map(|b| (blobs.pop().unwrap_or_default(), b.mode.clone()));
            by_path.insert(change.path.clone(), (before, after));
        }
        Self { by_path }
    }

    fn of(&self, path: &str) -> Option<&Whole> {
        self.by_path.get(path)
    }
}

fn conflict(path: &str, why: impl Into<String>) -> Outcome {
    Outcome::Conflict(RevertConflict {
        path: path.to_string(),
        why: why.into(),
        lines: Vec::new(),
    })
}

const NO_CHECKPOINT: &str = "its whole content is not in a checkpoint (checkpoints were off, \
                             the file is ignored or over 5 MiB, or it changed twice in one batch)";

fn outcome(
    change: &FileChange,
    hunk: Option<usize>,
    now: Option<&[u8]>,
    whole: &Contents,
) -> Outcome {
    let path = change.path.as_str();
    let diff = patch::parse(&change.diff);
    let contents = whole.of(path);
    if !diff.complete() {
        return whole_from_checkpoint(path, hunk, now, contents);
    }
    if diff.deleted {
        if now.is_some() {
            return conflict(path, "a file exists there again since; left as it is");
        }
        return match contents {
            Some((Some((bytes, mode)), _)) => Outcome::Write {
                bytes: bytes.clone(),
                executable: mode == "100755",
            },
            _ => conflict(path, format!("cannot recreate it: {NO_CHECKPOINT}")),
        };
    }
    let Some(now) = now else {
        return conflict(path, "the file no longer exists; left as it is");
    };
    if diff.created {
        let same = match contents {
            Some((_, Some(after))) => now == &after[..],
            _ => patch::is_created_content(now, &diff),
        };
        if same {
            return Outcome::Delete;
        }
        let lines = match patch::reverse(now, &diff, None) {
            Err(c) => c.lines,
            Ok(_) => Vec::new(),
        };
        return Outcome::Conflict(RevertConflict {
            path: path.to_string(),
            why: "the file changed since the change created it (deleting it would lose that); \
                  left as it is"
                .into(),
            lines: mismatches(lines),
        });
    }
    if patch::loses_bytes(&diff, hunk) {
        if hunk.is_none()
            && let Some((Some((before, _)), Some(after))) = contents
        {
            return if now == &after[..] {
                Outcome::Write {
                    bytes: before.clone(),
                    executable: false,
                }
            } else {
                conflict(path, "the file changed since; left as it is")
            };
        }
        return conflict(
            path,
            "the lines to put back are not valid UTF-8, so only the whole change can be \
             reverted (R), from its checkpoint",
        );
    }
    let encoding = encoding::sniff_file(now).unwrap_or(encoding::TextEncoding::Utf8);
    let text = encoding::decode_lossy(now, encoding);
    match patch::reverse(&text, &diff, hunk) {
        Ok(bytes) if encoding.is_utf8() => Outcome::Write {
            bytes,
            executable: false,
        },
        Ok(bytes) => match encoding::encode(&String::from_utf8_lossy(&bytes), encoding) {
            Ok(bytes) => Outcome::Write {
                bytes,
                executable: false,
            },
            Err(err) => conflict(path, err.to_string()),
        },
        Err(c) => {
            let why = if diff.hunks.len() > 1 {
                format!("hunk {}: {}", c.hunk + 1, c.why)
            } else {
                c.why
            };
            Outcome::Conflict(RevertConflict {
                path: path.to_string(),
                why,
                lines: mismatches(c.lines),
            })
        }
    }
}

/// A change shown without its whole diff: reverted as a whole while the file is exactly what
/// the change left.
fn whole_from_checkpoint(
    path: &str,
    hunk: Option<usize>,
    now: Option<&[u8]>,
    contents: Option<&Whole>,
) -> Outcome {
    if hunk.is_some() {
        return conflict(
            path,
            "the diff was cut for size (or the file is binary): only the whole change can be \
             reverted (R)",
        );
    }
    let Some((before, after)) = contents else {
        return conflict(path, format!("cannot revert it: {NO_CHECKPOINT}"));
    };
    let unchanged = match (after, now) {
        (Some(after), Some(now)) => after[..] == *now,
        (None, None) => true,
        _ => false,
    };
    if !unchanged {
        return conflict(
            path,
            "the file changed since (it is no longer exactly what the change left); left as it is",
        );
    }
    match before {
        Some((bytes, mode)) => Outcome::Write {
            bytes: bytes.clone(),
            executable: mode == "100755",
        },
        None => Outcome::Delete,
    }
}

fn mismatches(lines: Vec<patch::Mismatch>) -> Vec<RevertMismatch> {
    lines
        .into_iter()
        .map(|m| RevertMismatch {
            line: m.line,
            expected: m.expected,
            found: m.found,
        })
        .collect()
}

/// The revert's own change of one file, as the diff pane shows it.
fn own_change(path: &str, now: Option<&[u8]>, then: Option<&[u8]>) -> FileChange {
    let created = now.is_none();
    let (old, new) = (now.unwrap_or_default(), then.unwrap_or_default());
    let large = |b: &[u8]| b.len() > MAX_DIFF_INPUT || b[..b.len().min(8000)].contains(&0);
    let mut out = FileChange {
        path: path.to_string(),
        created,
        replacements: 1,
        ..FileChange::default()
    };
    let old_name = if created {
        "/dev/null".to_string()
    } else {
        format!("a/{path}")
    };
    let new_name = if then.is_none() {
        "/dev/null".to_string()
    } else {
        format!("b/{path}")
    };
    if large(old) || large(new) {
        let verb = match (now, then) {
            (None, _) => "recreated",
            (_, None) => "deleted",
            _ => "restored",
        };
        out.diff = format!(
            "--- {old_name}\n+++ {new_name}\nBinary or large file {verb} ({} → {} bytes)\n",
            old.len(),
            new.len()
        );
        return out;
    }
    let diff = diff_files(old, new, path, created);
    out.diff = diff
        .text
        .replacen(&format!("+++ b/{path}"), &format!("+++ {new_name}"), 1);
    out.added = diff.added;
    out.removed = diff.removed;
    out.first_line = diff.first_line;
    out.last_line = diff.last_line;
    out
}

#[cfg(test)]
#[path = "revert_tests.rs"]
mod tests;
