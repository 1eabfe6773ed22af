//! Opening files beneath a directory handle, so that nothing swapped into the tree between the
//! permission check and the use (a directory replaced by a symlink to `~`) can carry a read or
//! a write elsewhere. The gate checks a canonical path (`RealPath`: no symlinks, no `..`); here
//! that path is opened from a handle on its root with symlinks refused, so it is reached
//! exactly as checked or not at all.
//!
//! Linux ≥ 5.6 resolves the whole relative path in one `openat2` call with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`; where `openat2` is missing (older kernels,
//! seccomp filters answering ENOSYS or EPERM, other Unixes) the same walk is done one component
//! at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`, which is equivalent because the path has
//! no `..` and may contain no symlink. Temp files are created, renamed and removed relative to
//! the parent's handle (`openat`, `renameat`, `unlinkat`), and missing parents are made with
//! `mkdirat` beneath it. No new dependency: `nix` already wraps every call (cap-std would
//! bring its own resolver and an extra crate for what is a few calls here).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{FileStat, Mode, SFlag};

/// Set once `openat2` turned out to be unavailable, so later calls go straight to the walk.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_NOFOLLOW);

/// A checked path as it is opened: a root directory (the workspace, a readable root, or `/`
/// for a path outside them that the gate passed) and the canonical path beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beneath {
    pub root: PathBuf,
    pub rel: PathBuf,
}

impl Beneath {
    /// `real` (canonical) beneath `root` (canonical); `None` when it is not under it.
    pub fn new(root: &Path, real: &Path) -> Option<Self> {
        let rel = real.strip_prefix(root).ok()?;
        rel.components()
            .all(|c| matches!(c, Component::Normal(_)))
            .then(|| Self {
                root: root.to_path_buf(),
                rel: rel.to_path_buf(),
            })
    }

    /// The directory itself.
    pub fn dir(&self) -> io::Result<DirHandle> {
        DirHandle::open_root(&self.root)?.open_dir(&self.rel)
    }

    /// The parent directory's handle and the final name.
    pub fn parent(&self) -> io::Result<(DirHandle, OsString)> {
        let (parent, name) = self.split()?;
        Ok((DirHandle::open_root(&self.root)?.open_dir(parent)?, name))
    }

    /// Like `parent`, creating missing directories on the way (beneath the root).
    pub fn create_parent(&self) -> io::Result<(DirHandle, OsString)> {
        let (parent, name) = self.split()?;
        Ok((DirHandle::open_root(&self.root)?.create_dirs(parent)?, name))
    }

    fn split(&self) -> io::Result<(&Path, OsString)> {
        let name = self.rel.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path names a directory")
        })?;
        Ok((
            self.rel.parent().unwrap_or(Path::new("")),
            name.to_os_string(),
        ))
    }
}

/// An open directory; everything below it is reached from this handle, never by path string.
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
}

