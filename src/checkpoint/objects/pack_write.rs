//! Writing packs (version 2, whole objects only) and their indexes as `git index-pack` would:
//! a deferred checkpoint's few objects in one go (`write_pack`: built in memory, one write
//! each for the pack and its index), and the first walk's many as they are found
//! (`PackPipe`: compressed and written by a thread of its own while the walk reads and
//! hashes, so the two cores share the walk). Either way the pack is renamed into place before
//! its index, and a reader finds a pack only by its index: a crash never shows half a pack.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use sha1::{Digest, Sha1};

use super::{ObjectKind, Oid, deflate, hex};

/// (id, CRC-32 of the entry as stored, offset in the pack)
type IndexEntry = (Oid, u32, u64);

/// One entry as stored: its type-and-size header and its compressed bytes.
fn entry(kind: ObjectKind, bytes: &[u8]) -> io::Result<(Vec<u8>, Vec<u8>, u32)> {
    let code: u8 = match kind {
        ObjectKind::Commit => 1,
        ObjectKind::Tree => 2,
        ObjectKind::Blob => 3,
        ObjectKind::Tag => 4,
    };
    let mut size = bytes.len();
    let mut header = vec![(code << 4) | (size & 0x0f) as u8];
    size >>= 4;
    while size > 0 {
        if let Some(last) = header.last_mut() {
            *last |= 0x80;
        }
        header.push((size & 0x7f) as u8);
        size >>= 7;
    }
    let data = deflate(&[bytes])?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header);
    crc.update(&data);
    Ok((header, data, crc.finalize()))
}

fn pack_header(count: u32) -> [u8; 12] {
    let mut header = *b"PACK\0\0\0\x02\0\0\0\0";
    header[8..].copy_from_slice(&count.to_be_bytes());
    header
}

/// The version 2 index of a pack whose checksum is `sum`.
fn index(mut entries: Vec<IndexEntry>, sum: &Oid) -> Vec<u8> {
    entries.sort_by_key(|e| e.0);
    let mut idx = vec![0xff, b't', b'O', b'c', 0, 0, 0, 2];
    let mut fanout = [0u32; 256];
    for (oid, _, _) in &entries {
        fanout[usize::from(oid[0])] += 1;
    }
    let mut total = 0;
    for slot in fanout {
        total += slot;
        idx.extend_from_slice(&total.to_be_bytes());
    }
    for (oid, _, _) in &entries {
        idx.extend_from_slice(oid);
    }
    for (_, crc, _) in &entries {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for (_, _, offset) in &entries {
        if *offset < 0x8000_0000 {
            idx.extend_from_slice(&(*offset as u32).to_be_bytes());
        } else {
            idx.extend_from_slice(&(0x8000_0000 | (large.len() / 8) as u32).to_be_bytes());
            large.extend_from_slice(&offset.to_be_bytes());
        }
    }
    idx.extend_from_slice(&large);
    idx.extend_from_slice(sum);
    let idx_sum: Oid = Sha1::digest(&idx).into();
    idx.extend_from_slice(&idx_sum);
    idx
}

fn temp_path(pack_dir: &Path, what: &str) -> PathBuf {
    pack_dir.join(format!("tmp_{what}_{:016x}", fastrand::u64(..)))
}

/// Renames the whole pack at `temp` into place, then writes its index (the index last: a
/// reader finds a pack only once both are whole); the index's path.
fn install(
    pack_dir: &Path,
    temp: &Path,
    sum: &Oid,
    entries: Vec<IndexEntry>,
) -> io::Result<PathBuf> {
    let name = format!("pack-{}", hex(sum));
    std::fs::rename(temp, pack_dir.join(format!("{name}.pack")))?;
    let idx_temp = temp_path(pack_dir, "idx");
    std::fs::write(&idx_temp, index(entries, sum))?;
    let idx = pack_dir.join(format!("{name}.idx"));
    std::fs::rename(&idx_temp, &idx)?;
    Ok(idx)
}

/// Writes `objects` (known ahead, a deferred checkpoint's) as one pack: built in memory, so
/// its checksum needs no reading back. The path of its index.
pub(super) fn write_pack(
    pack_dir: &Path,
    objects: &[(Oid, ObjectKind, &[u8])],
) -> io::Result<PathBuf> {
    std::fs::create_dir_all(pack_dir)?;
    let mut pack = Vec::with_capacity(objects.iter().map(|o| o.2.len() / 2 + 16).sum());
    pack.extend_from_slice(&pack_header(objects.len() as u32));
    let mut entries = Vec::with_capacity(objects.len());
    for (oid, kind, bytes) in objects {
        let (header, data, crc) = entry(*kind, bytes)?;
        entries.push((*oid, crc, pack.len() as u64));
        pack.extend_from_slice(&header);
        pack.extend_from_slice(&data);
    }
    let sum: Oid = Sha1::digest(&pack).into();
    pack.extend_from_slice(&sum);
    let temp = temp_path(pack_dir, "pack");
    if let Err(err) = std::fs::write(&temp, &pack) {
        let _ = std::fs::remove_file(&temp);
        return Err(err);
    }
    install(pack_dir, &temp, &sum, entries)
}

/// A pack written as its objects come (their number patched in at the end).
#[derive(Debug)]
struct PackFile {
    temp: PathBuf,
    file: io::BufWriter<File>,
    offset: u64,
    entries: Vec<IndexEntry>,
}

impl PackFile {
    fn new(pack_dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(pack_dir)?;
        let temp = temp_path(pack_dir, "pack");
        let mut file = io::BufWriter::new(File::create(&temp)?);
        file.write_all(&pack_header(0))?;
        Ok(Self {
            temp,
            file,
            offset: 12,
            entries: Vec::new(),
        })
    }

    fn add(&mut self, kind: ObjectKind, bytes: &[u8], oid: Oid) -> io::Result<()> {
        let (header, data, crc) = entry(kind, bytes)?;
        self.entries.push((oid, crc, self.offset));
        self.file.write_all(&header)?;
        self.file.write_all(&data)?;
        self.offset += (header.len() + data.len()) as u64;
        Ok(())
    }

    fn finish(self, pack_dir: &Path) -> io::Result<PathBuf> {
        let Self {
            temp,
            file,
            entries,
            ..
        } = self;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.write_all_at(&pack_header(entries.len() as u32), 0)?;
        drop(file);
        // The checksum of everything, read back: the count changed the head.
        let mut hasher = Sha1::new();
        io::copy(&mut File::open(&temp)?, &mut hasher)?;
        let sum: Oid = hasher.finalize().into();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&temp)?
            .write_all(&sum)?;
        install(pack_dir, &temp, &sum, entries)
    }
}

