//! Reading one answer: the clocks of an attempt (first byte, idle, overall), the event
//! stream through `ReplyDecoder`, a whole JSON answer from a server that ignored `stream`,
//! and which failures are worth another attempt.

use std::time::Duration;

use tokio::time::{Instant, timeout_at};

use super::AttemptFailure;
use crate::llm::stream::{Progress, ReplyDecoder};
use crate::llm::{Api, Completion, DeltaSink, LlmError, ReplyLimits};

/// The clocks of one attempt: the first-byte timer, until the first data arrives; then the
/// idle timer, which only data restarts; and the overall deadline, which nothing does.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) idle: Duration,
    pub(super) timeout: Duration,
    pub(super) deadline: Instant,
    /// `[network] first_byte_timeout_secs` for this server (`None`: only the deadline).
    pub(super) first_byte: Option<Duration>,
    pub(super) first_byte_deadline: Instant,
    /// When the response's head arrived: from then on the idle timer runs too, so a server
    /// that answers and then sends nothing but comments is dropped after the idle timeout.
    pub(super) answered: Option<Instant>,
}

impl Clock {
    /// When to give up waiting: before any data, at the first-byte deadline; after, when the
    /// last data arrived at `last_data` plus the idle timeout.
    fn next(&self, last_data: Option<Instant>) -> Instant {
        match (last_data, self.answered) {
            (Some(at), _) => (at + self.idle).min(self.deadline),
            (None, Some(at)) => (at + self.idle).min(self.first_byte_deadline),
            (None, None) => self.first_byte_deadline,
        }
    }

    /// Why a wait that ended at `at` gave up.
    pub(super) fn expired(&self, at: Instant, had_data: bool) -> String {
        if at >= self.deadline {
            format!(
                "took longer than {}s (request_timeout_secs)",
                self.timeout.as_secs_f64()
            )
        } else if !had_data
            && at >= self.first_byte_deadline
            && let Some(first_byte) = self.first_byte
        {
            format!(
                "sent nothing within {}s of the request (first_byte_timeout_secs under [network])",
                first_byte.as_secs_f64()
            )
        } else {
            format!(
                "sent no data for {}s (request_idle_timeout_secs)",
                self.idle.as_secs_f64()
            )
        }
    }
}

/// What a server may still send after `[DONE]` (the end of a chunked body, a last comment) is
/// read, briefly, so the connection goes back to the pool: the next step of the session then
/// skips a new connection (a TLS handshake with a real provider). A server that keeps the
/// stream open after `[DONE]` is left after `AFTER_DONE_WAIT`.
pub(super) async fn finish_body(mut response: reqwest::Response) {
    let deadline = Instant::now() + AFTER_DONE_WAIT;
    let mut left = AFTER_DONE_BYTES;
    while let Ok(Ok(Some(bytes))) = timeout_at(deadline, response.chunk()).await {
        left = left.saturating_sub(bytes.len());
        if left == 0 {
            return;
        }
    }
}

/// Longest wait for the end of a body after `[DONE]`.
const AFTER_DONE_WAIT: Duration = Duration::from_millis(100);
/// Most bytes read after `[DONE]` before the connection is given up instead.
const AFTER_DONE_BYTES: usize = 64 * 1024;

