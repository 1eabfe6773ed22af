//! Body bytes to `Completion`: the SSE parser and the assembler together, as the client and
//! the benchmark drive them.

use super::{Progress, StreamAssembler};
use crate::llm::sse::{SseFrame, SseParser};
use crate::llm::{Completion, LlmError, ReplyLimits, StreamDelta};

/// Decodes a model reply: feed it reads of the SSE body, then `finish` for the `Completion`.
#[derive(Debug, Default)]
pub struct ReplyDecoder {
    parser: SseParser,
    assembler: StreamAssembler,
    frames: Vec<SseFrame>,
    done: bool,
}

impl ReplyDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_limits(limits: ReplyLimits) -> Self {
        Self {
            parser: SseParser::with_max_bytes(limits.max_event_bytes()),
            assembler: StreamAssembler::with_limits(limits),
            frames: Vec::new(),
            done: false,
        }
    }

    /// Non-empty `data:` lines so far; comments and blank keep-alives do not count.
    pub fn data_lines_seen(&self) -> u64 {
        self.parser.data_lines_seen()
    }

    /// See `StreamAssembler::has_content`.
    pub fn has_content(&self) -> bool {
        self.assembler.has_content()
    }

    /// See `StreamAssembler::has_finish_reason`.
    pub fn has_finish_reason(&self) -> bool {
        self.assembler.has_finish_reason()
    }

    /// Consumes one read of the body. After `Progress::Done`, stop reading and `finish`.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Progress, LlmError> {
        if self.done {
            return Ok(Progress::Done);
        }
        self.parser.feed(bytes, &mut self.frames);
        self.apply_frames(on_delta)
    }

    /// The body ended (or `[DONE]` arrived): the complete response, or why there is none.
    pub fn finish(
        mut self,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Completion, LlmError> {
        if !self.done {
            self.parser.finish(&mut self.frames);
            self.apply_frames(on_delta)?;
        }
        self.assembler.finish(on_delta)
    }

    /// The transfer broke off: what arrived so far, as `Truncated`.
    pub fn truncated(self, reason: impl Into<String>) -> LlmError {
        self.assembler.truncated(reason)
    }

    fn apply_frames(
        &mut self,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<Progress, LlmError> {
        let mut frames = std::mem::take(&mut self.frames);
        let mut result = Ok(Progress::More);
        for frame in frames.drain(..) {
            match self.assembler.frame(frame, on_delta) {
                Ok(Progress::More) => {}
                Ok(Progress::Done) => {
                    self.done = true;
                    result = Ok(Progress::Done);
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        frames.clear();
        self.frames = frames;
        result
    }
}
