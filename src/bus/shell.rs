//! The user's own command (`!cmd`) as it runs: started, its output, finished.

use serde::{Deserialize, Serialize};

use super::ToolResult;

/// What happened to a user's own command (`UserCommand::Shell`).
// Like `AgentEvent`: the finished run is the large one, and there are few of them.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ShellEvent {
    Started {
        id: String,
        command: String,
        context: bool,
    },
    /// A piece of its output (secrets redacted), as it comes.
    Output { id: String, chunk: String },
    /// It ended (exited, or stopped by the user): the run as a `bash` result holds it.
    Finished {
        id: String,
        command: String,
        context: bool,
        result: ToolResult,
    },
}
