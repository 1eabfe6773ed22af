//! Path resolution against the workspace. Only `resolve` builds a `RealPath`, so an
//! unresolved path cannot reach the write queue or the read tracker by accident. Symlinks are
//! followed (also dangling ones and ones in not-yet-existing parents), so "inside the
//! workspace" means where the bytes would really land.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The directory a listing or search tool starts from: its `path` argument, or the workspace
/// (`.`) when it is missing or blank.
pub fn dir_arg(path: Option<&str>) -> &str {
    path.filter(|p| !p.trim().is_empty()).unwrap_or(".")
}

/// Symlink hops followed before giving up, like the kernel's ELOOP limit.
const MAX_SYMLINK_HOPS: usize = 40;

/// A path with symlinks, `.` and `..` resolved. For a file that does not exist yet, the real
/// path of its deepest existing ancestor joined with the remaining components.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RealPath {
    real: PathBuf,
    inside_workspace: bool,
}

impl RealPath {
    pub fn as_path(&self) -> &Path {
        &self.real
    }
    /// False when the path (after following symlinks) leaves the workspace.
    pub fn inside_workspace(&self) -> bool {
        self.inside_workspace
    }
    /// The key under which all spellings of one file meet: the real path, case-folded on
    /// file systems that ignore case (macOS, Windows).
    pub fn key(&self) -> PathBuf {
        if cfg!(any(target_os = "macos", target_os = "windows")) {
            PathBuf::from(self.real.to_string_lossy().to_lowercase())
        } else {
            self.real.clone()
        }
    }
    /// The path as shown to people: relative to the workspace when inside it.
    pub fn display_in(&self, workspace: &Path) -> String {
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        match self.real.strip_prefix(&root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            Ok(_) => ".".into(),
            Err(_) => self.real.display().to_string(),
        }
    }
}

/// The workspace's real path (the workspace as given when it cannot be resolved).
pub fn workspace_root(workspace: &Path) -> PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf())
}

/// Resolves `raw` (relative to `workspace`, or absolute; `~` and `~/` are the home directory).
/// Fails only when the workspace itself cannot be resolved or a symlink loops.
pub fn resolve(workspace: &Path, raw: &str) -> io::Result<RealPath> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    resolve_in(workspace, raw, home.as_deref())
}

/// `resolve` with the home directory given (`None`: `~` stays a plain name).
pub fn resolve_in(workspace: &Path, raw: &str, home: Option<&Path>) -> io::Result<RealPath> {
    let root = std::fs::canonicalize(workspace)?;
    let expanded = expand_home(raw, home);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        root.join(expanded)
    };
    let real = resolve_existing_prefix(&joined)?;
    let inside_workspace = real.starts_with(&root);
    Ok(RealPath {
        real,
        inside_workspace,
    })
}

fn expand_home(raw: &str, home: Option<&Path>) -> PathBuf {
    match (raw.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(raw),
    }
}

/// Canonicalises the longest existing prefix and appends the rest lexically, so that
/// `new/dir/../file` and symlinked parents resolve like the kernel would once created. A
/// dangling symlink on the way is followed to its target: writing through it would create
/// the target, so that is where the write really goes.
fn resolve_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    // Components not yet resolved, innermost last pushed (so applied in reverse).
    let mut rest: Vec<OsString> = Vec::new();
    let mut hops = 0;
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(real) => return Ok(apply_lexically(real, &rest)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if is_symlink(&existing) {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Err(io::Error::other(format!(
                            "too many levels of symbolic links at {}",
                            existing.display()
                        )));
                    }
                    let target = std::fs::read_link(&existing)?;
                    let parent = existing.parent().map(Path::to_path_buf).unwrap_or_default();
                    existing = if target.is_absolute() {
                        target
                    } else {
                        parent.join(target)
                    };
                    continue;
                }
                match existing.components().next_back() {
                    Some(Component::Normal(name)) => {
                        rest.push(name.to_os_string());
                        existing.pop();
                    }
                    Some(Component::ParentDir) => {
                        rest.push("..".into());
                        existing.pop();
                    }
                    Some(Component::CurDir) => {
                        existing.pop();
                    }
                    _ => return Err(err),
                }
            }
            Err(err) => return Err(err),
        }
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

/// Appends not-yet-existing components; `..` after them is lexical because a component that
/// does not exist cannot be a symlink.
fn apply_lexically(mut real: PathBuf, rest: &[OsString]) -> PathBuf {
    for part in rest.iter().rev() {
        if part == ".." {
            real.pop();
        } else {
            real.push(part);
        }
    }
    real
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn relative_dotted_and_absolute_spellings_resolve_to_one_path() {
        let (_dir, root) = ws();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("x"), "x").unwrap();
        let expected = root.join("x");
        for raw in ["x", "./x", "sub/../x", expected.to_str().unwrap()] {
            let real = resolve(&root, raw).unwrap();
            assert_eq!(real.as_path(), expected, "{raw}");
            assert!(real.inside_workspace());
        }
    }

    #[test]
    fn missing_parents_with_dotdot_resolve_lexically() {
        let (_dir, root) = ws();
        let real = resolve(&root, "new/dir/../f").unwrap();
        assert_eq!(real.as_path(), root.join("new/f"));
        assert!(real.inside_workspace());
        assert_eq!(real.display_in(&root), "new/f");
    }

    #[test]
    fn escaping_with_dotdot_is_outside() {
        let (_dir, root) = ws();
        let real = resolve(&root, "../elsewhere.txt").unwrap();
        assert!(!real.inside_workspace());
        assert_eq!(real.as_path(), root.parent().unwrap().join("elsewhere.txt"));
    }

    #[test]
    fn symlinked_directory_leading_out_is_outside() {
        let (_dir, root) = ws();
        let (_other, outside) = ws();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let real = resolve(&root, "link/new/file.txt").unwrap();
        assert!(!real.inside_workspace());
        assert_eq!(real.as_path(), outside.join("new/file.txt"));
    }

    #[test]
    fn dangling_symlink_resolves_to_its_target() {
        let (_dir, root) = ws();
        let (_other, outside) = ws();
        std::os::unix::fs::symlink(outside.join("target.txt"), root.join("dangling")).unwrap();
        let real = resolve(&root, "dangling").unwrap();
        assert_eq!(real.as_path(), outside.join("target.txt"));
        assert!(!real.inside_workspace());
    }

    #[test]
    fn symlink_loop_is_an_error_not_a_hang() {
        let (_dir, root) = ws();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        assert!(resolve(&root, "a").is_err());
    }

    #[test]
    fn workspace_itself_displays_as_dot() {
        let (_dir, root) = ws();
        assert_eq!(resolve(&root, ".").unwrap().display_in(&root), ".");
    }
}
