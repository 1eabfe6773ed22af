//! The session's image store: image bytes kept content-addressed in a directory beside the
//! log (`<id>.images/<sha256>`), so the log names an image by hash and a resume or replay
//! finds the same bytes again. Files are written once, atomically, private to the user; a
//! read checks the bytes still hash to their name.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::LogError;
use crate::content::content_hash;

#[derive(Debug, Clone)]
pub struct ImageStore {
    dir: PathBuf,
}

impl ImageStore {
    /// The store of the session whose log is at `log` (`<id>.jsonl` → `<id>.images/`).
    pub fn beside(log: &Path) -> Self {
        Self {
            dir: log.with_extension("images"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores `bytes` (once: the same bytes again are the same file) and returns their hash.
    pub fn put(&self, bytes: &[u8]) -> Result<String, LogError> {
        let hash = content_hash(bytes);
        let path = self.dir.join(&hash);
        if path.is_file() {
            return Ok(hash);
        }
        let io_err = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(io_err)?;
        let mut file = tempfile::NamedTempFile::new_in(&self.dir).map_err(io_err)?;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io_err)?;
        file.write_all(bytes).map_err(io_err)?;
        file.persist(&path).map_err(|err| io_err(err.error))?;
        Ok(hash)
    }

    /// The bytes stored under `hash`. A name that is not a hash (a hand-edited log) or bytes
    /// that no longer match it are an error, never another file.
    pub fn get(&self, hash: &str) -> Result<Vec<u8>, LogError> {
        let path = self.dir.join(hash);
        let io_err = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(io_err(std::io::Error::other("not an image hash")));
        }
        let bytes = std::fs::read(&path).map_err(io_err)?;
        if content_hash(&bytes) != hash.to_ascii_lowercase() {
            return Err(io_err(std::io::Error::other(
                "the stored image does not match its hash",
            )));
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn images_are_stored_once_by_hash_and_checked_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = ImageStore::beside(&dir.path().join("s1.jsonl"));
        let hash = store.put(b"png bytes").unwrap();
        assert_eq!(store.put(b"png bytes").unwrap(), hash);
        assert_eq!(store.get(&hash).unwrap(), b"png bytes");
        assert!(store.dir().ends_with("s1.images"));
        assert_eq!(std::fs::read_dir(store.dir()).unwrap().count(), 1);
        // A path instead of a hash, and bytes changed behind the store's back, are refused.
        assert!(store.get("../s1.jsonl").is_err());
        std::fs::write(store.dir().join(&hash), b"other").unwrap();
        assert!(store.get(&hash).is_err());
    }
}
