//! Locks that outlive a panicking holder. A poisoned lock only means some thread panicked while
//! holding it; every lock in cairn guards data that stays consistent between statements (a
//! table, a buffer, a setting), so the data is used as it is instead of spreading the panic.
//! The one place `PoisonError::into_inner` is written.

use std::sync::{
    LockResult, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

/// The value of a lock operation, poisoned or not (`Mutex::into_inner`, `get_mut`).
pub fn unpoisoned<T>(result: LockResult<T>) -> T {
    result.unwrap_or_else(PoisonError::into_inner)
}

pub trait MutexExt<T: ?Sized> {
    /// `lock()`, poisoned or not.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> MutexExt<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        unpoisoned(self.lock())
    }
}

pub trait RwLockExt<T: ?Sized> {
    /// `read()`, poisoned or not.
    fn read_locked(&self) -> RwLockReadGuard<'_, T>;
    /// `write()`, poisoned or not.
    fn write_locked(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockExt<T> for RwLock<T> {
    fn read_locked(&self) -> RwLockReadGuard<'_, T> {
        unpoisoned(self.read())
    }

    fn write_locked(&self) -> RwLockWriteGuard<'_, T> {
        unpoisoned(self.write())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_still_hands_out_its_data() {
        let lock = std::sync::Arc::new(Mutex::new(vec![1]));
        let held = std::sync::Arc::clone(&lock);
        let _ = std::thread::spawn(move || {
            let mut guard = held.locked();
            guard.push(2);
            panic!("poison it");
        })
        .join();
        assert!(lock.is_poisoned());
        assert_eq!(*lock.locked(), [1, 2]);
        let rw = RwLock::new(3);
        *rw.write_locked() += 1;
        assert_eq!(*rw.read_locked(), 4);
    }
}
