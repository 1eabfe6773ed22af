//! What the after-check of `protect` compares protected entries by: the inode stamp, and the
//! contents read before, cached across commands by path and stamp.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::files::read_nofollow;
use crate::sync::MutexExt;

/// Largest protected file whose content is kept to put it back.
pub(super) const MAX_CONTENT: u64 = 8 << 20;
/// A file changed this close to the record may change again within the same timestamp tick
/// without its stamp moving ("racy git"): its content is compared instead.
const RACY: Duration = Duration::from_secs(2);

/// What the kernel says changes when a file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) size: u64,
    pub(super) mtime: (i64, i64),
    pub(super) ctime: (i64, i64),
    pub(super) mode: u32,
    pub(super) nlink: u64,
}

impl Stamp {
    pub(super) fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mode: meta.mode(),
            nlink: meta.nlink(),
        }
    }

    /// Changed so recently that a change within the same tick would not show.
    pub(super) fn racy(&self, taken: SystemTime) -> bool {
        let ctime = UNIX_EPOCH + Duration::new(self.ctime.0.max(0) as u64, self.ctime.1 as u32);
        ctime + RACY >= taken
    }
}

/// Contents read before, by absolute path: most commands change nothing, so most records
/// read nothing.
static CONTENTS: Mutex<BTreeMap<OsString, StampedContent>> = Mutex::new(BTreeMap::new());

/// A content and the stamp it was read at.
type StampedContent = (Stamp, Arc<[u8]>);

/// The content of a protected file: from the cache when its stamp has not moved.
pub(super) fn content(path: &Path, stamp: &Stamp, taken: SystemTime) -> Option<Arc<[u8]>> {
    if stamp.size > MAX_CONTENT {
        return None;
    }
    let mut cache = CONTENTS.locked();
    if let Some((cached, data)) = cache.get(path.as_os_str())
        && cached == stamp
        && !stamp.racy(taken)
    {
        return Some(data.clone());
    }
    drop(cache);
    let data: Arc<[u8]> = read_nofollow(path)?.into();
    cache = CONTENTS.locked();
    cache.insert(path.as_os_str().to_owned(), (*stamp, data.clone()));
    Some(data)
}

/// Forgets cached contents (tests that reuse paths).
#[cfg(test)]
pub(super) fn forget_cache() {
    CONTENTS.locked().clear();
}
