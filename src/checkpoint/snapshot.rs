//! Taking a snapshot. One `git status` (one walk of the workspace, served by the shadow
//! index's stat cache and untracked cache, which it writes back) says what changed since the
//! last checkpoint; only those paths are hashed into the shadow index (`update-index`), then
//! `write-tree`, `commit-tree` and `update-ref` record it. A workspace where nothing changed
//! costs that one `git status`, and only the changed paths are checked for the size limit.
//!
//! Many changed paths at once (the first snapshot, a command that touched thousands of files)
//! go through one `git add -A` instead, which writes them into one pack rather than a file per
//! object (far less disk and time for tens of thousands of files).

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;

use nix::fcntl::{Flock, FlockArg};

use super::store::{
    CheckpointError, CheckpointId, CheckpointStore, HEAD_REF, MAX_FILE_BYTES, SKIPPED_DIRS,
    Skipped, Snapshot, io_err,
};

/// More changed paths than this are added by one `git add -A` of the whole workspace.
const BULK_PATHS: usize = 500;

/// The last checkpoint this store wrote and its tree (`<commit> <tree>`): saves asking git.
const TIP_FILE: &str = "cairn-tip";

/// What `git status --porcelain=v2` said about the shadow index.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Status {
    /// The last checkpoint; None before the first.
    pub head: Option<String>,
    /// Paths whose content, mode or presence in the workspace differ from the shadow index.
    pub changed: Vec<Changed>,
    /// The shadow index differs from the last checkpoint (a snapshot was interrupted).
    pub index_ahead: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) struct Changed {
    /// Relative to the workspace, as git spells it (bytes: a name need not be UTF-8); a
    /// trailing `/` marks a repository nested in the workspace.
    pub path: Vec<u8>,
    /// In the shadow index already (else new to it).
    pub tracked: bool,
}

/// Parses `git status --porcelain=v2 -z --branch --no-renames`.
pub(super) fn parse_status(out: &[u8]) -> Result<Status, CheckpointError> {
    let bad = || CheckpointError::Parse("status");
    let mut status = Status::default();
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let Some(field) = fields.next() {
        let Some(&kind) = field.first() else {
            continue;
        };
        match kind {
            b'#' => {
                if let Some(oid) = field.strip_prefix(b"# branch.oid ")
                    && oid != b"(initial)"
                {
                    status.head = Some(String::from_utf8_lossy(oid).into_owned());
                }
            }
            b'?' => {
                let path = field.strip_prefix(b"? ").ok_or_else(bad)?;
                status.changed.push(Changed {
                    path: path.to_vec(),
                    tracked: false,
                });
            }
            // `1 XY sub mH mI mW hH hI path`; `2 …` (a rename, not asked for) adds a score
            // field and the old path in the next field; `u …` (unmerged) has three stages.
            b'1' | b'2' | b'u' => {
                let count = match kind {
                    b'1' => 9,
                    b'2' => 10,
                    _ => 11,
                };
                let parts: Vec<&[u8]> = field.splitn(count, |&b| b == b' ').collect();
                if parts.len() != count {
                    return Err(bad());
                }
                if kind == b'2' {
                    fields.next();
                }
                // A submodule's gitlink (left by an earlier version): not ours to follow.
                if parts[2].first() == Some(&b'S') {
                    continue;
                }
                let (x, y) = (parts[1].first(), parts[1].get(1));
                if x != Some(&b'.') {
                    status.index_ahead = true;
                }
                if y != Some(&b'.') {
                    status.changed.push(Changed {
                        path: parts[count - 1].to_vec(),
                        tracked: true,
                    });
                }
            }
            b'!' => {}
            _ => return Err(bad()),
        }
    }
    Ok(status)
}

fn nul_joined<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path);
        out.push(0);
    }
    out
}

