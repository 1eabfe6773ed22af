//! Read-before-write bookkeeping: what each file looked like when the model last read (or we
//! last wrote) it, so a write or edit can refuse a file the model never saw or that changed
//! since (the user may be editing it too). Fed by read_file, write_file and edit_file.

use crate::sync::MutexExt;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

use super::FileError;
use super::paths::RealPath;

/// Enough of a file's state to notice a change: size and a content hash (mtime alone misses
/// two writes within the file system's timestamp resolution, and a `touch` is no change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub len: u64,
    pub modified: Option<SystemTime>,
    pub hash: u64,
}

impl FileStamp {
    /// The stamp of `bytes`, the whole content of the file `meta` describes.
    pub fn of_bytes(bytes: &[u8], meta: &std::fs::Metadata) -> Self {
        Self::of_content(bytes, meta.modified().ok())
    }
    /// The stamp of `bytes`, a whole content not read from disk (an editor's buffer).
    pub fn of_content(bytes: &[u8], modified: Option<SystemTime>) -> Self {
        let mut hasher = StampHasher::default();
        hasher.update(bytes);
        hasher.finish(modified)
    }
    /// Same content as when `self` was taken (the modification time is not compared).
    pub fn same_content(&self, other: &FileStamp) -> bool {
        self.len == other.len && self.hash == other.hash
    }
}

/// Hashes a file while it streams past, so a read costs one pass. A multiply-rotate hash over
/// four independent 64-bit lanes (so the CPU overlaps them): several GB/s, and only ever
/// compared with itself.
#[derive(Debug, Default)]
pub struct StampHasher {
    lanes: [u64; 4],
    pending: [u8; BLOCK],
    pending_len: usize,
    len: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
const BLOCK: usize = 32;

fn mix(state: u64, word: u64) -> u64 {
    (state.rotate_left(5) ^ word).wrapping_mul(SEED)
}

impl StampHasher {
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.pending_len > 0 {
            let take = (BLOCK - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < BLOCK {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.pending_len = 0;
        }
        let mut blocks = bytes.chunks_exact(BLOCK);
        for block in &mut blocks {
            self.block(block);
        }
        let tail = blocks.remainder();
        self.pending[..tail.len()].copy_from_slice(tail);
        self.pending_len = tail.len();
    }

    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            let mut buf = [0u8; 8];
            buf.copy_from_slice(word);
            *lane = mix(*lane, u64::from_le_bytes(buf));
        }
    }

    pub fn finish(mut self, modified: Option<SystemTime>) -> FileStamp {
        if self.pending_len > 0 {
            let mut block = [0u8; BLOCK];
            block[..self.pending_len].copy_from_slice(&self.pending[..self.pending_len]);
            self.block(&block);
        }
        // The length tells zero padding apart from real zero bytes.
        let hash = self
            .lanes
            .iter()
            .fold(mix(0, self.len), |state, &lane| mix(state, lane));
        FileStamp {
            len: self.len,
            modified,
            hash,
        }
    }
}

/// The stamps of one session, keyed by real path (all spellings of a file share one entry).
#[derive(Default)]
pub struct ReadTracker {
    stamps: Mutex<HashMap<PathBuf, FileStamp>>,
}

impl ReadTracker {
    /// Records the state the model has now seen (after a read, or after our own write, so
    /// that sequential edits need no re-read).
    pub fn record(&self, path: &RealPath, stamp: FileStamp) {
        self.guard().insert(path.key(), stamp);
    }
    pub fn get(&self, path: &RealPath) -> Option<FileStamp> {
        self.guard().get(&path.key()).cloned()
    }
    pub fn forget(&self, path: &RealPath) {
        self.guard().remove(&path.key());
    }
    /// Refuses a change to a file the model has not read, or that changed since. `current` is
    /// the stamp of the content about to be changed, taken while holding the write queue.
    pub fn check_fresh(
        &self,
        path: &RealPath,
        display: &str,
        current: &FileStamp,
    ) -> Result<(), FileError> {
        match self.get(path) {
            None => Err(FileError::NotRead {
                path: display.to_string(),
            }),
            Some(seen) if !seen.same_content(current) => Err(FileError::Stale {
                path: display.to_string(),
            }),
            Some(_) => Ok(()),
        }
    }
    fn guard(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, FileStamp>> {
        self.stamps.locked()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn stamp_in_pieces(bytes: &[u8], sizes: &[usize]) -> FileStamp {
        let mut hasher = StampHasher::default();
        let mut rest = bytes;
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (head, tail) = rest.split_at(size.min(rest.len()));
            hasher.update(head);
            rest = tail;
        }
        hasher.finish(None)
    }

    #[test]
    fn streaming_in_any_chunking_gives_the_same_stamp() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let whole = stamp_in_pieces(&bytes, &[bytes.len()]);
        for sizes in [&[1][..], &[3, 5], &[7, 8, 9], &[64], &[13, 1, 2]] {
            assert_eq!(stamp_in_pieces(&bytes, sizes), whole, "{sizes:?}");
        }
    }

    #[test]
    fn any_single_byte_change_or_length_change_is_noticed() {
        let base = b"fn main() {\n    println!(\"hi\");\n}\n".to_vec();
        let stamp = stamp_in_pieces(&base, &[base.len()]);
        for i in 0..base.len() {
            let mut changed = base.clone();
            changed[i] ^= 1;
            assert!(
                !stamp.same_content(&stamp_in_pieces(&changed, &[4])),
                "byte {i}"
            );
        }
        let mut longer = base.clone();
        longer.push(0);
        assert!(!stamp.same_content(&stamp_in_pieces(&longer, &[4])));
    }

    #[test]
    fn unread_and_changed_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "a").unwrap();
        let path = super::super::paths::resolve(dir.path(), "a").unwrap();
        let tracker = ReadTracker::default();
        let seen = stamp_in_pieces(b"a", &[1]);
        assert!(matches!(
            tracker.check_fresh(&path, "a", &seen),
            Err(FileError::NotRead { .. })
        ));
        tracker.record(&path, seen.clone());
        assert!(tracker.check_fresh(&path, "a", &seen).is_ok());
        let changed = stamp_in_pieces(b"b", &[1]);
        assert!(matches!(
            tracker.check_fresh(&path, "a", &changed),
            Err(FileError::Stale { .. })
        ));
    }
}