/// Batches waiting for the pipe's thread at most (a bound on the memory the walk may run
/// ahead by: `PIPE_DEPTH` × `BATCH_BYTES`).
const PIPE_DEPTH: usize = 8;
/// Objects are handed over in batches of about this many bytes (or `BATCH_OBJECTS`): one
/// hand-over per object, a wake-up of the thread each, cost a fifth of a walk of small files.
const BATCH_BYTES: usize = 256 * 1024;
const BATCH_OBJECTS: usize = 64;

type PackJob = (ObjectKind, Vec<u8>, Oid);

/// A pack filled by a thread of its own: `add` hands an object over and returns, the thread
/// compresses and writes it.
#[derive(Debug)]
pub(super) struct PackPipe {
    sender: Option<mpsc::SyncSender<Vec<PackJob>>>,
    worker: Option<JoinHandle<io::Result<PackFile>>>,
    batch: Vec<PackJob>,
    batch_bytes: usize,
}

impl PackPipe {
    pub fn start(pack_dir: &Path) -> io::Result<Self> {
        let mut pack = PackFile::new(pack_dir)?;
        let (sender, batches) = mpsc::sync_channel::<Vec<PackJob>>(PIPE_DEPTH);
        let worker = std::thread::Builder::new()
            .name("cairn-pack".into())
            .spawn(move || {
                for (kind, bytes, oid) in batches.into_iter().flatten() {
                    if let Err(err) = pack.add(kind, &bytes, oid) {
                        let _ = std::fs::remove_file(&pack.temp);
                        return Err(err);
                    }
                }
                Ok(pack)
            })?;
        Ok(Self {
            sender: Some(sender),
            worker: Some(worker),
            batch: Vec::new(),
            batch_bytes: 0,
        })
    }

