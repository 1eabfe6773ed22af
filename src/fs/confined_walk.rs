//! The directory walk of list_dir, glob and grep, confined beneath the handle of its place
//! (the workspace, a readable root, or the outside directory the user approved): every
//! directory is opened from its parent's descriptor with `openat(O_DIRECTORY | O_NOFOLLOW)`
//! and listed through that descriptor, every file is opened from its directory's descriptor
//! (`O_NOFOLLOW`, regular files only, never blocking), so a directory swapped for a symlink
//! in the middle of a walk — to `/`, to `~` — is refused, not entered: no name or content
//! from outside the place can come back.
//!
//! Symlinks are never followed, as before: a link is reported as what it is (an entry that
//! is not a directory); the tools list and glob it by name but never descend into it or read
//! it, wherever it points, so no link target has to be judged. (A link inside the workspace
//! is read with read_file, which resolves it and checks where it lands.)
//!
//! What the walk skips is what the `ignore` crate's walker skipped with cairn's settings:
//! `.gitignore`, `.ignore`, `info/exclude` and global excludes (see `walk_rules`), entries
//! named `.git`, and the sensitive directories the caller names. Directories it cannot enter
//! (permission denied, replaced while walking) are reported as `Problem`s, never fatal.
//!
//! Threads take entries from one shared stack, depth first, as many as the machine has cores
//! (at most 12, like the `ignore` crate); a visitor is made per thread. Open descriptors stay
//! few: a queued entry holds its parent's descriptor, shared with its siblings, and opens its
//! own only when taken.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

pub use ignore::WalkState;
use nix::errno::Errno;
use nix::sys::stat::{FileStat, SFlag};

use super::confined::{Beneath, DirHandle, OpenError, is_swap};
use super::walk_rules::{Present, RuleFileSource, Rules};
use crate::sync::{MutexExt, unpoisoned};

/// What an entry is, as listed (a symlink is a symlink, never its target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkKind {
    Dir,
    File,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// One entry of a walk, with the handle of the directory that holds it.
pub struct WalkEntry {
    parent: Arc<DirHandle>,
    name: OsString,
    path: PathBuf,
    depth: usize,
    kind: WalkKind,
    /// For a directory: the rules its entries are matched against (its own added on entry).
    rules: Option<Rules>,
}

impl WalkEntry {
    /// The path the walk gives it: the place's path joined with the names walked.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// 0 for the place itself, 1 for its entries, and so on.
    pub fn depth(&self) -> usize {
        self.depth
    }
    pub fn kind(&self) -> WalkKind {
        self.kind
    }
    /// Opens the entry for reading from its directory's handle: a regular file only, never
    /// through a symlink, never blocking on a FIFO or a device.
    pub fn open(&self) -> Result<File, OpenError> {
        self.parent.open_regular(&self.name)
    }
    /// `lstat` of the entry, from its directory's handle (`None` once it is gone).
    pub fn stat(&self) -> io::Result<Option<FileStat>> {
        self.parent.stat(&self.name)
    }
}

/// A part of the tree the walk could not enter or read; it was left out.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub path: PathBuf,
    pub is_dir: bool,
    pub why: String,
}

impl Problem {
    /// The problem an error is, or `None` for one not worth a word (the entry vanished).
    pub fn of(path: &Path, is_dir: bool, err: &io::Error) -> Option<Self> {
        let why = match err.raw_os_error().map(Errno::from_raw) {
            Some(Errno::ENOENT) => return None,
            Some(Errno::EACCES | Errno::EPERM) => "permission denied".to_owned(),
            _ if is_swap(err) => "replaced by a symlink during the walk; not entered".to_owned(),
            _ => err.to_string(),
        };
        Some(Self {
            path: path.to_path_buf(),
            is_dir,
            why,
        })
    }
}

