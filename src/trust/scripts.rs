//! Which workspace files a command names: the scripts whose content a project process is
//! trusted in. Every word of the command (read as shell words; the part after `=` of a
//! `--flag=value` word too) that, after `$CAIRN_WORKSPACE` and `$CLAUDE_PROJECT_DIR` are
//! expanded to the workspace, is a file in the workspace (relative words are taken from the
//! workspace, where project processes start). What those scripts import is not covered.

use std::path::{Component, Path, PathBuf};

/// The variables that stand for the workspace in a project's commands.
pub const WORKSPACE_VARS: &[&str] = &["CAIRN_WORKSPACE", "CLAUDE_PROJECT_DIR"];

/// The workspace files `command` names, relative to `workspace`, sorted, without repeats.
pub fn named(workspace: &Path, command: &[String]) -> Vec<PathBuf> {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut found: Vec<PathBuf> = command
        .iter()
        .flat_map(|element| words(element))
        .flat_map(|word| candidates(&word))
        .filter_map(|word| in_workspace(&root, &expand(&word, &root)))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The shell words of `text` (whitespace-separated when its quoting does not parse), with
/// each word also cut at the shell's operators, so `./a.sh;` and `(./b.sh)` name the files.
fn words(text: &str) -> Vec<String> {
    let split =
        shlex::split(text).unwrap_or_else(|| text.split_whitespace().map(str::to_string).collect());
    split
        .iter()
        .flat_map(|word| word.split([';', '&', '|', '(', ')', '<', '>', '`']))
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

/// A word, and the value of a `--flag=value` or `NAME=value` word.
fn candidates(word: &str) -> Vec<String> {
    let mut out = vec![word.to_string()];
    if let Some((_, value)) = word.split_once('=')
        && !value.is_empty()
    {
        out.push(value.to_string());
    }
    out
}

/// `$CAIRN_WORKSPACE`, `${CAIRN_WORKSPACE}` (and Claude's `$CLAUDE_PROJECT_DIR`) become the
/// workspace.
fn expand(word: &str, workspace: &Path) -> String {
    let root = workspace.to_string_lossy();
    let mut out = word.to_string();
    for name in WORKSPACE_VARS {
        out = out
            .replace(&format!("${{{name}}}"), &root)
            .replace(&format!("${name}"), &root);
    }
    out
}

/// The file `word` names, relative to the workspace, when it is one in the workspace (by its
/// own path, or by where a link in the workspace points).
fn in_workspace(root: &Path, word: &str) -> Option<PathBuf> {
    if word.is_empty() || word.starts_with('-') {
        return None;
    }
    let path = Path::new(word);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    if !full.is_file() {
        return None;
    }
    let lexical = normalise(&full);
    if let Ok(relative) = lexical.strip_prefix(root) {
        return Some(relative.to_path_buf());
    }
    let real = full.canonicalize().ok()?;
    real.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// `a/./b/../c` as `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn workspace() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for file in [
            ".claude/hooks/guard.sh",
            "tools/fmt.py",
            "bin/server",
            "x.sh",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "echo\n").unwrap();
        }
        (dir, root)
    }

    fn named_in(root: &Path, command: &[&str]) -> Vec<String> {
        let command: Vec<String> = command.iter().map(|s| s.to_string()).collect();
        named(root, &command)
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    #[test]
    fn words_that_are_workspace_files_are_the_scripts() {
        let (_dir, root) = workspace();
        let cases: &[(&[&str], &[&str])] = &[
            (&["python3 tools/fmt.py --check"], &["tools/fmt.py"]),
            (
                &["\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"],
                &[".claude/hooks/guard.sh"],
            ),
            (
                &["${CAIRN_WORKSPACE}/tools/fmt.py && ./x.sh; echo done"],
                &["tools/fmt.py", "x.sh"],
            ),
            (&["bin/server", "--stdio"], &["bin/server"]),
            (&["node", "--require=./x.sh", "server.js"], &["x.sh"]),
            (&["bash", "-c", "./x.sh|tee log"], &["x.sh"]),
            (&["sh -c '(./x.sh)'"], &["x.sh"]),
            (&["echo 'unbalanced ./x.sh"], &["x.sh"]),
            (&["ls tools"], &[]),
            (&["cat /etc/hostname ../outside.sh"], &[]),
            (&["tools/../x.sh x.sh ./x.sh"], &["x.sh"]),
        ];
        for (command, expected) in cases {
            assert_eq!(named_in(&root, command), *expected, "{command:?}");
        }
    }

    #[test]
    fn an_absolute_path_counts_only_inside_the_workspace() {
        let (_dir, root) = workspace();
        let inside = root.join("x.sh").display().to_string();
        assert_eq!(named_in(&root, &[&inside]), ["x.sh"]);
        let outside = tempfile::NamedTempFile::new().unwrap();
        let outside = outside.path().display().to_string();
        assert!(named_in(&root, &[&outside]).is_empty());
    }
}
