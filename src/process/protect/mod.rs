//! The after-check of workspace-write commands: what git and cairn run or obey later, outside
//! any sandbox, is recorded before such a command and put back after it.
//!
//! Landlock cannot take a right away below a granted directory, so the foreground
//! workspace-write profile grants the whole workspace (`.git` and `.cairn` included: `git
//! commit`, `touch NEW`, `cargo new` work) and this module keeps the promise that no command
//! leaves a changed git config, hook or `.cairn/` behind. The protected set:
//!
//! - every git dir of the workspace (`.git`, `.git/worktrees/*`, `.git/modules/**`, nested): its
//!   `config*` files (`config`, `config.worktree`, …), its `commondir` (it names the dir whose
//!   config applies) and its `hooks/` tree (but `*.sample` files, which git never runs);
//! - the whole `.cairn/`, `.agents/` and `.claude/` trees (`crate::dirs::PROJECT_SETTINGS`:
//!   project rules, skills, commands, settings and hooks an agent obeys later);
//! - `.git` itself: moved away and replaced, it is moved back; a `.git` file or symlink that
//!   was not there is removed (it would name any directory as the repository); a git dir below
//!   it swapped for a symlink loses the symlink.
//!
//! Not found: git dirs the command makes outside `.git` (a nested `git init`, a submodule's
//! `.git` file in the work tree pointed elsewhere): finding them means walking the workspace.
//!
//! Not protected: `info/attributes` and `info/exclude` (like the workspace's `.gitattributes`
//! they only *name* filter/diff drivers, which only config defines, or ignore files), refs,
//! objects, the index and logs (data, not code).
//!
//! Compared with lstat, never following a symlink: type, permission bits, content, link target
//! and a new hard link. Changed or deleted entries are written anew (a new file renamed over
//! the old name, so a hard link the command made no longer shares the inode); new entries are
//! removed, but sample hooks (git never runs `*.sample`). A repository the command created
//! (`git init`, a new submodule) keeps what `git init` writes: its config is reduced to a few
//! keys that run nothing (`core.bare`, `remote.*.url`, …).
//!
//! Cost: the record and the check lstat each protected entry and read only those whose inode
//! stamp (size, mtime, ctime, inode) moved since the content was last read; contents are
//! cached across commands.

mod files;
mod gitconfig;
mod new_entries;
mod stamp;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use files::*;
#[cfg(test)]
use stamp::forget_cache;
use stamp::{MAX_CONTENT, Stamp, content};

/// Most entries recorded under `.cairn/` and the git dirs: a tree made to be slow to check is
/// cut here (what lies beyond is said in the report).
const MAX_ENTRIES: usize = 20_000;
/// One protected entry as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File {
        mode: u32,
        data: Option<Arc<[u8]>>,
    },
    Dir {
        mode: u32,
    },
    Link {
        target: PathBuf,
    },
    /// A FIFO, socket or device: compared by type and mode, never recreated.
    Other {
        mode: u32,
    },
}

#[derive(Debug, Clone)]
struct Item {
    node: Node,
    stamp: Stamp,
    /// The git dir it belongs to (an index into `ProtectedSet::owners`); None for the
    /// project settings trees (`.cairn/`, `.agents/`, `.claude/`).
    owner: Option<usize>,
}

/// The `.git` entry before the command.
#[derive(Debug)]
enum GitRoot {
    Absent,
    /// A file or symlink (a worktree or submodule checkout): recorded as an item.
    Entry,
    /// The repository: a handle on it finds it again if the command moved it.
    Dir {
        handle: std::fs::File,
        dev: u64,
        ino: u64,
    },
}

/// The protected set of one workspace, recorded before a command.
#[derive(Debug)]
pub struct ProtectedSet {
    workspace: PathBuf,
    taken: SystemTime,
    /// By path relative to the workspace, compared as bytes (cheap), so a parent sorts before
    /// its children.
    items: BTreeMap<OsString, Item>,
    git: GitRoot,
    /// The git dirs the items belong to, in the order they were found.
    owners: Vec<PathBuf>,
    git_dirs: BTreeSet<PathBuf>,
    /// The git dir being recorded.
    owner: Option<usize>,
    /// The walk stopped at `MAX_ENTRIES`.
    cut: bool,
}

/// What the check did about one entry, for the command's result: `.git/config (changed)`.
pub type PutBack = String;

impl ProtectedSet {
    /// Records the protected set of `workspace` now.
    pub fn take(workspace: &Path) -> Self {
        let mut record = Self {
            workspace: workspace.to_path_buf(),
            taken: SystemTime::now(),
            items: BTreeMap::new(),
            git: GitRoot::Absent,
            owners: Vec::new(),
            git_dirs: BTreeSet::new(),
            owner: None,
            cut: false,
        };
        for dir in crate::dirs::PROJECT_SETTINGS {
            record.tree(Path::new(dir));
        }
        // Where they lead through links inside the workspace (`.claude/skills -> ../tools/x`):
        // skills and settings are read there, so it is kept the same way.
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        for target in crate::dirs::linked_project_settings(&root) {
            if let Ok(rel) = target.strip_prefix(&root)
                && !rel.as_os_str().is_empty()
            {
                record.tree(rel);
            }
        }
        let git = Path::new(".git");
        match std::fs::symlink_metadata(workspace.join(git)) {
            Err(_) => {}
            Ok(meta) if meta.is_dir() => {
                if let Ok(handle) = open_path(&workspace.join(git)) {
                    record.git = GitRoot::Dir {
                        handle,
                        dev: meta.dev(),
                        ino: meta.ino(),
                    };
                }
                for dir in git_dirs(workspace, git) {
                    record.git_dir(&dir);
                }
            }
            Ok(_) => {
                record.git = GitRoot::Entry;
                record.entry(git);
            }
        }
        record
    }

