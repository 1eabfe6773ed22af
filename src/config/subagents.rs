//! The `[subagents]` table: how far delegation goes (depth, concurrency, each child's steps)
//! and when a silent child is given up on.

use serde::Deserialize;

/// The deepest delegation allowed: a child's child's child. Deeper spirals are what made
/// peers switch nesting off; three levels is the hard ceiling whatever the file says.
pub const MAX_DEPTH_CEILING: u32 = 3;

/// `[subagents]`: every key optional.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SubagentsFile {
    /// Default 1: children are not offered `subagent`. At most 3.
    pub max_depth: Option<u32>,
    /// Default 3: subagent calls of one reply running at once; the others wait their turn.
    pub max_parallel: Option<u32>,
    /// Model requests per child (an agent definition's `max_steps` wins); default: the
    /// session's `max_steps`.
    pub max_steps: Option<u32>,
    /// Default 300: a child with no stream bytes and no tool output for this long is stopped
    /// and reported stalled (a pending approval pauses the clock).
    pub stall_secs: Option<u64>,
}

impl SubagentsFile {
    /// `over`'s keys win.
    pub fn merge(self, over: Self) -> Self {
        Self {
            max_depth: over.max_depth.or(self.max_depth),
            max_parallel: over.max_parallel.or(self.max_parallel),
            max_steps: over.max_steps.or(self.max_steps),
            stall_secs: over.stall_secs.or(self.stall_secs),
        }
    }
}
