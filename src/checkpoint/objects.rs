//! The shadow repository's object database, read and written in-process: loose objects
//! (`objects/xx/…`, zlib-compressed `<kind> <size>\0<bytes>`, named by their SHA-1) and
//! packs (`pack_write`) are written here exactly as git writes them, and read back together
//! with the packs `git repack` makes in the background (`pack_read`). No git
//! process is involved, and no configuration, attribute or hook is read: only bytes.

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha1::{Digest, Sha1};

mod pack_read;
mod pack_write;

use pack_read::Pack;
use pack_write::{PackPipe, write_pack};

/// A git object id.
pub(super) type Oid = [u8; 20];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ObjectKind {
    Commit,
    Tree,
    Blob,
    Tag,
}

impl ObjectKind {
    fn name(self) -> &'static str {
        match self {
            ObjectKind::Commit => "commit",
            ObjectKind::Tree => "tree",
            ObjectKind::Blob => "blob",
            ObjectKind::Tag => "tag",
        }
    }

    fn of_name(name: &[u8]) -> Option<Self> {
        Some(match name {
            b"commit" => ObjectKind::Commit,
            b"tree" => ObjectKind::Tree,
            b"blob" => ObjectKind::Blob,
            b"tag" => ObjectKind::Tag,
            _ => return None,
        })
    }

    pub(super) fn of_pack_type(code: u8) -> Option<Self> {
        Some(match code {
            1 => ObjectKind::Commit,
            2 => ObjectKind::Tree,
            3 => ObjectKind::Blob,
            4 => ObjectKind::Tag,
            _ => return None,
        })
    }
}

