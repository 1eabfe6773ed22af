//! File notifications for the workspace (inotify, one watch per recorded directory): what a
//! command, the user or an editor changed since the last checkpoint, without a walk. The
//! queue is drained when a snapshot is taken, not by a thread: the kernel queues an event
//! before the write that caused it returns, so a snapshot sees every change made before it.
//! Where notifications cannot be trusted the store scans instead: when the queue overflowed
//! (`IN_Q_OVERFLOW`), a watch could not be added (the user's watch limit), or the file
//! system does not deliver them (network and FUSE mounts; see `git::mtimes_trusted`).

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

#[derive(Debug)]
pub(super) struct Watcher {
    inotify: Inotify,
    workspace: std::path::PathBuf,
    /// Watched directories, both ways (relative; `""` for the top).
    dirs: HashMap<WatchDescriptor, Vec<u8>>,
    watched: HashMap<Vec<u8>, WatchDescriptor>,
    /// Notifications were lost (overflow, a watch that could not be added): scan once.
    pub lost: bool,
}

/// What happened since the last drain.
#[derive(Debug, Default)]
pub(super) struct Drained {
    /// Paths that may have changed (relative).
    pub paths: BTreeSet<Vec<u8>>,
    /// Events were lost: only a scan knows.
    pub lost: bool,
}

impl Drained {
    /// Nothing may have changed.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.lost
    }

    /// This, then `later`.
    pub fn and(mut self, later: Drained) -> Drained {
        self.paths.extend(later.paths);
        self.lost |= later.lost;
        self
    }
}

fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

impl Watcher {
    pub fn new(workspace: &Path) -> Option<Self> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        Some(Self {
            inotify,
            workspace: workspace.to_path_buf(),
            dirs: HashMap::new(),
            watched: HashMap::new(),
            lost: false,
        })
    }

    /// Watches directory `rel` (already watched: nothing).
    pub fn watch(&mut self, rel: &[u8]) {
        if self.watched.contains_key(rel) {
            return;
        }
        let path = self.workspace.join(OsStr::from_bytes(rel));
        match self.inotify.add_watch(&path, mask()) {
            Ok(wd) => {
                // The same directory under another name (moved): the new name wins.
                if let Some(old) = self.dirs.insert(wd, rel.to_vec()) {
                    self.watched.remove(&old);
                }
                self.watched.insert(rel.to_vec(), wd);
            }
            // Gone again already: its parent's event says so.
            Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP) => {}
            // Out of watches (or anything else): this directory would go unseen.
            Err(_) => self.lost = true,
        }
    }

    /// Stops watching `rel` and the directories beneath it (moved or removed: a later name
    /// is watched when it is scanned).
    fn forget(&mut self, rel: &[u8]) {
        let mut prefix = rel.to_vec();
        prefix.push(b'/');
        let gone: Vec<Vec<u8>> = self
            .watched
            .keys()
            .filter(|d| d.as_slice() == rel || d.starts_with(&prefix) || rel.is_empty())
            .cloned()
            .collect();
        for dir in gone {
            if let Some(wd) = self.watched.remove(&dir) {
                self.dirs.remove(&wd);
                let _ = self.inotify.rm_watch(wd);
            }
        }
    }

    /// Everything the kernel queued since the last drain.
    pub fn drain(&mut self) -> Drained {
        let mut out = Drained {
            lost: std::mem::take(&mut self.lost),
            ..Drained::default()
        };
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) if !events.is_empty() => events,
                Ok(_) | Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(_) => {
                    out.lost = true;
                    break;
                }
            };
            for event in events {
                if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    out.lost = true;
                    continue;
                }
                if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                    if let Some(dir) = self.dirs.remove(&event.wd) {
                        self.watched.remove(&dir);
                    }
                    continue;
                }
                let Some(dir) = self.dirs.get(&event.wd).cloned() else {
                    continue;
                };
                let path = match &event.name {
                    Some(name) => {
                        let mut path = dir.clone();
                        if !path.is_empty() {
                            path.push(b'/');
                        }
                        path.extend_from_slice(name.as_bytes());
                        path
                    }
                    None => dir.clone(),
                };
                let moved_dir = event.mask.contains(AddWatchFlags::IN_ISDIR)
                    && event
                        .mask
                        .intersects(AddWatchFlags::IN_MOVED_FROM | AddWatchFlags::IN_DELETE);
                if moved_dir
                    || event
                        .mask
                        .intersects(AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF)
                {
                    self.forget(&path);
                }
                out.paths.insert(path);
            }
        }
        out
    }
}
