//! What a revert would do, computed against the files as they are now: the change found in
//! the session log (`locate`), then for each of its files the reverse patch
//! (`patch`), or — for a created file, a deleted one, or a diff cut for size — the whole
//! contents from the checkpoints around the change. A file that moved on since is a conflict;
//! the plan then changes nothing.

use std::collections::{HashMap, HashSet};
use std::fs::Metadata;

use super::TimeTravelError;
use super::locate::Located;
use super::patch;
use super::revert_files::FileToRevert;
use crate::bus::{RevertConflict, RevertFile, RevertMismatch, RevertPlan, RevertTarget};
use crate::checkpoint::CheckpointStore;
use crate::fs::diff::diff_files;
use crate::fs::encoding;
use crate::tool_output::FileChange;
use crate::tools::ToolEnv;

/// Contents over this size (or with a NUL byte) are summarised, not diffed, as checkpoints do.
const MAX_DIFF_INPUT: usize = 1024 * 1024;

/// What happens to one file.
#[derive(Debug)]
enum RevertAction {
    Write { bytes: Vec<u8>, executable: bool },
    Delete,
    Conflict(RevertConflict),
}

#[derive(Debug)]
struct RevertStep {
    file: FileToRevert,
    /// The file as found: its bytes and metadata (None: absent).
    found: Option<(Vec<u8>, Metadata)>,
    action: RevertAction,
    /// The revert's own diff (found → result).
    change: FileChange,
}

/// A revert that stopped part way: the changes it made, and why it stopped.
#[derive(Debug)]
pub struct PartialRevert {
    pub done: Vec<FileChange>,
    pub error: TimeTravelError,
}

/// A revert, computed.
#[derive(Debug)]
pub struct Plan {
    steps: Vec<RevertStep>,
}

impl Plan {
    pub fn is_clean(&self) -> bool {
        !self.steps.is_empty()
            && self
                .steps
                .iter()
                .all(|s| !matches!(s.action, RevertAction::Conflict(_)))
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
                reason:
                    "the files are already as they were before the change, so there is nothing \
                         to revert"
                        .into(),
            };
        }
        let conflicts: Vec<RevertConflict> = self
            .steps
            .iter()
            .filter_map(|s| match &s.action {
                RevertAction::Conflict(c) => Some(c.clone()),
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
                .map(|s| RevertFile {
                    change: s.change.clone(),
                    warning: s.file.warning.clone(),
                })
                .collect(),
            stamp: self.stamp(),
        }
    }

    /// Writes the plan. On a failure, the changes made so far and the error.
    pub fn apply(self) -> Result<Vec<FileChange>, PartialRevert> {
        let mut done = Vec::new();
        for step in self.steps {
            let meta = step.found.as_ref().map(|(_, m)| m);
            let result = match &step.action {
                RevertAction::Write { bytes, executable } => {
                    step.file.write(meta, bytes, *executable)
                }
                RevertAction::Delete => step.file.remove(),
                RevertAction::Conflict(_) => continue,
            };
            match result {
                Ok(()) => done.push(step.change),
                Err(err) => {
                    return Err(PartialRevert {
                        done,
                        error: err.into(),
                    });
                }
            }
        }
        Ok(done)
    }
}