pub(super) fn hex(oid: &Oid) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(40);
    for b in oid {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

pub(super) fn parse_hex(text: &str) -> Option<Oid> {
    let bytes = text.as_bytes();
    if bytes.len() != 40 {
        return None;
    }
    let mut oid = [0u8; 20];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let digit = |c: u8| (c as char).to_digit(16);
        oid[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
    }
    Some(oid)
}

/// The id git gives `bytes` as an object of `kind`.
pub(super) fn hash(kind: ObjectKind, bytes: &[u8]) -> Oid {
    let mut hasher = Sha1::new();
    hasher.update(format!("{} {}\0", kind.name(), bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher.finalize().into()
}

/// One repository's objects.
#[derive(Debug, Clone)]
pub(super) struct ObjectDb {
    dir: PathBuf,
    packs: Arc<Mutex<Packs>>,
    /// While a scan may add many objects: they go into one pack instead of a file each.
    bulk: Arc<Mutex<Option<Bulk>>>,
    /// What this process wrote since maintenance last looked (`take_written`).
    written: Arc<Mutex<Written>>,
    /// Objects hashed and not yet written (`defer`): read from here until `flush` wrote them.
    deferred: Arc<Mutex<Deferred>>,
    /// One `flush` at a time (so an object is written once, in the order asked).
    flushing: Arc<Mutex<()>>,
}

/// New objects kept in memory while `on`, in the order they were made.
#[derive(Debug, Default)]
struct Deferred {
    on: bool,
    objects: Vec<(Oid, ObjectKind, Arc<Vec<u8>>)>,
    by_id: HashMap<Oid, usize>,
}

/// Objects and bytes written (compressed where loose, raw where packed: an upper bound).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Written {
    pub objects: usize,
    pub bytes: u64,
}

/// Objects written during a bulk: the first few kept back (a scan that found little writes
/// them as one small pack), the rest handed to a pack written by a thread of its own.
#[derive(Debug, Default)]
struct Bulk {
    held: Vec<(Oid, ObjectKind, Vec<u8>)>,
    pack: Option<PackPipe>,
    ids: std::collections::HashSet<Oid>,
    /// The loose fan-out directories there were when the bulk began: an object whose
    /// directory was not there is not looked for loose (a fresh store's walk asks the file
    /// system nothing per object).
    fanouts: [u64; 4],
}

/// More new objects than this in one bulk go into a pack.
const BULK_LOOSE: usize = 64;

#[derive(Debug, Default)]
struct Packs {
    /// By the pack's file name, so a rescan keeps what is loaded.
    loaded: HashMap<PathBuf, Arc<Pack>>,
    /// The pack directory's mtime when it was last listed: a miss lists it again only when
    /// it moved (a scan of 20,000 new files would otherwise list it 20,000 times).
    listed_at: Option<std::time::SystemTime>,
    /// The pack directory's mtime when it was last listed, settled or not.
    listed_at_any: Option<std::time::SystemTime>,
}

/// A directory whose mtime is at least this old is trusted not to have changed within the
/// same tick (git's racy rule): younger, it is listed again on every miss.
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

impl ObjectDb {
    pub fn new(objects: &Path) -> Self {
        Self {
            dir: objects.to_path_buf(),
            packs: Arc::default(),
            bulk: Arc::default(),
            written: Arc::default(),
            deferred: Arc::default(),
            flushing: Arc::default(),
        }
    }

    fn deferred(&self) -> std::sync::MutexGuard<'_, Deferred> {
        self.deferred.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// From now until `flush`, new (non-bulk) objects are hashed and kept in memory: a
    /// checkpoint's id is known, and readable in this process, before any file is written.
    pub fn defer(&self) {
        self.deferred().on = true;
    }

    /// New objects are written again as they come (what was deferred stays in memory until
    /// `flush`).
    pub fn stop_deferring(&self) {
        self.deferred().on = false;
    }

    /// Writes what was deferred, oldest first, all of it in one pack (a single object
    /// loose). A pack is two new files where loose objects are one each plus their fan-out
    /// directories, and creating files is most of a flush's cost on a busy file system;
    /// maintenance merges the small packs (`maintain`).
    pub fn flush(&self) -> io::Result<()> {
        let _one = self.flushing.lock().unwrap_or_else(|e| e.into_inner());
        let objects = self.deferred().objects.clone();
        if objects.is_empty() {
            return Ok(());
        }
        let new: Vec<_> = objects
            .iter()
            .filter(|(oid, _, _)| !self.in_loaded_packs(oid))
            .collect();
        let new: Vec<(Oid, ObjectKind, &[u8])> = new
            .iter()
            .map(|(oid, kind, bytes)| (*oid, *kind, bytes.as_slice()))
            .collect();
        self.write_together(&new)?;
        // Readers found them here until now; from now on, on disk.
        let mut deferred = self.deferred();
        let written = objects.len().min(deferred.objects.len());
        deferred.objects.drain(..written);
        deferred.by_id = deferred
            .objects
            .iter()
            .enumerate()
            .map(|(i, (oid, _, _))| (*oid, i))
            .collect();
        Ok(())
    }

    /// What was written since the last call (and starts counting afresh).
    pub(super) fn take_written(&self) -> Written {
        std::mem::take(&mut *self.written.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds `back` to what is counted (a look that did not act on it).
    pub(super) fn put_back_written(&self, back: Written) {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written.objects += back.objects;
        written.bytes += back.bytes;
    }

    fn count_written(&self, bytes: usize) {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written.objects += 1;
        written.bytes += bytes as u64;
    }

    fn bulk(&self) -> std::sync::MutexGuard<'_, Option<Bulk>> {
        self.bulk.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// From now until `end_bulk`, new objects may be packed together. The packs are listed
    /// once now, not again on every miss: an object another process packs meanwhile is at
    /// worst written twice (git keeps either copy), never taken for stored when it is not.
    pub fn begin_bulk(&self) {
        let mut fanouts = [0u64; 4];
        for entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if let Some(byte) = name
                .to_str()
                .filter(|n| n.len() == 2)
                .and_then(|n| u8::from_str_radix(n, 16).ok())
            {
                fanouts[usize::from(byte >> 6)] |= 1 << (byte & 63);
            }
        }
        // An id no pack has: the miss lists the pack directory.
        let _ = self.find_packed_as(&[0; 20], false);
        *self.bulk() = Some(Bulk {
            fanouts,
            ..Bulk::default()
        });
    }

    /// Writes out what the bulk held: the pack its thread wrote, or the few objects it kept
    /// back as one small pack of their own (one loose object when it was one).
    pub fn end_bulk(&self) -> io::Result<()> {
        let Some(bulk) = self.bulk().take() else {
            return Ok(());
        };
        let held: Vec<(Oid, ObjectKind, &[u8])> = bulk
            .held
            .iter()
            .map(|(oid, kind, bytes)| (*oid, *kind, bytes.as_slice()))
            .collect();
        self.write_together(&held)?;
        if let Some(pack) = bulk.pack {
            let idx = pack.finish(&self.dir.join("pack"))?;
            self.remember_pack(&idx);
        }
        Ok(())
    }

    fn loose_path(&self, oid: &Oid) -> PathBuf {
        let name = hex(oid);
        let mut path = PathBuf::with_capacity(self.dir.as_os_str().len() + 42);
        path.push(&self.dir);
        path.push(&name[..2]);
        path.push(&name[2..]);
        path
    }

    /// Writes `bytes` as an object of `kind` (nothing when it is there already).
    pub fn write(&self, kind: ObjectKind, bytes: &[u8]) -> io::Result<Oid> {
        let oid = hash(kind, bytes);
        let mut guard = self.bulk();
        if let Some(bulk) = guard.as_mut() {
            if bulk.ids.contains(&oid) || self.stored_before_bulk(bulk, &oid) {
                return Ok(oid);
            }
            bulk.ids.insert(oid);
            if bulk.pack.is_none() && bulk.held.len() < BULK_LOOSE {
                bulk.held.push((oid, kind, bytes.to_vec()));
                return Ok(oid);
            }
            let pack = match bulk.pack.as_mut() {
                Some(pack) => pack,
                None => bulk.pack.insert(PackPipe::start(&self.dir.join("pack"))?),
            };
            for (oid, kind, bytes) in std::mem::take(&mut bulk.held) {
                pack.add(kind, bytes, oid)?;
            }
            pack.add(kind, bytes.to_vec(), oid)?;
            drop(guard);
            self.count_written(bytes.len());
            return Ok(oid);
        }
        drop(guard);
        let mut deferred = self.deferred();
        if deferred.by_id.contains_key(&oid) {
            return Ok(oid);
        }
        if deferred.on {
            // Only what this process knows without asking the file system (a deferred
            // checkpoint is on the agent's path): an object stored loose, or in a pack not
            // listed yet, is written again at worst, and git keeps either copy.
            if !self.in_loaded_packs(&oid) {
                let at = deferred.objects.len();
                deferred.objects.push((oid, kind, Arc::new(bytes.to_vec())));
                deferred.by_id.insert(oid, at);
            }
            return Ok(oid);
        }
        drop(deferred);
        if !self.stored(&oid) {
            self.write_loose(kind, bytes, &oid)?;
        }
        Ok(oid)
    }

    /// Whether the store holds `oid`, as far as a writer needs to know: a pack that appeared
    /// within the pack directory's last tick may be missed, which costs a duplicate loose
    /// copy (harmless: git keeps either), never a lost object.
    fn stored(&self, oid: &Oid) -> bool {
        self.loose_path(oid).exists() || self.find_packed_as(oid, false).is_some()
    }

    /// `stored`, as the store was when `bulk` began.
    fn stored_before_bulk(&self, bulk: &Bulk, oid: &Oid) -> bool {
        let fanout = bulk.fanouts[usize::from(oid[0] >> 6)] & (1 << (oid[0] & 63)) != 0;
        self.in_loaded_packs(oid) || fanout && self.loose_path(oid).exists()
    }

    /// `objects` as one small pack (one object: loose), counted towards maintenance.
    fn write_together(&self, objects: &[(Oid, ObjectKind, &[u8])]) -> io::Result<()> {
        match objects {
            [] => return Ok(()),
            [(oid, kind, bytes)] => self.write_loose(*kind, bytes, oid)?,
            _ => {
                let idx = write_pack(&self.dir.join("pack"), objects)?;
                self.remember_pack(&idx);
                for (_, _, bytes) in objects {
                    self.count_written(bytes.len());
                }
            }
        }
        Ok(())
    }

    /// A pack this process just wrote is read at once: what is in it is found without
    /// listing the pack directory again (a writer's `stored`, a reader's miss).
    fn remember_pack(&self, idx: &Path) {
        if let Ok(pack) = Pack::open(idx) {
            let mut packs = self.packs.lock().unwrap_or_else(|e| e.into_inner());
            packs.loaded.insert(idx.to_path_buf(), Arc::new(pack));
        }
    }

    /// Whether a pack already read holds `oid` (no file system access).
    fn in_loaded_packs(&self, oid: &Oid) -> bool {
        let packs = self.packs.lock().unwrap_or_else(|e| e.into_inner());
        packs.loaded.values().any(|p| p.offset_of(oid).is_some())
    }

    fn write_loose(&self, kind: ObjectKind, bytes: &[u8], oid: &Oid) -> io::Result<()> {
        let path = self.loose_path(oid);
        let dir = path.parent().unwrap_or(&self.dir);
        let header = format!("{} {}\0", kind.name(), bytes.len());
        let compressed = deflate(&[header.as_bytes(), bytes])?;
        self.count_written(compressed.len());
        // Written whole under a temp name, then renamed: a reader (or a crash) never sees half
        // an object under its id. The fan-out directory is made only when it is missing.
        let temp = dir.join(format!("tmp_obj_{:016x}", fastrand::u64(..)));
        match std::fs::write(&temp, &compressed) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)?;
                std::fs::write(&temp, &compressed)?;
            }
            other => other?,
        }
        std::fs::rename(&temp, &path)
    }

    /// Reads an object; Ok(None) when the store does not have it.
    pub fn read(&self, oid: &Oid) -> io::Result<Option<(ObjectKind, Vec<u8>)>> {
        {
            let deferred = self.deferred();
            if let Some(&at) = deferred.by_id.get(oid) {
                let (_, kind, bytes) = &deferred.objects[at];
                return Ok(Some((*kind, bytes.as_ref().clone())));
            }
        }
        match std::fs::read(self.loose_path(oid)) {
            Ok(compressed) => return decode_loose(&compressed).map(Some),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
        match self.find_packed(oid) {
            Some((pack, offset)) => pack.read_at(offset, self).map(Some),
            // A pack `git repack` wrote since, while the loose copy was being removed.
            None => match std::fs::read(self.loose_path(oid)) {
                Ok(compressed) => decode_loose(&compressed).map(Some),
                Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(err),
            },
        }
    }

    fn find_packed(&self, oid: &Oid) -> Option<(Arc<Pack>, u64)> {
        self.find_packed_as(oid, true)
    }

    /// `young_relists`: a pack directory changed within the last `SETTLED` is listed again
    /// on every miss (what a read needs: a pack `git repack` wrote this tick must be found);
    /// else only when its mtime moved since it was listed.
    fn find_packed_as(&self, oid: &Oid, young_relists: bool) -> Option<(Arc<Pack>, u64)> {
        let found = |packs: &Packs| {
            packs
                .loaded
                .values()
                .find_map(|p| p.offset_of(oid).map(|o| (Arc::clone(p), o)))
        };
        let mut packs = self.packs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = found(&packs) {
            return Some(hit);
        }
        // Packs appear (repack) and vanish (repack -d): look again on a miss, unless the
        // directory did not move since it was listed.
        let pack_dir = self.dir.join("pack");
        let mtime = std::fs::metadata(&pack_dir).and_then(|m| m.modified()).ok();
        let settled = mtime.is_some_and(|t| t.elapsed().is_ok_and(|age| age >= SETTLED));
        let unchanged_since = if young_relists {
            packs.listed_at
        } else {
            packs.listed_at_any
        };
        if (settled || !young_relists) && mtime.is_some() && mtime == unchanged_since {
            return None;
        }
        packs.listed_at_any = mtime;
        packs.listed_at = if settled { mtime } else { None };
        let mut now: HashMap<PathBuf, Arc<Pack>> = HashMap::new();
        for entry in std::fs::read_dir(&pack_dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "idx") {
                continue;
            }
            if let Some(pack) = packs.loaded.get(&path) {
                now.insert(path, Arc::clone(pack));
            } else if let Ok(pack) = Pack::open(&path) {
                now.insert(path, Arc::new(pack));
            }
        }
        packs.loaded = now;
        found(&packs)
    }
}

