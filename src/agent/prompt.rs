//! The system prompt: role, how to work, workspace facts and `AGENTS.md`. Kept short on
//! purpose: every byte is sent with every request. It is built once per session and never
//! changes afterwards, so every request shares its prefix with the one before (the provider's
//! prompt cache hits); state that changes (permission mode, git branch) reaches the model as
//! a note appended to the conversation (`state_note`), and the todo list as the result of
//! `todo_write` itself.

use std::path::{Path, PathBuf};

use crate::bus::Mode;
use crate::session_log::ToldState;

/// `AGENTS.md` beyond this is cut: instructions, not a second codebase.
const AGENTS_MD_LIMIT: usize = 16 * 1024;

/// Who cairn is and how it works: text, not code, so it lives in `assets/prompts/`.
const ROLE: &str = include_str!("../../assets/prompts/system.md");

/// Facts gathered once per session.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceFacts {
    pub root: String,
    pub git_branch: Option<String>,
    pub agents_md: Option<String>,
    /// The `# Skills` section (the session's list; empty without skills).
    pub skills: String,
}

/// The repository's instructions the system prompt includes: `AGENTS.md` at the root.
pub fn agents_md_path(root: &Path) -> PathBuf {
    root.join(crate::skills::init::AGENTS_MD)
}

/// Where the prompt's instructions are read from and their size, when there are some (the
/// welcome screen says so): the same test `read_agents_md` makes.
pub fn agents_md_found(root: &Path) -> Option<(PathBuf, u64)> {
    let path = agents_md_path(root);
    let meta = std::fs::metadata(&path).ok()?;
    meta.is_file().then_some((path, meta.len()))
}

impl WorkspaceFacts {
    pub fn gather(root: &Path) -> Self {
        let agents_md = read_agents_md(&agents_md_path(root));
        Self {
            root: root.display().to_string(),
            git_branch: git_branch(root),
            agents_md,
            skills: String::new(),
        }
    }

    /// With the session's skill list (`skills::listing`).
    pub fn with_skills(mut self, listing: &str) -> Self {
        listing.clone_into(&mut self.skills);
        self
    }
}

/// At most `AGENTS_MD_LIMIT` bytes of a regular file: a FIFO or a link to a device must not
/// hang or flood the start.
fn read_agents_md(path: &Path) -> Option<String> {
    use std::io::Read;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(AGENTS_MD_LIMIT as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    let cut = bytes.len() > AGENTS_MD_LIMIT;
    bytes.truncate(AGENTS_MD_LIMIT);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str("\n[AGENTS.md truncated]");
    }
    Some(text)
}

/// Reads `.git/HEAD` directly: spawning git for one line would cost more than the request.
pub fn git_branch(root: &Path) -> Option<String> {
    let head = std::fs::read_to_string(root.join(".git").join("HEAD")).ok()?;
    let head = head.trim();
    Some(
        head.strip_prefix("ref: refs/heads/")
            .unwrap_or(head)
            .to_string(),
    )
}

pub fn system_prompt(facts: &WorkspaceFacts, told: &ToldState) -> String {
    with_role(ROLE, facts, told)
}

/// What a subagent without a prompt of its own is told besides cairn's role.
const SUBAGENT_NOTE: &str = "# You are a subagent\nAnother agent gave you one task: its \
prompt is your first message, and you see nothing of its conversation. Nobody answers \
questions here: work the task through with your tools. Your last message is handed back as \
your whole answer, so make it complete and short: what you found or did, with the paths and \
line numbers that matter.";

/// A subagent's system prompt: its agent's own (`prompt`) or cairn's role told it is a
/// subagent, with the same workspace facts as its parent's.
pub fn child_system_prompt(
    prompt: Option<&str>,
    facts: &WorkspaceFacts,
    told: &ToldState,
) -> String {
    match prompt {
        Some(own) => with_role(own, facts, told),
        None => with_role(
            &format!("{}\n\n{SUBAGENT_NOTE}", ROLE.trim_end()),
            facts,
            told,
        ),
    }
}