/// A walk of one place.
pub struct Walk<'a> {
    place: &'a Beneath,
    skip: &'a [PathBuf],
    max_depth: Option<usize>,
    threads: usize,
}

impl<'a> Walk<'a> {
    /// A walk of `place`, never entering `skip` (sensitive directories, by walked path).
    pub fn new(place: &'a Beneath, skip: &'a [PathBuf]) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(12));
        Self {
            place,
            skip,
            max_depth: None,
            threads,
        }
    }

    /// Entries deeper than `depth` are not visited (0: the place alone).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = Some(depth);
        self
    }

    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Visits the place (depth 0) and everything below it that is not skipped, each entry
    /// once, from `make()`'s visitor of whichever thread takes it. A directory's entries are
    /// visited after it; `WalkState::Skip` on a directory keeps the walk out of it, `Quit`
    /// ends the walk. Fails only when the place itself cannot be reached.
    pub fn run<F, V>(&self, make: F) -> io::Result<Vec<Problem>>
    where
        F: Fn() -> V + Sync,
        V: FnMut(&WalkEntry) -> WalkState,
    {
        let root = DirHandle::open_root(&self.place.root)?;
        let (parent, name) = match (self.place.rel.parent(), self.place.rel.file_name()) {
            (Some(parent), Some(name)) => (root.open_dir(parent)?, name.to_os_string()),
            // The root itself, reached as `.` from its own handle.
            _ => (DirHandle::open_root(&self.place.root)?, OsString::from(".")),
        };
        let kind = match parent.stat(&name)? {
            Some(stat) => kind_of(&stat),
            None => return Err(io::ErrorKind::NotFound.into()),
        };
        let rules = (kind == WalkKind::Dir).then(|| Rules::above(self.place, &root));
        let first = WalkEntry {
            parent: Arc::new(parent),
            name,
            path: self.place.root.join(&self.place.rel),
            depth: 0,
            kind,
            rules,
        };
        let shared = WalkShared {
            queue: Queue::new(first),
            problems: Mutex::new(Vec::new()),
            root,
        };
        if self.threads == 1 {
            self.work(&shared, make());
        } else {
            std::thread::scope(|scope| {
                for _ in 0..self.threads {
                    scope.spawn(|| self.work(&shared, make()));
                }
            });
        }
        let mut problems = unpoisoned(shared.problems.into_inner());
        problems.sort();
        Ok(problems)
    }

    fn work(&self, shared: &WalkShared, mut visit: impl FnMut(&WalkEntry) -> WalkState) {
        while let Some(entry) = shared.queue.take() {
            let busy = Busy(&shared.queue);
            match visit(&entry) {
                WalkState::Quit => shared.queue.quit(),
                WalkState::Skip => {}
                WalkState::Continue => {
                    let deeper = self.max_depth.is_none_or(|max| entry.depth < max);
                    if entry.kind == WalkKind::Dir && deeper {
                        let children = self.descend(shared, &entry);
                        shared.queue.push(children);
                    }
                }
            }
            drop(busy);
        }
    }

    /// Opens `dir` from its parent's handle (never through a symlink) and returns its entries
    /// that are neither ignored nor skipped.
    fn descend(&self, shared: &WalkShared, dir: &WalkEntry) -> Vec<WalkEntry> {
        let problem = |err: &io::Error| {
            if let Some(problem) = Problem::of(&dir.path, true, err) {
                shared.problems.locked().push(problem);
            }
        };
        let listed = dir
            .parent
            .open_child_dir(&dir.name)
            .and_then(|handle| Ok((handle.entries()?, handle)));
        let (names, handle) = match listed {
            Ok(found) => found,
            Err(err) => {
                problem(&err);
                return Vec::new();
            }
        };
        let mut present = Present::default();
        for (name, _) in &names {
            present.note(name);
        }
        let rel = dir.path.strip_prefix(&self.place.root).unwrap_or(&dir.path);
        let source = RuleFileSource::Handle {
            dir: &handle,
            root: &shared.root,
            rel,
        };
        let rules = match &dir.rules {
            Some(rules) => rules.child(&dir.path, present, &source),
            None => return Vec::new(),
        };
        let handle = Arc::new(handle);
        let mut children = Vec::with_capacity(names.len());
        for (name, listed) in names {
            if name == ".git" {
                continue;
            }
            let path = dir.path.join(&name);
            if self.skip.contains(&path) {
                continue;
            }
            let kind = match listed {
                Some(listed) => kind_of_listed(listed),
                // The file system does not say: ask (without following a link).
                None => match handle.stat(&name) {
                    Ok(Some(stat)) => kind_of(&stat),
                    Ok(None) => continue,
                    Err(err) => {
                        if let Some(problem) = Problem::of(&path, false, &err) {
                            shared.problems.locked().push(problem);
                        }
                        continue;
                    }
                },
            };
            if rules.ignored(&path, kind == WalkKind::Dir) {
                continue;
            }
            children.push(WalkEntry {
                parent: Arc::clone(&handle),
                name,
                path,
                depth: dir.depth + 1,
                kind,
                rules: (kind == WalkKind::Dir).then(|| rules.clone()),
            });
        }
        children
    }
}

