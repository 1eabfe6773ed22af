//! The directory walk list_dir, glob and grep share: `.gitignore` (and `.ignore`) respected
//! even outside a git repository, hidden files shown but `.git` itself skipped, sensitive
//! directories below the root (keys, cairn's sessions) never entered, symlinks not followed,
//! and paths shown relative to the workspace so the model can pass them straight to read_file.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use super::confined::{Beneath, OpenError};
use super::{ToolError, changed, open_error};

/// A walker over `root` with cairn's defaults, never entering `skip` (sensitive directories:
/// reading them asks, so a walk from above must not list or search them unasked).
pub fn walker(root: &Path, skip: &[PathBuf]) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    let skip = skip.to_vec();
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            entry.file_name() != ".git" && !skip.iter().any(|s| entry.path() == s)
        });
    builder
}

/// How a walked path is shown: relative to the workspace when inside it, else absolute.
pub fn shown_path(workspace_real: &Path, path: &Path) -> String {
    match path.strip_prefix(workspace_real) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        Ok(_) => ".".into(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// The workspace's real path, for `shown_path`.
pub fn workspace_real(workspace: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf())
}

/// What a walk's root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    Dir,
    File,
}

/// Checks a walk's root beneath its place: it exists, and no symlink was swapped in on the
/// way since the check. A missing root is a correctable error.
pub fn existing_root(place: &Beneath, display: &str) -> Result<RootKind, ToolError> {
    let missing = || {
        ToolError::Failed(format!(
            "{display}: no such file or directory (list_dir . shows the top of the workspace)"
        ))
    };
    if place.rel.as_os_str().is_empty() {
        place
            .dir()
            .map_err(|err| open_error(display, "reading", err))?;
        return Ok(RootKind::Dir);
    }
    let (dir, name) = match place.parent() {
        Ok(found) => found,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(err) => return Err(open_error(display, "reading", err)),
    };
    match dir.open_regular(&name) {
        Ok(_) => Ok(RootKind::File),
        Err(OpenError::Missing) => Err(missing()),
        Err(OpenError::Directory) => Ok(RootKind::Dir),
        Err(OpenError::Symlink) => Err(changed(display)),
        Err(OpenError::NotRegular) => Err(ToolError::Failed(format!(
            "{display} is not a regular file or directory (a device, pipe or socket)"
        ))),
        Err(OpenError::Io(err)) => Err(open_error(display, "reading", err)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn gitignore_applies_without_a_repository_and_git_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        for file in [
            "src/a.rs",
            "src/secret/key",
            "target/out.rs",
            "debug.log",
            ".git/HEAD",
            ".github/ci.yml",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let mut seen: Vec<String> = walker(root, &[root.join("src/secret")])
            .build()
            .map(|e| e.unwrap())
            .filter(|e| e.depth() > 0)
            .map(|e| shown_path(root, e.path()))
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [".github", ".github/ci.yml", ".gitignore", "src", "src/a.rs"]
        );
    }
}
