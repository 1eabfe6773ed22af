//! `/init`: a built-in command that has the model draft the repository's `AGENTS.md` (or
//! improve the one there), written with the file tools so the usual diff and approval apply.
//! Expanded by the agent like a user's command, when the request is made: whether the file
//! exists is read from disk then, not when the session started.

use std::path::Path;

/// The instructions file the system prompt includes, at the workspace root.
pub const AGENTS_MD: &str = "AGENTS.md";

const WRITE: &str = include_str!("../../assets/prompts/init.md");
const IMPROVE: &str = include_str!("../../assets/prompts/init_improve.md");

/// What `/init args` asks of the model in `workspace`.
pub fn prompt(workspace: &Path, args: &str) -> String {
    let exists = workspace.join(AGENTS_MD).is_file();
    let mut text = if exists { IMPROVE } else { WRITE }.trim_end().to_string();
    if !args.trim().is_empty() {
        text.push_str("\n\nThe user adds: ");
        text.push_str(args.trim());
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn init_asks_for_a_new_file_or_to_improve_the_one_there() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = prompt(dir.path(), "");
        assert!(fresh.contains("create AGENTS.md") && fresh.contains("write_file"));
        assert!(!fresh.contains("already has"));
        std::fs::write(dir.path().join(AGENTS_MD), "# notes\n").unwrap();
        let improve = prompt(dir.path(), "mention the benches");
        assert!(improve.contains("already has an AGENTS.md") && improve.contains("edit_file"));
        assert!(improve.ends_with("The user adds: mention the benches"));
        // A directory of that name is no instructions file.
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir(other.path().join(AGENTS_MD)).unwrap();
        assert!(prompt(other.path(), "").contains("create AGENTS.md"));
    }
}
