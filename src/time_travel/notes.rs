//! What the model is told after the user travelled in time under it: what is gone, and what
//! changed.

use crate::bus::{Restore, RestorePlan};

/// Files named in a note to the model, at most.
const NAMED_FILES: usize = 20;

/// The note to the model carries the revert's diffs up to this many bytes.
const NOTE_DIFF_BYTES: usize = 12 * 1024;

/// What the model reads in its next request: what is gone, and the revert's diffs.
pub fn note_for_model(what: &str, changes: &[crate::tool_output::FileChange]) -> String {
    let mut text = format!(
        "[The user reverted {what} from the diff pane. That change is no longer in the \
         workspace: do not build on it, and read a file again before you edit it. The revert \
         made these changes:]\n"
    );
    let mut room = NOTE_DIFF_BYTES;
    for change in changes {
        if change.diff.len() > room {
            text.push_str(&format!(
                "[{}: diff left out for size; read the file]\n",
                change.path
            ));
            continue;
        }
        room -= change.diff.len();
        text.push_str(&change.diff);
        if !change.diff.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// "a.txt (restored), b.txt (removed)": what a restore did to each file, as the model reads it.
pub fn files_text(plan: &RestorePlan) -> String {
    let mut names: Vec<String> = plan
        .files
        .iter()
        .take(NAMED_FILES)
        .map(|f| format!("{} ({})", f.path, file_action(f)))
        .collect();
    if plan.files.len() > NAMED_FILES || plan.note.is_some() {
        names.push("…".into());
    }
    names.join(", ")
}

/// What a restore does to a file, from its diff (current → restored).
pub fn file_action(file: &crate::tool_output::FileChange) -> &'static str {
    if file.created {
        "recreated"
    } else if file.diff.contains("+++ /dev/null") {
        "removed"
    } else {
        "restored"
    }
}

fn conflicts_text(plan: &RestorePlan) -> String {
    if plan.conflicts.is_empty() {
        return String::new();
    }
    let names: Vec<String> = plan
        .conflicts
        .iter()
        .take(NAMED_FILES)
        .map(|c| format!("{} ({})", c.path, c.why))
        .collect();
    format!(
        " These files were left alone because they changed since: {}.",
        names.join(", ")
    )
}

/// What the model is told after a restore; None when what it sees is still true.
pub fn note_for(what: &Restore, moved: &RestorePlan) -> Option<String> {
    let files = files_text(moved);
    let conflicts = conflicts_text(moved);
    let changed = if moved.files.is_empty() {
        "no file had to change".to_string()
    } else {
        format!("files changed: {files}")
    };
    match what {
        Restore::Undo => Some(format!(
            "[cairn] The user undid the workspace changes of your last turn ({changed}); those files are as they were before that turn.{conflicts} Read a file again before you edit it."
        )),
        Restore::Redo => Some(format!(
            "[cairn] The user redid the workspace changes of your turn they had undone ({changed}); those files are again as your turn left them.{conflicts}"
        )),
        Restore::Rewind {
            files: true,
            conversation: false,
            ..
        } => Some(format!(
            "[cairn] The user restored the files to how they were at an earlier point of this conversation ({changed}). The conversation was kept, so files may differ from what it shows.{conflicts} Read a file again before you edit it."
        )),
        Restore::Rewind {
            files: false,
            conversation: true,
            ..
        } => Some(
            "[cairn] The conversation was rewound to this point, but the files were not: changes made after it are still in the workspace, so files may differ from what this conversation shows. Read a file again before relying on it.".to_string(),
        ),
        // Both: the files match the conversation again, unless some had to be left alone.
        Restore::Rewind { .. } => (!moved.conflicts.is_empty()).then(|| {
            format!(
                "[cairn] The conversation and the files were rewound to this point, but some files could not be restored and may differ from what this conversation shows.{conflicts}"
            )
        }),
    }
}
