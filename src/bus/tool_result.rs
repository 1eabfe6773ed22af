//! The result of a finished call: the text the model sees and the value behind it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::tool_output::{CANCELLED, ToolOutput};

/// What the model sees of a finished call, and the canonical value behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// True for error results (`Error: …`): invalid arguments, unknown tool, denied, …
    pub is_error: bool,
    /// Exactly the text sent back to the model.
    pub text: String,
    /// The structured value, when the tool produced one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ToolOutput>,
}

impl ToolResult {
    pub fn ok(output: ToolOutput) -> Self {
        Self {
            is_error: false,
            text: output.model_text(),
            output: Some(output),
        }
    }
    pub fn error(message: impl fmt::Display) -> Self {
        Self {
            is_error: true,
            text: format!("Error: {message}"),
            output: None,
        }
    }
    /// A marker, not an error: the call was stopped, as the user asked. Every cancelled call
    /// (not started, abandoned, or a tool that stopped) ends in this one result.
    pub fn cancelled() -> Self {
        Self {
            is_error: false,
            text: CANCELLED.into(),
            output: None,
        }
    }
    /// A marker for a call whose result was lost when cairn stopped mid-call.
    pub fn interrupted() -> Self {
        Self {
            is_error: false,
            text: "[interrupted]".into(),
            output: None,
        }
    }
}
