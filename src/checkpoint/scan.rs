//! Looking at the workspace through directory handles (as the file tools do: a directory
//! swapped for a link is not entered): one path (what a notification named, what a file tool
//! wrote) or a whole subtree (the first snapshot, a new directory, the fallback where
//! notifications are unavailable or overflowed). What is found is hashed into the store only
//! when its stat moved since it was last hashed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::sys::stat::FileStat;

use super::objects::{ObjectDb, ObjectKind};
use super::rules::{IgnoreRules, MAX_FILE_BYTES};
use super::tree::{MODE_EXEC, MODE_FILE, MODE_LINK, Manifest, Stat, TreeEntry};
use super::watch::Watcher;
use crate::fs::confined::{DirHandle, OpenError};

/// Why paths are left out, by path (a nested repository's ends with `/`).
pub(super) type LeftOut = BTreeMap<Vec<u8>, String>;

pub(super) struct Scanner<'a> {
    pub root: &'a DirHandle,
    /// The workspace's path (for what a `.git` file names relative to its directory).
    pub workspace: &'a Path,
    pub db: &'a ObjectDb,
    pub rules: &'a mut IgnoreRules,
    pub manifest: &'a mut Manifest,
    pub left_out: &'a mut LeftOut,
    /// Told of every directory looked into, before it is read (so nothing made in it after
    /// the listing goes unnoticed).
    pub watcher: Option<&'a mut Watcher>,
    /// Seconds since the epoch now: a file changed this recently is "racy".
    pub now: i64,
}

fn kind_of(stat: &FileStat) -> u32 {
    stat.st_mode & libc::S_IFMT
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = dir.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&path[..0], path),
    }
}

