//! Where a Messages request puts its `cache_control` breakpoints. The API caches the prefix
//! up to a marked block, in the order tools, system, messages, and reads it back when a
//! later request starts with the same prefix (looking back a few blocks from each marker). At
//! most four markers are allowed; a prefix shorter than the model's minimum is never cached, so
//! a marker there would be wasted. The plan: the last tool (the tools never change in a
//! session), the system prompt, and the last two user turns (the last one writes the
//! conversation so far; the one before reads what the previous request wrote). Token counts
//! are estimated at four bytes of JSON a token. Sources: the prompt-caching guide at
//! platform.claude.com/docs (breakpoints, lookback, minimum lengths per model) and LiteLLM's
//! prompt-caching page (the minimums of the newer models).

use serde_json::Value;

use super::MessagesTurn;

/// The API's limit on `cache_control` markers in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Which blocks get a `cache_control` marker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CachePlan {
    /// The last tool.
    pub tools: bool,
    /// The (last) system block.
    pub system: bool,
    /// Messages whose last block is marked, in order.
    pub messages: Vec<usize>,
}

impl CachePlan {
    pub fn breakpoints(&self) -> usize {
        usize::from(self.tools) + usize::from(self.system) + self.messages.len()
    }
}

/// The fewest tokens a cached prefix may have on `model`: 4096 for Opus 4.5 and later Opus
/// and Haiku 4.5, 2048 for the Haiku 3 models and Sonnet 4.6, 1024 for the rest.
pub fn min_cacheable_tokens(model: &str) -> u64 {
    let model = model.to_ascii_lowercase().replace('.', "-");
    let has = |needle: &str| model.contains(needle);
    if has("opus-4-5") || has("opus-4-6") || has("opus-4-7") || has("haiku-4") {
        4_096
    } else if has("haiku-3") || has("3-haiku") || has("3-5-haiku") || has("sonnet-4-6") {
        2_048
    } else {
        1_024
    }
}

/// The plan for one request: at most `MAX_BREAKPOINTS` markers, none on a prefix shorter
/// than `min_tokens`.
pub fn plan(
    tools: &[Value],
    system: &[Value],
    messages: &[MessagesTurn],
    min_tokens: u64,
) -> CachePlan {
    let tokens = |bytes: usize| (bytes as u64).div_ceil(4);
    let tools_bytes: usize = tools.iter().map(json_len).sum();
    let system_bytes: usize = system.iter().map(json_len).sum();
    let mut out = CachePlan {
        tools: !tools.is_empty() && tokens(tools_bytes) >= min_tokens,
        system: !system.is_empty() && tokens(tools_bytes + system_bytes) >= min_tokens,
        messages: Vec::new(),
    };
    let users: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == "user")
        .map(|(at, _)| at)
        .collect();
    let last_two = &users[users.len().saturating_sub(2)..];
    let mut prefix = tools_bytes + system_bytes;
    let mut counted = 0;
    for &at in last_two {
        for message in &messages[counted..=at] {
            prefix += json_len(message);
        }
        counted = at + 1;
        if tokens(prefix) >= min_tokens && out.breakpoints() < MAX_BREAKPOINTS {
            out.messages.push(at);
        }
    }
    out
}

/// Bytes of `value`'s JSON.
fn json_len<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}
