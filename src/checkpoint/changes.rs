//! What changed between two checkpoints, as the `FileChange`s the diff pane shows for edits,
//! so a command's effects (`sed -i`, a generator, `rm`) appear like the edits of file tools.

use super::error::CheckpointError;
use super::store::{ChangeKind, CheckpointStore, PathChange};
use crate::fs::diff::diff_files;
use crate::tool_output::FileChange;

/// At most this many files of one change are shown; the note says how many more there were.
pub const MAX_FILES: usize = 200;
/// Contents over this size are summarised instead of diffed.
const MAX_DIFF_INPUT: usize = 1024 * 1024;

/// The changes between checkpoints `changes` describes as diffs, and a note when some were
/// left out.
pub fn file_changes(
    store: &CheckpointStore,
    changes: &[PathChange],
) -> Result<(Vec<FileChange>, Option<String>), CheckpointError> {
    let shown = &changes[..changes.len().min(MAX_FILES)];
    let mut ids = Vec::new();
    for change in shown {
        for blob in [&change.before, &change.after].into_iter().flatten() {
            ids.push(blob.id.as_str());
        }
    }
    ids.sort_unstable();
    ids.dedup();
    let contents = store.blobs(&ids)?;
    let content = |blob: &Option<super::store::Blob>| -> Vec<u8> {
        blob.as_ref()
            .and_then(|b| ids.binary_search(&b.id.as_str()).ok())
            .map(|i| contents[i].clone())
            .unwrap_or_default()
    };
    let mut out = Vec::with_capacity(shown.len());
    for change in shown {
        let before = content(&change.before);
        let after = content(&change.after);
        out.push(change_of(change, &before, &after));
    }
    let note = (changes.len() > MAX_FILES).then(|| {
        format!(
            "{} files changed; the first {MAX_FILES} are shown",
            changes.len()
        )
    });
    Ok((out, note))
}

fn change_of(change: &PathChange, before: &[u8], after: &[u8]) -> FileChange {
    let created = change.kind == ChangeKind::Created;
    let binary = |b: &[u8]| b.len() > MAX_DIFF_INPUT || b[..b.len().min(8000)].contains(&0);
    let mut out = FileChange {
        path: change.path.clone(),
        created,
        replacements: 1,
        ..FileChange::default()
    };
    if binary(before) || binary(after) {
        out.diff = format!(
            "--- a/{0}\n+++ b/{0}\nBinary or large file {1} ({2} → {3} bytes)\n",
            change.path,
            match change.kind {
                ChangeKind::Created => "created",
                ChangeKind::Changed => "changed",
                ChangeKind::Deleted => "deleted",
            },
            before.len(),
            after.len()
        );
        return out;
    }
    let diff = diff_files(before, after, &change.path, created);
    out.diff = if change.kind == ChangeKind::Deleted {
        diff.text
            .replacen(&format!("+++ b/{}", change.path), "+++ /dev/null", 1)
    } else {
        diff.text
    };
    out.added = diff.added;
    out.removed = diff.removed;
    out.first_line = diff.first_line;
    out.last_line = diff.last_line;
    out
}
