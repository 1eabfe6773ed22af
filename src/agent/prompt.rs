//! The system prompt: role, how to work, workspace facts, `AGENTS.md`, and the current todos.
//! Kept short on purpose: every byte is sent with every request.

use std::path::Path;

use crate::tools::{TodoItem, render};

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
}

impl WorkspaceFacts {
    pub fn gather(root: &Path) -> Self {
        let agents_md = read_agents_md(&root.join("AGENTS.md"));
        Self {
            root: root.display().to_string(),
            git_branch: git_branch(root),
            agents_md,
        }
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
fn git_branch(root: &Path) -> Option<String> {
    let head = std::fs::read_to_string(root.join(".git").join("HEAD")).ok()?;
    let head = head.trim();
    Some(
        head.strip_prefix("ref: refs/heads/")
            .unwrap_or(head)
            .to_string(),
    )
}

pub fn system_prompt(facts: &WorkspaceFacts, todos: &[TodoItem]) -> String {
    let mut out = String::with_capacity(1024);
    out.push_str(ROLE.trim_end());
    out.push_str("\n\n# Workspace\n");
    out.push_str(&format!(
        "Directory: {}\nPlatform: {}\n",
        facts.root,
        std::env::consts::OS
    ));
    if let Some(branch) = &facts.git_branch {
        out.push_str(&format!("Git branch: {branch}\n"));
    }
    if let Some(agents) = &facts.agents_md {
        out.push_str("\n# AGENTS.md (instructions from the repository)\n");
        out.push_str(agents.trim_end());
        out.push('\n');
    }
    if !todos.is_empty() {
        out.push_str("\n# Current todos\n");
        out.push_str(&render::todos_text(todos));
    }
    out
}