impl Scanner<'_> {
    fn forget(&mut self, path: &[u8]) {
        self.manifest.remove(path);
        self.forget_beneath(path);
    }

    /// Forgets what was recorded beneath `path` and why `path` was left out, keeping the
    /// manifest's entry of `path` itself.
    fn forget_beneath(&mut self, path: &[u8]) {
        if self.manifest.beneath(path).next().is_some() {
            let gone: Vec<Vec<u8>> = self
                .manifest
                .beneath(path)
                .map(|(p, _)| p.clone())
                .collect();
            for p in gone {
                self.manifest.remove(&p);
            }
        }
        if self.left_out.is_empty() {
            return;
        }
        self.left_out.remove(path);
        let mut dir = path.to_vec();
        dir.push(b'/');
        self.left_out.remove(&dir);
        let under: Vec<Vec<u8>> = self
            .left_out
            .range(dir.clone()..)
            .take_while(|(p, _)| p.starts_with(&dir))
            .map(|(p, _)| p.clone())
            .collect();
        for p in under {
            self.left_out.remove(&p);
        }
    }

    /// Looks at one path again (it, or what is beneath it, may have changed).
    pub fn refresh(&mut self, path: &[u8]) -> std::io::Result<()> {
        if path.is_empty() {
            return self.scan_dir(b"");
        }
        let (parent, name) = split(path);
        // A repository made in the workspace since: its directory is looked at again (and
        // left out from now on).
        if name == b".git" && !parent.is_empty() {
            return self.scan_dir(parent);
        }
        if self.rules.leaves_out_with_parents(path, false) || self.in_nested_repository(path) {
            return Ok(());
        }
        let dir = match self.root.open_dir(Path::new(OsStr::from_bytes(parent))) {
            Ok(dir) => dir,
            Err(_) => {
                // The directory is gone, or is no directory now (a link, a file).
                self.forget(path);
                return Ok(());
            }
        };
        let stat = dir.stat(OsStr::from_bytes(name))?;
        self.look(&dir, parent, name, stat)
    }

    fn in_nested_repository(&self, path: &[u8]) -> bool {
        path.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .any(|(i, _)| self.left_out.contains_key(&path[..=i]))
    }

    /// Records what `name` in `dir` (at `parent`) is now.
    fn look(
        &mut self,
        dir: &DirHandle,
        parent: &[u8],
        name: &[u8],
        stat: Option<FileStat>,
    ) -> std::io::Result<()> {
        let path = join(parent, name);
        let Some(stat) = stat else {
            self.forget(&path);
            return Ok(());
        };
        let kind = kind_of(&stat);
        let is_dir = kind == libc::S_IFDIR;
        if self.rules.leaves_out(&path, is_dir) {
            self.forget(&path);
            return Ok(());
        }
        if is_dir {
            // What was a file there is not any more.
            self.manifest.entries.remove(&path);
            return self.scan_dir(&path);
        }
        // A file or link where a directory was: what was beneath it is gone. Its own entry
        // stays until `record` compares it (an unchanged stat is not read again).
        self.forget_beneath(&path);
        if !matches!(kind, libc::S_IFREG | libc::S_IFLNK) || stat.st_size as u64 > MAX_FILE_BYTES {
            self.manifest.remove(&path);
        }
        match kind {
            libc::S_IFREG if stat.st_size as u64 > MAX_FILE_BYTES => {
                self.left_out.insert(
                    path,
                    format!(
                        "{} MiB, over the 5 MiB limit",
                        stat.st_size as u64 / (1024 * 1024)
                    ),
                );
            }
            libc::S_IFREG | libc::S_IFLNK => self.record(dir, name, path, &stat)?,
            // FIFOs, sockets, devices: no content to record (and a FIFO blocks a reader).
            _ => {
                self.left_out.insert(
                    path,
                    "not a regular file (a FIFO, socket or device)".to_string(),
                );
            }
        }
        Ok(())
    }

    /// Hashes a file or link into the store unless its stat says it did not change.
    fn record(
        &mut self,
        dir: &DirHandle,
        name: &[u8],
        path: Vec<u8>,
        stat: &FileStat,
    ) -> std::io::Result<()> {
        let now = Stat::of(stat);
        if let Some(entry) = self.manifest.entries.get(&path)
            && entry.stat == now
            && !entry.racy
        {
            return Ok(());
        }
        let name = OsStr::from_bytes(name);
        let (mode, bytes) = if kind_of(stat) == libc::S_IFLNK {
            match dir.read_link(name) {
                Ok(target) => (MODE_LINK, target.as_bytes().to_vec()),
                // Gone since the stat: the next look sees it gone.
                Err(_) => {
                    self.manifest.remove(&path);
                    return Ok(());
                }
            }
        } else {
            let file = match dir.open_regular_stated(name, stat) {
                Ok(file) => file,
                Err(OpenError::Io(err)) => return Err(err),
                // Swapped or gone since the stat: looked at again when that is noticed.
                Err(_) => {
                    self.manifest.remove(&path);
                    return Ok(());
                }
            };
            let Ok(bytes) = read_sized(&file, stat.st_size as usize) else {
                // Unreadable now: left out of this checkpoint, looked at again next time.
                self.manifest.remove(&path);
                return Ok(());
            };
            let exec = stat.st_mode & 0o100 != 0;
            (if exec { MODE_EXEC } else { MODE_FILE }, bytes)
        };
        let oid = self.db.write(ObjectKind::Blob, &bytes)?;
        let racy = now.mtime.0 >= self.now - 1 || now.ctime.0 >= self.now - 1;
        self.manifest.set(
            path,
            TreeEntry {
                mode,
                oid,
                stat: now,
                racy,
            },
        );
        Ok(())
    }

    /// Looks at everything beneath directory `top` (relative; `""` for the workspace).
    pub fn scan_dir(&mut self, top: &[u8]) -> std::io::Result<()> {
        let handle = match self.root.open_dir(Path::new(OsStr::from_bytes(top))) {
            Ok(handle) => handle,
            Err(_) if !top.is_empty() => {
                self.forget(top);
                return Ok(());
            }
            Err(err) => return Err(err),
        };
        let mut stack = vec![(top.to_vec(), handle)];
        while let Some((rel, dir)) = stack.pop() {
            if let Some(watcher) = self.watcher.as_mut() {
                watcher.watch(&rel);
            }
            let names = dir.entries()?;
            // A repository of its own (a submodule, a clone): its files are its own.
            if !rel.is_empty() && is_repository(&dir, &self.workspace.join(OsStr::from_bytes(&rel)))
            {
                self.forget(&rel);
                let mut key = rel.clone();
                key.push(b'/');
                self.left_out
                    .insert(key, "a repository of its own".to_string());
                continue;
            }
            if !self.rules.frozen
                && names.iter().any(|(n, _)| n == ".gitignore")
                && let Ok(mut file) = dir.open_regular(OsStr::new(".gitignore"))
            {
                let mut text = String::new();
                if file.read_to_string(&mut text).is_ok() {
                    self.rules.add(
                        &if rel.is_empty() {
                            Vec::new()
                        } else {
                            join(&rel, b"")
                        },
                        &text,
                    );
                }
            }
            // What was recorded here and is gone.
            let present: std::collections::HashSet<&[u8]> =
                names.iter().map(|(n, _)| n.as_bytes()).collect();
            let prefix = if rel.is_empty() {
                Vec::new()
            } else {
                join(&rel, b"")
            };
            let mut gone: Vec<Vec<u8>> = Vec::new();
            for (path, _) in self.manifest.beneath(&rel) {
                let first = path[prefix.len()..]
                    .split(|&b| b == b'/')
                    .next()
                    .unwrap_or(b"");
                if !present.contains(first) {
                    gone.push(join(&rel, first));
                }
            }
            gone.dedup();
            for path in gone {
                self.forget(&path);
            }
            for (name, _) in &names {
                let name = name.as_bytes();
                let stat = dir.stat(OsStr::from_bytes(name))?;
                let path = join(&rel, name);
                match &stat {
                    Some(s) if kind_of(s) == libc::S_IFDIR => {
                        if self.rules.leaves_out(&path, true) {
                            self.forget(&path);
                            continue;
                        }
                        self.manifest.entries.remove(&path);
                        if let Ok(child) = dir.open_child_dir(OsStr::from_bytes(name)) {
                            stack.push((path, child));
                        }
                    }
                    _ => self.look(&dir, &rel, name, stat)?,
                }
            }
        }
        Ok(())
    }
}

