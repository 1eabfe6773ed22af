//! Taking a snapshot, in-process. The store keeps the workspace as the last checkpoint
//! recorded it (`Manifest`: path → blob, with the stat data it was hashed from). A snapshot
//! looks only at what may have changed since: the paths file notifications named (and those
//! a file tool says it wrote), or, where notifications are unavailable or lost, the whole tree
//! by stat (a file whose stat did not move is not read). Changed files are hashed into blobs,
//! the trees of changed directories rewritten, one commit and two small ref writes record it.
//! A workspace where nothing changed costs one empty read of the notification queue.
//!
//! Crash safety: objects are written whole under temp names before any ref names them, and
//! the checkpoint's refs are written last (a `.lock` renamed into place), so a cairn killed
//! mid-snapshot leaves the previous checkpoint intact; the checkpoint before a batch is in the
//! session log before the batch runs, so `cairn undo` after a crash takes the workspace back
//! to it (the files as they are now are snapshotted then).

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

use super::{CheckpointId, CheckpointStore, HEAD_REF, Skipped, Snapshot, StoreOptions};
use crate::checkpoint::error::{CheckpointError, io_err};
use crate::checkpoint::objects::{ObjectKind, Oid, hex, parse_hex};
use crate::checkpoint::phases::{self, Phase};
use crate::checkpoint::rules::{IgnoreRules, SKIPPED_DIRS};
use crate::checkpoint::scan::{LeftOut, Scanner};
use crate::checkpoint::tree::{self, Manifest};
use crate::checkpoint::watch::{Drained, Watcher};
use crate::fs::confined::DirHandle;

/// Where each checkpoint's own ref is kept (so packing keeps every one, and the size budget
/// can drop the oldest): one line `<id> refs/cairn/cp/<id>` per checkpoint, oldest first.
pub(in crate::checkpoint) const REFS_FILE: &str = "packed-refs";

/// What the store knows of the workspace between snapshots.
#[derive(Debug)]
pub(crate) struct Live {
    manifest: Manifest,
    /// The last checkpoint and its tree.
    head: Option<(Oid, Oid)>,
    rules: IgnoreRules,
    left_out: LeftOut,
    watcher: Option<Watcher>,
    /// The whole tree was looked at in this process (before that, only a scan knows).
    scanned: bool,
    /// How many snapshots walked the whole tree (the tests' window on the fallback).
    pub(in crate::checkpoint) full_scans: usize,
    /// Checkpoints whose objects and refs are not written yet (`snapshot_deferred`), oldest
    /// first: `flush` writes them.
    unwritten: Vec<Oid>,
    /// What notifications named that a snapshot has not looked at yet (`unchanged` read them
    /// and found the answer was no).
    carried: Drained,
    /// The dependency and build directories at the top of the workspace, as last looked at
    /// (on a walk of the whole tree, or when a path at the top with one of their names moved).
    skipped_dirs: Vec<Skipped>,
}

impl Live {
    pub(in crate::checkpoint) fn open(
        git_dir: &Path,
        workspace: &Path,
        options: StoreOptions,
        notifications_work: bool,
    ) -> Self {
        let rules = if options.session_start {
            IgnoreRules::default()
        } else {
            IgnoreRules::load(git_dir).unwrap_or_default()
        };
        let watcher = (options.notifications && notifications_work)
            .then(|| Watcher::new(workspace))
            .flatten();
        Self {
            manifest: Manifest::default(),
            head: None,
            rules,
            left_out: LeftOut::new(),
            watcher,
            scanned: false,
            full_scans: 0,
            unwritten: Vec::new(),
            carried: Drained::default(),
            skipped_dirs: Vec::new(),
        }
    }
}

impl CheckpointStore {
    /// Records the workspace as it is now. A workspace unchanged since the last snapshot gets
    /// the same id back.
    pub fn snapshot(&self) -> Result<Snapshot, CheckpointError> {
        self.snapshot_with(&[], false)
    }

    /// Like `snapshot`, also looking at `written` (paths beneath the workspace a file tool
    /// just wrote): where notifications are off, a batch of file-tool writes costs those
    /// paths, not a scan.
    pub fn snapshot_paths(&self, written: &[&Path]) -> Result<Snapshot, CheckpointError> {
        let rel = self.relative(written);
        self.snapshot_with(&rel, false)
    }

    /// Like `snapshot_paths`, but what the checkpoint adds to the store is only hashed: its
    /// id is known and everything in it readable in this process (`diff`, `blobs`), and
    /// nothing is written to disk until `flush`, which the caller runs off its critical path
    /// (any later snapshot flushes first). Until then another process (`cairn undo`) does not
    /// find this checkpoint; a session killed before the flush leaves a log naming it, and
    /// `cairn undo` takes such a checkpoint for one never taken (see `time_travel::undo`).
    pub fn snapshot_deferred(&self, written: &[&Path]) -> Result<Snapshot, CheckpointError> {
        let rel = self.relative(written);
        self.snapshot_with(&rel, true)
    }

