//! The tail ring of a captured stream: its last `TAIL_BYTES` bytes.

/// Bytes of the end of each stream kept in memory.
pub const TAIL_BYTES: usize = 32 * 1024;

/// The last `TAIL_BYTES` bytes pushed, in a fixed buffer allocated on first use.
#[derive(Default)]
pub(super) struct Ring {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl Ring {
    /// How many bytes it holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn push(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.buf.is_empty() {
            self.buf = vec![0; TAIL_BYTES];
        }
        let cap = self.buf.len();
        if data.len() >= cap {
            self.buf.copy_from_slice(&data[data.len() - cap..]);
            self.start = 0;
            self.len = cap;
            return;
        }
        let write_at = (self.start + self.len) % cap;
        let first = data.len().min(cap - write_at);
        self.buf[write_at..write_at + first].copy_from_slice(&data[..first]);
        self.buf[..data.len() - first].copy_from_slice(&data[first..]);
        let len = self.len + data.len();
        if len > cap {
            self.start = (self.start + len - cap) % cap;
            self.len = cap;
        } else {
            self.len = len;
        }
    }

    /// `len` bytes starting `offset` bytes after the oldest byte held.
    pub(super) fn slice(&self, offset: usize, len: usize) -> Vec<u8> {
        let len = len.min(self.len.saturating_sub(offset));
        let mut out = Vec::with_capacity(len);
        if len == 0 {
            return out;
        }
        let cap = self.buf.len();
        let from = (self.start + offset) % cap;
        let first = len.min(cap - from);
        out.extend_from_slice(&self.buf[from..from + first]);
        out.extend_from_slice(&self.buf[..len - first]);
        out
    }

    pub(super) fn to_vec(&self) -> Vec<u8> {
        self.slice(0, self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_last_bytes_across_wraps() {
        let mut ring = Ring::default();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for piece in data.chunks(999) {
            ring.push(piece);
        }
        assert_eq!(ring.to_vec(), &data[data.len() - TAIL_BYTES..]);
        assert_eq!(ring.slice(TAIL_BYTES - 3, 10), &data[data.len() - 3..]);
    }
}
