//! Keeping the store small. Snapshots write each new file version as a loose object (one
//! file, compressed on its own); `maintain` packs them once enough piled up, delta-compressing
//! the versions of a file against each other: what keeps a long session of small edits near
//! the size of its files. `--geometric` merges small packs into bigger ones only as their
//! sizes require, so the cost follows what is new, not the size of the workspace.

use super::store::{CheckpointError, CheckpointStore};

/// Loose objects from which `maintain` packs them (a snapshot that changed one file writes
/// about three: the file, its directories' trees, the commit).
pub const LOOSE_LIMIT: usize = 100;

impl CheckpointStore {
    /// Packs the loose objects when there are `LOOSE_LIMIT` or more; Ok(true) when it did.
    /// It can take seconds on a large workspace: run it off the critical path (the agent does,
    /// after a turn). While another process packs the same store, this returns Ok(false).
    pub fn maintain(&self) -> Result<bool, CheckpointError> {
        if self.loose_objects() < LOOSE_LIMIT {
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