    /// Number of entries recorded (for tests and the bench).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn abs(&self, rel: &Path) -> PathBuf {
        self.workspace.join(rel)
    }

    /// Records `rel` and, when it is a directory, everything below it.
    fn tree(&mut self, rel: &Path) {
        let Some(is_dir) = self.entry(rel) else {
            return;
        };
        if !is_dir {
            return;
        }
        let Ok(children) = std::fs::read_dir(self.abs(rel)) else {
            return;
        };
        for child in children.flatten() {
            self.tree(&rel.join(child.file_name()));
        }
    }

    /// Records one entry; whether it is a directory (None: missing or over the limit).
    fn entry(&mut self, rel: &Path) -> Option<bool> {
        if self.items.len() >= MAX_ENTRIES {
            self.cut = true;
            return None;
        }
        let path = self.abs(rel);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let stamp = Stamp::of(&meta);
        let mode = meta.mode() & 0o7777;
        let kind = meta.file_type();
        let node = if kind.is_dir() {
            Node::Dir { mode }
        } else if kind.is_symlink() {
            Node::Link {
                target: std::fs::read_link(&path).ok()?,
            }
        } else if kind.is_file() {
            Node::File {
                mode,
                data: content(&path, &stamp, self.taken),
            }
        } else {
            Node::Other { mode }
        };
        let owner = self.owner;
        self.items
            .insert(rel.as_os_str().to_owned(), Item { node, stamp, owner });
        Some(kind.is_dir())
    }

    /// Records what of one git dir runs code: `config*`, `commondir`, `hooks/`.
    fn git_dir(&mut self, rel: &Path) {
        self.git_dirs.insert(rel.to_path_buf());
        self.owners.push(rel.to_path_buf());
        self.owner = Some(self.owners.len() - 1);
        for name in child_names(&self.abs(rel)) {
            if name == "hooks" {
                self.hooks(&rel.join(&name));
            } else if protected_name(&name) {
                self.tree(&rel.join(&name));
            }
        }
        self.owner = None;
    }

    /// Records a hooks dir. Sample hooks are left out — git never runs `*.sample`, and a
    /// sample renamed to a hook's name is a new hook — unless a hook there is a symlink
    /// (which could name a sample): most submodules' hooks dirs hold nothing else, so this
    /// keeps a repository with many submodules cheap to check.
    fn hooks(&mut self, rel: &Path) {
        let Some(true) = self.entry(rel) else {
            return;
        };
        let children = children(&self.abs(rel));
        let linked = children
            .iter()
            .any(|(_, kind)| kind.is_none_or(|k| k.is_symlink()));
        for (name, kind) in children {
            if linked || !sample_named(&name, kind) {
                self.tree(&rel.join(&name));
            }
        }
    }

    /// Checks the protected set against the record and puts back what the command changed;
    /// says what it did. Call once nothing of the command runs any more.
    pub fn restore(&self) -> Vec<PutBack> {
        let mut done = Vec::new();
        let git_ok = self.restore_git_root(&mut done);
        // Entries of git dirs that are gone (the repository deleted) are not recreated: that
        // would leave a shell of a repository; there is nothing left to run them anyway.
        // A git dir (or a directory above it) swapped for a link would make git read a config
        // the command wrote elsewhere: the link goes.
        for dir in self.owners.iter().skip(1) {
            if let Some(bad) = first_non_dir(&self.workspace, dir)
                && bad != Path::new(".git")
                && remove_any(&self.abs(&bad))
            {
                done.push(format!(
                    "{} (removed: a link or file in place of a git dir)",
                    bad.display()
                ));
            }
        }
        let live: Vec<bool> = self
            .owners
            .iter()
            .map(|dir| git_ok && is_real_dir(&self.workspace, dir))
            .collect();
        for (rel, item) in &self.items {
            let rel = Path::new(rel);
            let owner_alive = item.owner.is_none_or(|i| live.get(i) == Some(&true));
            if owner_alive && let Some(what) = self.put_back(rel, item) {
                done.push(format!("{} ({what})", rel.display()));
            }
        }
        self.remove_new(&mut done);
        if self.cut {
            done.push(format!(
                "(only the first {MAX_ENTRIES} entries of .git, .cairn, .agents and .claude were checked)"
            ));
        }
        done
    }

    /// Puts `.git` back when the command moved or replaced it; false when no repository
    /// the record knows is at `.git` now.
    fn restore_git_root(&self, done: &mut Vec<PutBack>) -> bool {
        let git = self.abs(Path::new(".git"));
        let now = std::fs::symlink_metadata(&git).ok();
        match &self.git {
            GitRoot::Entry => true,
            GitRoot::Absent => {
                // A `.git` file or symlink names any directory as the repository.
                if let Some(meta) = now
                    && !meta.is_dir()
                    && std::fs::remove_file(&git).is_ok()
                {
                    done.push(".git (removed: a new .git file or link)".into());
                }
                false
            }
            GitRoot::Dir { handle, dev, ino } => {
                if now
                    .as_ref()
                    .is_some_and(|m| m.is_dir() && m.dev() == *dev && m.ino() == *ino)
                {
                    return true;
                }
                let Some(moved) = where_now(handle) else {
                    // Deleted: nothing to put back, and the new one, if any, is new.
                    if now.as_ref().is_some_and(|m| !m.is_dir())
                        && std::fs::remove_file(&git).is_ok()
                    {
                        done.push(
                            ".git (removed: the repository was replaced by a file or link)".into(),
                        );
                    } else {
                        done.push(".git (deleted by the command; nothing to put back)".into());
                    }
                    return false;
                };
                let aside = now.is_some().then(|| put_aside(&git)).flatten();
                if now.is_some() && aside.is_none() {
                    done.push(
                        ".git (replaced by the command; could not move the replacement aside)"
                            .into(),
                    );
                    return false;
                }
                match std::fs::rename(&moved, &git) {
                    Ok(()) => {
                        let from = moved
                            .strip_prefix(&self.workspace)
                            .unwrap_or(&moved)
                            .display()
                            .to_string();
                        let mut what = format!(".git (moved back from {from}");
                        if let Some(Some(aside)) = aside {
                            what.push_str(&format!("; the new one is now {}", aside.display()));
                        }
                        what.push(')');
                        done.push(what);
                        true
                    }
                    Err(err) => {
                        done.push(format!(
                            ".git (moved to {} by the command; moving it back failed: {err})",
                            moved.display()
                        ));
                        false
                    }
                }
            }
        }
    }

    /// Puts one recorded entry back if the command changed it; what was wrong.
    fn put_back(&self, rel: &Path, item: &Item) -> Option<&'static str> {
        let path = self.abs(rel);
        let now = std::fs::symlink_metadata(&path).ok();
        let what = match (&item.node, &now) {
            (_, None) => "deleted",
            (node, Some(meta)) => self.difference(&path, node, item, meta)?,
        };
        if !parents_are_dirs(&self.workspace, rel) {
            tracing::warn!(
                "not putting back {}: a directory above it was replaced",
                rel.display()
            );
            return Some("changed; its directory was replaced, not put back");
        }
        let result = match &item.node {
            Node::Dir { mode } => make_dir(&path, now.as_ref(), *mode),
            Node::File {
                mode,
                data: Some(data),
            } => clear_dir(&path, now.as_ref()).and_then(|()| write_new(&path, data, *mode)),
            Node::File { data: None, .. } => {
                return Some("changed; too big to put back");
            }
            Node::Link { target } => {
                clear_dir(&path, now.as_ref()).and_then(|()| link_new(&path, target))
            }
            Node::Other { .. } => return Some("changed; a special file, not put back"),
        };
        match result {
            Ok(()) => Some(what),
            Err(err) => {
                tracing::warn!("putting back {}: {err}", rel.display());
                Some("changed; putting it back failed")
            }
        }
    }

    /// How the entry differs from the record, if it does.
    fn difference(
        &self,
        path: &Path,
        node: &Node,
        item: &Item,
        meta: &std::fs::Metadata,
    ) -> Option<&'static str> {
        let kind = meta.file_type();
        let mode = meta.mode() & 0o7777;
        match node {
            Node::Dir { mode: was } => {
                if !kind.is_dir() {
                    Some("replaced")
                } else if mode != *was {
                    Some("mode changed")
                } else {
                    None
                }
            }
            Node::Link { target } => {
                if !kind.is_symlink() {
                    Some("replaced")
                } else if std::fs::read_link(path).ok().as_ref() != Some(target) {
                    Some("link changed")
                } else {
                    None
                }
            }
            Node::Other { mode: was } => {
                let same = !kind.is_dir() && !kind.is_file() && !kind.is_symlink();
                (!same || mode != *was).then_some("replaced")
            }
            Node::File { mode: was, data } => {
                if !kind.is_file() {
                    return Some("replaced");
                }
                if mode != *was {
                    return Some("mode changed");
                }
                let stamp = Stamp::of(meta);
                if stamp.nlink > item.stamp.nlink {
                    return Some("hard-linked");
                }
                if stamp == item.stamp && !item.stamp.racy(self.taken) {
                    return None;
                }
                let Some(data) = data else {
                    return (stamp.size != item.stamp.size
                        || stamp.mtime != item.stamp.mtime
                        || stamp.ctime != item.stamp.ctime)
                        .then_some("changed");
                };
                match std::fs::read(path) {
                    Ok(now) if now.as_slice() == &data[..] => None,
                    _ => Some("changed"),
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "protect_tests.rs"]
mod tests;
