//! Per-real-path write serialisation: writes to one path run in arrival order, each on the
//! current content; writes to different paths run in parallel.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

use super::paths::RealPath;

#[derive(Default)]
pub struct WriteQueue {
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

/// Held while a write to one path runs; the next writer of that path waits for it.
pub struct WriteTurn {
    _guard: OwnedMutexGuard<()>,
}

impl WriteQueue {
    /// Waits until no other write to `path` is running. tokio's mutex is fair, so waiters
    /// are served in arrival order.
    pub async fn lock(&self, path: &RealPath) -> WriteTurn {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let key = case_fold_key(path.as_path());
            Arc::clone(locks.entry(key).or_default())
        };
        WriteTurn { _guard: lock.lock_owned().await }
    }
}

/// On case-insensitive file systems (macOS, Windows) two spellings name one file.
fn case_fold_key(path: &std::path::Path) -> PathBuf {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        PathBuf::from(path.to_string_lossy().to_lowercase())
    } else {
        path.to_path_buf()
    }
}
