//! Per-real-path write serialisation: writes to one path run in arrival order, each on the
//! current content; writes to different paths run in parallel. write_file and edit_file hold
//! a `WriteTurn` from before they read the current content until after they recorded the
//! new stamp, so a queued edit always sees its predecessor's result.

use crate::sync::MutexExt;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;

use super::paths::RealPath;

type PathLock = Arc<tokio::sync::Mutex<()>>;

#[derive(Default)]
pub struct WriteQueue {
    locks: Mutex<HashMap<PathBuf, PathLock>>,
}

/// Held while a write to one path runs; the next writer of that path waits for it.
pub struct WriteTurn<'q> {
    guard: Option<OwnedMutexGuard<()>>,
    key: PathBuf,
    queue: &'q WriteQueue,
}

impl WriteQueue {
    /// Waits until no other write to `path` is running. tokio's mutex is fair, so waiters
    /// are served in arrival order. Dropping the returned turn lets the next one in.
    pub async fn lock(&self, path: &RealPath) -> WriteTurn<'_> {
        let key = path.key();
        let lock = Arc::clone(self.map().entry(key.clone()).or_default());
        WriteTurn {
            guard: Some(lock.lock_owned().await),
            key,
            queue: self,
        }
    }

    /// Paths with a running or waiting write (for tests and diagnostics).
    pub fn busy_paths(&self) -> usize {
        self.map().len()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, PathLock>> {
        self.locks.locked()
    }
}

impl Drop for WriteTurn<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        // Forget the lock when nobody else holds or awaits it. Clones are only made under
        // the map lock, so a count of one here cannot race with a new waiter.
        let mut map = self.queue.map();
        if map
            .get(&self.key)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            map.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use futures_util::FutureExt;

    use super::*;
    use crate::fs::paths;

    #[tokio::test]
    async fn one_path_is_serialised_and_other_paths_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = paths::resolve(dir.path(), "a").unwrap();
        let a_again = paths::resolve(dir.path(), "sub/../a").unwrap();
        let b = paths::resolve(dir.path(), "b").unwrap();
        let queue = WriteQueue::default();

        let first = queue.lock(&a).await;
        assert!(
            queue.lock(&a_again).now_or_never().is_none(),
            "same real path must wait"
        );
        let other = queue.lock(&b).now_or_never();
        assert!(other.is_some(), "a different path must not wait");
        drop(other);
        drop(first);
        assert!(queue.lock(&a_again).now_or_never().is_some());
        assert_eq!(queue.busy_paths(), 0, "finished paths are forgotten");
    }

    #[tokio::test]
    async fn waiters_run_in_arrival_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = paths::resolve(dir.path(), "f").unwrap();
        let queue = Arc::new(WriteQueue::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = queue.lock(&path).await;
        let mut tasks = Vec::new();
        for i in 0..10 {
            let (queue, order, path) = (Arc::clone(&queue), Arc::clone(&order), path.clone());
            let (queued_tx, queued_rx) = tokio::sync::oneshot::channel();
            tasks.push(tokio::spawn(async move {
                let turn = queue.lock(&path);
                let mut turn = Box::pin(turn);
                // Poll once so this waiter is enqueued before the next task starts.
                assert!((&mut turn).now_or_never().is_none());
                queued_tx.send(()).unwrap();
                let _turn = turn.await;
                order.lock().unwrap().push(i);
            }));
            queued_rx.await.unwrap();
        }
        drop(first);
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), (0..10).collect::<Vec<_>>());
    }
}
