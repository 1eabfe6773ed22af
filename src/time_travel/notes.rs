//! What the model is told after the user travelled in time under it: what is gone, and what
//! changed.

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
