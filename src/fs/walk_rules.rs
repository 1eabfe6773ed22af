//! The ignore rules of a confined walk: the `ignore` crate's gitignore matcher, applied with
//! the precedence its walker uses under cairn's settings (`require_git(false)`): in every
//! directory `.ignore`, `.gitignore` and — next to a `.git` — the repository's `info/exclude`;
//! the nearest directory with an opinion wins, `.ignore` over `.gitignore` over `info/exclude`
//! over the user's global excludes (`core.excludesFile`), and a negated pattern un-ignores.
//!
//! Rule files of directories at or below the walk's root handle are read through that handle:
//! never through a symlink out of it (a symlinked `.gitignore` is followed only while it stays
//! beneath the root), never a FIFO or a device. Those of directories above the handle (the
//! workspace's parents) and a worktree's shared `info/exclude` are read by path, as git reads
//! them; either way their content only decides what is left out, it is never shown.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::confined::{Beneath, DirHandle, OpenError, is_swap};

/// Rule files are read up to this size; the rest of a larger one is left out.
const MAX_RULES_FILE: u64 = 8 * 1024 * 1024;

/// The rules in force in one directory: its own files and all its parents'.
#[derive(Clone)]
pub struct Rules {
    top: Option<Arc<RuleLayer>>,
    global: Arc<Gitignore>,
}

/// One directory's rule files.
struct RuleLayer {
    parent: Option<Arc<RuleLayer>>,
    ignore: Gitignore,
    git: Gitignore,
    exclude: Gitignore,
}

/// Which rule files a directory has, from its listing (or a `stat` of each name).
#[derive(Debug, Default, Clone, Copy)]
pub struct Present {
    pub ignore: bool,
    pub gitignore: bool,
    pub git: bool,
}

impl Present {
    /// Notes `name` if it is one of the rule files' names.
    pub fn note(&mut self, name: &OsStr) {
        if name == ".ignore" {
            self.ignore = true;
        } else if name == ".gitignore" {
            self.gitignore = true;
        } else if name == ".git" {
            self.git = true;
        }
    }

    fn any(self) -> bool {
        self.ignore || self.gitignore || self.git
    }
}

/// Where a directory's rule files are read from.
pub enum RuleFileSource<'a> {
    /// A directory at or below the walk's root handle: its own handle, the root's, and its
    /// path relative to the root (for a symlinked rule file that stays beneath it).
    Handle {
        dir: &'a DirHandle,
        root: &'a DirHandle,
        rel: &'a Path,
    },
    /// A directory above the root handle, read by path.
    Path,
}

impl Rules {
    /// No directory's rules yet; the user's global excludes (found as git finds them).
    fn global() -> Self {
        Self {
            top: None,
            global: Arc::new(Gitignore::global().0),
        }
    }

    /// The rules a walk from `place` starts with: those of every directory above its start.
    pub fn above(place: &Beneath, root: &DirHandle) -> Self {
        let mut rules = Self::global();
        let start = place.root.join(&place.rel);
        let mut parents: Vec<&Path> = start.ancestors().skip(1).collect();
        parents.reverse();
        for dir in parents {
            match dir.strip_prefix(&place.root) {
                Ok(rel) => {
                    let Ok(handle) = root.open_dir(rel) else {
                        continue;
                    };
                    let mut present = Present::default();
                    for name in [".ignore", ".gitignore", ".git"] {
                        if handle.stat(OsStr::new(name)).is_ok_and(|s| s.is_some()) {
                            present.note(OsStr::new(name));
                        }
                    }
                    let source = RuleFileSource::Handle {
                        dir: &handle,
                        root,
                        rel,
                    };
                    rules = rules.child(dir, present, &source);
                }
                Err(_) => {
                    let present = Present {
                        ignore: dir.join(".ignore").exists(),
                        gitignore: dir.join(".gitignore").exists(),
                        git: dir.join(".git").exists(),
                    };
                    rules = rules.child(dir, present, &RuleFileSource::Path);
                }
            }
        }
        rules
    }

    /// These rules with those of `dir` (a child directory) added.
    pub fn child(&self, dir: &Path, present: Present, source: &RuleFileSource<'_>) -> Self {
        if !present.any() {
            return self.clone();
        }
        let own = |name: &str| {
            let bytes = read(source, dir, Path::new(name));
            build(dir, dir.join(name), bytes)
        };
        let ignore = if present.ignore {
            own(".ignore")
        } else {
            Gitignore::empty()
        };
        let git = if present.gitignore {
            own(".gitignore")
        } else {
            Gitignore::empty()
        };
        let exclude = match present.git.then(|| git_exclude(source, dir)).flatten() {
            Some((from, bytes)) => build(dir, from, Some(bytes)),
            None => Gitignore::empty(),
        };
        if ignore.is_empty() && git.is_empty() && exclude.is_empty() {
            return self.clone();
        }
        Self {
            top: Some(Arc::new(RuleLayer {
                parent: self.top.clone(),
                ignore,
                git,
                exclude,
            })),
            global: Arc::clone(&self.global),
        }
    }

    /// Whether `path` (absolute, in the directory these rules belong to) is ignored.
    pub fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let (mut ignore, mut git, mut exclude) = (Match::None, Match::None, Match::None);
        let mut layer = self.top.as_deref();
        while let Some(this) = layer {
            if ignore.is_none() {
                ignore = this.ignore.matched(path, is_dir).map(|_| ());
            }
            if git.is_none() {
                git = this.git.matched(path, is_dir).map(|_| ());
            }
            if exclude.is_none() {
                exclude = this.exclude.matched(path, is_dir).map(|_| ());
            }
            layer = this.parent.as_deref();
        }
        ignore
            .or(git)
            .or(exclude)
            .or(self.global.matched(path, is_dir).map(|_| ()))
            .is_ignore()
    }
}

