//! Output capture of one process: per stream, the first and the last 32 KiB stay in memory and
//! the whole stream goes to a spill file once it outgrows them (64 MiB per command at most).
//! Reader threads feed it; the bash tool and the job table read views of it for the model.

use crate::sync::MutexExt;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::watch;

use super::ansi;
use super::ring::{Ring, TAIL_BYTES};

/// Bytes of the start of each stream kept in memory.
pub const HEAD_BYTES: usize = 32 * 1024;
/// Most bytes one command may spill to disk, both streams together.
pub const SPILL_CAP: u64 = 64 * 1024 * 1024;
/// Most bytes of unsent live output kept per stream for the UI's tail.
const PENDING_TAIL: usize = 8 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Stdout,
    Stderr,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Stdout => "stdout",
            Which::Stderr => "stderr",
        }
    }
}

/// What the model is shown of a byte range of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    pub text: String,
    /// Only a head and a tail are shown (or a binary marker).
    pub truncated: bool,
    pub spill_path: Option<PathBuf>,
}

/// Both streams of one process, and a counter that ticks on every change.
pub struct Capture {
    stdout: Mutex<Stream>,
    stderr: Mutex<Stream>,
    spilled: AtomicU64,
    progress: watch::Sender<u64>,
    keep_tail: bool,
}

#[derive(Default)]
struct Stream {
    head: Vec<u8>,
    ring: Ring,
    total: u64,
    spill: Option<Spill>,
    /// Live output not yet handed to the tail sink.
    pending: Vec<u8>,
    /// The tail already said this stream is binary (said once, not on every tick).
    binary_noted: bool,
    eof: bool,
}

struct Spill {
    file: File,
    path: PathBuf,
    /// The file holds bytes `[0, written)` of the stream.
    written: u64,
}

impl Capture {
    /// `keep_tail`: collect live output for a tail sink.
    pub fn new(keep_tail: bool) -> Self {
        Self {
            stdout: Mutex::new(Stream::default()),
            stderr: Mutex::new(Stream::default()),
            spilled: AtomicU64::new(0),
            progress: watch::channel(0).0,
            keep_tail,
        }
    }

