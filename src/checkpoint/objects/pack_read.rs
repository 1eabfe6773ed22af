//! Reading the packs `git repack` and cairn write (index version 2; whole and
//! delta-compressed entries, offset and reference deltas), by position in the pack file,
//! without moving a shared cursor (readers on several threads share one handle).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{ObjectDb, ObjectKind, Oid, corrupt};

/// A pack and its index (version 2).
#[derive(Debug)]
pub(super) struct Pack {
    data: File,
    ids: Vec<Oid>,
    offsets: Vec<u64>,
}

impl Pack {
    pub(super) fn open(idx_path: &Path) -> io::Result<Self> {
        let idx = std::fs::read(idx_path)?;
        let data = File::open(idx_path.with_extension("pack"))?;
        if idx.len() < 8 + 256 * 4 || idx[..8] != [0xff, b't', b'O', b'c', 0, 0, 0, 2] {
            return Err(corrupt("pack index"));
        }
        let be32 = |at: usize| -> io::Result<u32> {
            idx.get(at..at + 4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| corrupt("pack index"))
        };
        let count = be32(8 + 255 * 4)? as usize;
        let ids_at = 8 + 256 * 4;
        let offsets_at = ids_at + count * 20 + count * 4;
        let large_at = offsets_at + count * 4;
        let mut ids = Vec::with_capacity(count);
        for i in 0..count {
            let at = ids_at + i * 20;
            let bytes = idx.get(at..at + 20).ok_or_else(|| corrupt("pack index"))?;
            let mut oid = [0u8; 20];
            oid.copy_from_slice(bytes);
            ids.push(oid);
        }
        let mut offsets = Vec::with_capacity(count);
        for i in 0..count {
            let small = be32(offsets_at + i * 4)?;
            offsets.push(if small & 0x8000_0000 == 0 {
                u64::from(small)
            } else {
                let at = large_at + (small & 0x7fff_ffff) as usize * 8;
                let bytes = idx.get(at..at + 8).ok_or_else(|| corrupt("pack index"))?;
                let mut b = [0u8; 8];
                b.copy_from_slice(bytes);
                u64::from_be_bytes(b)
            });
        }
        Ok(Self { data, ids, offsets })
    }

    pub(super) fn offset_of(&self, oid: &Oid) -> Option<u64> {
        self.ids.binary_search(oid).ok().map(|i| self.offsets[i])
    }

    /// The object at `offset`, deltas resolved (a base in another pack or loose: from `db`).
    pub(super) fn read_at(&self, offset: u64, db: &ObjectDb) -> io::Result<(ObjectKind, Vec<u8>)> {
        let mut chain = Vec::new();
        let mut at = offset;
        // Follow the delta chain down to a whole object, then apply the deltas back up.
        let (kind, mut bytes) = loop {
            if chain.len() > 10_000 {
                return Err(corrupt("delta chain"));
            }
            let mut reader = AtReader {
                file: &self.data,
                at,
            };
            let mut byte = read_byte(&mut reader)?;
            let code = (byte >> 4) & 7;
            while byte & 0x80 != 0 {
                byte = read_byte(&mut reader)?;
            }
            match code {
                6 => {
                    byte = read_byte(&mut reader)?;
                    let mut back = u64::from(byte & 0x7f);
                    while byte & 0x80 != 0 {
                        byte = read_byte(&mut reader)?;
                        back = ((back + 1) << 7) | u64::from(byte & 0x7f);
                    }
                    chain.push(inflate(&mut reader)?);
                    at = at
                        .checked_sub(back)
                        .ok_or_else(|| corrupt("delta offset"))?;
                }
                7 => {
                    let mut base = [0u8; 20];
                    reader.read_exact(&mut base)?;
                    chain.push(inflate(&mut reader)?);
                    if let Some(next) = self.offset_of(&base) {
                        at = next;
                    } else {
                        break db
                            .read(&base)?
                            .ok_or_else(|| corrupt("missing delta base"))?;
                    }
                }
                code => {
                    let kind =
                        ObjectKind::of_pack_type(code).ok_or_else(|| corrupt("pack type"))?;
                    break (kind, inflate(&mut reader)?);
                }
            }
        };
        while let Some(delta) = chain.pop() {
            bytes = apply_delta(&bytes, &delta)?;
        }
        Ok((kind, bytes))
    }
}

/// Reads a file from a position without moving a shared cursor.
struct AtReader<'a> {
    file: &'a File,
    at: u64,
}

impl Read for AtReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

fn read_byte(reader: &mut impl Read) -> io::Result<u8> {
    let mut b = [0u8; 1];
    reader.read_exact(&mut b)?;
    Ok(b[0])
}

fn inflate(reader: &mut AtReader<'_>) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::bufread::ZlibDecoder::new(io::BufReader::with_capacity(64 * 1024, reader))
        .read_to_end(&mut out)?;
    Ok(out)
}

fn delta_size(delta: &[u8], at: &mut usize) -> io::Result<usize> {
    let mut size = 0usize;
    let mut shift = 0;
    loop {
        let byte = *delta.get(*at).ok_or_else(|| corrupt("delta"))?;
        *at += 1;
        size |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 || shift > 56 {
            return Ok(size);
        }
    }
}

fn apply_delta(base: &[u8], delta: &[u8]) -> io::Result<Vec<u8>> {
    let mut at = 0;
    if delta_size(delta, &mut at)? != base.len() {
        return Err(corrupt("delta base size"));
    }
    let size = delta_size(delta, &mut at)?;
    let mut out = Vec::with_capacity(size);
    while at < delta.len() {
        let op = delta[at];
        at += 1;
        if op & 0x80 != 0 {
            let mut field = |bits: u8, count: usize| -> io::Result<usize> {
                let mut value = 0usize;
                for i in 0..count {
                    if bits & (1 << i) != 0 {
                        let byte = *delta.get(at).ok_or_else(|| corrupt("delta"))?;
                        at += 1;
                        value |= usize::from(byte) << (8 * i);
                    }
                }
                Ok(value)
            };
            let offset = field(op & 0x0f, 4)?;
            let mut len = field((op >> 4) & 0x07, 3)?;
            if len == 0 {
                len = 0x10000;
            }
            let chunk = base
                .get(offset..offset + len)
                .ok_or_else(|| corrupt("delta copy"))?;
            out.extend_from_slice(chunk);
        } else if op != 0 {
            let len = usize::from(op);
            let chunk = delta
                .get(at..at + len)
                .ok_or_else(|| corrupt("delta insert"))?;
            out.extend_from_slice(chunk);
            at += len;
        } else {
            return Err(corrupt("delta op 0"));
        }
    }
    if out.len() != size {
        return Err(corrupt("delta result size"));
    }
    Ok(out)
}
