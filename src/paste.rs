//! What the TUI brings into a message besides typed text: an image off the system clipboard
//! (Ctrl+V) and image files whose paths the user pasted (a terminal pastes a dragged file as
//! its path). Either becomes a `PendingImage`: an attachment waiting in the composer, shown as
//! a chip, sent with the message as a `bus::Attachment`. The agent then checks and fits it like
//! any image (vision, downscaling, read permissions for a file): nothing here decides what
//! the model gets, only what the user meant to attach.

pub mod clipboard;
pub mod path;

use crate::bus::Attachment;

/// An image attached in the composer, not sent yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingImage {
    pub attachment: Attachment,
    /// What the chip calls it: the file's name, or `clipboard.png`.
    pub name: String,
    /// Bytes of the file or of the clipboard's image (before any downscaling).
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
}

impl PendingImage {
    /// The chip's text: `shot.png (1.2 MB, 2048×1536)`.
    pub fn label(&self) -> String {
        crate::content::image_label(&self.name, self.bytes, self.width, self.height)
    }
}
