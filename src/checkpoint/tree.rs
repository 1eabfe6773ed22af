//! Trees and commits as git encodes them, built from and read back into flat path maps. The
//! live state of the workspace (`Manifest`) is one sorted map of paths to blobs with the stat
//! data they were hashed from; byte order of full paths is git's tree order (a directory
//! sorts as its name plus `/`), so trees are written by one pass over the map, and the tree
//! of a directory none of whose paths changed is reused rather than written again.

use std::collections::{BTreeMap, HashMap};
use std::io;

use nix::sys::stat::FileStat;

use super::objects::{ObjectDb, ObjectKind, Oid, hex, parse_hex};

pub(super) const MODE_FILE: u32 = 0o100644;
pub(super) const MODE_EXEC: u32 = 0o100755;
pub(super) const MODE_LINK: u32 = 0o120000;
const MODE_TREE: u32 = 0o040000;
const MODE_GITLINK: u32 = 0o160000;

/// What a file's stat said when its blob was hashed: a file whose stat is unchanged is not
/// read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Stat {
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
    pub ino: u64,
    pub mode: u32,
}

impl Stat {
    pub fn of(stat: &FileStat) -> Self {
        Self {
            size: stat.st_size as u64,
            mtime: (stat.st_mtime, stat.st_mtime_nsec),
            ctime: (stat.st_ctime, stat.st_ctime_nsec),
            ino: stat.st_ino,
            mode: stat.st_mode,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TreeEntry {
    pub mode: u32,
    pub oid: Oid,
    pub stat: Stat,
    /// Changed within the file system's timestamp granularity of being hashed: a change in
    /// the same tick would keep the stat, so the next scan hashes it again (git's "racy").
    pub racy: bool,
}

/// The workspace as the last checkpoint recorded it.
#[derive(Debug, Default)]
pub(super) struct Manifest {
    pub entries: BTreeMap<Vec<u8>, TreeEntry>,
    /// Trees already written, by directory (`""` for the top, else `a/b/`).
    trees: HashMap<Vec<u8>, Oid>,
}

/// The directories of `path` (`""`, `a/`, `a/b/` for `a/b/c`).
fn dirs_of(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::once(&path[..0]).chain(
        path.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .map(|(i, _)| &path[..=i]),
    )
}

impl Manifest {
    fn touched(&mut self, path: &[u8]) {
        for dir in dirs_of(path) {
            self.trees.remove(dir);
        }
    }

    pub fn set(&mut self, path: Vec<u8>, entry: TreeEntry) {
        if self
            .entries
            .get(&path)
            .is_some_and(|e| e.oid == entry.oid && e.mode == entry.mode)
        {
            self.entries.insert(path, entry);
            return;
        }
        self.touched(&path);
        self.entries.insert(path, entry);
    }

    /// Removes `path` and everything beneath it; true when something was there.
    pub fn remove(&mut self, path: &[u8]) -> bool {
        let mut gone: Vec<Vec<u8>> = Vec::new();
        if self.entries.contains_key(path) {
            gone.push(path.to_vec());
        }
        gone.extend(self.beneath(path).map(|(p, _)| p.clone()));
        for p in &gone {
            self.entries.remove(p);
            self.touched(p);
        }
        !gone.is_empty()
    }

    /// The entries beneath directory `path` (`path/…`; everything for `""`).
    pub fn beneath<'a>(
        &'a self,
        path: &[u8],
    ) -> impl Iterator<Item = (&'a Vec<u8>, &'a TreeEntry)> {
        let mut prefix = path.to_vec();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        let end = {
            let mut end = prefix.clone();
            // Everything starting with `prefix`: up to the prefix with its last byte + 1
            // (`/` + 1 = `0`); the top has no bound.
            if let Some(last) = end.last_mut() {
                *last += 1;
            }
            end
        };
        let range = self.entries.range(prefix.clone()..);
        range.take_while(move |(p, _)| end.is_empty() || p.as_slice() < end.as_slice())
    }

    /// Writes the trees of the whole map (reusing those of unchanged directories); the top
    /// tree's id.
    pub fn write_trees(&mut self, db: &ObjectDb) -> io::Result<Oid> {
        let entries: Vec<(&Vec<u8>, &TreeEntry)> = self.entries.iter().collect();
        let mut written = Vec::new();
        let top = build(&entries, 0, b"", &self.trees, db, &mut written)?;
        self.trees.extend(written);
        Ok(top)
    }
}

/// The tree of directory `dir` (a prefix ending in `/`, or empty) from the sorted entries
/// beneath it (`entries`, all starting with `dir`); `skip` = `dir.len()`.
fn build(
    entries: &[(&Vec<u8>, &TreeEntry)],
    skip: usize,
    dir: &[u8],
    cache: &HashMap<Vec<u8>, Oid>,
    db: &ObjectDb,
    written: &mut Vec<(Vec<u8>, Oid)>,
) -> io::Result<Oid> {
    if let Some(oid) = cache.get(dir) {
        return Ok(*oid);
    }
    let mut tree = Vec::with_capacity(entries.len() * 40);
    let mut i = 0;
    while i < entries.len() {
        let (path, entry) = entries[i];
        let rest = &path[skip..];
        match memchr::memchr(b'/', rest) {
            None => {
                push_entry(&mut tree, entry.mode, rest, &entry.oid);
                i += 1;
            }
            Some(slash) => {
                let sub = &path[..skip + slash + 1];
                let end = i + entries[i..].partition_point(|(p, _)| p.starts_with(sub));
                let oid = build(&entries[i..end], sub.len(), sub, cache, db, written)?;
                push_entry(&mut tree, MODE_TREE, &rest[..slash], &oid);
                i = end;
            }
        }
    }
    let oid = db.write(ObjectKind::Tree, &tree)?;
    written.push((dir.to_vec(), oid));
    Ok(oid)
}

fn push_entry(tree: &mut Vec<u8>, mode: u32, name: &[u8], oid: &Oid) {
    tree.extend_from_slice(format!("{mode:o} ").as_bytes());
    tree.extend_from_slice(name);
    tree.push(0);
    tree.extend_from_slice(oid);
}

/// A tree's entries: (name, mode, id).
pub(super) fn read_tree(db: &ObjectDb, oid: &Oid) -> io::Result<Vec<(Vec<u8>, u32, Oid)>> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "corrupt tree");
    let Some((ObjectKind::Tree, bytes)) = db.read(oid)? else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("tree {} is not in the store", hex(oid)),
        ));
    };
    let mut out = Vec::new();
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let space = memchr::memchr(b' ', rest).ok_or_else(bad)?;
        let mode = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|m| u32::from_str_radix(m, 8).ok())
            .ok_or_else(bad)?;
        rest = &rest[space + 1..];
        let nul = memchr::memchr(0, rest).ok_or_else(bad)?;
        let name = rest[..nul].to_vec();
        let id = rest.get(nul + 1..nul + 21).ok_or_else(bad)?;
        let mut oid = [0u8; 20];
        oid.copy_from_slice(id);
        out.push((name, mode, oid));
        rest = &rest[nul + 21..];
    }
    Ok(out)
}

