//! Body bytes to `Completion`: the SSE parser and the assembler together, as the client and
//! the benchmark drive them.

use super::anthropic::AnthropicEvents;
use super::responses::ResponsesEvents;
use super::{Progress, StreamAssembler};
use crate::llm::sse::{SseFrame, SseParser};
use crate::llm::{Api, Completion, LlmError, ReplyLimits, StreamDelta};

/// Decodes a model reply: feed it reads of the SSE body, then `finish` for the `Completion`.
#[derive(Debug, Default)]
pub struct ReplyDecoder {
    parser: SseParser,
    assembler: StreamAssembler,
    format: EventShape,
    frames: Vec<SseFrame>,
    done: bool,
}

/// How the data of an event is read: a chat chunk, or a native format's event.
#[derive(Debug, Default)]
enum EventShape {
    #[default]
    Chat,
    Anthropic(AnthropicEvents),
    Responses(ResponsesEvents),
}

impl ReplyDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_limits(limits: ReplyLimits) -> Self {
        Self::for_api(Api::Chat, limits)
    }

    /// A decoder of the stream `api` sends.
    pub fn for_api(api: Api, limits: ReplyLimits) -> Self {
        Self {
            parser: SseParser::with_max_bytes(limits.max_event_bytes()),
            assembler: StreamAssembler::with_limits(limits),
            format: match api {
                Api::Chat => EventShape::Chat,
                Api::Anthropic => EventShape::Anthropic(AnthropicEvents::default()),
                Api::Responses => EventShape::Responses(ResponsesEvents::default()),
            },
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
            let applied = match (&mut self.format, frame) {
                (EventShape::Anthropic(events), SseFrame::Data(data)) => {
                    events.data(&mut self.assembler, &data, on_delta)
                }
                (EventShape::Responses(events), SseFrame::Data(data)) => {
                    events.data(&mut self.assembler, &data, on_delta)
                }
                (_, frame) => self.assembler.frame(frame, on_delta),
            };
            match applied {
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
