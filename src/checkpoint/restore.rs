//! Putting files back as a checkpoint had them, without ever writing through a symbolic link
//! a command may have planted on the way.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::store::{CheckpointError, CheckpointId, CheckpointStore, io_err};

impl CheckpointStore {
    /// Puts `paths` back as they were in checkpoint `id`: files it had are written (with their
    /// mode), files it did not have are removed. The shadow index is left alone; the next
    /// snapshot sees the result.
    pub fn restore(&self, id: &CheckpointId, paths: &[&str]) -> Result<(), CheckpointError> {
        let entries = self.entries(id, paths)?;
        let wanted: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| entries.contains_key(*p))
            .collect();
        let ids: Vec<&str> = wanted.iter().map(|p| entries[*p].id.as_str()).collect();
        let contents = self.blobs(&ids)?;
        // Removals first: a file may come back where a directory was, or the other way round.
        for path in paths.iter().filter(|p| !entries.contains_key(**p)) {
            let full = self.safe_path(path)?;
            match std::fs::remove_file(&full) {
                Ok(()) => self.prune_empty_parents(&full),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(io_err(&full)(err)),
            }
        }
        for (path, bytes) in wanted.iter().zip(contents) {
            let full = self.safe_path(path)?;
            write_entry(&full, &bytes, &entries[*path].mode)?;
        }
        Ok(())
    }

    /// `path` inside the workspace, refusing to go through a symbolic link on the way (a
    /// command may have replaced a directory by a link to elsewhere).
    fn safe_path(&self, path: &str) -> Result<PathBuf, CheckpointError> {
        let rel = Path::new(path);
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(CheckpointError::Parse("a path outside the workspace"));
        }
        let mut at = self.git.work_tree.clone();
        let mut parts = rel.components().peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                break;
            }
            at.push(part);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(CheckpointError::SymlinkParent(path.to_string()));
            }
        }
        Ok(self.git.work_tree.join(rel))
    }

    /// Removes directories a removal left empty, up to the workspace.
    fn prune_empty_parents(&self, file: &Path) {
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == self.git.work_tree || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

fn write_entry(full: &Path, bytes: &[u8], mode: &str) -> Result<(), CheckpointError> {
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    // Whatever is there now (a file, a link, an empty directory) gives way.
    if let Ok(meta) = std::fs::symlink_metadata(full) {
        let removed = if meta.is_dir() {
            std::fs::remove_dir(full)
        } else {
            std::fs::remove_file(full)
        };
        removed.map_err(io_err(full))?;
    }
    if mode == "120000" {
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes);
        return std::os::unix::fs::symlink(target, full).map_err(io_err(full));
    }
    std::fs::write(full, bytes).map_err(io_err(full))?;
    if mode == "100755" {
        let mut perms = std::fs::metadata(full).map_err(io_err(full))?.permissions();
        perms.set_mode(perms.mode() | 0o111);
        std::fs::set_permissions(full, perms).map_err(io_err(full))?;
    }
    Ok(())
}