/// `parts`, one after the other, as one zlib stream. Fast compression (level 1) for every
/// object: a checkpoint is on the agent's path. The backend is zlib-rs, whose level 1 costs
/// about half its level 2 or miniz_oxide's level 1 (6 against 11-13 µs for a 1 KB source
/// file) for about a third more on disk (`git repack`, in the background, stores deltas
/// anyway). One compressor per thread, reset for each object: a new one allocates and clears
/// its tables, which for a small file costs more than compressing it.
pub(super) fn deflate(parts: &[&[u8]]) -> io::Result<Vec<u8>> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    thread_local! {
        static COMPRESS: std::cell::RefCell<Compress> =
            std::cell::RefCell::new(Compress::new(Compression::fast(), true));
    }
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out = Vec::with_capacity(total / 2 + 64);
    COMPRESS.with_borrow_mut(|compress| {
        compress.reset();
        for (i, part) in parts.iter().enumerate() {
            let last = i + 1 == parts.len();
            let flush = if last {
                FlushCompress::Finish
            } else {
                FlushCompress::None
            };
            let mut input = *part;
            loop {
                if out.len() == out.capacity() {
                    out.reserve(out.capacity().max(256));
                }
                let consumed_before = compress.total_in();
                let status = compress
                    .compress_vec(input, &mut out, flush)
                    .map_err(|e| io::Error::other(e.to_string()))?;
                let consumed = (compress.total_in() - consumed_before) as usize;
                input = &input[consumed..];
                match status {
                    Status::StreamEnd => break,
                    _ if !last && input.is_empty() => break,
                    _ => {}
                }
            }
        }
        Ok(out)
    })
}