/// Reads the event stream. A drop, stall or early end is retried (with backoff, within
/// `max_retries`) also after text was shown, since no tool call runs before a reply is whole;
/// the last attempt's partial comes back as `Truncated`. Only `data:` lines
/// restart the idle timer: a server that sends nothing but `: keep-alive` comments times out.
pub(super) async fn read_stream(
    mut response: reqwest::Response,
    clock: Clock,
    limits: ReplyLimits,
    api: Api,
    on_delta: DeltaSink<'_>,
) -> Result<Completion, AttemptFailure> {
    let mut decoder = ReplyDecoder::for_api(api, limits);
    let mut last_data = None;
    loop {
        let until = clock.next(last_data);
        // `timeout_at` only looks at the clock when the read would wait; a server that
        // streams faster than it is read never makes it wait, so check the deadline here too.
        let read = if Instant::now() >= clock.deadline {
            Err(clock.deadline)
        } else {
            timeout_at(until, response.chunk()).await.map_err(|_| until)
        };
        // What happened (one line a user reads), the library's words, and whether it stalled.
        let (failure, cause, stalled) = match read {
            Ok(Ok(Some(bytes))) => {
                let seen = decoder.data_lines_seen();
                match decoder.feed(&bytes, &mut *on_delta) {
                    Ok(Progress::More) => {
                        if decoder.data_lines_seen() != seen {
                            last_data = Some(Instant::now());
                        }
                        continue;
                    }
                    Ok(Progress::Done) => {
                        finish_body(response).await;
                        break;
                    }
                    // Dropping the response closes the connection: the server stops sending.
                    Err(e) if decoder.has_content() => return Err(error_mid_answer(e, decoder)),
                    Err(e) => return Err(stream_error(e, false)),
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => (
                "the connection dropped before the reply was complete".to_string(),
                Some(crate::net::failure::chain_text(&e)),
                false,
            ),
            Err(at) => (
                format!("the server {}", clock.expired(at, last_data.is_some())),
                None,
                true,
            ),
        };
        let detailed = match &cause {
            Some(cause) => format!("{failure}\ncause: {cause}"),
            None => failure.clone(),
        };
        tracing::debug!(%detailed, "the model's stream broke off");
        if decoder.has_content() {
            // Text was shown, but nothing runs before a reply is whole: the same request
            // again is safe. `Retrying` tells the front ends to drop what was shown; when no
            // retry is left, the partial is what the caller gets.
            return Err(AttemptFailure::retry(
                decoder.truncated(detailed),
                format!("the answer was cut off ({failure})"),
                None,
            ));
        }
        // Nothing was shown (at most a tool call was half sent): the same request again.
        return Err(AttemptFailure::Retry {
            error: LlmError::Connection(detailed),
            reason: failure,
            wait: None,
            // A server silent from the start rarely wakes up: one more try, not `max_retries`.
            once: stalled && last_data.is_none(),
        });
    }
    let had_content = decoder.has_content();
    // A body that ends without a finish reason was cut (a proxy or server closed it); one
    // that ended at the output limit inside a tool call would end there again.
    let cut_short = !decoder.has_finish_reason();
    match decoder.finish(&mut *on_delta) {
        Ok(completion) => Ok(completion),
        Err(LlmError::Truncated { .. }) if !had_content => {
            let reason = "the stream ended before the reply was complete".to_string();
            Err(AttemptFailure::retry(
                LlmError::Connection(reason.clone()),
                reason,
                None,
            ))
        }
        Err(error @ LlmError::Truncated { .. }) if cut_short => Err(AttemptFailure::retry(
            error,
            "the answer was cut off (the stream ended before the model finished)".to_string(),
            None,
        )),
        Err(e) => Err(stream_error(e, had_content)),
    }
}

/// An error object in the stream before anything was shown is the same failure as the HTTP
/// status it names (a 5xx, a 429, an overload): retried when that status would be. After
/// content arrived it ends the request (a retry would show the user the text twice).
fn stream_error(error: LlmError, had_content: bool) -> AttemptFailure {
    match error {
        LlmError::Provider {
            ref message,
            transient: true,
        } if !had_content => AttemptFailure::retry(
            LlmError::Provider {
                message: message.clone(),
                transient: true,
            },
            format!("the provider reported an error before answering: {message}"),
            None,
        ),
        other => AttemptFailure::Fatal(other),
    }
}

/// An error object after text was shown: a passing one (an overload, a 5xx) is retried like
/// a cut stream, the partial coming back as `Truncated` when no retry is left; a final one
/// (or a reply over a limit) ends the request as it is.
fn error_mid_answer(error: LlmError, decoder: ReplyDecoder) -> AttemptFailure {
    match error {
        LlmError::Provider {
            message,
            transient: true,
        } => {
            let reason = format!("the provider reported an error mid-answer: {message}");
            AttemptFailure::retry(
                decoder.truncated(reason.clone()),
                format!("the answer was cut off ({reason})"),
                None,
            )
        }
        other => AttemptFailure::Fatal(other),
    }
}

/// A server that ignored `stream: true` answers with one JSON completion, read whole but
/// no larger than the largest event a stream may carry.
pub(super) async fn read_whole_answer(
    mut response: reqwest::Response,
    clock: Clock,
    limits: ReplyLimits,
    on_delta: DeltaSink<'_>,
) -> Result<Completion, AttemptFailure> {
    let max = limits.max_event_bytes();
    let mut body = Vec::new();
    let mut last_data = None;
    loop {
        let until = clock.next(last_data);
        match timeout_at(until, response.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                if body.len() + bytes.len() > max {
                    return Err(AttemptFailure::Fatal(LlmError::Capped {
                        reason: format!("the answer passed {max} bytes"),
                        partial: Box::default(),
                    }));
                }
                body.extend_from_slice(&bytes);
                let now = Instant::now();
                last_data = Some(now);
                if now >= clock.deadline {
                    let reason = format!("the server {}", clock.expired(clock.deadline, true));
                    return Err(AttemptFailure::retry(
                        LlmError::Connection(reason.clone()),
                        reason,
                        None,
                    ));
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                let reason = "the connection dropped before the answer was complete".to_string();
                return Err(AttemptFailure::retry(
                    LlmError::Connection(format!(
                        "{reason}\ncause: {}",
                        crate::net::failure::chain_text(&e)
                    )),
                    reason,
                    None,
                ));
            }
            Err(_) => {
                let reason = format!("the server {}", clock.expired(until, last_data.is_some()));
                return Err(AttemptFailure::Retry {
                    error: LlmError::Connection(reason.clone()),
                    reason,
                    once: last_data.is_none(),
                    wait: None,
                });
            }
        }
    }
    let text = String::from_utf8_lossy(&body);
    let mut decoder = crate::llm::stream::StreamAssembler::with_limits(limits);
    decoder
        .chunk(&text, &mut *on_delta)
        .map_err(|e| stream_error(e, false))?;
    decoder
        .finish(&mut *on_delta)
        .map_err(AttemptFailure::Fatal)
}

/// A cut answer that every retry also lost says so: the user then looks at the network
/// (a proxy closing long streams), not at the model.
pub(super) fn with_retries_said(error: LlmError, retries: u32) -> LlmError {
    match error {
        LlmError::Truncated { reason, partial } if retries > 0 => LlmError::Truncated {
            // On the summary line, ahead of the library's words.
            reason: match reason.split_once('\n') {
                Some((summary, cause)) => {
                    format!("{summary}; {retries} retries were cut off too\n{cause}")
                }
                None => format!("{reason}; {retries} retries were cut off too"),
            },
            partial,
        },
        other => other,
    }
}
