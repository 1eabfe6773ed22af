//! The caps on one reply (`max_reply_bytes`, `max_tool_call_bytes`, `request_timeout_secs`)
//! as the client's `ReplyLimits`.

use std::time::Duration;

use super::ConfigFile;
use crate::llm::ReplyLimits;

/// The reply limits, defaults where the file sets none; a 0 would stop every reply at once,
/// so it counts as 1.
pub(super) fn reply_limits(file: &ConfigFile) -> ReplyLimits {
    let defaults = ReplyLimits::default();
    ReplyLimits {
        max_reply_bytes: file
            .max_reply_bytes
            .unwrap_or(defaults.max_reply_bytes)
            .max(1),
        max_call_bytes: file
            .max_tool_call_bytes
            .unwrap_or(defaults.max_call_bytes)
            .max(1),
        max_calls: defaults.max_calls,
        request_timeout: file
            .request_timeout_secs
            .map_or(defaults.request_timeout, |s| Duration::from_secs(s.max(1))),
    }
}
