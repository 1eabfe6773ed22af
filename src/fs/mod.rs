//! The file-system layer the tools and the checkpoint store stand on: confinement (opening
//! beneath a root by handle, never by path string), real paths, confined walks with ignore
//! rules, loading and writing files (the file store), what was read (read state), the write
//! queue, the seam to a front end's buffers, text encodings, line caps, line helpers and
//! diffs. Nothing here is a tool: the tools in `tools/` decide what to touch, this layer
//! touches it safely.

pub mod buffers;
pub mod confined;
pub mod confined_walk;
pub mod diff;
pub mod encoding;
mod error;
pub mod file_store;
pub mod line_cap;
pub mod paths;
pub mod places;
pub mod read_state;
pub mod text;
pub mod walk;
pub mod walk_rules;
pub mod write_queue;

pub use error::{FileError, changed, open_error, would_block};
