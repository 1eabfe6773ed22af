//! A reader that drops lines longer than a cap (keeping their line break, so line numbers stay
//! right) and counts them. grep searches through it: grep-searcher grows its buffer to hold
//! the longest line, so a 1.5 GB single-line file would otherwise cost gigabytes of memory.

use std::io::{self, Read};

/// Bytes read from the file at a time.
const CHUNK: usize = 64 * 1024;

pub struct LineCap<R> {
    inner: R,
    max_line: usize,
    /// What the reader hands out next, from `ready[pos..]`.
    ready: Vec<u8>,
    pos: usize,
    /// The line being read, while it is still short enough to keep.
    line: Vec<u8>,
    /// Inside a line past the cap: its bytes are dropped up to its line break.
    skipping: bool,
    skipped: u64,
    raw: Vec<u8>,
    eof: bool,
}

impl<R: Read> LineCap<R> {
    /// Lines of more than `max_line` bytes (without their line break) are dropped.
    pub fn new(inner: R, max_line: usize) -> Self {
        Self {
            inner,
            max_line,
            ready: Vec::with_capacity(CHUNK),
            pos: 0,
            line: Vec::new(),
            skipping: false,
            skipped: 0,
            raw: vec![0; CHUNK],
            eof: false,
        }
    }

    /// Lines dropped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Reads the next chunk and moves what is complete of it to `ready`.
    fn fill(&mut self) -> io::Result<()> {
        self.ready.clear();
        self.pos = 0;
        let n = loop {
            match self.inner.read(&mut self.raw) {
                Ok(n) => break n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        };
        if n == 0 {
            self.eof = true;
            if !self.skipping {
                self.ready.append(&mut self.line);
            }
            return Ok(());
        }
        let raw = std::mem::take(&mut self.raw);
        self.split(&raw[..n]);
        self.raw = raw;
        Ok(())
    }

    /// Moves the complete lines of `chunk` to `ready` and keeps the start of the next.
    fn split(&mut self, mut rest: &[u8]) {
        // The end of the line that started in an earlier chunk.
        let Some(first) = memchr::memchr(b'\n', rest) else {
            self.extend_line(rest);
            return;
        };
        self.extend_line(&rest[..first]);
        if !self.skipping {
            self.ready.append(&mut self.line);
        }
        self.ready.push(b'\n');
        self.skipping = false;
        rest = &rest[first + 1..];
        // Whole lines inside this chunk are shorter than the chunk: no cap to check when
        // the cap is at least a chunk.
        let last = memchr::memrchr(b'\n', rest).map_or(0, |at| at + 1);
        if self.max_line >= CHUNK {
            self.ready.extend_from_slice(&rest[..last]);
        } else {
            for line in rest[..last].split_inclusive(|&b| b == b'\n') {
                if line.len() - 1 > self.max_line {
                    self.skipped += 1;
                    self.ready.push(b'\n');
                } else {
                    self.ready.extend_from_slice(line);
                }
            }
        }
        self.extend_line(&rest[last..]);
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        if self.skipping {
            return;
        }
        if self.line.len() + bytes.len() > self.max_line {
            self.skipping = true;
            self.skipped += 1;
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(bytes);
        }
    }
}

impl<R: Read> Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.ready.len() {
            if self.eof {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = buf.len().min(self.ready.len() - self.pos);
        buf[..n].copy_from_slice(&self.ready[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A reader handing out `bytes` in pieces of `piece` bytes.
    struct Pieces<'a> {
        bytes: &'a [u8],
        piece: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.piece.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn capped(bytes: &[u8], max_line: usize, piece: usize) -> (Vec<u8>, u64) {
        let mut reader = LineCap::new(Pieces { bytes, piece }, max_line);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        (out, reader.skipped())
    }

    #[test]
    fn long_lines_are_dropped_and_counted_and_line_breaks_kept() {
        let cases: &[(&[u8], usize, &[u8], u64)] = &[
            (b"short\nlines\n", 10, b"short\nlines\n", 0),
            (b"short\ntoo long a line\nok\n", 5, b"short\n\nok\n", 1),
            (b"exactly5\n", 8, b"exactly5\n", 0),
            (b"123456789", 8, b"", 1),
            (b"no break", 8, b"no break", 0),
            (b"a\nlong long\nb\nlong again\n", 4, b"a\n\nb\n\n", 2),
            (b"", 4, b"", 0),
        ];
        for &(input, max, expected, skipped) in cases {
            for piece in [1, 2, 3, 7, 1000] {
                let (out, n) = capped(input, max, piece);
                assert_eq!(
                    (String::from_utf8_lossy(&out).into_owned(), n),
                    (String::from_utf8_lossy(expected).into_owned(), skipped),
                    "{:?} max {max} piece {piece}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }

    #[test]
    fn a_huge_line_between_normal_ones_with_a_large_cap() {
        let mut input = b"first\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * CHUNK));
        input.extend_from_slice(b"\nlast match\n");
        let (out, skipped) = capped(&input, CHUNK, CHUNK);
        assert_eq!(out, b"first\n\nlast match\n");
        assert_eq!(skipped, 1);
        let (out, skipped) = capped(&input, 4 * CHUNK, 5000);
        assert_eq!(out, input);
        assert_eq!(skipped, 0);
    }
}
