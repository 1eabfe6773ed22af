//! The seam through which the file tools reach a front end that holds the files' text itself:
//! an editor running cairn as its agent keeps open buffers (unsaved changes included) that the
//! model must read, and wants changes made through it so its buffers, undo history and saves
//! stay its own. The engine owns this trait; a front end implements it (`cairn acp` over the
//! editor's `fs/*` methods) and hands it to the session's tool environment.
//!
//! Only the text goes through the seam. Confinement, the kind of file (a directory, a device,
//! a binary file), the read-before-write stamps, the per-path write queue and checkpoints stay
//! with the tools and the disk: the tools open the file beneath the workspace as always, then
//! take its text from the front end instead of the bytes, and hand the new text to it instead
//! of writing.

use std::path::Path;

use async_trait::async_trait;

/// Why the front end could not read or write a file (its words, for the model).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BufferError(pub String);

/// A front end's view of the files.
#[async_trait]
pub trait Buffers: Send + Sync {
    /// The whole text of the file at `path` (absolute, real) as the front end holds it.
    async fn read(&self, path: &Path) -> Result<String, BufferError>;
    /// Replaces the whole text of the file at `path`, creating it when it does not exist; the
    /// front end stores it (an editor saves the buffer) before it answers.
    async fn write(&self, path: &Path, text: &str) -> Result<(), BufferError>;
}