    fn stream(&self, which: Which) -> MutexGuard<'_, Stream> {
        let lock = match which {
            Which::Stdout => &self.stdout,
            Which::Stderr => &self.stderr,
        };
        // A poisoned lock only means a reader thread panicked mid-push; the data stays usable.
        lock.locked()
    }

    /// Appends a chunk read from the process.
    pub fn push(&self, which: Which, chunk: &[u8]) {
        let mut stream = self.stream(which);
        let before = stream.total;
        if stream.spill.is_none() && before + chunk.len() as u64 > (HEAD_BYTES + TAIL_BYTES) as u64
        {
            // Nothing has been dropped yet, so what memory holds is the whole stream so far.
            stream.start_spill(which, &self.spilled);
        }
        stream.total += chunk.len() as u64;
        if let Some(spill) = &mut stream.spill {
            spill.append(chunk, &self.spilled);
        }
        let room = HEAD_BYTES
            .saturating_sub(stream.head.len())
            .min(chunk.len());
        stream.head.extend_from_slice(&chunk[..room]);
        stream.ring.push(&chunk[room..]);
        if self.keep_tail {
            let keep = &chunk[chunk.len().saturating_sub(PENDING_TAIL)..];
            stream.pending.extend_from_slice(keep);
            if stream.pending.len() > PENDING_TAIL {
                let excess = stream.pending.len() - PENDING_TAIL;
                stream.pending.drain(..excess);
            }
        }
        drop(stream);
        self.progress.send_modify(|tick| *tick += 1);
    }

    /// Marks a stream as finished (its pipe reached end of file).
    pub fn finish(&self, which: Which) {
        self.stream(which).eof = true;
        self.progress.send_modify(|tick| *tick += 1);
    }

    pub fn finished(&self) -> bool {
        self.stream(Which::Stdout).eof && self.stream(Which::Stderr).eof
    }

    /// A receiver that changes whenever output arrives or a stream ends.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.progress.subscribe()
    }

    /// The spill files created so far (none, one or one per stream).
    pub fn spill_paths(&self) -> Vec<PathBuf> {
        [Which::Stdout, Which::Stderr]
            .into_iter()
            .filter_map(|which| self.stream(which).spill.as_ref().map(|s| s.path.clone()))
            .collect()
    }

    pub fn total(&self, which: Which) -> u64 {
        self.stream(which).total
    }

    /// Live output gathered since the last call, both streams, as text for the UI's tail:
    /// cleaned like the model's text, so no escape sequence reaches the UI's terminal; stray
    /// bytes escaped, and mostly binary output replaced by one note per stream.
    pub fn take_pending(&self) -> String {
        let mut text = String::new();
        for which in [Which::Stdout, Which::Stderr] {
            let mut stream = self.stream(which);
            if stream.pending.is_empty() {
                continue;
            }
            let used = if stream.eof {
                stream.pending.len()
            } else {
                ansi::complete_len(&stream.pending)
            };
            let piece = &stream.pending[..used];
            // The same judgement as the model's view: stray bytes are shown escaped, mostly
            // binary output only as a note.
            if !ansi::looks_binary(piece) {
                text.push_str(&ansi::clean(piece));
            } else if !stream.binary_noted {
                text.push_str(&format!("[binary output on {}]\n", which.name()));
                stream.binary_noted = true;
            }
            stream.pending.drain(..used);
        }
        text
    }

    /// About how many bytes of text bytes `[start, end)` of a stream make once odd bytes are
    /// escaped: for sharing a budget between the streams with `split_budget`. Ranges longer
    /// than `limit` are cut anyway and count as their length.
    pub fn shown_len(&self, which: Which, start: u64, end: u64, limit: usize) -> u64 {
        let len = end.saturating_sub(start);
        if len > limit as u64 {
            return len;
        }
        let stream = self.stream(which);
        match stream.read_range(start, end) {
            Some(bytes) => ansi::shown_len(&bytes) as u64,
            None => len,
        }
    }

    /// What the model sees of bytes `[start, end)` of a stream within `budget` bytes of text:
    /// all of it, or a head and a tail around a truncation marker naming the spill file. Stray
    /// odd bytes are shown escaped (and count four times against the budget); mostly binary
    /// output becomes a marker with its size.
    pub fn view(&self, which: Which, start: u64, end: u64, budget: usize) -> View {
        let mut stream = self.stream(which);
        let len = end.saturating_sub(start);
        if len == 0 {
            return View::default();
        }
        if len <= budget as u64
            && let Some(bytes) = stream.read_range(start, end)
        {
            if ansi::looks_binary(&bytes) {
                let path = stream.ensure_spill(which, &self.spilled);
                return binary_view(len, path);
            }
            if ansi::shown_len(&bytes) <= budget {
                return View {
                    text: ansi::clean(&bytes),
                    truncated: false,
                    spill_path: None,
                };
            }
        }
        let head_max = budget * 2 / 5;
        let tail_max = budget - head_max;
        let head = stream
            .read_range(start, start + (head_max as u64).min(len))
            .unwrap_or_default();
        let tail_from = end.saturating_sub(tail_max as u64).max(start);
        let tail = stream.read_range(tail_from, end).unwrap_or_default();
        let path = stream.ensure_spill(which, &self.spilled);
        if ansi::looks_binary(&head) || ansi::looks_binary(&tail) {
            return binary_view(len, path);
        }
        let head = &head[..ansi::prefix_within(&head, head_max)];
        let tail = &tail[ansi::suffix_within(&tail, tail_max)..];
        let head = &head[..ansi::head_len(head)];
        let tail = &tail[ansi::tail_start(tail)..];
        let mut text = ansi::clean(head);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[output truncated: {} bytes total; showing first {} and last {}{}]\n",
            len,
            head.len(),
            tail.len(),
            spill_note(which, &stream, path.as_ref()),
        ));
        text.push_str(&ansi::clean(tail));
        View {
            text,
            truncated: true,
            spill_path: path,
        }
    }
}

/// Shares `budget` bytes between two streams of `a` and `b` bytes: both whole when they fit,
/// otherwise each gets at least half, and a short stream leaves its unused share to the other.
pub fn split_budget(budget: usize, a: u64, b: u64) -> (usize, usize) {
    let half = budget / 2;
    let share = |own: u64, other: u64| -> usize {
        let other = other.min(half as u64) as usize;
        (own.min((budget - other) as u64)) as usize
    };
    (share(a, b), share(b, a))
}

fn binary_view(len: u64, path: Option<PathBuf>) -> View {
    let text = match &path {
        Some(path) => format!("[binary output: {len} bytes; saved in {}]", path.display()),
        None => format!("[binary output: {len} bytes, not shown]"),
    };
    View {
        text,
        truncated: true,
        spill_path: path,
    }
}

fn spill_note(which: Which, stream: &Stream, path: Option<&PathBuf>) -> String {
    match path {
        Some(path)
            if stream
                .spill
                .as_ref()
                .is_some_and(|s| s.written < stream.total) =>
        {
            format!(
                "; full {} (first {} bytes) in {}",
                which.name(),
                stream.spill.as_ref().map_or(0, |s| s.written),
                path.display()
            )
        }
        Some(path) => format!("; full output in {}", path.display()),
        None => "; the full output could not be saved".to_owned(),
    }
}