    pub fn add(&mut self, kind: ObjectKind, bytes: Vec<u8>, oid: Oid) -> io::Result<()> {
        self.batch_bytes += bytes.len();
        self.batch.push((kind, bytes, oid));
        if self.batch.len() >= BATCH_OBJECTS || self.batch_bytes >= BATCH_BYTES {
            return self.hand_over();
        }
        Ok(())
    }

    fn hand_over(&mut self) -> io::Result<()> {
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        if batch.is_empty() {
            return Ok(());
        }
        let sent = self.sender.as_ref().is_some_and(|s| s.send(batch).is_ok());
        if sent {
            return Ok(());
        }
        // The thread stopped: its error says why.
        match self.join() {
            Err(err) => Err(err),
            Ok(_) => Err(io::Error::other("the pack writer stopped")),
        }
    }

    /// Waits for the thread to write what it was given, then puts the pack in place; the
    /// path of its index.
    pub fn finish(mut self, pack_dir: &Path) -> io::Result<PathBuf> {
        self.hand_over()?;
        self.join()?.finish(pack_dir)
    }

    fn join(&mut self) -> io::Result<PackFile> {
        self.sender = None;
        let worker = self
            .worker
            .take()
            .ok_or_else(|| io::Error::other("the pack writer is gone"))?;
        worker
            .join()
            .map_err(|_| io::Error::other("the pack writer panicked"))?
    }
}

impl Drop for PackPipe {
    /// Not finished (the walk failed): the half-written pack is removed.
    fn drop(&mut self) {
        if self.worker.is_some()
            && let Ok(pack) = self.join()
        {
            let _ = std::fs::remove_file(&pack.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::checkpoint::objects::{ObjectDb, hash};

    fn temps(pack_dir: &Path) -> Vec<String> {
        std::fs::read_dir(pack_dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tmp_"))
            .collect()
    }

    #[test]
    fn a_pipe_of_many_batches_writes_one_pack_that_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let pack_dir = dir.path().join("pack");
        let mut pipe = PackPipe::start(&pack_dir).unwrap();
        // More than the pipe holds at once, some large, some empty.
        let objects: Vec<Vec<u8>> = (0..(PIPE_DEPTH * BATCH_OBJECTS * 3))
            .map(|i| match i % 100 {
                0 => vec![b'x'; BATCH_BYTES + 7],
                1 => Vec::new(),
                _ => format!("object {i}\n").into_bytes(),
            })
            .collect();
        let mut ids = Vec::new();
        for bytes in &objects {
            let oid = hash(ObjectKind::Blob, bytes);
            pipe.add(ObjectKind::Blob, bytes.clone(), oid).unwrap();
            ids.push(oid);
        }
        pipe.finish(&pack_dir).unwrap();
        assert!(temps(&pack_dir).is_empty());
        let db = ObjectDb::new(dir.path());
        for (oid, bytes) in ids.iter().zip(&objects) {
            assert_eq!(
                db.read(oid).unwrap(),
                Some((ObjectKind::Blob, bytes.clone()))
            );
        }
    }

    #[test]
    fn a_pipe_dropped_before_it_finished_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let pack_dir = dir.path().join("pack");
        let mut pipe = PackPipe::start(&pack_dir).unwrap();
        for i in 0..(BATCH_OBJECTS * 2 + 3) {
            let bytes = format!("{i}").into_bytes();
            pipe.add(
                ObjectKind::Blob,
                bytes.clone(),
                hash(ObjectKind::Blob, &bytes),
            )
            .unwrap();
        }
        drop(pipe);
        assert_eq!(std::fs::read_dir(&pack_dir).unwrap().count(), 0);
    }

    #[test]
    fn a_pack_written_at_once_is_found_by_its_index_only_when_whole() {
        let dir = tempfile::tempdir().unwrap();
        let pack_dir = dir.path().join("pack");
        let objects: Vec<(Oid, ObjectKind, &[u8])> = [&b"one"[..], b"two", b""]
            .iter()
            .map(|b| (hash(ObjectKind::Blob, b), ObjectKind::Blob, *b))
            .collect();
        write_pack(&pack_dir, &objects).unwrap();
        let names: Vec<String> = std::fs::read_dir(&pack_dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(temps(&pack_dir).is_empty());
        let db = ObjectDb::new(dir.path());
        for (oid, kind, bytes) in &objects {
            assert_eq!(db.read(oid).unwrap(), Some((*kind, bytes.to_vec())));
        }
    }
}
