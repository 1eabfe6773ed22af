//! The directory walk list_dir, glob and grep share: `.gitignore` (and `.ignore`) respected
//! even outside a git repository, hidden files shown but `.git` itself skipped, and paths
//! shown relative to the workspace so the model can pass them straight to read_file.

use std::path::Path;

use ignore::WalkBuilder;

use super::ToolError;
use super::paths::RealPath;

/// A walker over `root` with cairn's defaults.
pub fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git");
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

/// Checks that a search root exists; a missing one is a correctable error.
pub fn existing_root(real: &RealPath, display: &str) -> Result<std::fs::Metadata, ToolError> {
    std::fs::metadata(real.as_path()).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ToolError::Failed(format!(
            "{display}: no such file or directory (list_dir . shows the top of the workspace)"
        )),
        _ => ToolError::io(format!("reading {display}"), err),
    })
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
            "target/out.rs",
            "debug.log",
            ".git/HEAD",
            ".github/ci.yml",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let mut seen: Vec<String> = walker(root)
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
