//! Incremental Server-Sent-Events parser: fed the body bytes exactly as the network delivers
//! them (lines and UTF-8 characters split anywhere), it yields whole `data` payloads for
//! `stream` to assemble. Pure: no I/O, no clock. Follows the WHATWG event-stream rules.

/// One thing the event stream said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseFrame {
    /// The data of one event; several `data:` lines are joined with `\n`.
    Data(String),
    /// `data: [DONE]`: the server says the response is complete.
    Done,
    /// An error sent outside `data`: the value of an `error:` field (llama.cpp builds before
    /// September 2025) or the data of an `event: error` event.
    Error(String),
    /// One line or event passed the parser's size limit; its bytes were dropped.
    TooLong { limit: usize },
}

/// Turns body bytes into frames. Bytes are buffered until a line is complete, so a read that
/// ends inside a line, inside a CRLF pair or inside a UTF-8 character loses nothing.
#[derive(Debug)]
pub struct SseParser {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The previous read ended with CR: an LF at the start of the next one ends no new line.
    skip_lf: bool,
    /// No line has been completed yet (a byte-order mark may open the stream).
    seen_line: bool,
    data: String,
    data_lines: usize,
    event: String,
    /// Largest line or event kept; a longer one is dropped and reported once as `TooLong`.
    max_bytes: usize,
    /// Inside a line that passed `max_bytes`: skip to its end.
    discarding: bool,
    /// Non-empty `data:` lines seen so far: the client's idle timer counts only these, so
    /// a server that sends nothing but keep-alive comments still times out.
    data_seen: u64,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_max_bytes(usize::MAX)
    }
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser that refuses to buffer a line or event longer than `max_bytes`.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        Self {
            partial: Vec::new(),
            skip_lf: false,
            seen_line: false,
            data: String::new(),
            data_lines: 0,
            event: String::new(),
            max_bytes,
            discarding: false,
            data_seen: 0,
        }
    }

    /// How many non-empty `data:` lines arrived so far.
    pub fn data_lines_seen(&self) -> u64 {
        self.data_seen
    }

    /// Consumes one read of the body; frames completed by it are appended to `out`.
    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<SseFrame>) {
        if self.skip_lf && !input.is_empty() {
            self.skip_lf = false;
            if input[0] == b'\n' {
                input = &input[1..];
            }
        }
        if self.discarding {
            let Some(end) = find_line_end(input) else {
                return;
            };
            self.discarding = false;
            input = self.after_line_end(input, end);
        }
        if !self.partial.is_empty() {
            let Some(end) = find_line_end(input) else {
                self.partial.extend_from_slice(input);
                self.check_partial(out);
                return;
            };
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&input[..end]);
            self.line(&line, out);
            line.clear();
            self.partial = line;
            input = self.after_line_end(input, end);
        }
        while let Some(end) = find_line_end(input) {
            self.line(&input[..end], out);
            input = self.after_line_end(input, end);
        }
        self.partial.extend_from_slice(input);
        self.check_partial(out);
    }

    /// A line that is already longer than the limit is dropped up to its end.
    fn check_partial(&mut self, out: &mut Vec<SseFrame>) {
        if self.partial.len() > self.max_bytes {
            self.partial = Vec::new();
            self.discarding = true;
            self.too_long(out);
        }
    }

    /// Drops the event being built and reports it.
    fn too_long(&mut self, out: &mut Vec<SseFrame>) {
        self.data = String::new();
        self.data_lines = 0;
        out.push(SseFrame::TooLong {
            limit: self.max_bytes,
        });
    }

    /// The body ended: a last line without its line end and an event without its blank line
    /// still count (llama-server ends with `data: [DONE]` and nothing after it).
    pub fn finish(&mut self, out: &mut Vec<SseFrame>) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, out);
        }
        self.dispatch(out);
        self.skip_lf = false;
    }

    /// Skips the line end at `end` (CR, LF or CRLF) and returns what follows it.
    fn after_line_end<'a>(&mut self, input: &'a [u8], end: usize) -> &'a [u8] {
        if input[end] == b'\r' {
            match input.get(end + 1) {
                Some(b'\n') => return &input[end + 2..],
                Some(_) => {}
                None => self.skip_lf = true,
            }
        }
        &input[end + 1..]
    }

    fn line(&mut self, mut line: &[u8], out: &mut Vec<SseFrame>) {
        if !self.seen_line {
            self.seen_line = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // A comment: keep-alives such as `: keep-alive`, `: OPENROUTER PROCESSING`.
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &line[line.len()..]),
        };
        match field {
            b"data" => {
                if !value.iter().all(u8::is_ascii_whitespace) {
                    self.data_seen += 1;
                }
                if self.data.len() + value.len() + 1 > self.max_bytes {
                    self.too_long(out);
                    return;
                }
                if self.data_lines > 0 {
                    self.data.push('\n');
                }
                self.data_lines += 1;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                push_utf8(&mut self.event, value);
            }
            b"error" => {
                let mut message = String::new();
                push_utf8(&mut message, value);
                out.push(SseFrame::Error(message));
            }
            _ => {} // `id`, `retry` and unknown fields do not matter to a chat stream.
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseFrame>) {
        let is_error = self.event == "error";
        self.event.clear();
        self.data_lines = 0;
        if self.data.trim().is_empty() {
            self.data.clear(); // Empty `data:` frames are keep-alives of some proxies.
            return;
        }
        let data = std::mem::take(&mut self.data);
        out.push(if is_error {
            SseFrame::Error(data)
        } else if data.trim() == "[DONE]" {
            SseFrame::Done
        } else {
            SseFrame::Data(data)
        });
    }
}

/// Parses a whole body at once.
pub fn parse_all(body: &[u8]) -> Vec<SseFrame> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(body, &mut out);
    parser.finish(&mut out);
    out
}

fn find_line_end(input: &[u8]) -> Option<usize> {
    input.iter().position(|&b| b == b'\n' || b == b'\r')
}

/// Lines are decoded whole, so invalid UTF-8 here is the server's, not a split read's.
fn push_utf8(target: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => target.push_str(text),
        Err(_) => target.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