pub(super) fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt object: {what}"),
    )
}

fn decode_loose(compressed: &[u8]) -> io::Result<(ObjectKind, Vec<u8>)> {
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(compressed).read_to_end(&mut raw)?;
    let nul = memchr::memchr(0, &raw).ok_or_else(|| corrupt("no header"))?;
    let header = &raw[..nul];
    let space = memchr::memchr(b' ', header).ok_or_else(|| corrupt("header"))?;
    let kind = ObjectKind::of_name(&header[..space]).ok_or_else(|| corrupt("kind"))?;
    Ok((kind, raw[nul + 1..].to_vec()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// One compressor serves every object in turn: each comes back whole, whatever came
    /// before it (empty, tiny, large and incompressible).
    #[test]
    fn objects_compressed_one_after_another_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let db = ObjectDb::new(dir.path());
        let noise: Vec<u8> = (0..3_000_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let texts: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"x".to_vec(),
            noise.clone(),
            b"fn main() {}\n".repeat(500),
            Vec::new(),
        ];
        let ids: Vec<Oid> = texts
            .iter()
            .map(|t| db.write(ObjectKind::Blob, t).unwrap())
            .collect();
        for (id, text) in ids.iter().zip(&texts) {
            assert_eq!(db.read(id).unwrap(), Some((ObjectKind::Blob, text.clone())));
        }
    }
}