    /// The last checkpoint, when nothing can have changed since it was recorded: the whole
    /// tree was looked at in this process, notifications are on and name nothing (none lost),
    /// everything is on disk and no other process moved the head. None when that is not
    /// sure, or the store is busy: then `snapshot` finds out. Costs one read of the
    /// notification queue and of the head's ref, so the caller need not leave its thread.
    pub fn unchanged(&self) -> Option<Snapshot> {
        let mut guard = self.live.try_lock().ok()?;
        let live = &mut *guard;
        let (commit, _) = live.head?;
        if !live.scanned || !live.unwritten.is_empty() || !live.carried.is_empty() {
            return None;
        }
        let drained = live.watcher.as_mut()?.drain();
        if !drained.is_empty() {
            live.carried = drained;
            return None;
        }
        if self.read_head().ok()? != Some(commit) {
            return None;
        }
        Some(self.result(live, commit))
    }

    /// Writes what `snapshot_deferred` left in memory: the objects (as one pack: a deferred
    /// checkpoint is written beside the agent's work and competes with it), then the refs
    /// naming them (so a reader never finds a ref to a missing object).
    pub fn flush(&self) -> Result<(), CheckpointError> {
        let _lock = self.lock()?;
        let mut live = self.live();
        self.flush_held(&mut live)
    }

    /// `flush`, the store's lock held.
    fn flush_held(&self, live: &mut Live) -> Result<(), CheckpointError> {
        if live.unwritten.is_empty() {
            return self.db.flush().map_err(io_err(self.git_dir()));
        }
        let _timer = phases::time(Phase::Flush);
        self.db.flush().map_err(io_err(self.git_dir()))?;
        for commit in std::mem::take(&mut live.unwritten) {
            self.add_ref(&commit)?;
            self.set_head(&commit)?;
        }
        Ok(())
    }

    fn relative(&self, written: &[&Path]) -> Vec<Vec<u8>> {
        written
            .iter()
            .filter_map(|p| p.strip_prefix(self.workspace()).ok())
            .filter(|p| !p.as_os_str().is_empty())
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .collect()
    }

    /// Whether this store learns of changes by notifications (else it scans).
    pub fn watching(&self) -> bool {
        self.live().watcher.is_some()
    }

    /// How many snapshots of this store walked the whole workspace.
    #[cfg(test)]
    pub(in crate::checkpoint) fn full_scans(&self) -> usize {
        self.live().full_scans
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn snapshot_with(&self, written: &[Vec<u8>], defer: bool) -> Result<Snapshot, CheckpointError> {
        let _timer = phases::time(Phase::Snapshot);
        // Two cairns in one workspace share its store: one snapshot at a time.
        let _lock = self.lock()?;
        let mut guard = self.live();
        let live = &mut *guard;
        // What an earlier snapshot deferred is on disk before this one looks at the head.
        self.flush_held(live)?;
        self.db.defer();
        let taken = self.take(live, written);
        self.db.stop_deferring();
        if !defer {
            self.flush_held(live)?;
        }
        taken
    }

    /// The snapshot itself (the store's lock held; new objects deferred).
    fn take(&self, live: &mut Live, written: &[Vec<u8>]) -> Result<Snapshot, CheckpointError> {
        let on_disk = self.read_head()?;
        // Another process moved the head (`cairn undo`): its restores are files like any, but
        // only a scan is sure to have seen everything.
        let moved = on_disk != live.head.map(|(c, _)| c);
        if live.head.is_none() && on_disk.is_some() {
            live.head = on_disk.and_then(|c| {
                let tree = tree::tree_of_commit(&self.db, &c).ok().flatten()?;
                Some((c, tree))
            });
        }
        let drained = {
            let _timer = phases::time(Phase::Drain);
            let carried = std::mem::take(&mut live.carried);
            live.watcher.as_mut().map(|w| carried.and(w.drain()))
        };
        let full = !live.scanned
            || moved
            || live.watcher.is_none() && written.is_empty()
            || drained.as_ref().is_some_and(|d| d.lost);
        let mut paths: Vec<Vec<u8>> = drained
            .map(|d| d.paths.into_iter().collect())
            .unwrap_or_default();
        paths.extend(written.iter().cloned());
        if !full
            && paths.is_empty()
            && let Some((commit, _)) = live.head
        {
            return Ok(self.result(live, commit));
        }
        let root = DirHandle::open_root(self.workspace()).map_err(io_err(self.workspace()))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let mut scanner = Scanner {
            root: &root,
            workspace: self.workspace(),
            db: &self.db,
            rules: &mut live.rules,
            manifest: &mut live.manifest,
            left_out: &mut live.left_out,
            watcher: live.watcher.as_mut(),
            now,
        };
        let looked = if full {
            let _timer = phases::time(Phase::Scan);
            // Many objects may be new: packed together rather than a file each (the trees
            // too: the bulk ends once they are written).
            self.db.begin_bulk();
            scanner.scan_dir(b"")
        } else {
            let _timer = phases::time(Phase::Look);
            paths.sort();
            paths.dedup();
            paths.iter().try_for_each(|p| scanner.refresh(p))
        };
        if let Err(err) = looked {
            if full {
                self.db.end_bulk().map_err(io_err(self.git_dir()))?;
            }
            return Err(io_err(self.workspace())(err));
        }
        if full {
            live.scanned = true;
            live.full_scans += 1;
        }
        let at_top_skipped = |p: &Vec<u8>| {
            let top = p.split(|&b| b == b'/').next().unwrap_or_default();
            SKIPPED_DIRS.iter().any(|dir| dir.as_bytes() == top)
        };
        if full || paths.iter().any(at_top_skipped) {
            live.skipped_dirs = self.skipped_dirs();
        }
        if !live.rules.frozen {
            live.rules.frozen = true;
            let _ = live.rules.save(self.git_dir());
        }
        let tree = {
            let _timer = phases::time(Phase::Trees);
            let written = live.manifest.write_trees(&self.db);
            if full {
                self.db.end_bulk().map_err(io_err(self.git_dir()))?;
            }
            written.map_err(io_err(self.git_dir()))?
        };
        if let Some((commit, head_tree)) = live.head
            && head_tree == tree
        {
            return Ok(self.result(live, commit));
        }
        let _timer = phases::time(Phase::Commit);
        let previous = live.head.map(|(c, _)| c);
        let commit = self
            .db
            .write(
                ObjectKind::Commit,
                &tree::commit_bytes(&tree, previous.as_ref()),
            )
            .map_err(io_err(self.git_dir()))?;
        live.unwritten.push(commit);
        live.head = Some((commit, tree));
        Ok(self.result(live, commit))
    }

    fn result(&self, live: &Live, commit: Oid) -> Snapshot {
        let mut skipped = live.skipped_dirs.clone();
        skipped.extend(live.left_out.iter().map(|(path, why)| Skipped {
            path: String::from_utf8_lossy(path).into_owned(),
            why: why.clone(),
        }));
        Snapshot {
            id: CheckpointId(hex(&commit)),
            skipped,
        }
    }

    /// The last checkpoint as the ref on disk says (another process may have moved it).
    fn read_head(&self) -> Result<Option<Oid>, CheckpointError> {
        let path = self.git_dir().join(HEAD_REF);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(parse_hex(text.trim())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                // Packed by an earlier version's maintenance.
                let packed =
                    std::fs::read_to_string(self.git_dir().join(REFS_FILE)).unwrap_or_default();
                Ok(packed.lines().find_map(|line| {
                    let (id, name) = line.split_once(' ')?;
                    (name == HEAD_REF).then(|| parse_hex(id)).flatten()
                }))
            }
            Err(err) => Err(io_err(&path)(err)),
        }
    }

