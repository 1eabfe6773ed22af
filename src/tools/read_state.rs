//! Read-before-write bookkeeping: what each file looked like when the model last read it, so
//! a write or edit can refuse a file the model never saw or that changed since (the user
//! may be editing it too).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::paths::RealPath;

/// Enough of a file's state to notice a change: size, modification time and a content hash
/// (mtime alone misses two writes within the file system's timestamp resolution).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    pub len: u64,
    pub modified: Option<SystemTime>,
    pub hash: u64,
}

impl FileStamp {
    pub fn of_bytes(bytes: &[u8], meta: &std::fs::Metadata) -> Self {
        Self { len: meta.len(), modified: meta.modified().ok(), hash: hash_bytes(bytes) }
    }
}

/// FNV-1a: fast, dependency-free, and only compared with itself.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[derive(Default)]
pub struct ReadTracker {
    stamps: Mutex<HashMap<PathBuf, FileStamp>>,
}

impl ReadTracker {
    /// Records the state the model has now seen (after a read, or after our own write).
    pub fn record(&self, path: &RealPath, stamp: FileStamp) {
        self.guard().insert(path.as_path().to_path_buf(), stamp);
    }
    pub fn get(&self, path: &RealPath) -> Option<FileStamp> {
        self.guard().get(path.as_path()).cloned()
    }
    pub fn forget(&self, path: &Path) {
        self.guard().remove(path);
    }
    fn guard(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, FileStamp>> {
        self.stamps.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
