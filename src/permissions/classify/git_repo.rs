//! Which repository a git command uses. git reads the configuration of the repository it
//! finds, and settings such as `core.fsmonitor`, `core.pager` or `alias.*` run commands, so a
//! repository the model wrote (`evil.git/` with a `config`, a nested `sub/.git`) turns any git
//! command run in it into code execution. Only the workspace's own repository (the one git
//! finds from the workspace root) is trusted; every way of pointing git elsewhere (`-C`,
//! `--git-dir`, `--work-tree`, `--bare`, `cd X && git`, `find -execdir git`) is judged by the
//! repository it reaches, found on the file system the way git's discovery finds it.

use std::path::{Path, PathBuf};

/// The repository git would use when started in `dir` (a real path inside or at `root`),
/// when it is not the workspace's own: `Some(path)` names it. The walk stops at the workspace
/// root: above it lies the user's own repository (or none), which the workspace shares.
pub(crate) fn foreign_repository(dir: &Path, root: &Path) -> Option<PathBuf> {
    if !dir.starts_with(root) {
        // Outside the workspace: judged by the caller (the whole directory is foreign).
        return Some(dir.to_path_buf());
    }
    for level in dir.ancestors() {
        let dot_git = level.join(".git");
        if dot_git.symlink_metadata().is_ok() {
            // The root's `.git` (a directory, or the file of a linked worktree) was there before
            // the session and writes to it are protected: it is the workspace's own.
            return (level != root).then_some(dot_git);
        }
        if looks_like_git_dir(level) {
            return Some(level.to_path_buf());
        }
        if level == root {
            break;
        }
    }
    None
}

/// Whether `dir` itself is a repository git would accept (a bare one, or a `.git` directory
/// under another name). git asks for `HEAD` plus its object and ref stores; any of them with a
/// `HEAD` is taken as enough here, since a half-made one can be completed by a later write.
pub(crate) fn looks_like_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").symlink_metadata().is_ok()
        && ["objects", "refs", "commondir", "config"]
            .iter()
            .any(|entry| dir.join(entry).symlink_metadata().is_ok())
}

/// Whether `dir` is the workspace's own git directory (`ROOT/.git`).
pub(crate) fn is_own_git_dir(dir: &Path, root: &Path) -> bool {
    dir == root.join(".git")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn bare(dir: &Path) {
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::create_dir_all(dir.join("refs")).unwrap();
        std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(dir.join("config"), "[core]\n\tfsmonitor = ./x\n").unwrap();
    }

    #[test]
    fn the_workspace_repository_is_its_own_and_others_are_foreign() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        assert_eq!(foreign_repository(&root, &root), None);
        assert_eq!(foreign_repository(&root.join("src/deep"), &root), None);
        assert!(is_own_git_dir(&root.join(".git"), &root));

        bare(&root.join("evil.git"));
        assert_eq!(
            foreign_repository(&root.join("evil.git"), &root),
            Some(root.join("evil.git"))
        );
        std::fs::create_dir_all(root.join("evil.git/refs/heads")).unwrap();
        assert!(foreign_repository(&root.join("evil.git/refs/heads"), &root).is_some());

        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::create_dir_all(root.join("sub/x")).unwrap();
        assert_eq!(
            foreign_repository(&root.join("sub/x"), &root),
            Some(root.join("sub/.git"))
        );
    }

    #[test]
    fn a_workspace_that_is_itself_a_bare_repository_is_foreign() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        bare(&root);
        assert_eq!(foreign_repository(&root, &root), Some(root.clone()));
        // A linked worktree's `.git` file at the root is the workspace's own.
        let other = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(other.path()).unwrap();
        std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(foreign_repository(&root, &root), None);
        // One below the root is not.
        std::fs::create_dir_all(root.join("vendor/lib")).unwrap();
        std::fs::write(root.join("vendor/lib/.git"), "gitdir: /elsewhere\n").unwrap();
        assert!(foreign_repository(&root.join("vendor/lib"), &root).is_some());
    }
}