    /// Points `HEAD_REF` at `commit`: one small file, rewritten in place (41 bytes, one
    /// write: no new file per checkpoint; the store's lock keeps out other writers). A write
    /// torn by a crash reads as no head, which only makes the next snapshot a full scan: the
    /// checkpoints themselves are named by the session log and their own refs.
    fn set_head(&self, commit: &Oid) -> Result<(), CheckpointError> {
        use std::os::unix::fs::FileExt;
        let path = self.git_dir().join(HEAD_REF);
        let line = format!("{}\n", hex(commit));
        let file = match File::options().write(true).open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
                }
                File::create(&path).map_err(io_err(&path))?
            }
            Err(err) => return Err(io_err(&path)(err)),
        };
        // Always 41 bytes (as every version wrote it): the old line is overwritten whole.
        file.write_all_at(line.as_bytes(), 0).map_err(io_err(&path))
    }

    /// Keeps `commit` by a ref of its own (appended: the file lists checkpoints oldest first).
    fn add_ref(&self, commit: &Oid) -> Result<(), CheckpointError> {
        let path = self.git_dir().join(REFS_FILE);
        let id = hex(commit);
        let mut file = File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        file.write_all(format!("{id} refs/cairn/cp/{id}\n").as_bytes())
            .map_err(io_err(&path))
    }

    /// Dependency and build directories at the top of the workspace, which snapshots skip.
    fn skipped_dirs(&self) -> Vec<Skipped> {
        SKIPPED_DIRS
            .iter()
            .filter(|dir| self.workspace().join(OsStr::new(dir)).is_dir())
            .map(|dir| Skipped {
                path: format!("{dir}/"),
                why: "dependency or build directory".to_string(),
            })
            .collect()
    }

    /// Holds the store's lock file `name` (blocking unless `wait` is false: then None when
    /// another holds it).
    pub(in crate::checkpoint) fn lock_file(
        &self,
        name: &str,
        wait: bool,
    ) -> Result<Option<Flock<File>>, CheckpointError> {
        let path = self.git_dir().join(name);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        let how = if wait {
            FlockArg::LockExclusive
        } else {
            FlockArg::LockExclusiveNonblock
        };
        match Flock::lock(file, how) {
            Ok(lock) => Ok(Some(lock)),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) if !wait => Ok(None),
            Err((_, errno)) => Err(io_err(&path)(std::io::Error::from(errno))),
        }
    }

    pub(in crate::checkpoint) fn lock(&self) -> Result<Option<Flock<File>>, CheckpointError> {
        self.lock_file("cairn.lock", true)
    }
}