impl DirHandle {
    /// Opens a root directory by its path (the one part of a path the user vouched for).
    pub fn open_root(path: &Path) -> io::Result<Self> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(path, flags, Mode::empty())?;
        Ok(Self { fd })
    }

    /// Opens the directory `rel` beneath this one. `rel` is canonical, so a symlink or `..`
    /// met on the way means the tree changed since it was checked: refused (ELOOP / EXDEV).
    pub fn open_dir(&self, rel: &Path) -> io::Result<DirHandle> {
        check_plain(rel)?;
        if rel.as_os_str().is_empty() {
            return Ok(Self {
                fd: self.fd.try_clone()?,
            });
        }
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            match self.open_dir_openat2(rel) {
                Ok(dir) => return Ok(dir),
                // Not there (old kernel), or filtered out (containers' seccomp).
                Err(Errno::ENOSYS | Errno::EPERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
                // A rename raced the lookup: the walk below decides.
                Err(Errno::EAGAIN) => {}
                Err(err) => return Err(err.into()),
            }
        }
        self.open_dir_walk(rel)
    }

    #[cfg(target_os = "linux")]
    fn open_dir_openat2(&self, rel: &Path) -> Result<DirHandle, Errno> {
        use nix::fcntl::{OpenHow, ResolveFlag};
        let how = OpenHow::new().flags(DIR_FLAGS).resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
        nix::fcntl::openat2(&self.fd, rel, how).map(|fd| Self { fd })
    }

    #[cfg(not(target_os = "linux"))]
    fn open_dir_openat2(&self, _rel: &Path) -> Result<DirHandle, Errno> {
        Err(Errno::ENOSYS)
    }

    /// The fallback: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
    pub(crate) fn open_dir_walk(&self, rel: &Path) -> io::Result<DirHandle> {
        check_plain(rel)?;
        let mut current = Self {
            fd: self.fd.try_clone()?,
        };
        for part in rel.components() {
            let fd = nix::fcntl::openat(&current.fd, part.as_os_str(), DIR_FLAGS, Mode::empty())?;
            current = Self { fd };
        }
        Ok(current)
    }

    /// Opens the directory `name` (one component) in this one; a symlink is refused (ELOOP),
    /// so a directory swapped for a link after it was listed is not entered.
    pub fn open_child_dir(&self, name: &OsStr) -> io::Result<DirHandle> {
        let fd = nix::fcntl::openat(&self.fd, name, DIR_FLAGS, Mode::empty())?;
        Ok(Self { fd })
    }

    /// The names in this directory (without `.` and `..`) and their types as the listing
    /// gives them (`None` where the file system does not say). Read from a fresh open of `.`,
    /// so the listing has its own offset and this handle stays usable.
    pub fn entries(&self) -> io::Result<Vec<(OsString, Option<nix::dir::Type>)>> {
        use std::os::unix::ffi::OsStrExt;
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::openat(&self.fd, ".", flags, Mode::empty())?;
        let mut dir = nix::dir::Dir::from_fd(fd)?;
        let mut out = Vec::new();
        for entry in dir.iter() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                out.push((OsStr::from_bytes(name).to_os_string(), entry.file_type()));
            }
        }
        Ok(out)
    }

    /// Opens the regular file `rel` beneath this directory following symlinks only while they
    /// stay beneath it (`RESOLVE_BENEATH`; a link's target is trusted as far as this handle
    /// is). `Symlink` where `openat2` is missing: without it nothing can follow safely.
    pub fn open_regular_beneath(&self, rel: &Path) -> Result<File, OpenError> {
        let fail = |err: Errno| match err {
            Errno::ENOENT => OpenError::Missing,
            Errno::ENOSYS | Errno::EPERM | Errno::ELOOP | Errno::EXDEV => OpenError::Symlink,
            err => OpenError::Io(err.into()),
        };
        let stat = |fd: &OwnedFd| nix::sys::stat::fstat(fd).map_err(|e| OpenError::Io(e.into()));
        // First only located (O_PATH opens nothing), so a device is never opened; then opened
        // and checked to be the same file.
        let located = stat(&self.open_beneath(rel, true).map_err(fail)?)?;
        kind_of(&located)?;
        let fd = self.open_beneath(rel, false).map_err(fail)?;
        let opened = stat(&fd)?;
        kind_of(&opened)?;
        if (opened.st_dev, opened.st_ino) != (located.st_dev, located.st_ino) {
            return Err(OpenError::Symlink);
        }
        Ok(File::from(fd))
    }

    #[cfg(target_os = "linux")]
    fn open_beneath(&self, rel: &Path, only_locate: bool) -> Result<OwnedFd, Errno> {
        use nix::fcntl::{OpenHow, ResolveFlag};
        let mode = if only_locate {
            OFlag::O_PATH
        } else {
            OFlag::O_RDONLY
        };
        let flags = mode | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
        let how = OpenHow::new()
            .flags(flags)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        nix::fcntl::openat2(&self.fd, rel, how)
    }

    #[cfg(not(target_os = "linux"))]
    fn open_beneath(&self, _rel: &Path, _only_locate: bool) -> Result<OwnedFd, Errno> {
        Err(Errno::ENOSYS)
    }

    /// Opens `rel` beneath this directory, creating what is missing (mode 0777 & !umask).
    pub fn create_dirs(&self, rel: &Path) -> io::Result<DirHandle> {
        check_plain(rel)?;
        let mut current = Self {
            fd: self.fd.try_clone()?,
        };
        for part in rel.components() {
            let name = part.as_os_str();
            match nix::sys::stat::mkdirat(&current.fd, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(err) => return Err(err.into()),
            }
            let fd = nix::fcntl::openat(&current.fd, name, DIR_FLAGS, Mode::empty())?;
            current = Self { fd };
        }
        Ok(current)
    }

    /// `lstat` of an entry; `None` when it does not exist.
    pub fn stat(&self, name: &OsStr) -> io::Result<Option<FileStat>> {
        match nix::sys::stat::fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Opens an entry for reading without following a symlink and without blocking on a
    /// FIFO or a device; then only a regular file is accepted (checked on the open handle, so
    /// nothing swapped in after a `stat` can slip through).
    pub fn open_regular(&self, name: &OsStr) -> Result<File, OpenError> {
        // A stat first, so a device is not even opened (opening some has side effects).
        match self.stat(name).map_err(OpenError::Io)? {
            None => Err(OpenError::Missing),
            Some(stat) => self.open_regular_stated(name, &stat),
        }
    }

    /// `open_regular` of an entry the caller has just stat'ed (`stat`, not following a
    /// link): not stat'ed again before the open, and refused when what was opened is not the
    /// file that stat saw (swapped since).
    pub fn open_regular_stated(&self, name: &OsStr, stat: &FileStat) -> Result<File, OpenError> {
        kind_of(stat)?;
        let flags = OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY
            | OFlag::O_CLOEXEC;
        let fd = match nix::fcntl::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Err(OpenError::Missing),
            Err(Errno::ELOOP) => return Err(OpenError::Symlink),
            Err(err) => return Err(OpenError::Io(err.into())),
        };
        let opened = nix::sys::stat::fstat(&fd).map_err(|e| OpenError::Io(e.into()))?;
        kind_of(&opened)?;
        if (opened.st_dev, opened.st_ino) != (stat.st_dev, stat.st_ino) {
            return Err(OpenError::Missing);
        }
        // O_NONBLOCK stays: ordinary files ignore it, and the kernel's "regular" files that
        // wait for data (`/proc/kmsg`) answer EAGAIN instead of hanging the read.
        Ok(File::from(fd))
    }

    /// Creates a new file (fails if the name exists, never follows a symlink).
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::openat(&self.fd, name, flags, Mode::from_bits_truncate(0o666))?;
        Ok(File::from(fd))
    }

    /// Renames within this directory (atomic replacement of `to`).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        nix::fcntl::renameat(&self.fd, from, &self.fd, to)?;
        Ok(())
    }

    /// The target of the symbolic link `name` (read from this directory, not followed).
    pub fn read_link(&self, name: &OsStr) -> io::Result<OsString> {
        Ok(nix::fcntl::readlinkat(&self.fd, name)?)
    }

    /// Creates the symbolic link `name` pointing at `target` (fails if the name exists).
    pub fn symlink(&self, target: &OsStr, name: &OsStr) -> io::Result<()> {
        nix::unistd::symlinkat(target, &self.fd, name)?;
        Ok(())
    }

    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        nix::unistd::unlinkat(&self.fd, name, nix::unistd::UnlinkatFlags::NoRemoveDir)?;
        Ok(())
    }

    /// Removes an empty directory (fails when it is not empty or not a directory).
    pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        nix::unistd::unlinkat(&self.fd, name, nix::unistd::UnlinkatFlags::RemoveDir)?;
        Ok(())
    }
}

