//! The file-system side of `protect`: where git keeps what runs code (git dirs, their
//! `config*`, `commondir` and hooks), and the no-follow moves, removals and rename-over writes
//! that put entries back. Nothing here follows a symlink.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// How deep submodule names (`a/b/c`) and nesting are followed under `modules/`.
const MAX_MODULE_DEPTH: usize = 8;

/// The names in a git dir that decide what code runs: `config*` (`config`, `config.worktree`)
/// and `commondir` (which dir's config applies).
pub(super) fn protected_name(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.starts_with(b"config") || bytes == b"commondir"
}

/// The git dirs of a repository: itself, its worktrees' and its submodules' (any depth).
pub(super) fn git_dirs(workspace: &Path, root: &Path) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    let mut i = 0;
    while i < found.len() && found.len() < 4096 {
        let dir = found[i].clone();
        for sub in ["worktrees", "modules"] {
            collect_git_dirs(workspace, &dir.join(sub), 0, &mut found);
        }
        i += 1;
    }
    found
}

/// Below `modules/` a submodule named `a/b` lives in `a/b`: directories are followed until
/// one looks like a git dir.
pub(super) fn collect_git_dirs(
    workspace: &Path,
    rel: &Path,
    depth: usize,
    found: &mut Vec<PathBuf>,
) {
    if depth > MAX_MODULE_DEPTH || found.len() >= 4096 {
        return;
    }
    for name in child_names(&workspace.join(rel)) {
        let child = rel.join(&name);
        let abs = workspace.join(&child);
        if !std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let looks_git = ["HEAD", "config", "commondir", "hooks"]
            .iter()
            .any(|n| std::fs::symlink_metadata(abs.join(n)).is_ok());
        if looks_git {
            found.push(child);
        } else {
            collect_git_dirs(workspace, &child, depth + 1, found);
        }
    }
}

/// The entries of a directory with their types as `readdir` gives them (no `lstat` each).
pub(super) fn children(dir: &Path) -> Vec<(OsString, Option<std::fs::FileType>)> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| (e.file_name(), e.file_type().ok()))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A regular file named `*.sample`, which git never runs.
pub(super) fn sample_named(name: &OsStr, kind: Option<std::fs::FileType>) -> bool {
    Path::new(name).extension().is_some_and(|e| e == "sample") && kind.is_some_and(|k| k.is_file())
}

pub(super) fn child_names(dir: &Path) -> Vec<std::ffi::OsString> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.flatten().map(|e| e.file_name()).collect(),
        Err(_) => Vec::new(),
    }
}

pub(super) fn read_nofollow(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let mut data = Vec::new();
    file.read_to_end(&mut data).ok()?;
    Some(data)
}

/// A handle that follows a directory wherever it is renamed to.
pub(super) fn open_path(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
}

/// Where the directory behind `handle` is now; None when it was deleted.
pub(super) fn where_now(handle: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    let link = std::fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd())).ok()?;
    if link.as_os_str().as_encoded_bytes().ends_with(b" (deleted)") {
        return None;
    }
    Some(link)
}

/// Moves an entry out of the way under a new name beside it: `Some(None)` when it was an
/// empty directory and is simply gone, `Some(Some(name))` when it was moved.
pub(super) fn put_aside(path: &Path) -> Option<Option<PathBuf>> {
    if std::fs::remove_dir(path).is_ok() {
        return Some(None);
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    for n in 1..100 {
        let aside = path.with_file_name(format!("{name}.put-aside-{n}"));
        if std::fs::symlink_metadata(&aside).is_err() && std::fs::rename(path, &aside).is_ok() {
            return Some(Some(PathBuf::from(aside.file_name()?)));
        }
    }
    None
}

/// The first of `rel` and the directories above it that exists but is not a directory (a
/// symlink, a file); None when all are directories or one is missing.
pub(super) fn first_non_dir(workspace: &Path, rel: &Path) -> Option<PathBuf> {
    let mut prefix = PathBuf::new();
    for component in rel.components() {
        prefix.push(component);
        match std::fs::symlink_metadata(workspace.join(&prefix)) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Some(prefix),
            Err(_) => return None,
        }
    }
    None
}

pub(super) fn is_real_dir(workspace: &Path, rel: &Path) -> bool {
    parents_are_dirs(workspace, &rel.join("x"))
}

/// Every directory between the workspace and `rel` is a directory, not a symlink: writing
/// there cannot land elsewhere.
pub(super) fn parents_are_dirs(workspace: &Path, rel: &Path) -> bool {
    let mut path = workspace.to_path_buf();
    let Some(parent) = rel.parent() else {
        return true;
    };
    for component in parent.components() {
        let Component::Normal(name) = component else {
            return false;
        };
        path.push(name);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}

pub(super) fn is_sample(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sample")
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// Removes a file, link or whole directory (never following a link); whether it went.
pub(super) fn remove_any(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path).is_ok(),
        Ok(_) => std::fs::remove_file(path).is_ok(),
        Err(_) => false,
    }
}

/// Makes room for a file where the command left a directory: inside the protected set it is
/// removed; a directory put where a `.git` file was is moved aside (it may be a repository).
pub(super) fn clear_dir(path: &Path, now: Option<&std::fs::Metadata>) -> std::io::Result<()> {
    match now {
        Some(meta) if meta.is_dir() && path.file_name() == Some(OsStr::new(".git")) => {
            put_aside(path)
                .map(|_| ())
                .ok_or_else(|| std::io::Error::other("could not move the directory aside"))
        }
        Some(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        _ => Ok(()),
    }
}

pub(super) fn make_dir(
    path: &Path,
    now: Option<&std::fs::Metadata>,
    mode: u32,
) -> std::io::Result<()> {
    match now {
        Some(meta) if meta.is_dir() => {}
        Some(_) => {
            std::fs::remove_file(path)?;
            std::fs::create_dir(path)?;
        }
        None => std::fs::create_dir(path)?,
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A name beside `path` for a new entry that replaces it by rename.
pub(super) fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.cairn-{:08x}.tmp", fastrand::u32(..)))
}

/// Writes `data` to a new file and renames it over `path`: whatever the command linked to
/// the old inode keeps the old inode.
pub(super) fn write_new(path: &Path, data: &[u8], mode: u32) -> std::io::Result<()> {
    let temp = temp_beside(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&temp)?;
    let written = file
        .write_all(data)
        .and_then(|()| file.set_permissions(std::fs::Permissions::from_mode(mode)))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

pub(super) fn link_new(path: &Path, target: &Path) -> std::io::Result<()> {
    let temp = temp_beside(path);
    std::os::unix::fs::symlink(target, &temp)?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}