/// Every blob beneath a tree, by full path (gitlinks left out: not ours).
pub(super) fn flatten(db: &ObjectDb, tree: &Oid) -> io::Result<BTreeMap<Vec<u8>, (u32, Oid)>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(Vec::new(), *tree)];
    while let Some((prefix, oid)) = stack.pop() {
        for (name, mode, id) in read_tree(db, &oid)? {
            let mut path = prefix.clone();
            path.extend_from_slice(&name);
            if mode == MODE_TREE {
                path.push(b'/');
                stack.push((path, id));
            } else if mode != MODE_GITLINK {
                out.insert(path, (mode, id));
            }
        }
    }
    Ok(out)
}

/// A blob on one side of a change: (mode, id).
pub(super) type Side = Option<(u32, Oid)>;

/// The paths that differ between two trees, in path order; identical subtrees are not read.
pub(super) fn diff_trees(
    db: &ObjectDb,
    a: &Oid,
    b: &Oid,
) -> io::Result<Vec<(Vec<u8>, Side, Side)>> {
    let mut out = Vec::new();
    diff_into(db, Vec::new(), Some(*a), Some(*b), &mut out)?;
    out.sort_by(|x, y| x.0.cmp(&y.0));
    Ok(out)
}

fn diff_into(
    db: &ObjectDb,
    prefix: Vec<u8>,
    a: Option<Oid>,
    b: Option<Oid>,
    out: &mut Vec<(Vec<u8>, Side, Side)>,
) -> io::Result<()> {
    if a == b {
        return Ok(());
    }
    let read = |t: Option<Oid>| -> io::Result<Vec<(Vec<u8>, u32, Oid)>> {
        t.map_or(Ok(Vec::new()), |t| read_tree(db, &t))
    };
    let mut left: BTreeMap<Vec<u8>, (u32, Oid)> =
        read(a)?.into_iter().map(|(n, m, o)| (n, (m, o))).collect();
    for (name, mode, oid) in read(b)? {
        let old = left.remove(&name);
        side_pair(db, &prefix, &name, old, Some((mode, oid)), out)?;
    }
    for (name, old) in left {
        side_pair(db, &prefix, &name, Some(old), None, out)?;
    }
    Ok(())
}

fn side_pair(
    db: &ObjectDb,
    prefix: &[u8],
    name: &[u8],
    old: Side,
    new: Side,
    out: &mut Vec<(Vec<u8>, Side, Side)>,
) -> io::Result<()> {
    if old == new {
        return Ok(());
    }
    let mut path = prefix.to_vec();
    path.extend_from_slice(name);
    let tree = |s: Side| s.filter(|(m, _)| *m == MODE_TREE).map(|(_, o)| o);
    let blob = |s: Side| s.filter(|(m, _)| *m != MODE_TREE && *m != MODE_GITLINK);
    let (old_tree, new_tree) = (tree(old), tree(new));
    if old_tree.is_some() || new_tree.is_some() {
        let mut sub = path.clone();
        sub.push(b'/');
        diff_into(db, sub, old_tree, new_tree, out)?;
    }
    let (old_blob, new_blob) = (blob(old), blob(new));
    if old_blob != new_blob {
        out.push((path, old_blob, new_blob));
    }
    Ok(())
}

/// A checkpoint commit of `tree`. No parent (each checkpoint is kept by its own ref, so the
/// size budget can drop the oldest); the previous checkpoint is named in the message, which
/// keeps a return to an earlier state a new checkpoint, as with a parent.
pub(super) fn commit_bytes(tree: &Oid, previous: Option<&Oid>) -> Vec<u8> {
    let sig = "cairn <cairn@localhost> 946684800 +0000";
    let mut text = format!(
        "tree {}\nauthor {sig}\ncommitter {sig}\n\ncairn checkpoint\n",
        hex(tree)
    );
    if let Some(previous) = previous {
        text.push_str(&format!("\nafter {}\n", hex(previous)));
    }
    text.into_bytes()
}

/// The tree a commit records.
pub(super) fn tree_of_commit(db: &ObjectDb, commit: &Oid) -> io::Result<Option<Oid>> {
    let Some((ObjectKind::Commit, bytes)) = db.read(commit)? else {
        return Ok(None);
    };
    Ok(bytes
        .strip_prefix(b"tree ")
        .and_then(|rest| rest.get(..40))
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(parse_hex))
}