/// A matcher rooted at `dir` from a rule file's bytes; lines that are not UTF-8 or not a
/// valid pattern are skipped, as the `ignore` crate skips them.
fn build(dir: &Path, from: PathBuf, bytes: Option<Vec<u8>>) -> Gitignore {
    let Some(bytes) = bytes else {
        return Gitignore::empty();
    };
    let mut builder = GitignoreBuilder::new(dir);
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let _ = builder.add_line(Some(from.clone()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The bytes of the regular file `rel` (below `dir`), from where `source` says.
fn read(source: &RuleFileSource<'_>, dir: &Path, rel: &Path) -> Option<Vec<u8>> {
    match source {
        RuleFileSource::Handle {
            dir: handle,
            root,
            rel: dir_rel,
        } => {
            let opened = match (rel.parent(), rel.file_name()) {
                (Some(parent), Some(name)) => handle
                    .open_dir_walk(parent)
                    .map_err(OpenError::Io)
                    .and_then(|d| d.open_regular(name)),
                _ => return None,
            };
            let file = match opened {
                Ok(file) => file,
                Err(OpenError::Symlink) => root.open_regular_beneath(&dir_rel.join(rel)).ok()?,
                Err(OpenError::Io(err)) if is_swap(&err) => {
                    root.open_regular_beneath(&dir_rel.join(rel)).ok()?
                }
                Err(_) => return None,
            };
            read_capped(file)
        }
        RuleFileSource::Path => read_path(&dir.join(rel)),
    }
}

/// A file outside the walk's handle, by path: only a regular one, opened without blocking.
fn read_path(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(())?;
    read_capped(file)
}

fn read_capped(file: File) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(MAX_RULES_FILE).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The repository's `info/exclude` for a directory holding `.git`: in `.git/` itself, or — for
/// a worktree, whose `.git` is a file naming its git dir — in the shared (common) git dir.
fn git_exclude(source: &RuleFileSource<'_>, dir: &Path) -> Option<(PathBuf, Vec<u8>)> {
    let own = Path::new(".git/info/exclude");
    if let Some(bytes) = read(source, dir, own) {
        return Some((dir.join(own), bytes));
    }
    let dot_git = read(source, dir, Path::new(".git"))?;
    let git_dir = first_line(&dot_git)?.strip_prefix("gitdir: ")?;
    let git_dir = dir.join(git_dir);
    let common = read_path(&git_dir.join("commondir"))?;
    let common = first_line(&common)?;
    let common = if common.starts_with('.') {
        git_dir.join(common)
    } else {
        PathBuf::from(common)
    };
    let from = common.join("info/exclude");
    let bytes = read_path(&from)?;
    Some((from, bytes))
}

fn first_line(bytes: &[u8]) -> Option<&str> {
    let line = bytes.split(|b| *b == b'\n').next()?;
    std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line)).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_nearest_directory_wins_and_negation_unignores() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!keep.log\n").unwrap();
        std::fs::write(root.join("sub/.ignore"), "secret.txt\n").unwrap();
        let handle = DirHandle::open_root(&root).unwrap();
        let place = Beneath::new(&root, &root.join("sub")).unwrap();
        let top = Rules::above(&place, &handle);
        let sub_handle = handle.open_dir(Path::new("sub")).unwrap();
        let mut present = Present::default();
        present.note(OsStr::new(".gitignore"));
        present.note(OsStr::new(".ignore"));
        let source = RuleFileSource::Handle {
            dir: &sub_handle,
            root: &handle,
            rel: Path::new("sub"),
        };
        let sub = top.child(&root.join("sub"), present, &source);
        assert!(sub.ignored(&root.join("sub/a.log"), false));
        assert!(!sub.ignored(&root.join("sub/keep.log"), false));
        assert!(sub.ignored(&root.join("sub/build"), true));
        assert!(!sub.ignored(&root.join("sub/build"), false));
        assert!(sub.ignored(&root.join("sub/secret.txt"), false));
        assert!(!sub.ignored(&root.join("sub/main.rs"), false));
    }

    #[test]
    fn rule_files_through_a_symlink_out_of_the_root_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("rules"), "*.rs\n").unwrap();
        std::fs::write(root.join("inner"), "*.txt\n").unwrap();
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::os::unix::fs::symlink(other.path().join("rules"), root.join("a/.gitignore")).unwrap();
        std::os::unix::fs::symlink("../inner", root.join("b/.gitignore")).unwrap();
        let handle = DirHandle::open_root(&root).unwrap();
        let present = Present {
            gitignore: true,
            ..Present::default()
        };
        let rules_in = |name: &str| {
            let sub = handle.open_dir(Path::new(name)).unwrap();
            let source = RuleFileSource::Handle {
                dir: &sub,
                root: &handle,
                rel: Path::new(name),
            };
            Rules::global().child(&root.join(name), present, &source)
        };
        assert!(!rules_in("a").ignored(&root.join("a/x.rs"), false));
        // Inside the root, the link is followed where openat2 exists.
        let followed = rules_in("b").ignored(&root.join("b/x.txt"), false);
        let probe = handle.open_regular_beneath(Path::new("b/.gitignore"));
        assert_eq!(followed, probe.is_ok());
    }
}
