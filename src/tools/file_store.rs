//! Loading and storing files for write_file and edit_file, always while holding the path's
//! `WriteTurn`: load the current content and check it against the read stamp, then store the
//! new content atomically (temp file in the same directory + rename, permissions kept),
//! record the new stamp (so the model's next edit needs no re-read) and diff the change.

use std::fs::{Metadata, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::diff::diff_files;
use super::paths::RealPath;
use super::read_state::{FileStamp, ReadTracker};
use super::{FileChange, ToolError};

/// A file as found on disk just before a change.
pub struct Current {
    pub bytes: Vec<u8>,
    /// None when the file does not exist yet.
    pub meta: Option<Metadata>,
}

/// Loads `real`. A missing file is `Ok` with no metadata; a directory is an error.
pub fn load(real: &RealPath, display: &str) -> Result<Current, ToolError> {
    let path = real.as_path();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(ToolError::Failed(format!(
            "{display} is a directory, not a file"
        ))),
        Ok(meta) if !meta.is_file() => Err(ToolError::Failed(format!(
            "{display} is not a regular file (a device, pipe or socket); it cannot be written"
        ))),
        Ok(meta) => {
            let bytes = std::fs::read(path)
                .map_err(|err| ToolError::io(format!("reading {display}"), err))?;
            Ok(Current {
                bytes,
                meta: Some(meta),
            })
        }
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(Current {
            bytes: Vec::new(),
            meta: None,
        }),
        Err(err) => Err(ToolError::io(format!("reading {display}"), err)),
    }
}

/// Refuses to change an existing file the model has not read, or that changed since.
pub fn check_fresh(
    reads: &ReadTracker,
    real: &RealPath,
    display: &str,
    current: &Current,
) -> Result<(), ToolError> {
    match &current.meta {
        Some(meta) => reads.check_fresh(real, display, &FileStamp::of_bytes(&current.bytes, meta)),
        None => Ok(()),
    }
}

/// Stores `after` in place of `current`, records its stamp and returns the change.
pub fn store(
    reads: &ReadTracker,
    real: &RealPath,
    display: &str,
    current: &Current,
    after: &[u8],
    replacements: usize,
) -> Result<FileChange, ToolError> {
    let path = real.as_path();
    if current.meta.is_none()
        && let Some(parent) = path.parent()
    {
        std::fs::create_dir_all(parent)
            .map_err(|err| ToolError::io(format!("creating the directories of {display}"), err))?;
    }
    // Rewriting identical bytes would only bump the modification time under other tools.
    if current.meta.is_none() || current.bytes != after {
        write_atomically(path, after, current.meta.as_ref())
            .map_err(|err| ToolError::io(format!("writing {display}"), err))?;
    }
    let meta = std::fs::metadata(path)
        .map_err(|err| ToolError::io(format!("reading back {display}"), err))?;
    reads.record(real, FileStamp::of_bytes(after, &meta));
    Ok(change_of(current, after, display, replacements))
}

/// The change from `current` to `after`, as the UI shows it (also before approval).
pub fn change_of(
    current: &Current,
    after: &[u8],
    display: &str,
    replacements: usize,
) -> FileChange {
    let created = current.meta.is_none();
    let diff = diff_files(&current.bytes, after, display, created);
    FileChange {
        path: display.to_string(),
        created,
        diff: diff.text,
        added: diff.added,
        removed: diff.removed,
        first_line: diff.first_line,
        last_line: diff.last_line,
        replacements,
    }
}

/// Writes `bytes` to a temp file beside `path` and renames it over `path`, so readers see the
/// old or the new content, never a mix. An existing file's permissions are kept; a new file
/// gets the usual `0666 & !umask`.
pub fn write_atomically(path: &Path, bytes: &[u8], old: Option<&Metadata>) -> std::io::Result<()> {
    let (temp, mut file) = create_temp_beside(path)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(old) = old {
            file.set_permissions(old.permissions())?;
        }
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn create_temp_beside(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut attempts = 0;
    loop {
        let temp = dir.join(format!(".{name}.cairn-{:08x}.tmp", fastrand::u32(..)));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == ErrorKind::AlreadyExists && attempts < 16 => attempts += 1,
            Err(err) => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn atomic_write_keeps_permissions_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, "old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        write_atomically(&path, b"new\n", Some(&meta)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o750
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run.sh")]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("occupied");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        // Renaming a file over a non-empty directory fails.
        assert!(write_atomically(&target, b"data", None).is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("occupied")]);
    }
}
