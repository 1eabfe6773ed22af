//! write_file: replaces a whole file (or creates it, with its directories). Overwriting needs
//! a prior read of the unchanged file. Runs inside the path's write-queue turn. An existing
//! file keeps its encoding (see `encoding`); content it cannot store is refused.
//!
//! Confinement: `access` reports `Access::Write` with the resolved real path; a path outside
//! the workspace (also through a symlink) has `inside_workspace() == false`, and the agent
//! puts every call through the permission gate on that `Access` before `run`, passing the
//! checked access in `cx.passed`. `run` opens the file beneath the workspace (or, outside it,
//! only the exact path that was passed), so a symlink swapped in after the check fails the
//! call instead of sending the write elsewhere (`ToolCx::write_place`).

use std::borrow::Cow;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::fs::encoding::{self, TextEncoding};
use crate::fs::file_store::{Current, change_of, check_fresh, load, load_text, store_text};
use crate::fs::text::{LineEnding, dominant_ending, to_crlf, uses_crlf};
use crate::tool_output::{FileChange, ToolOutput};

#[derive(Debug, Deserialize)]
struct WriteFileArgs {
    #[serde(alias = "file_path")]
    path: String,
    content: String,
}

pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_file",
            description: "Create or overwrite a whole file (read an existing one first); parent \
                          directories are created. Prefer edit_file for part of a file.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"}
                },
                "required": ["path", "content"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: WriteFileArgs = parse_args(args)?;
        cx.write_access(&args.path)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: WriteFileArgs = parse_args(&args)?;
        let real = cx.resolve(&args.path)?;
        let display = real.display_in(cx.workspace());
        let place = cx.write_place(&real, &display)?;
        let Some(_turn) = cx.write_turn(&real).await else {
            return Err(ToolError::Cancelled);
        };
        let env = cx.env.clone();
        let change = super::blocking("writing", move || {
            let buffers = env.buffers.as_deref();
            let current = load_text(buffers, &place, &display, &real)?;
            check_fresh(&env.reads, &real, &display, &current)?;
            let (encoding, before) = decoded(&current);
            let after = new_content(args.content, &before);
            let bytes = encoding::encode(&after, encoding).map_err(|err| {
                ToolError::Failed(format!("{display}: {err}; nothing was written"))
            })?;
            let change = store_text(
                buffers, &env.reads, &real, &place, &display, &current, &bytes, 1,
            )?;
            Ok(text_change(
                change,
                &current,
                encoding,
                &before,
                after.as_bytes(),
                &display,
                1,
            ))
        })
        .await?;
        Ok(ToolOutput::FileChanged(change))
    }

    /// The diff the write would make, for the approval prompt; None when it cannot be known.
    fn preview(&self, args: &serde_json::Value, cx: &ToolCx) -> Option<FileChange> {
        let args: WriteFileArgs = parse_args(args).ok()?;
        let real = cx.resolve(&args.path).ok()?;
        let display = real.display_in(cx.workspace());
        let place = cx.preview_place(&real)?;
        let current = load(&place, &display).ok()?;
        let (encoding, before) = decoded(&current);
        let after = new_content(args.content, &before);
        encoding::encode(&after, encoding).ok()?;
        let text = Current {
            bytes: before.into_owned(),
            meta: current.meta,
        };
        Some(change_of(&text, after.as_bytes(), &display, 1))
    }
}

/// The encoding of the file a write replaces (UTF-8 for a new or binary file) and its
/// content as UTF-8, so the new content keeps both its encoding and its line breaks.
fn decoded(current: &Current) -> (TextEncoding, Cow<'_, [u8]>) {
    let encoding = match current.meta {
        Some(_) => encoding::sniff_file(&current.bytes).unwrap_or(TextEncoding::Utf8),
        None => TextEncoding::Utf8,
    };
    (encoding, encoding::decode_lossy(&current.bytes, encoding))
}

/// The change as the user reads it: for a file in another encoding than UTF-8, the diff of
/// the decoded text instead of the stored bytes.
pub(crate) fn text_change(
    stored: FileChange,
    current: &Current,
    encoding: TextEncoding,
    before: &[u8],
    after: &[u8],
    display: &str,
    replacements: usize,
) -> FileChange {
    if encoding.is_utf8() {
        return stored;
    }
    let text = Current {
        bytes: before.to_vec(),
        meta: current.meta.clone(),
    };
    change_of(&text, after, display, replacements)
}

/// The model's content with a final newline, in the line-break style of the file it replaces.
/// The added newline follows the content's own line breaks (the more common of CRLF and LF),
/// or the file's when the content has none: a CRLF text never ends in a bare `\n`.
/// `before` is the old content as UTF-8.
fn new_content(mut content: String, before: &[u8]) -> String {
    let file_crlf = uses_crlf(before);
    let content_ending = dominant_ending(content.as_bytes());
    if file_crlf && content_ending.is_some() && !content.contains("\r\n") {
        // The model wrote LF into a CRLF file: the file keeps its style.
        content = to_crlf(&content);
    }
    if !content.is_empty() && !content.ends_with('\n') {
        let crlf = match dominant_ending(content.as_bytes()) {
            Some(ending) => ending == LineEnding::Crlf,
            None => file_crlf,
        };
        content.push_str(if crlf { "\r\n" } else { "\n" });
    }
    content
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_gets_a_final_newline_in_its_own_line_breaks() {
        let cases = [
            // LF content, new or LF file.
            ("a", &b""[..], "a\n"),
            ("a\n", b"", "a\n"),
            ("", b"", ""),
            ("a\nb\n", b"x\ny\n", "a\nb\n"),
            ("a\nb", b"", "a\nb\n"),
            // CRLF content keeps CRLF, also for the added final newline.
            ("a\r\nb", b"", "a\r\nb\r\n"),
            ("a\r\nb\r\n", b"", "a\r\nb\r\n"),
            ("a\r\nb\r\n", b"x\r\n", "a\r\nb\r\n"),
            ("a\r\nb", b"x\ny\n", "a\r\nb\r\n"),
            // LF content written over a CRLF file takes the file's style.
            ("a\nb", b"x\r\ny\r\n", "a\r\nb\r\n"),
            // One line, no break of its own: the file's style decides.
            ("a", b"x\r\n", "a\r\n"),
            ("a", b"x\n", "a\n"),
            // Mixed content is kept as written; the final newline follows the majority.
            ("a\r\nb\r\nc\nd", b"", "a\r\nb\r\nc\nd\r\n"),
            ("a\nb\nc\r\nd", b"x\r\n", "a\nb\nc\r\nd\n"),
            ("a\r\nb\nc", b"x\r\n", "a\r\nb\nc\r\n"),
            // A tie goes to the content's first break, whatever the file had.
            ("a\r\nb\nc", b"x\n", "a\r\nb\nc\r\n"),
        ];
        for (content, before, expected) in cases {
            assert_eq!(
                new_content(content.to_string(), before),
                expected,
                "{content:?} over {before:?}"
            );
        }
    }
}