fn with_role(role: &str, facts: &WorkspaceFacts, told: &ToldState) -> String {
    let mut out = String::with_capacity(1024);
    out.push_str(role.trim_end());
    out.push_str("\n\n# Workspace\n");
    out.push_str(&format!(
        "Directory: {}\nPlatform: {}\n",
        facts.root,
        std::env::consts::OS
    ));
    if let Some(branch) = &told.git_branch {
        out.push_str(&format!("Git branch: {branch}\n"));
    }
    out.push_str(&format!(
        "Permission mode: {} ({})\n",
        told.mode,
        mode_meaning(told.mode)
    ));
    if let Some(agents) = &facts.agents_md {
        out.push_str("\n# AGENTS.md (instructions from the repository)\n");
        out.push_str(agents.trim_end());
        out.push('\n');
    }
    out.push_str(&facts.skills);
    out
}

fn mode_meaning(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "every change and command waits for the user's approval",
        Mode::AutoEdit => "edits in the workspace run; commands that change things ask",
        Mode::Auto => "only dangerous commands ask",
        Mode::Never => "nothing asks",
        Mode::Plan => {
            "planning: only reads and read-only commands run; nothing may change until you \
             call exit_plan_mode with your plan and the user approves it"
        }
    }
}

/// What changed since the model was last told, as one short note; `None` when nothing did.
pub fn state_note(before: &ToldState, now: &ToldState) -> Option<String> {
    let mut changes = Vec::new();
    if before.mode != now.mode {
        changes.push(format!(
            "the permission mode is now {} ({}; was {})",
            now.mode,
            mode_meaning(now.mode),
            before.mode
        ));
    }
    if before.git_branch != now.git_branch {
        let name = |b: &Option<String>| b.clone().unwrap_or_else(|| "none".into());
        changes.push(format!(
            "the git branch is now {} (was {})",
            name(&now.git_branch),
            name(&before.git_branch)
        ));
    }
    (!changes.is_empty()).then(|| format!("[cairn note: {}.]", changes.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_welcome_reports_the_agents_md_the_prompt_reads() {
        #![allow(clippy::unwrap_used)]
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(agents_md_found(dir.path()), None);
        std::fs::create_dir(dir.path().join("AGENTS.md")).unwrap();
        assert_eq!(agents_md_found(dir.path()), None, "a directory is not read");
        assert_eq!(read_agents_md(&agents_md_path(dir.path())), None);
        let file = tempfile::tempdir().unwrap();
        std::fs::write(file.path().join("AGENTS.md"), "be nice\n").unwrap();
        assert_eq!(
            agents_md_found(file.path()),
            Some((file.path().join("AGENTS.md"), 8))
        );
        assert_eq!(
            WorkspaceFacts::gather(file.path()).agents_md.as_deref(),
            Some("be nice\n")
        );
    }

    #[test]
    fn the_prompt_depends_only_on_the_facts_and_notes_say_what_moved() {
        let facts = WorkspaceFacts {
            root: "/w".into(),
            git_branch: None,
            agents_md: Some("be nice".into()),
            skills: String::new(),
        };
        let told = ToldState {
            mode: Mode::AutoEdit,
            git_branch: Some("main".into()),
        };
        assert_eq!(system_prompt(&facts, &told), system_prompt(&facts, &told));
        assert!(system_prompt(&facts, &told).contains("Git branch: main"));
        assert_eq!(state_note(&told, &told), None);
        let moved = ToldState {
            mode: Mode::Never,
            git_branch: Some("fix".into()),
        };
        let note = state_note(&told, &moved).unwrap_or_default();
        assert!(
            note.contains("mode is now never") && note.contains("branch is now fix (was main)"),
            "{note}"
        );
    }
}
