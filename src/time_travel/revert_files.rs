//! The files a revert from the diff pane reads and writes, reached like the file tools reach
//! theirs: the path resolved to its real path, opened beneath the workspace (or, outside it,
//! beneath `/` at exactly that real path) with symlinks refused on the way, written atomically
//! (temp file and rename), permissions kept. Whoever holds a `FileToRevert` holds the path's
//! write-queue turn around `read` and the write, as the file tools do.
//!
//! A revert is the user's own act after a confirmation that names the path, so protected
//! places (`.git/config`, hooks, `.cairn/`, shell start-up files) and paths outside the
//! workspace are not refused: `warning` says why such a path matters, for the confirmation.

use std::fs::Metadata;
use std::os::unix::fs::PermissionsExt;

use crate::fs::confined::Beneath;
use crate::fs::file_store::{load, write_atomically};
use crate::fs::open_error;
use crate::fs::paths::{self, RealPath};
use crate::tools::{ToolEnv, ToolError};

/// One file of a revert.
#[derive(Debug, Clone)]
pub struct FileToRevert {
    pub real: RealPath,
    pub display: String,
    place: Beneath,
    /// Why the path needs the user's attention, if it does.
    pub warning: Option<String>,
}

/// The file as it is now; None when it does not exist.
pub struct CurrentFile {
    pub bytes: Vec<u8>,
    pub meta: Metadata,
}

impl FileToRevert {
    /// The file a change shows as `shown` (relative to the workspace, or absolute).
    pub fn resolve(env: &ToolEnv, shown: &str) -> Result<Self, ToolError> {
        let real = paths::resolve_in(&env.workspace, shown, env.files.home.as_deref())
            .map_err(|err| ToolError::io(format!("resolving {shown}"), err))?;
        let display = real.display_in(&env.workspace);
        let root = paths::workspace_root(&env.workspace);
        let inside = real.inside_workspace();
        let place = if inside {
            Beneath::new(&root, real.as_path())
        } else {
            Beneath::new(std::path::Path::new("/"), real.as_path())
        }
        .ok_or_else(|| crate::fs::changed(&display))?;
        let warning = match env.files.protected_write_in(&env.workspace, real.as_path()) {
            Some(why) => Some(why),
            None if !inside => Some(format!(
                "{} is outside the workspace",
                real.as_path().display()
            )),
            None => None,
        };
        Ok(Self {
            real,
            display,
            place,
            warning,
        })
    }

    /// The current content; None when the file does not exist.
    pub fn read(&self) -> Result<Option<CurrentFile>, ToolError> {
        let current = load(&self.place, &self.display)?;
        Ok(current.meta.map(|meta| CurrentFile {
            bytes: current.bytes,
            meta,
        }))
    }

    /// Replaces the file (or creates it, with its directories) with `bytes`. An existing
    /// file keeps its permissions; a new one gets the usual ones, plus the execute bits when
    /// `executable`.
    pub fn write(
        &self,
        current: Option<&Metadata>,
        bytes: &[u8],
        executable: bool,
    ) -> Result<(), ToolError> {
        let opened = match current {
            Some(_) => self.place.parent(),
            None => self.place.create_parent(),
        };
        let (dir, name) =
            opened.map_err(|err| open_error(&self.display, "opening the directory of", err))?;
        write_atomically(&dir, &name, bytes, current)
            .map_err(|err| open_error(&self.display, "writing", err))?;
        if current.is_none() && executable {
            let file = dir
                .open_regular(&name)
                .map_err(|_| crate::fs::changed(&self.display))?;
            let mut perms = file
                .metadata()
                .map_err(|err| ToolError::io(format!("reading {}", self.display), err))?
                .permissions();
            perms.set_mode(perms.mode() | ((perms.mode() & 0o444) >> 2));
            file.set_permissions(perms)
                .map_err(|err| ToolError::io(format!("making {} executable", self.display), err))?;
        }
        Ok(())
    }

    /// Deletes the file, then the directories above it that this left empty, up to the
    /// workspace (as a checkpoint restore does: checkpoints do not record empty directories).
    pub fn remove(&self) -> Result<(), ToolError> {
        let (dir, name) = self
            .place
            .parent()
            .map_err(|err| open_error(&self.display, "opening the directory of", err))?;
        dir.remove_file(&name)
            .map_err(|err| open_error(&self.display, "deleting", err))?;
        if self.real.inside_workspace() {
            for parent in self.place.rel.ancestors().skip(1) {
                if parent.as_os_str().is_empty() {
                    break;
                }
                let above = Beneath {
                    root: self.place.root.clone(),
                    rel: parent.to_path_buf(),
                };
                // Not empty (or gone, or swapped): the pruning stops there.
                let removed = above.parent().and_then(|(dir, name)| dir.remove_dir(&name));
                if removed.is_err() {
                    break;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::fs::places::FilePolicy;

    fn env(dir: &std::path::Path) -> std::sync::Arc<ToolEnv> {
        let dirs = crate::dirs::Dirs::new(dir.join("config"), dir.join("data"));
        std::sync::Arc::new(
            ToolEnv::new(dir.to_path_buf(), &dirs, Default::default()).with_files(FilePolicy::new(
                None,
                &[],
                &[],
            )),
        )
    }

    #[test]
    fn writes_and_removes_beneath_the_workspace_and_names_protected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        let file = FileToRevert::resolve(&env, "sub/new.sh").unwrap();
        assert!(file.warning.is_none());
        assert!(file.read().unwrap().is_none());
        file.write(None, b"#!/bin/sh\n", true).unwrap();
        let mode = std::fs::metadata(dir.path().join("sub/new.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o100, 0o100, "{mode:o}");
        std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
        file.remove().unwrap();
        assert!(
            !dir.path().join("sub").exists(),
            "the emptied directory goes too"
        );
        assert!(dir.path().join("keep.txt").exists());
        let nested = FileToRevert::resolve(&env, "a/b/c.txt").unwrap();
        nested.write(None, b"x", false).unwrap();
        std::fs::write(dir.path().join("a/other.txt"), "stays").unwrap();
        nested.remove().unwrap();
        assert!(!dir.path().join("a/b").exists());
        assert!(
            dir.path().join("a/other.txt").exists(),
            "a non-empty directory stays"
        );
        let hook = FileToRevert::resolve(&env, ".git/hooks/pre-commit").unwrap();
        assert!(hook.warning.unwrap().contains("git hook"));
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let env = env(dir.path());
        let file = FileToRevert::resolve(&env, "d/f.txt").unwrap();
        std::fs::remove_dir(dir.path().join("d")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("d")).unwrap();
        assert!(file.write(None, b"x", false).is_err());
        assert!(!outside.path().join("f.txt").exists());
    }
}
