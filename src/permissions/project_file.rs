//! The project's `.cairn/config.toml` as cairn itself writes it (the approval prompt's "always
//! in this project"): read and written beneath a handle on the workspace, never through a
//! symlink (a `.cairn` or `config.toml` planted as a link to `~/.bashrc` or the user's own
//! config is refused, not written through), replaced atomically (temp file and rename in the
//! `.cairn` directory's handle), and the text written handed back, so the trust store can
//! trust exactly those bytes and nothing another process puts in the file meanwhile.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::fs::confined::{Beneath, OpenError};
use crate::fs::paths::workspace_root;
use crate::permissions::rules::{RulesError, project_config};

/// The config's place beneath the workspace's real path.
fn place(workspace: &Path) -> Result<Beneath, RulesError> {
    let root = workspace_root(workspace);
    Beneath::new(&root, &project_config(&root)).ok_or_else(|| RulesError::Read {
        path: project_config(workspace),
        source: std::io::Error::other("not beneath the workspace"),
    })
}

/// The config's bytes (`None`: there is none), read without following a symlink.
pub fn read(workspace: &Path) -> Result<Option<Vec<u8>>, RulesError> {
    let path = project_config(workspace);
    let failed = |source| RulesError::Read {
        path: path.clone(),
        source,
    };
    let (dir, name) = match place(workspace)?.parent() {
        Ok(found) => found,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(failed(err)),
    };
    let mut file = match dir.open_regular(&name) {
        Ok(file) => file,
        Err(OpenError::Missing) => return Ok(None),
        Err(OpenError::Io(err)) => return Err(failed(err)),
        Err(OpenError::Symlink) => return Err(failed(symlink())),
        Err(OpenError::Directory | OpenError::NotRegular) => {
            return Err(failed(std::io::Error::other("not a regular file")));
        }
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(failed)?;
    Ok(Some(bytes))
}

/// `current` (the config's text, if any) with `prefix` added to `permissions.allow`; other
/// keys are kept (comments are not).
pub fn with_allow_rule(
    current: Option<&str>,
    path: &Path,
    prefix: &str,
) -> Result<String, RulesError> {
    let invalid = |message: &str| RulesError::Invalid {
        path: path.to_path_buf(),
        message: message.into(),
    };
    let mut table = match current {
        Some(text) => text
            .parse::<toml::Table>()
            .map_err(|err| invalid(&err.to_string()))?,
        None => toml::Table::new(),
    };
    let permissions = table
        .entry("permissions")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| invalid("`permissions` must be a table"))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| toml::Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| invalid("`permissions.allow` must be a list of strings"))?;
    let prefix = prefix.trim();
    if !allow.iter().any(|v| v.as_str() == Some(prefix)) {
        allow.push(toml::Value::String(prefix.to_string()));
    }
    toml::to_string(&table).map_err(|err| invalid(&err.to_string()))
}

/// Replaces the config with `text` (creating `.cairn/` when missing), beneath the workspace
/// and without following a symlink. Returns the file's path.
pub fn write(workspace: &Path, text: &str) -> Result<PathBuf, RulesError> {
    let path = project_config(workspace);
    let failed = |source| RulesError::Write {
        path: path.clone(),
        source,
    };
    let place = place(workspace)?;
    let (dir, name) = place.create_parent().map_err(|err| {
        if crate::fs::confined::is_swap(&err) {
            failed(symlink())
        } else {
            failed(err)
        }
    })?;
    let temp = OsString::from(format!(".config.toml.cairn-{:08x}.tmp", fastrand::u32(..)));
    let mut file = dir.create_new(&temp).map_err(failed)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    drop(file);
    // A rename replaces a symlink at `name` itself, never its target.
    match written.and_then(|()| dir.rename(&temp, &name)) {
        Ok(()) => Ok(path),
        Err(err) => {
            let _ = dir.remove_file(&temp);
            Err(failed(err))
        }
    }
}

fn symlink() -> std::io::Error {
    std::io::Error::other("it is a symlink (or lies behind one); cairn does not follow it")
}

/// Appends `prefix` to the `allow` list of the project's `.cairn/config.toml`, creating the
/// file when needed; other keys are kept (comments are not). Read and written beneath the
/// workspace, never through a symlink (`project_file`). Returns the file written. The agent
/// saves through `TrustStore::save_rule`, which also keeps the trust decision exact.
pub fn save_project_rule(workspace: &Path, prefix: &str) -> Result<PathBuf, RulesError> {
    let current = read(workspace)?;
    let current = current.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let text = with_allow_rule(current.as_deref(), &project_config(workspace), prefix)?;
    write(workspace, &text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_config_or_directory_planted_as_a_link_is_not_written_through() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("bashrc");
        std::fs::write(&target, "# rc\n").unwrap();
        std::fs::create_dir(ws.path().join(".cairn")).unwrap();
        std::os::unix::fs::symlink(&target, ws.path().join(".cairn/config.toml")).unwrap();
        let err = read(ws.path()).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        // Writing replaces the link itself, never what it points at.
        write(ws.path(), "[permissions]\nallow = [\"make\"]\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "# rc\n");
        assert!(!ws.path().join(".cairn/config.toml").is_symlink());

        let other = tempfile::tempdir().unwrap();
        std::fs::remove_dir_all(ws.path().join(".cairn")).unwrap();
        std::os::unix::fs::symlink(other.path(), ws.path().join(".cairn")).unwrap();
        let err = write(ws.path(), "x = 1\n").unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        assert_eq!(std::fs::read_dir(other.path()).unwrap().count(), 0);
    }
}