/// Why an entry could not be opened for reading.
#[derive(Debug)]
pub enum OpenError {
    Missing,
    Directory,
    /// A FIFO, socket or device.
    NotRegular,
    /// A symlink where the checked path had none: the tree changed since the check.
    Symlink,
    Io(io::Error),
}

fn kind_of(stat: &FileStat) -> Result<(), OpenError> {
    let kind = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
    match kind {
        SFlag::S_IFREG => Ok(()),
        SFlag::S_IFDIR => Err(OpenError::Directory),
        SFlag::S_IFLNK => Err(OpenError::Symlink),
        _ => Err(OpenError::NotRegular),
    }
}

/// Only plain names: a canonical path never has `..`, `.` or a root in its relative part.
fn check_plain(rel: &Path) -> io::Result<()> {
    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a plain relative path", rel.display()),
        ))
    }
}

/// True when an error means the tree changed under the call (a symlink or an escape appeared
/// where the checked path had a directory).
pub fn is_swap(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error().map(Errno::from_raw),
        Some(Errno::ELOOP | Errno::EXDEV | Errno::ENOTDIR)
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Read;

    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn a_file_opened_on_an_earlier_stat_is_refused_when_it_was_swapped_since() {
        let (_dir, root) = root();
        std::fs::write(root.join("f"), "first").unwrap();
        let handle = DirHandle::open_root(&root).unwrap();
        let stat = handle.stat(OsStr::new("f")).unwrap().unwrap();
        let mut text = String::new();
        handle
            .open_regular_stated(OsStr::new("f"), &stat)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "first");
        // Another file renamed over it, a link, a FIFO: none is what the stat saw.
        std::fs::write(root.join("other"), "second").unwrap();
        std::fs::rename(root.join("other"), root.join("f")).unwrap();
        assert!(matches!(
            handle.open_regular_stated(OsStr::new("f"), &stat),
            Err(OpenError::Missing)
        ));
        std::fs::remove_file(root.join("f")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("f")).unwrap();
        assert!(matches!(
            handle.open_regular_stated(OsStr::new("f"), &stat),
            Err(OpenError::Symlink)
        ));
        std::fs::remove_file(root.join("f")).unwrap();
        nix::unistd::mkfifo(&root.join("f"), Mode::from_bits_truncate(0o600)).unwrap();
        assert!(handle.open_regular_stated(OsStr::new("f"), &stat).is_err());
        // A stat that is not of a regular file is refused before anything is opened.
        let fifo = handle.stat(OsStr::new("f")).unwrap().unwrap();
        assert!(matches!(
            handle.open_regular_stated(OsStr::new("f"), &fifo),
            Err(OpenError::NotRegular)
        ));
    }

    #[test]
    fn a_symlinked_directory_on_the_way_is_refused_by_both_resolvers() {
        let (_dir, root) = root();
        let (_other, outside) = self::root();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("inner-link")).unwrap();
        let handle = DirHandle::open_root(&root).unwrap();
        assert!(handle.open_dir(Path::new("real")).is_ok());
        assert!(handle.open_dir_walk(Path::new("real")).is_ok());
        for rel in ["link", "inner-link"] {
            let err = handle.open_dir(Path::new(rel)).unwrap_err();
            assert!(is_swap(&err), "{rel}: {err}");
            let err = handle.open_dir_walk(Path::new(rel)).unwrap_err();
            assert!(is_swap(&err), "{rel}: {err}");
        }
        assert!(handle.open_dir(Path::new("real/../link")).is_err());
    }

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let (_dir, root) = root();
        nix::unistd::mkfifo(&root.join("pipe"), Mode::S_IRWXU).unwrap();
        std::fs::write(root.join("f"), "text").unwrap();
        std::os::unix::fs::symlink(root.join("f"), root.join("alias")).unwrap();
        let handle = DirHandle::open_root(&root).unwrap();
        assert!(matches!(
            handle.open_regular(OsStr::new("pipe")),
            Err(OpenError::NotRegular)
        ));
        assert!(matches!(
            handle.open_regular(OsStr::new("alias")),
            Err(OpenError::Symlink)
        ));
        let mut text = String::new();
        handle
            .open_regular(OsStr::new("f"))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "text");
        let dev = DirHandle::open_root(Path::new("/dev")).unwrap();
        assert!(matches!(
            dev.open_regular(OsStr::new("zero")),
            Err(OpenError::NotRegular)
        ));
    }

    #[test]
    fn parents_are_created_beneath_the_root() {
        let (_dir, root) = root();
        let place = Beneath::new(&root, &root.join("a/b/c.txt")).unwrap();
        let (dir, name) = place.create_parent().unwrap();
        assert_eq!(name, "c.txt");
        let mut file = dir.create_new(&name).unwrap();
        std::io::Write::write_all(&mut file, b"x").unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("a/b/c.txt")).unwrap(),
            "x"
        );
        assert!(Beneath::new(&root, Path::new("/elsewhere")).is_none());
    }
}
