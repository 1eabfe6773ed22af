//! Putting files back as a checkpoint had them. Every step goes through directory handles
//! opened beneath the workspace (`fs::confined`), never by path string: a directory a
//! command (or a background job still running) swaps for a symbolic link between two steps
//! is refused, not followed, so nothing is ever written or removed outside the workspace. A
//! file is written to a fresh temp name in its directory (`O_EXCL | O_NOFOLLOW`) and renamed
//! over the old one, so a link planted at the name is replaced, never written through.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path};

use super::error::{CheckpointError, io_err};
use super::store::{CheckpointId, CheckpointStore};
use crate::fs::confined::{DirHandle, is_swap};

impl CheckpointStore {
    /// Puts `paths` back as they were in checkpoint `id`: files it had are written (with their
    /// mode), files it did not have are removed. The next snapshot sees the result.
    pub fn restore(&self, id: &CheckpointId, paths: &[&str]) -> Result<(), CheckpointError> {
        for path in paths {
            check_relative(path)?;
        }
        let entries = self.entries(id, paths)?;
        let wanted: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| entries.contains_key(*p))
            .collect();
        let ids: Vec<&str> = wanted.iter().map(|p| entries[*p].id.as_str()).collect();
        let contents = self.blobs(&ids)?;
        let root = DirHandle::open_root(self.workspace()).map_err(io_err(self.workspace()))?;
        // Removals first: a file may come back where a directory was, or the other way round.
        for path in paths.iter().filter(|p| !entries.contains_key(**p)) {
            remove_entry(&root, path)?;
        }
        for (path, bytes) in wanted.iter().zip(contents) {
            write_entry(&root, path, &bytes, &entries[*path].mode)?;
        }
        Ok(())
    }
}

fn check_relative(path: &str) -> Result<(), CheckpointError> {
    let rel = Path::new(path);
    if path.is_empty() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(CheckpointError::Parse("a path outside the workspace"));
    }
    Ok(())
}

/// The parent directory of `path` (as a path beneath the root) and its last name.
fn split(path: &str) -> (&Path, &OsStr) {
    let rel = Path::new(path);
    (
        rel.parent().unwrap_or(Path::new("")),
        rel.file_name().unwrap_or(OsStr::new(path)),
    )
}

/// The error for a step refused because the tree changed under it.
fn refused(path: &str, err: io::Error) -> CheckpointError {
    if is_swap(&err) {
        CheckpointError::SymlinkParent(path.to_string())
    } else {
        CheckpointError::Io {
            path: path.into(),
            source: err,
        }
    }
}

/// Removes `path`, then the directories its removal left empty (up to the workspace).
fn remove_entry(root: &DirHandle, path: &str) -> Result<(), CheckpointError> {
    let (parent, name) = split(path);
    let dir = match root.open_dir(parent) {
        Ok(dir) => dir,
        // Its directory is gone already: so is the file.
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(refused(path, err)),
    };
    match dir.remove_file(name) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(refused(path, err)),
    }
    // Empty parents, deepest first; each removed through its own parent's handle (a parent
    // swapped for a link is not a directory to `unlinkat(AT_REMOVEDIR)`: it stays).
    let mut at = parent;
    while let (Some(up), Some(name)) = (at.parent(), at.file_name()) {
        let Ok(up_dir) = root.open_dir(up) else {
            break;
        };
        if up_dir.remove_dir(name).is_err() {
            break;
        }
        at = up;
    }
    Ok(())
}

fn write_entry(
    root: &DirHandle,
    path: &str,
    bytes: &[u8],
    mode: &str,
) -> Result<(), CheckpointError> {
    let (parent, name) = split(path);
    let dir = root.create_dirs(parent).map_err(|e| refused(path, e))?;
    // An empty directory where the file goes gives way (a full one is the user's: an error).
    if let Ok(Some(stat)) = dir.stat(name)
        && stat.st_mode & libc::S_IFMT == libc::S_IFDIR
    {
        dir.remove_dir(name).map_err(|e| refused(path, e))?;
    }
    let temp = temp_name();
    if mode == "120000" {
        dir.symlink(OsStr::from_bytes(bytes), &temp)
            .map_err(|e| refused(path, e))?;
    } else {
        let mut file = dir.create_new(&temp).map_err(|e| refused(path, e))?;
        let written = file.write_all(bytes).and_then(|()| {
            if mode == "100755" {
                let perms = file.metadata()?.permissions();
                file.set_permissions(std::fs::Permissions::from_mode(perms.mode() | 0o111))?;
            }
            Ok(())
        });
        if let Err(err) = written {
            let _ = dir.remove_file(&temp);
            return Err(refused(path, err));
        }
    }
    // Replaces whatever is at the name now (a file, a link: never followed).
    dir.rename(&temp, name).map_err(|e| {
        let _ = dir.remove_file(&temp);
        refused(path, e)
    })
}

/// A name in the file's directory no one else uses (short: the file's own name may already
/// be as long as names can be).
fn temp_name() -> OsString {
    OsString::from(format!(".cairn-restore-{:016x}", fastrand::u64(..)))
}