/// Computes the revert of `target` against the files as they are now.
pub fn plan(
    env: &ToolEnv,
    store: Option<&CheckpointStore>,
    located: &Located,
    target: &RevertTarget,
) -> Result<Plan, TimeTravelError> {
    let chosen = located.chosen(target);
    if chosen.is_empty() {
        return Err(TimeTravelError::NoSuchFile);
    }
    // Whole contents cost git calls: fetched only for changes that need them.
    let needs_whole = chosen.iter().any(|c| {
        let diff = patch::parse(&c.diff);
        diff.deleted
            || diff.created
            || c.created
            || diff.hunks.is_empty()
            || !diff.complete()
            || patch::loses_bytes(&diff, target.hunk)
    });
    let whole = if needs_whole {
        Contents::load(store, located)
    } else {
        Contents::default()
    };
    let mut steps = Vec::new();
    for change in chosen {
        let file = FileToRevert::resolve(env, &change.path)?;
        let found = file.read()?.map(|f| (f.bytes, f.meta));
        let action = action_for(
            change,
            target.hunk,
            found.as_ref().map(|f| &f.0[..]),
            &whole,
        );
        let now = found.as_ref().map(|f| &f.0[..]);
        let change = match &action {
            RevertAction::Write { bytes, .. } if now == Some(&bytes[..]) => continue,
            RevertAction::Write { bytes, .. } => own_change(&file.display, now, Some(bytes)),
            RevertAction::Delete => own_change(&file.display, now, None),
            RevertAction::Conflict(_) => FileChange::default(),
        };
        steps.push(RevertStep {
            file,
            found,
            action,
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

fn conflict(path: &str, why: impl Into<String>) -> RevertAction {
    RevertAction::Conflict(RevertConflict {
        path: path.to_string(),
        why: why.into(),
        lines: Vec::new(),
    })
}

const NO_CHECKPOINT: &str = "its whole content is not in a checkpoint (checkpoints were off, \
                             the file is ignored or over 5 MiB, or it changed twice in one batch)";

fn action_for(
    change: &FileChange,
    hunk: Option<usize>,
    now: Option<&[u8]>,
    whole: &Contents,
) -> RevertAction {
    let path = change.path.as_str();
    let diff = patch::parse(&change.diff);
    let contents = whole.of(path);
    if !diff.complete() {
        return whole_from_checkpoint(path, hunk, now, contents);
    }
    // An empty file's diff has no text: created or deleted shows in the change or its
    // checkpoints only.
    let deleted = diff.deleted || matches!(contents, Some((Some(_), None)));
    let created = diff.created || change.created || matches!(contents, Some((None, Some(_))));
    if deleted {
        if now.is_some() {
            return conflict(path, "a file exists there again since; left as it is");
        }
        return match contents {
            Some((Some((bytes, mode)), _)) => RevertAction::Write {
                bytes: bytes.clone(),
                executable: mode == "100755",
            },
            _ => conflict(path, format!("cannot recreate it: {NO_CHECKPOINT}")),
        };
    }
    let Some(now) = now else {
        return conflict(path, "the file no longer exists; left as it is");
    };
    if created {
        let same = match contents {
            Some((_, Some(after))) => now == &after[..],
            _ => patch::is_created_content(now, &diff),
        };
        if same {
            return RevertAction::Delete;
        }
        let lines = match patch::reverse(now, &diff, None) {
            Err(c) => c.lines,
            Ok(_) => Vec::new(),
        };
        return RevertAction::Conflict(RevertConflict {
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
                RevertAction::Write {
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
        Ok(bytes) if encoding.is_utf8() => RevertAction::Write {
            bytes,
            executable: false,
        },
        Ok(bytes) => match encoding::encode(&String::from_utf8_lossy(&bytes), encoding) {
            Ok(bytes) => RevertAction::Write {
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
            RevertAction::Conflict(RevertConflict {
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
) -> RevertAction {
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
        Some((bytes, mode)) => RevertAction::Write {
            bytes: bytes.clone(),
            executable: mode == "100755",
        },
        None => RevertAction::Delete,
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
    out.diff = if diff.text.is_empty() {
        // An empty file created or deleted: the headers alone say which.
        format!("--- {old_name}\n+++ {new_name}\n")
    } else {
        diff.text
            .replacen(&format!("+++ b/{path}"), &format!("+++ {new_name}"), 1)
    };
    out.added = diff.added;
    out.removed = diff.removed;
    out.first_line = diff.first_line;
    out.last_line = diff.last_line;
    out
}
