//! Skills and custom commands: what a team teaches cairn in files it already keeps.
//!
//! A skill is a directory with a `SKILL.md` (YAML front matter `name`, `description`, then
//! instructions), found in the places `Sources` lists (`discover`). The session's list of
//! skills is computed once, within a budget (`listing`), and goes into the system prompt; the
//! model loads one with the `skill` tool (the agent answers it). `allowed-tools` becomes prefix
//! rules only for the user's own or trusted project skills (`grants`). Commands are Markdown
//! files under `commands/` directories, and every skill is a command too (`commands`); they
//! are read again from disk each time they are used, so edits apply without a restart.

pub mod commands;
pub mod discover;
pub mod fingerprint;
pub mod front_matter;
pub mod grants;
pub mod init;
pub mod listing;

use std::path::{Path, PathBuf};

pub use discover::{Found, Sources, discover_skills};

/// The name of a skill's instruction file.
pub const SKILL_FILE: &str = "SKILL.md";

/// The tool the model loads a skill with (answered by the agent, like `exit_plan_mode`).
pub const SKILL_TOOL: &str = "skill";

/// Whose a skill or command is: the project's (from the repository) or the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillScope {
    Project,
    User,
}

impl SkillScope {
    pub fn as_str(self) -> &'static str {
        match self {
            SkillScope::Project => "project",
            SkillScope::User => "user",
        }
    }
}

/// One valid skill as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    /// One line (newlines and runs of spaces folded), at most `MAX_DESCRIPTION` characters.
    pub description: String,
    /// The skill's directory (real path).
    pub dir: PathBuf,
    /// Its `SKILL.md` (real path).
    pub file: PathBuf,
    pub scope: SkillScope,
    /// Where it was found, as people say it: `.cairn/skills`, `~/.claude/skills`.
    pub origin: String,
    /// The instructions after the front matter.
    pub body: String,
    pub argument_hint: Option<String>,
    /// False with `disable-model-invocation: true`: not listed for the model, `/name` only.
    pub model_invocable: bool,
    /// False with `user-invocable: false`: not a `/name` command.
    pub user_invocable: bool,
    /// `allowed-tools` as written (see `grants` for what they become).
    pub allowed_tools: Vec<String>,
}

/// Longest description kept (the Agent Skills limit).
pub const MAX_DESCRIPTION: usize = 1024;

impl Skill {
    /// What trusting a project skill remembers: a hash over its whole directory as it is now
    /// (names and contents of every file, what links lead to), so any change voids the trust.
    /// None: the directory is past the caps (`fingerprint::TOO_LARGE`), never trusted.
    pub fn fingerprint(&self) -> Option<String> {
        fingerprint::skill_dir_hash(&self.dir)
    }

    /// The files of the skill besides `SKILL.md`, by real path, sorted; at most `limit`.
    pub fn files(&self, limit: usize) -> Vec<PathBuf> {
        let mut out = Vec::new();
        collect_files(&self.dir, &self.dir, 0, limit, &mut out);
        out.retain(|f| f != &self.file);
        out.sort();
        out
    }
}

/// Files listed with a loaded skill at most.
pub const MAX_LISTED_FILES: usize = 100;

impl Skill {
    /// What the model is given when the skill loads: its instructions (with `$ARGUMENTS` and
    /// `$1`…`$9` replaced when arguments are given) and the paths of its other files.
    pub fn loaded_text(&self, args: &str) -> String {
        let body = if args.is_empty() {
            self.body.clone()
        } else {
            commands::expand(&self.body, args)
        };
        let mut out = format!(
            "<skill name=\"{}\" dir=\"{}\">\n{}\n</skill>\n",
            self.name,
            self.dir.display(),
            body.trim_end()
        );
        let files = self.files(MAX_LISTED_FILES);
        if files.is_empty() {
            out.push_str("The skill has no other files.\n");
        } else {
            out.push_str("Files of this skill (read them with read_file when the instructions call for them):\n");
            for file in files.iter().take(MAX_LISTED_FILES) {
                out.push_str(&format!("{}\n", file.display()));
            }
            if files.len() > MAX_LISTED_FILES {
                out.push_str(&format!("(more files under {})\n", self.dir.display()));
            }
        }
        out
    }
}

/// Regular files under `dir` (not through symlinks that leave `base`), skipping hidden entries.
fn collect_files(base: &Path, dir: &Path, depth: usize, limit: usize, out: &mut Vec<PathBuf>) {
    const MAX_DEPTH: usize = 4;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() > limit {
            return;
        }
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(entry.path()) else {
            continue;
        };
        if !real.starts_with(base) {
            continue;
        }
        match std::fs::metadata(&real) {
            Ok(meta) if meta.is_file() => out.push(real),
            Ok(meta) if meta.is_dir() && depth < MAX_DEPTH && real != dir => {
                collect_files(base, &real, depth + 1, limit, out);
            }
            _ => {}
        }
    }
}

/// Whether `name` follows the naming rule: 1 to 64 of `a-z`, `0-9` and single inner hyphens.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// `text` on one line: newlines, tabs and runs of spaces become one space (a description
/// cannot start a line of its own in the list).
pub fn one_line(text: &str) -> String {
    text.split_whitespace()
        .filter(|w| !w.chars().any(char::is_control))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
