//! Files the user's own tools run later: direnv's `.envrc`, an editor's tasks and settings
//! (`.vscode/`, `.idea/`), git hooks managers (`.husky/`, `.pre-commit-config.yaml`), cargo's
//! `config` (`[alias]`, runners, rustc wrappers), CI workflows, `.gitattributes` (filters and
//! encodings git applies), other coding agents' project settings (`.mcp.json`, `.cursor/`,
//! `.gemini/`, ...: the servers they start), and the `config` of any directory that is a git repository
//! (`evil.git/config`: its `core.fsmonitor` runs on the next `git status` there). A file-tool
//! write to one asks in `ask` and `auto-edit`; `auto` runs it with a warning.
//!
//! Where the line is: files a tool runs or obeys on its own when the user opens, enters or
//! uses the project (direnv on `cd`, an editor on open, git on every command, cargo on every
//! build) are listed. Build scripts the user runs on purpose (`Makefile`, `package.json`,
//! `build.rs`) are not: writing them is the ordinary work of the agent, and what they run
//! is seen when a command runs them.
//!
//! Patterns are matched against the path relative to the workspace, case-insensitively (on a
//! case-insensitive file system `.ENVRC` is `.envrc`), at any depth: `.vscode/` in a
//! subdirectory is opened as a workspace folder too.

use std::path::Path;

use crate::permissions::classify::git_repo::looks_like_git_dir;

/// The default list (`[permissions] run_later` replaces it). A pattern ending in `/` names
/// everything below a directory of that name; one with a `*` matches any characters in one
/// path component; others name a file. A pattern with a `/` inside is matched against
/// consecutive components (`.github/workflows/`).
pub const DEFAULT_RUN_LATER: &[&str] = &[
    ".envrc",
    ".env.local",
    ".vscode/",
    ".idea/",
    ".devcontainer/",
    ".husky/",
    ".githooks/",
    ".pre-commit-config.yaml",
    ".cargo/config",
    ".cargo/config.toml",
    ".github/workflows/",
    ".github/actions/",
    ".gitlab-ci.yml",
    ".gitattributes",
    ".gitmodules",
    ".lefthook.yml",
    "lefthook.yml",
    ".npmrc",
    ".yarnrc.yml",
    ".tool-versions",
    ".mise.toml",
    "mise.toml",
    ".nvmrc",
    // Other coding agents' project settings: the MCP servers and hooks they start, the rules
    // they obey (cairn's own, `.cairn/`, `.agents/`, `.claude/`, are protected outright).
    ".mcp.json",
    ".cursor/",
    ".gemini/",
    ".codex/",
    ".continue/",
    ".windsurf/",
    ".roo/",
    ".zed/",
    ".opencode/",
    "opencode.json",
    ".aider.conf.yml",
];

/// Why writing `path` (a real path inside `root`) makes a tool run something later.
pub fn runs_later(path: &Path, root: &Path, patterns: &[String]) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect();
    if let Some(pattern) = patterns.iter().find(|p| matches_pattern(&parts, p)) {
        return Some(format!(
            "changes {} ({pattern}), which your tools run or obey later",
            relative.display()
        ));
    }
    // `X/config` where X is a repository other than the workspace's own `.git`.
    let (file, dirs) = parts.split_last()?;
    if file == "config" && dirs.last().is_some_and(|d| d != ".git") {
        let dir = path.parent()?;
        if looks_like_git_dir(dir) || dir.extension().is_some_and(|e| e == "git") {
            return Some(format!(
                "changes {}, the config of a git repository, whose settings run commands later",
                relative.display()
            ));
        }
    }
    None
}

/// Whether the components `parts` match `pattern` somewhere.
fn matches_pattern(parts: &[String], pattern: &str) -> bool {
    let pattern = pattern.trim_start_matches("./").to_lowercase();
    let dir = pattern.ends_with('/');
    let wanted: Vec<&str> = pattern
        .trim_end_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    if wanted.is_empty() || parts.len() < wanted.len() + usize::from(dir) {
        return false;
    }
    let last_start = parts.len() - wanted.len() - usize::from(dir);
    (0..=last_start).any(|start| {
        let window = &parts[start..start + wanted.len()];
        let fits = window.iter().zip(&wanted).all(|(p, w)| component(w, p));
        // A file pattern names the last component; a directory one anything below it.
        fits && (dir || start + wanted.len() == parts.len())
    })
}

/// One component against a pattern where `*` matches any run of characters.
fn component(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len()
                && name.starts_with(head)
                && (tail.is_empty() || name.ends_with(tail) || {
                    name[head.len()..]
                        .char_indices()
                        .any(|(i, _)| component(tail, &name[head.len() + i..]))
                })
        }
    }
}

/// The default list as owned strings.
pub fn default_run_later() -> Vec<String> {
    DEFAULT_RUN_LATER.iter().map(|p| p.to_string()).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn auto_run_files_are_found_in_every_spelling() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let list = default_run_later();
        for hit in [
            ".envrc",
            ".ENVRC",
            "sub/.envrc",
            ".vscode/settings.json",
            ".vscode/tasks.json",
            ".VSCode/launch.json",
            "packages/web/.vscode/tasks.json",
            ".idea/workspace.xml",
            ".husky/pre-commit",
            ".cargo/config.toml",
            ".cargo/config",
            "crates/x/.cargo/config.toml",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            ".gitattributes",
            "sub/.gitattributes",
            ".pre-commit-config.yaml",
            ".mcp.json",
            ".cursor/mcp.json",
            ".cursor/rules/x.mdc",
            ".gemini/settings.json",
            ".codex/config.toml",
            "apps/web/.zed/settings.json",
            "opencode.json",
        ] {
            assert!(runs_later(&root.join(hit), &root, &list).is_some(), "{hit}");
        }
        for miss in [
            "src/main.rs",
            "Makefile",
            "package.json",
            "envrc.md",
            "docs/.vscode.md",
            ".github/README.md",
            ".cargo/registry.toml",
            "config",
            "src/config",
            ".vscode",
        ] {
            assert!(
                runs_later(&root.join(miss), &root, &list).is_none(),
                "{miss}"
            );
        }
    }

    #[test]
    fn the_config_of_another_repository_runs_later() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        // Named like one before anything is in it.
        assert!(runs_later(&root.join("evil.git/config"), &root, &[]).is_some());
        let bare = root.join("plain");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(runs_later(&bare.join("config"), &root, &[]).is_some());
        assert!(runs_later(&root.join("app/config"), &root, &[]).is_none());
    }

    #[test]
    fn a_configured_list_replaces_the_default() {
        let root = Path::new("/w");
        let list = vec!["Makefile".to_string(), "scripts/*.sh".to_string()];
        assert!(runs_later(Path::new("/w/Makefile"), root, &list).is_some());
        assert!(runs_later(Path::new("/w/scripts/run.sh"), root, &list).is_some());
        assert!(runs_later(Path::new("/w/.envrc"), root, &list).is_none());
    }
}