impl CheckpointStore {
    /// Records the workspace as it is now. A workspace unchanged since the last snapshot gets
    /// the same id back.
    pub fn snapshot(&self) -> Result<Snapshot, CheckpointError> {
        // Two cairns in one workspace share its store: one snapshot at a time.
        let _lock = self.lock()?;
        // Holding the lock, no git of ours works on the index: a lock file left on it is
        // from a git that was killed, and would fail every snapshot from now on.
        let _ = std::fs::remove_file(self.git.index.with_extension("lock"));
        let status = parse_status(&self.git.run(&[
            "status",
            "--porcelain=v2",
            "-z",
            "--branch",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
        ])?)?;
        let mut skipped = self.skipped_dirs();
        let mut update: Vec<&[u8]> = Vec::new();
        // Left out of the snapshot: huge files and nested repositories.
        let mut left_out: Vec<&Changed> = Vec::new();
        for changed in &status.changed {
            let name = String::from_utf8_lossy(&changed.path).into_owned();
            if changed.path.ends_with(b"/") {
                skipped.push(Skipped {
                    path: name,
                    why: "a repository of its own".to_string(),
                });
                left_out.push(changed);
                continue;
            }
            let full = self.git.work_tree.join(OsStr::from_bytes(&changed.path));
            match std::fs::symlink_metadata(&full) {
                // FIFOs, sockets and devices have no content to record (and a FIFO would
                // block the reader): left out, like git leaves them out.
                Ok(meta) if !(meta.is_file() || meta.is_symlink() || meta.is_dir()) => {
                    skipped.push(Skipped {
                        path: name,
                        why: "not a regular file (a FIFO, socket or device)".to_string(),
                    });
                    left_out.push(changed);
                }
                Ok(meta) if meta.is_file() && meta.len() > MAX_FILE_BYTES => {
                    skipped.push(Skipped {
                        path: name,
                        why: format!("{} MiB, over the 5 MiB limit", meta.len() / (1024 * 1024)),
                    });
                    left_out.push(changed);
                }
                _ => update.push(&changed.path),
            }
        }
        // A file that grew past the limit leaves the snapshot instead of keeping its old
        // content there.
        let dropped: Vec<&[u8]> = left_out
            .iter()
            .filter(|c| c.tracked)
            .map(|c| c.path.as_slice())
            .collect();
        if let Some(head) = &status.head
            && update.is_empty()
            && dropped.is_empty()
            && !status.index_ahead
        {
            return Ok(Snapshot {
                id: CheckpointId(head.clone()),
                skipped,
            });
        }
        if !dropped.is_empty() {
            self.git.run_with_input(
                &["update-index", "--force-remove", "-z", "--stdin"],
                Some(&nul_joined(dropped)),
            )?;
        }
        if update.len() > BULK_PATHS {
            self.add_all(&left_out, true)?;
        } else if !update.is_empty() {
            let input = nul_joined(update.iter().copied());
            let added = self.git.run_with_input(
                &[
                    "update-index",
                    "--add",
                    "--remove",
                    "--replace",
                    "-z",
                    "--stdin",
                ],
                Some(&input),
            );
            if added.is_err() {
                // update-index stops at a path it cannot take (an unreadable file, a path
                // under a directory now a symbolic link) and writes nothing; `git add` copes
                // with those, at the cost of walking the workspace again.
                self.add_all(&left_out, false)?;
            }
        }
        let tree = self.git.run_str(&["write-tree"])?;
        if let Some(parent) = &status.head
            && self.tree_of(parent)? == tree
        {
            return Ok(Snapshot {
                id: CheckpointId(parent.clone()),
                skipped,
            });
        }
        let mut args = vec!["commit-tree", tree.as_str(), "-m", "cairn checkpoint"];
        if let Some(parent) = &status.head {
            args.extend(["-p", parent.as_str()]);
        }
        let commit = self.git.run_str(&args)?;
        self.set_head(&commit)?;
        let tip = self.git.git_dir.join(TIP_FILE);
        // Only a shortcut: without it the next snapshot asks git for the tree.
        let _ = std::fs::write(&tip, format!("{commit} {tree}\n"));
        Ok(Snapshot {
            id: CheckpointId(commit),
            skipped,
        })
    }

    /// `git add -A` of the whole workspace but what `left_out` names; `bulk` writes the new
    /// objects into one pack.
    fn add_all(&self, left_out: &[&Changed], bulk: bool) -> Result<(), CheckpointError> {
        let mut spec = b".\0".to_vec();
        for changed in left_out {
            let path = changed.path.strip_suffix(b"/").unwrap_or(&changed.path);
            spec.extend_from_slice(b":(exclude,literal)");
            spec.extend_from_slice(path);
            spec.push(0);
        }
        let mut args = vec![];
        if bulk {
            // Every file is "big": git streams them all into one pack instead of writing a
            // loose object file each.
            args.extend(["-c", "core.bigFileThreshold=1", "-c", "core.compression=1"]);
        }
        args.extend([
            "add",
            "-A",
            "--ignore-errors",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ]);
        match self.git.run_with_input(&args, Some(&spec)) {
            Ok(_) => Ok(()),
            // `--ignore-errors` still exits 1 after skipping an unreadable file; the rest
            // is in the index.
            Err(CheckpointError::Git { ref stderr, .. })
                if stderr.contains("adding files failed") =>
            {
                Ok(())
            }
            Err(other) => Err(other),
        }
    }

    /// The tree of checkpoint `commit`.
    fn tree_of(&self, commit: &str) -> Result<String, CheckpointError> {
        let tip = std::fs::read_to_string(self.git.git_dir.join(TIP_FILE)).unwrap_or_default();
        if let Some((tip_commit, tree)) = tip.trim().split_once(' ')
            && tip_commit == commit
        {
            return Ok(tree.to_string());
        }
        self.git
            .run_str(&["rev-parse", &format!("{commit}^{{tree}}")])
    }

    /// Points `HEAD_REF` at `commit`. With git's files ref backend (what `git init` makes
    /// unless told otherwise) that is one small file, written as git writes it (a `.lock`
    /// renamed into place; the store's lock keeps out other writers), which saves starting
    /// `git update-ref` for each checkpoint.
    fn set_head(&self, commit: &str) -> Result<(), CheckpointError> {
        if !self.files_refs {
            return self.git.run(&["update-ref", HEAD_REF, commit]).map(|_| ());
        }
        let path = self.git.git_dir.join(HEAD_REF);
        let lock = path.with_extension("lock");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        std::fs::write(&lock, format!("{commit}\n")).map_err(io_err(&lock))?;
        std::fs::rename(&lock, &path).map_err(io_err(&path))
    }

    /// Dependency and build directories at the top of the workspace, which snapshots skip.
    fn skipped_dirs(&self) -> Vec<Skipped> {
        SKIPPED_DIRS
            .iter()
            .filter(|dir| self.git.work_tree.join(dir).is_dir())
            .map(|dir| Skipped {
                path: format!("{dir}/"),
                why: "dependency or build directory".to_string(),
            })
            .collect()
    }

    /// Holds the store's lock file `name` (blocking unless `wait` is false: then None when
    /// another holds it).
    pub(super) fn lock_file(
        &self,
        name: &str,
        wait: bool,
    ) -> Result<Option<Flock<File>>, CheckpointError> {
        let path = self.git.git_dir.join(name);
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

    fn lock(&self) -> Result<Option<Flock<File>>, CheckpointError> {
        self.lock_file("cairn.lock", true)
    }
}
