//! read_file: numbered lines of a text file, a window at a time. Streams the file once
//! (counting lines and hashing for the read-before-write stamp on the way), so a window near
//! the end of a huge file costs one sequential read. Records the stamp in `cx.env.reads`,
//! inside the path's write-queue turn so that the stamp always matches what was read. A file
//! in another encoding than UTF-8 (see `encoding`) is shown decoded, with a note; the stamp
//! is always of the raw bytes.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::args::lenient_usize;
use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};
use crate::fs::confined::{Beneath, OpenError};
use crate::fs::encoding::{self, ChunkDecoder, SNIFF_BYTES, TextEncoding};
use crate::fs::read_state::{FileStamp, StampHasher};
use crate::fs::text::{count_newlines, cut_chars};
use crate::fs::{changed, open_error, would_block};
use crate::tool_output::{FileSlice, ToolOutput};

/// Lines shown when the model gives no limit.
pub const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut, with a marker.
pub const MAX_LINE_CHARS: usize = 2000;
/// Bytes kept of one line: enough for `MAX_LINE_CHARS` characters of any width.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;
/// The window also ends once this much text is shown; the marker says where to continue.
pub const MAX_WINDOW_BYTES: usize = 256 * 1024;
const CHUNK: usize = 256 * 1024;

#[derive(Debug, Deserialize)]
struct ReadFileArgs {
    #[serde(alias = "file_path")]
    path: String,
    #[serde(default, deserialize_with = "lenient_usize")]
    offset: Option<usize>,
    #[serde(default, deserialize_with = "lenient_usize")]
    limit: Option<usize>,
}

pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_file",
            description: "Read a text file, numbered like `cat -n`. For long files pass offset \
                          (1-based line) and limit; the output says where to continue.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "offset": {"type": "integer"},
                    "limit": {"type": "integer", "description": "default 2000"}
                },
                "required": ["path"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: ReadFileArgs = parse_args(args)?;
        validate(&args)?;
        cx.read_access(&args.path)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: ReadFileArgs = parse_args(&args)?;
        let (offset, limit) = validate(&args)?;
        let real = cx.resolve(&args.path)?;
        let display = real.display_in(cx.workspace());
        let place = cx.read_place(&real, &display)?;
        let path = real.as_path().to_path_buf();
        let cancel = cx.cancel.clone();
        // Reading inside the path's write turn: a write running in parallel cannot slip in
        // between what we read and the stamp we record for it.
        let Some(_turn) = cx.write_turn(&real).await else {
            return Err(ToolError::Cancelled);
        };
        let buffers = cx.env.buffers.clone();
        let (slice, stamp) = super::blocking("reading", move || {
            let read = read_window(&place, &path, &display, offset, limit, &cancel)?;
            match buffers {
                // The disk said what the file is (a text file, beneath the workspace); the
                // editor's buffer says what it holds now.
                Some(buffers) => {
                    let text = tokio::runtime::Handle::current()
                        .block_on(buffers.read(&path))
                        .map_err(|err| {
                            ToolError::Failed(format!(
                                "{display}: the editor could not read it: {err}"
                            ))
                        })?;
                    text_window(&text, &display, offset, limit)
                }
                None => Ok(read),
            }
        })
        .await?;
        cx.env.reads.record(&real, stamp);
        Ok(ToolOutput::FileSlice(slice))
    }
}

fn validate(args: &ReadFileArgs) -> Result<(usize, usize), ToolError> {
    if args.path.trim().is_empty() {
        return Err(ToolError::InvalidArgs("`path` must not be empty".into()));
    }
    // Models often count from 0; line 0 can only mean the first line.
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 {
        return Err(ToolError::InvalidArgs(
            "`limit` must be at least 1 (or left out for 2000)".into(),
        ));
    }
    Ok((offset, limit))
}

