//! What the user sends besides typed text: attached images, and the chips that show them.

use serde::{Deserialize, Serialize};

/// What the user sees of an image sent with a message: name, stored size and dimensions
/// (after any downscaling).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageChip {
    pub name: String,
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
}

/// An image the user attached apart from the prompt's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attachment {
    /// A file, read (and checked like any read) when the request is handled.
    ImagePath { path: String },
    /// Bytes from the clipboard; `name` is what the user sees (`clipboard`).
    ImageBytes { name: String, bytes: Vec<u8> },
}