impl Stream {
    /// First stream offset still in the tail ring.
    fn ring_start(&self) -> u64 {
        self.total - self.ring.len() as u64
    }

    /// Opens the spill file and writes what memory holds; only valid while nothing was dropped.
    fn start_spill(&mut self, which: Which, spilled: &AtomicU64) {
        let created = tempfile::Builder::new()
            .prefix(&format!("cairn-{}-", which.name()))
            .suffix(".log")
            .tempfile()
            .and_then(|file| file.keep().map_err(|err| err.error));
        match created {
            Ok((file, path)) => {
                let mut spill = Spill {
                    file,
                    path,
                    written: 0,
                };
                spill.append(&self.head, spilled);
                let held = self.ring.to_vec();
                spill.append(&held, spilled);
                self.spill = Some(spill);
            }
            Err(err) => tracing::warn!("could not create a spill file: {err}"),
        }
    }

    /// The spill path, creating the file from memory when the whole stream is still there.
    fn ensure_spill(&mut self, which: Which, spilled: &AtomicU64) -> Option<PathBuf> {
        if self.spill.is_none() && self.total <= (HEAD_BYTES + TAIL_BYTES) as u64 {
            self.start_spill(which, spilled);
        }
        self.spill.as_ref().map(|spill| spill.path.clone())
    }

    /// Bytes `[start, end)` from memory or the spill file; `None` when some are gone.
    fn read_range(&self, start: u64, end: u64) -> Option<Vec<u8>> {
        let end = end.min(self.total);
        let mut out = Vec::with_capacity(end.saturating_sub(start) as usize);
        let mut pos = start;
        while pos < end {
            if pos < self.head.len() as u64 {
                let stop = end.min(self.head.len() as u64);
                out.extend_from_slice(&self.head[pos as usize..stop as usize]);
                pos = stop;
            } else if pos >= self.ring_start() {
                let offset = (pos - self.ring_start()) as usize;
                out.extend_from_slice(&self.ring.slice(offset, (end - pos) as usize));
                pos = end;
            } else {
                let spill = self.spill.as_ref()?;
                let stop = end.min(self.ring_start());
                if stop > spill.written {
                    return None;
                }
                let mut buf = vec![0; (stop - pos) as usize];
                spill.file.read_exact_at(&mut buf, pos).ok()?;
                out.extend_from_slice(&buf);
                pos = stop;
            }
        }
        Some(out)
    }
}