/// Reads lines `offset..offset + limit` of the file at `place` (opened beneath its root with
/// symlinks refused; `path` is its real path, for suggestions) and the stamp of the whole file.
pub fn read_window(
    place: &Beneath,
    path: &Path,
    display: &str,
    offset: usize,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<(FileSlice, FileStamp), ToolError> {
    let directory = || {
        ToolError::Failed(format!(
            "{display} is a directory; use list_dir to see what is in it"
        ))
    };
    if place.rel.as_os_str().is_empty() {
        return Err(directory());
    }
    let (dir, name) = match place.parent() {
        Ok(found) => found,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(missing_file(path, display));
        }
        Err(err) => return Err(open_error(display, "reading", err).into()),
    };
    // Opened without blocking and checked on the handle: a FIFO nobody writes to, a device
    // (`/dev/zero`, `/proc/kmsg`) or a socket gets an error instead of a hang.
    let mut file = match dir.open_regular(&name) {
        Ok(file) => file,
        Err(OpenError::Missing) => return Err(missing_file(path, display)),
        Err(OpenError::Directory) => return Err(directory()),
        Err(OpenError::NotRegular) => {
            return Err(ToolError::Failed(format!(
                "{display} is not a regular file (a device, pipe or socket); read_file reads files only"
            )));
        }
        Err(OpenError::Symlink) => return Err(changed(display).into()),
        Err(OpenError::Io(err)) => return Err(open_error(display, "opening", err).into()),
    };
    let meta = file
        .metadata()
        .map_err(|err| ToolError::io(format!("reading {display}"), err))?;
    let mut window = Window::new(offset, limit);
    let mut hasher = StampHasher::default();
    let mut buf = vec![0u8; CHUNK];
    let mut first = true;
    // Set for a file that is not UTF-8: the window gets its text decoded, the stamp its bytes.
    let mut decoder: Option<(TextEncoding, ChunkDecoder)> = None;
    loop {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let n = read_full(&mut file, &mut buf).map_err(|err| would_block(display, err))?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        if first {
            let sample = &chunk[..n.min(SNIFF_BYTES)];
            match encoding::sniff(sample, sample.len() as u64 >= meta.len()) {
                None => {
                    return Err(ToolError::Failed(format!(
                        "{display} is a binary file ({} bytes); read_file shows text only. \
                         Inspect it with bash (for example `file` or `xxd | head`) if you need to",
                        meta.len()
                    )));
                }
                Some(TextEncoding::Utf8) => {}
                Some(other) => decoder = Some((other, ChunkDecoder::new(other))),
            }
        }
        first = false;
        hasher.update(chunk);
        match &mut decoder {
            Some((_, decoder)) => window.feed(decoder.decode(chunk, false).as_bytes()),
            None => window.feed(chunk),
        }
    }
    if let Some((_, decoder)) = &mut decoder {
        window.feed(decoder.decode(&[], true).as_bytes());
    }
    let stamp = hasher.finish(meta.modified().ok());
    let encoding = decoder.map(|(encoding, _)| encoding.name().to_owned());
    Ok((window.slice(display, encoding)?, stamp))
}

/// Lines `offset..offset + limit` of a whole text held elsewhere than on disk (an editor's
/// buffer), and the stamp of that text.
pub fn text_window(
    text: &str,
    display: &str,
    offset: usize,
    limit: usize,
) -> Result<(FileSlice, FileStamp), ToolError> {
    let mut window = Window::new(offset, limit);
    window.feed(text.as_bytes());
    let stamp = FileStamp::of_content(text.as_bytes(), None);
    Ok((window.slice(display, None)?, stamp))
}

/// Fills `buf` unless the file ends first; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// The line-splitting state of one read: skips to the window, keeps its lines, then only
/// counts.
struct Window {
    offset: usize,
    limit: usize,
    /// Number of the line the next byte belongs to (1-based).
    line_no: usize,
    /// Bytes of the current line inside the window (capped) and its full length.
    current: Vec<u8>,
    current_len: usize,
    /// Whether the current line has any bytes (for a final line without newline).
    in_line: bool,
    lines: Vec<String>,
    shown_bytes: usize,
    /// Set when the byte budget ended the window early.
    closed: bool,
    long_lines_cut: usize,
}

impl Window {
    fn new(offset: usize, limit: usize) -> Self {
        Self {
            offset,
            limit,
            line_no: 1,
            current: Vec::new(),
            current_len: 0,
            in_line: false,
            lines: Vec::new(),
            shown_bytes: 0,
            closed: false,
            long_lines_cut: 0,
        }
    }

    /// The window's lines as the tool's output; an offset past the end is the model's error.
    fn slice(mut self, display: &str, encoding: Option<String>) -> Result<FileSlice, ToolError> {
        let total_lines = self.finish();
        let offset = self.offset;
        if offset > total_lines.max(1) {
            return Err(ToolError::InvalidArgs(format!(
                "offset {offset} is past the end of {display}, which has {total_lines} lines; use \
                 an offset from 1 to {}",
                total_lines.max(1)
            )));
        }
        Ok(FileSlice {
            path: display.to_string(),
            offset,
            lines: self.lines,
            total_lines,
            long_lines_cut: self.long_lines_cut,
            encoding,
        })
    }

