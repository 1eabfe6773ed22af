//! Keeping the store small. Snapshots write each new file version as a loose object (one
//! file, compressed on its own); `maintain` packs them once enough piled up, delta-compressing
//! the versions of a file against each other: what keeps a long session of small edits near
//! the size of its files. `--geometric` merges small packs into bigger ones only as their
//! sizes require, so the cost follows what is new, not the size of the workspace.
//!
//! The size budget: when the store takes more room than its budget (`[checkpoints]
//! max_store_mb`), the oldest checkpoints are dropped (their refs, then everything only they
//! kept: `git repack -a -d` and `git prune`) until it fits; the newest is always kept. Both run
//! in the background, after a turn, with `git` (the one place cairn still runs it).

use super::error::{CheckpointError, io_err};
use super::store::snapshot::REFS_FILE;
use super::store::{CheckpointStore, HEAD_REF};

/// What keeping to the budget did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Checkpoints dropped, oldest first.
    pub dropped: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub budget: u64,
}

/// Loose objects from which `maintain` packs them (a snapshot that changed one file writes
/// about three: the file, its directories' trees, the commit).
pub const LOOSE_LIMIT: usize = 100;

/// Packs from which `maintain` merges them: a checkpoint is written as a small pack of its
/// own (see `flush`), and every pack is one more index a miss looks through. 50 is git's own
/// limit for packing automatically (`gc.autoPackLimit`): a session of 40 steps does not start
/// a `git repack` of its own.
pub const PACK_LIMIT: usize = 50;

impl CheckpointStore {
    /// Whether `maintain` and `keep_to_budget` are worth running now. Between requests
    /// (`idle`): on the first call (a store left over its limits by an earlier session), then
    /// once this process wrote a quarter of `LOOSE_LIMIT` objects or a sixteenth of the
    /// budget since the last time it said so. During a request only the budget counts (a
    /// turn writing large files): both walk the store's directories and `maintain` may start
    /// a `git repack`, which the agent's work should not share two cores with.
    pub fn maintenance_due(&self, idle: bool) -> bool {
        let mut looked = self
            .maintenance_looked
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let written = self.db.take_written();
        let heavy = written.bytes >= self.budget / 16;
        let due = heavy || idle && (!*looked || written.objects >= LOOSE_LIMIT / 4);
        if !due {
            // Not yet: what was written still counts towards the next look.
            self.db.put_back_written(written);
        }
        *looked |= idle;
        due
    }

    /// Packs the loose objects when there are `LOOSE_LIMIT` or more, or merges the packs when
    /// there are `PACK_LIMIT` or more; Ok(true) when it did.
    /// It can take seconds on a large workspace: run it off the critical path (the agent does,
    /// after a turn). While another process packs the same store, this returns Ok(false).
    pub fn maintain(&self) -> Result<bool, CheckpointError> {
        // git sees only what is on disk: a deferred checkpoint is written first.
        self.flush()?;
        if self.loose_objects() < LOOSE_LIMIT && self.packs() < PACK_LIMIT {
            return Ok(false);
        }
        let Some(_lock) = self.lock_file("cairn-maintain.lock", false)? else {
            return Ok(false);
        };
        self.git.run(&[
            // One thread: this runs beside the user's work.
            "-c",
            "pack.threads=1",
            // Nothing here serves fetches or bitmaps: no files for them.
            "-c",
            "pack.writeReverseIndex=false",
            "-c",
            "repack.updateServerInfo=false",
            "repack",
            "-d",
            "-q",
            "--geometric=2",
            "--no-write-bitmap-index",
        ])?;
        Ok(true)
    }

    /// How many packs the store holds.
    pub fn packs(&self) -> usize {
        std::fs::read_dir(self.git_dir().join("objects/pack")).map_or(0, |files| {
            files
                .flatten()
                .filter(|f| f.path().extension().is_some_and(|e| e == "idx"))
                .count()
        })
    }

    /// How many loose objects the store holds (the `objects/xx/` files).
    pub fn loose_objects(&self) -> usize {
        let Ok(dirs) = std::fs::read_dir(self.git_dir().join("objects")) else {
            return 0;
        };
        dirs.flatten()
            .filter(|d| {
                let name = d.file_name();
                name.len() == 2
                    && name
                        .to_string_lossy()
                        .chars()
                        .all(|c| c.is_ascii_hexdigit())
            })
            .map(|d| std::fs::read_dir(d.path()).map_or(0, |files| files.count()))
            .sum()
    }
}

impl CheckpointStore {
    /// Drops the oldest checkpoints while the store is over its budget; None when it was
    /// within it (or another process is maintaining it).
    pub fn keep_to_budget(&self) -> Result<Option<Pruned>, CheckpointError> {
        self.flush()?;
        let bytes_before = self.disk_usage();
        if bytes_before <= self.budget {
            return Ok(None);
        }
        let Some(_maintaining) = self.lock_file("cairn-maintain.lock", false)? else {
            return Ok(None);
        };
        // No snapshot meanwhile: `prune` would take its objects for unreachable ones.
        let _snapshots = self.lock()?;
        let path = self.git_dir().join(REFS_FILE);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let head = std::fs::read_to_string(self.git_dir().join(HEAD_REF)).unwrap_or_default();
        let head = head.trim();
        let mut kept: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(" refs/cairn/cp/"))
            .collect();
        let mut dropped = 0;
        loop {
            self.git.run(&[
                "-c",
                "pack.threads=1",
                "-c",
                "pack.writeReverseIndex=false",
                "-c",
                "repack.updateServerInfo=false",
                "repack",
                "-a",
                "-d",
                "-q",
                "--no-write-bitmap-index",
            ])?;
            self.git.run(&["prune", "--expire=now"])?;
            let others = kept.iter().filter(|l| !l.starts_with(head)).count();
            if self.disk_usage() <= self.budget || others == 0 {
                break;
            }
            // A quarter of the rest at a time (at least one), never the newest.
            let mut drop = (others / 4).max(1);
            kept.retain(|line| {
                if drop > 0 && !line.starts_with(head) {
                    drop -= 1;
                    dropped += 1;
                    false
                } else {
                    true
                }
            });
            let mut out = kept.join("\n");
            out.push('\n');
            let temp = path.with_extension("tmp");
            std::fs::write(&temp, out).map_err(io_err(&temp))?;
            std::fs::rename(&temp, &path).map_err(io_err(&path))?;
        }
        Ok(Some(Pruned {
            dropped,
            bytes_before,
            bytes_after: self.disk_usage(),
            budget: self.budget,
        }))
    }
}