/// A regular file's bytes, `size` of them as its stat said. One byte more is asked for, so
/// the usual case is one read: a regular file reads short only at its end. A file shrunk
/// since gives what it has, one grown since is read on to its end.
fn read_sized(mut file: &std::fs::File, size: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0; size + 1];
    let mut got = 0;
    loop {
        let asked = bytes.len() - got;
        match file.read(&mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if got == bytes.len() {
                    // Grown since the stat: on to the end.
                    file.read_to_end(&mut bytes)?;
                    return Ok(bytes);
                }
                if n < asked {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    bytes.truncate(got);
    Ok(bytes)
}

/// A directory with a `.git` directory, or a `.git` file naming one that exists (a linked
/// worktree, a submodule's checkout); a `.git` file naming nothing is just a file.
fn is_repository(dir: &DirHandle, at: &Path) -> bool {
    match dir.stat(OsStr::new(".git")) {
        Ok(Some(stat)) if kind_of(&stat) == libc::S_IFDIR => true,
        Ok(Some(stat)) if kind_of(&stat) == libc::S_IFREG => {
            let mut text = String::new();
            let Ok(mut file) = dir.open_regular(OsStr::new(".git")) else {
                return false;
            };
            if file.read_to_string(&mut text).is_err() {
                return false;
            }
            text.trim()
                .strip_prefix("gitdir:")
                .is_some_and(|target| at.join(target.trim()).is_dir())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::Write;

    use super::read_sized;

    #[test]
    fn a_file_is_read_whole_whether_it_shrank_or_grew_since_its_stat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let text = b"0123456789".repeat(1000);
        std::fs::write(&path, &text).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // As the stat said, bigger (shrunk since), smaller (grown since), and empty.
        assert_eq!(read_sized(&file, text.len()).unwrap(), text);
        for size in [text.len() + 100, 3, 0, text.len() - 1] {
            let file = std::fs::File::open(&path).unwrap();
            assert_eq!(read_sized(&file, size).unwrap(), text, "stat said {size}");
        }
        // Appended to between two reads: what is there when read.
        let mut grower = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        grower.write_all(b"more").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(read_sized(&file, text.len()).unwrap().len(), text.len() + 4);
    }
}