/// What the threads of one walk share.
struct WalkShared {
    queue: Queue,
    problems: Mutex<Vec<Problem>>,
    /// The place's root handle, for rule files behind a symlink that stays beneath it.
    root: DirHandle,
}

/// The entries waiting to be visited, and how many are being visited (the walk is over when
/// none wait and none are being visited, since only those can add more).
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

struct QueueState {
    waiting: Vec<WalkEntry>,
    busy: usize,
    quit: bool,
}

impl Queue {
    fn new(first: WalkEntry) -> Self {
        Self {
            state: Mutex::new(QueueState {
                waiting: vec![first],
                busy: 0,
                quit: false,
            }),
            changed: Condvar::new(),
        }
    }

    /// The next entry, waiting while others may still add some; `None` when the walk is over.
    fn take(&self) -> Option<WalkEntry> {
        let mut state = self.state.locked();
        loop {
            if state.quit {
                return None;
            }
            if let Some(entry) = state.waiting.pop() {
                state.busy += 1;
                return Some(entry);
            }
            if state.busy == 0 {
                return None;
            }
            state = unpoisoned(self.changed.wait(state));
        }
    }

    fn push(&self, entries: Vec<WalkEntry>) {
        if entries.is_empty() {
            return;
        }
        let mut state = self.state.locked();
        state.waiting.extend(entries);
        drop(state);
        self.changed.notify_all();
    }

    fn quit(&self) {
        self.state.locked().quit = true;
        self.changed.notify_all();
    }
}

/// Marks one entry's visit as done when dropped, also when a visitor panics (then the walk
/// quits, so the other threads do not wait for work that will never come).
struct Busy<'q>(&'q Queue);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.locked();
        state.busy -= 1;
        if std::thread::panicking() {
            state.quit = true;
        }
        let over = state.busy == 0 && state.waiting.is_empty();
        drop(state);
        if over || std::thread::panicking() {
            self.0.changed.notify_all();
        }
    }
}

fn kind_of(stat: &FileStat) -> WalkKind {
    match SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => WalkKind::Dir,
        SFlag::S_IFREG => WalkKind::File,
        SFlag::S_IFLNK => WalkKind::Symlink,
        _ => WalkKind::Other,
    }
}

fn kind_of_listed(listed: nix::dir::Type) -> WalkKind {
    match listed {
        nix::dir::Type::Directory => WalkKind::Dir,
        nix::dir::Type::File => WalkKind::File,
        nix::dir::Type::Symlink => WalkKind::Symlink,
        _ => WalkKind::Other,
    }
}

#[cfg(test)]
#[path = "confined_walk_tests.rs"]
mod tests;