    fn in_window(&self) -> bool {
        !self.closed && self.line_no >= self.offset && self.line_no < self.offset + self.limit
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            if self.line_no < self.offset {
                chunk = self.skip(chunk);
            } else if self.in_window() {
                chunk = self.take(chunk);
            } else {
                // Past the window: only count.
                self.line_no += count_newlines(chunk);
                self.in_line = chunk.last() != Some(&b'\n');
                return;
            }
        }
    }

    /// Skips lines before the window; returns what is left of `chunk` once it is reached.
    fn skip<'c>(&mut self, chunk: &'c [u8]) -> &'c [u8] {
        let wanted = self.offset - self.line_no;
        let breaks = count_newlines(chunk);
        if breaks < wanted {
            self.line_no += breaks;
            self.in_line = chunk.last() != Some(&b'\n');
            return &[];
        }
        let at = memchr::memchr_iter(b'\n', chunk)
            .nth(wanted - 1)
            .unwrap_or(chunk.len() - 1);
        self.line_no = self.offset;
        self.in_line = false;
        &chunk[at + 1..]
    }

    /// Takes bytes of the current window line; returns the rest after its end, if any.
    fn take<'c>(&mut self, chunk: &'c [u8]) -> &'c [u8] {
        let (part, rest, ended) = match memchr::memchr(b'\n', chunk) {
            Some(at) => (&chunk[..at], &chunk[at + 1..], true),
            None => (chunk, &[][..], false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(self.current.len());
        self.current
            .extend_from_slice(&part[..part.len().min(room)]);
        self.current_len += part.len();
        self.in_line = !part.is_empty() || self.in_line;
        if ended {
            self.end_line();
        }
        rest
    }

    fn end_line(&mut self) {
        let mut bytes = std::mem::take(&mut self.current);
        let full_len = std::mem::take(&mut self.current_len);
        let capped = full_len > bytes.len();
        if !capped && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let text = line_text(bytes, capped, full_len);
        if text.1 {
            self.long_lines_cut += 1;
        }
        self.shown_bytes += text.0.len();
        self.lines.push(text.0);
        self.line_no += 1;
        self.in_line = false;
        if self.shown_bytes >= MAX_WINDOW_BYTES {
            self.closed = true;
        }
    }

    /// Ends the read; returns the number of lines in the file.
    fn finish(&mut self) -> usize {
        if self.in_line {
            if self.in_window() {
                self.end_line();
            } else {
                self.line_no += 1;
            }
        }
        self.line_no - 1
    }
}

/// The shown text of one line and whether it was cut.
fn line_text(mut bytes: Vec<u8>, capped: bool, full_len: usize) -> (String, bool) {
    if capped {
        // The byte cap may have split a character: drop the partial one.
        if let Err(err) = std::str::from_utf8(&bytes)
            && err.error_len().is_none()
        {
            bytes.truncate(err.valid_up_to());
        }
    }
    let (mut text, invalid) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
    };
    let (kept, cut) = cut_chars(&text, MAX_LINE_CHARS);
    let cut = cut || capped;
    if cut {
        text = format!("{kept} [line cut: {full_len} bytes in all]");
    }
    if invalid {
        text.push_str(" [invalid UTF-8 shown as \u{fffd}]");
    }
    (text, cut)
}

/// A missing-file error that suggests similar names from the parent directory.
pub fn missing_file(path: &Path, display: &str) -> ToolError {
    let Some(parent) = path.parent() else {
        return ToolError::NotFound {
            path: display.to_string(),
        };
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return ToolError::Failed(format!(
            "{display}: no such file; its directory does not exist either (list_dir or glob can \
             find the right path)"
        ));
    };
    let wanted = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut similar: Vec<(usize, String)> = entries
        .take(2000)
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let score = name_distance(&wanted, &name.to_lowercase())?;
            Some((score, name))
        })
        .collect();
    similar.sort();
    let names: Vec<String> = similar.into_iter().take(5).map(|(_, name)| name).collect();
    if names.is_empty() {
        return ToolError::Failed(format!(
            "{display}: no such file (glob can find the right path)"
        ));
    }
    ToolError::Failed(format!(
        "{display}: no such file. Similar names in the same directory: {}",
        names.join(", ")
    ))
}

/// A small edit distance between file names, or None when they are not alike. Also counts
/// the same stem with another extension as alike.
fn name_distance(wanted: &str, name: &str) -> Option<usize> {
    if wanted.is_empty() || wanted.len() > 64 || name.len() > 64 {
        return None;
    }
    let stem = |s: &str| {
        s.rsplit_once('.')
            .map_or(s.to_string(), |(stem, _)| stem.to_string())
    };
    let a: Vec<char> = wanted.chars().collect();
    let b: Vec<char> = name.chars().collect();
    // Optimal string alignment: Levenshtein plus swapped neighbours (`mian` for `main`).
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    let distance = d[a.len()][b.len()];
    let limit = (a.len() / 3).clamp(1, 3);
    if distance <= limit {
        Some(distance)
    } else if stem(wanted) == stem(name) {
        Some(limit + 1)
    } else {
        None
    }
}

#[cfg(test)]
#[path = "read_file_tests.rs"]
mod tests;