impl Spill {
    fn append(&mut self, bytes: &[u8], spilled: &AtomicU64) {
        let room = SPILL_CAP.saturating_sub(spilled.load(Ordering::Relaxed));
        let take = (bytes.len() as u64).min(room) as usize;
        if take == 0 {
            return;
        }
        match self.file.write_all(&bytes[..take]) {
            Ok(()) => {
                self.written += take as u64;
                spilled.fetch_add(take as u64, Ordering::Relaxed);
            }
            Err(err) => {
                tracing::warn!("writing spill file {}: {err}", self.path.display());
                // Stop spilling: later bytes would leave a hole in the file.
                spilled.store(SPILL_CAP, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(which: Which, bytes: &[u8], chunk: usize) -> Capture {
        let capture = Capture::new(false);
        for piece in bytes.chunks(chunk) {
            capture.push(which, piece);
        }
        capture.finish(Which::Stdout);
        capture.finish(Which::Stderr);
        capture
    }

    #[test]
    fn small_output_is_shown_whole_without_spill() {
        let capture = filled(Which::Stdout, b"hello\nworld\n", 4);
        let view = capture.view(Which::Stdout, 0, 12, 1000);
        assert_eq!(
            view,
            View {
                text: "hello\nworld\n".into(),
                truncated: false,
                spill_path: None
            }
        );
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_spills_everything() {
        let text: String = (0..40_000).map(|i| format!("{i}\n")).collect();
        let capture = filled(Which::Stdout, text.as_bytes(), 7_000);
        let total = text.len() as u64;
        let view = capture.view(Which::Stdout, 0, total, 4_000);
        assert!(view.truncated);
        assert!(view.text.starts_with("0\n1\n2\n"), "{}", &view.text[..40]);
        assert!(view.text.ends_with("39998\n39999\n"));
        assert!(
            view.text
                .contains(&format!("[output truncated: {total} bytes total"))
        );
        let path = view.spill_path.expect("spilled");
        assert_eq!(std::fs::read(&path).expect("spill file"), text.as_bytes());
        assert!(view.text.contains(&path.display().to_string()));
        std::fs::remove_file(path).expect("remove spill");
    }

    #[test]
    fn a_range_in_the_middle_is_read_back_from_the_spill_file() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let capture = filled(Which::Stderr, &bytes, 65_536);
        let view = capture.view(Which::Stderr, 100_000, 100_026, 1000);
        assert_eq!(view.text.as_bytes(), &bytes[100_000..100_026]);
        if let Some(path) = capture
            .stream(Which::Stderr)
            .spill
            .as_ref()
            .map(|s| s.path.clone())
        {
            std::fs::remove_file(path).expect("remove spill");
        }
    }

    #[test]
    fn binary_output_becomes_a_marker_with_its_size() {
        let mut elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
        elf.extend_from_slice(b"\x03\x00\x3e\x00\x01\x00\x00\x00\x00\x00\x00\x00binary");
        let capture = filled(Which::Stdout, &elf, 100);
        let view = capture.view(Which::Stdout, 0, 34, 1000);
        assert!(
            view.text.starts_with("[binary output: 34 bytes; saved in "),
            "{}",
            view.text
        );
        let path = view.spill_path.expect("saved");
        assert_eq!(std::fs::read(&path).expect("file").len(), 34);
        std::fs::remove_file(path).expect("remove spill");
    }

    #[test]
    fn budget_is_shared_between_streams() {
        assert_eq!(split_budget(100, 30, 20), (30, 20));
        assert_eq!(split_budget(100, 500, 20), (80, 20));
        assert_eq!(split_budget(100, 10, 500), (10, 90));
        assert_eq!(split_budget(100, 500, 500), (50, 50));
    }

    #[test]
    fn pending_tail_is_bounded_and_split_characters_wait() {
        let capture = Capture::new(true);
        capture.push(Which::Stdout, &"x\u{4e16}".as_bytes()[..2]);
        assert_eq!(capture.take_pending(), "x");
        capture.push(Which::Stdout, &"\u{4e16}".as_bytes()[1..]);
        assert_eq!(capture.take_pending(), "\u{4e16}");
        capture.push(Which::Stdout, &vec![b'y'; 100_000]);
        assert_eq!(capture.take_pending().len(), PENDING_TAIL);
        capture.push(Which::Stdout, b"\x1b[31mred\x1b[");
        assert_eq!(capture.take_pending(), "red");
        capture.push(Which::Stdout, b"0m plain\n");
        assert_eq!(capture.take_pending(), " plain\n");
        capture.push(Which::Stdout, b"ok\x00\x01\xffend\n");
        assert_eq!(capture.take_pending(), "ok\\x00\\x01\\xffend\n");
        capture.push(Which::Stdout, &[0u8; 4096]);
        assert_eq!(capture.take_pending(), "[binary output on stdout]\n");
        capture.push(Which::Stdout, &[1u8; 4096]);
        assert_eq!(capture.take_pending(), "", "the note is given once");
        capture.push(Which::Stdout, b"text again\n");
        assert_eq!(capture.take_pending(), "text again\n");
    }

    #[test]
    fn text_with_stray_bytes_is_shown_escaped_and_mostly_binary_is_a_marker() {
        let capture = filled(Which::Stdout, b"ok\x00\x01\xffend", 100);
        let view = capture.view(Which::Stdout, 0, 8, 1000);
        assert_eq!(view.text, "ok\\x00\\x01\\xffend");
        assert!(!view.truncated);
        // Escapes count against the budget: 25% odd bytes fit only as a head and a tail.
        let text: Vec<u8> = (0..4000u32)
            .map(|i| if i % 4 == 0 { 0xff } else { b'a' })
            .collect();
        let capture = filled(Which::Stdout, &text, 1000);
        let view = capture.view(Which::Stdout, 0, 4000, 4000);
        assert!(view.truncated);
        assert!(view.text.len() <= 4000 + 200, "{} bytes", view.text.len());
        assert!(
            view.text.starts_with("\\xffaaa\\xffaaa"),
            "{}",
            &view.text[..40]
        );
        if let Some(path) = view.spill_path {
            std::fs::remove_file(path).expect("remove spill");
        }
        let mut mostly: Vec<u8> = b"header\n".to_vec();
        mostly.extend((0..200u8).map(|i| i % 32));
        let capture = filled(Which::Stdout, &mostly, 100);
        let view = capture.view(Which::Stdout, 0, mostly.len() as u64, 1000);
        assert!(
            view.text.starts_with("[binary output: 207 bytes"),
            "{}",
            view.text
        );
        if let Some(path) = view.spill_path {
            std::fs::remove_file(path).expect("remove spill");
        }
    }
}
