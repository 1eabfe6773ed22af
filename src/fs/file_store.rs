//! Loading and storing files for write_file and edit_file, always while holding the path's
//! `WriteTurn`: load the current content and check it against the read stamp, then store the
//! new content atomically (temp file in the same directory + rename, both relative to the
//! directory's handle opened beneath the workspace — see `confined` —, permissions kept),
//! record the new stamp (so the model's next edit needs no re-read) and diff the change.
//!
//! When a front end holds the files' text (`buffers`: an editor's open buffers), `load_text`
//! and `store_text` take the text from it and give the new text to it; the disk still says
//! what the file is (confinement, kind, existence), and the stamps are of the text the model
//! saw. Both block on the front end's answer, so they run on a blocking thread, as `load` and
//! `store` do.

use std::ffi::{OsStr, OsString};
use std::fs::Metadata;
use std::io::{ErrorKind, Read, Write};

use super::buffers::Buffers;
use super::confined::{Beneath, DirHandle, OpenError};
use super::diff::diff_files;
use super::paths::RealPath;
use super::read_state::{FileStamp, ReadTracker};
use super::{FileError, changed, open_error};
use crate::tool_output::FileChange;

/// A file as found on disk just before a change.
pub struct Current {
    pub bytes: Vec<u8>,
    /// None when the file does not exist yet.
    pub meta: Option<Metadata>,
}

/// Loads the file at `place` (opened beneath its root, symlinks refused). A missing file —
/// or a missing parent directory — is `Ok` with no metadata; a directory is an error.
pub fn load(place: &Beneath, display: &str) -> Result<Current, FileError> {
    let missing = || Current {
        bytes: Vec::new(),
        meta: None,
    };
    let (dir, name) = match place.parent() {
        Ok(found) => found,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(missing()),
        Err(err) => return Err(open_error(display, "reading", err)),
    };
    let mut file = match dir.open_regular(&name) {
        Ok(file) => file,
        Err(OpenError::Missing) => return Ok(missing()),
        Err(OpenError::Directory) => {
            return Err(FileError::Failed(format!(
                "{display} is a directory, not a file"
            )));
        }
        Err(OpenError::NotRegular) => {
            return Err(FileError::Failed(format!(
                "{display} is not a regular file (a device, pipe or socket); it cannot be written"
            )));
        }
        Err(OpenError::Symlink) => return Err(changed(display)),
        Err(OpenError::Io(err)) => return Err(open_error(display, "reading", err)),
    };
    let meta = file
        .metadata()
        .map_err(|err| FileError::io(format!("reading {display}"), err))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|err| super::would_block(display, err))?;
    Ok(Current {
        bytes,
        meta: Some(meta),
    })
}

/// `load`, with the front end's text of an existing file in place of its bytes on disk (the
/// buffer, unsaved changes included). Runs on a blocking thread of the runtime: it waits for
/// the front end's answer there.
pub fn load_text(
    buffers: Option<&dyn Buffers>,
    place: &Beneath,
    display: &str,
    real: &RealPath,
) -> Result<Current, FileError> {
    let mut current = load(place, display)?;
    if let Some(buffers) = buffers
        && current.meta.is_some()
    {
        let text = tokio::runtime::Handle::current()
            .block_on(buffers.read(real.as_path()))
            .map_err(|err| {
                FileError::Failed(format!("{display}: the editor could not read it: {err}"))
            })?;
        current.bytes = text.into_bytes();
    }
    Ok(current)
}

/// `store`, through the front end when one holds the files' text: it is handed the new text
/// (missing parent directories are created beneath the place's root first) and stores it
/// itself; the stamp recorded is of that text. Runs on a blocking thread, as `load_text`.
#[allow(clippy::too_many_arguments)]
pub fn store_text(
    buffers: Option<&dyn Buffers>,
    reads: &ReadTracker,
    real: &RealPath,
    place: &Beneath,
    display: &str,
    current: &Current,
    after: &[u8],
    replacements: usize,
) -> Result<FileChange, FileError> {
    let Some(buffers) = buffers else {
        return store(reads, real, place, display, current, after, replacements);
    };
    if current.meta.is_none() {
        place
            .create_parent()
            .map_err(|err| open_error(display, "creating the directories of", err))?;
    }
    if current.meta.is_none() || current.bytes != after {
        let text = std::str::from_utf8(after).map_err(|_| {
            FileError::Failed(format!(
                "{display}: the new content is not UTF-8 text, which the editor cannot take; nothing was written"
            ))
        })?;
        tokio::runtime::Handle::current()
            .block_on(buffers.write(real.as_path(), text))
            .map_err(|err| {
                FileError::Failed(format!("{display}: the editor did not write it: {err}"))
            })?;
    }
    reads.record(real, FileStamp::of_content(after, None));
    Ok(change_of(current, after, display, replacements))
}

/// Refuses to change an existing file the model has not read, or that changed since.
pub fn check_fresh(
    reads: &ReadTracker,
    real: &RealPath,
    display: &str,
    current: &Current,
) -> Result<(), FileError> {
    match &current.meta {
        Some(meta) => reads.check_fresh(real, display, &FileStamp::of_bytes(&current.bytes, meta)),
        None => Ok(()),
    }
}

/// Stores `after` in place of `current` at `place`, records its stamp and returns the change.
/// Missing parent directories are created beneath the place's root.
pub fn store(
    reads: &ReadTracker,
    real: &RealPath,
    place: &Beneath,
    display: &str,
    current: &Current,
    after: &[u8],
    replacements: usize,
) -> Result<FileChange, FileError> {
    let opened = if current.meta.is_none() {
        place.create_parent()
    } else {
        place.parent()
    };
    let (dir, name) =
        opened.map_err(|err| open_error(display, "creating the directories of", err))?;
    // Rewriting identical bytes would only bump the modification time under other tools.
    let meta = match &current.meta {
        Some(meta) if current.bytes == after => meta.clone(),
        old => write_atomically(&dir, &name, after, old.as_ref())
            .map_err(|err| open_error(display, "writing", err))?,
    };
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

/// Writes `bytes` to a temp file in `dir` and renames it over `name` (both relative to the
/// directory's handle), so readers see the old or the new content, never a mix. An existing
/// file's permissions are kept; a new file gets the usual `0666 & !umask`. Returns the new
/// file's metadata.
pub fn write_atomically(
    dir: &DirHandle,
    name: &OsStr,
    bytes: &[u8],
    old: Option<&Metadata>,
) -> std::io::Result<Metadata> {
    let (temp, mut file) = create_temp(dir, name)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(old) = old {
            file.set_permissions(old.permissions())?;
        }
        let meta = file.metadata()?;
        drop(file);
        dir.rename(&temp, name)?;
        Ok(meta)
    })();
    if result.is_err() {
        let _ = dir.remove_file(&temp);
    }
    result
}

fn create_temp(dir: &DirHandle, name: &OsStr) -> std::io::Result<(OsString, std::fs::File)> {
    let name = name.to_string_lossy();
    let mut attempts = 0;
    loop {
        let temp = OsString::from(format!(".{name}.cairn-{:08x}.tmp", fastrand::u32(..)));
        match dir.create_new(&temp) {
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
        let handle = DirHandle::open_root(dir.path()).unwrap();
        write_atomically(&handle, OsStr::new("run.sh"), b"new\n", Some(&meta)).unwrap();
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
        let handle = DirHandle::open_root(dir.path()).unwrap();
        assert!(write_atomically(&handle, OsStr::new("occupied"), b"data", None).is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("occupied")]);
    }
}
