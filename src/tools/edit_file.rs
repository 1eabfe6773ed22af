//! edit_file: exact string replacement in a file the model has read, one edit or several
//! applied all-or-nothing in order. Works on bytes (so invalid UTF-8 elsewhere survives),
//! keeps CRLF files CRLF and other encodings than UTF-8 in their encoding (decoded, edited,
//! encoded back), and runs inside the path's write-queue turn. Confinement works as
//! for write_file: the gate decides on `access`, see write_file.rs.

use std::borrow::Cow;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::args::lenient_bool;
use super::edit_match::{ambiguous, not_found};
use super::read_file::missing_file;
use super::write_file::text_change;
use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};
use crate::fs::encoding::{self, TextEncoding};
use crate::fs::file_store::{Current, change_of, check_fresh, load, load_text, store_text};
use crate::fs::text::{to_crlf, uses_crlf};
use crate::tool_output::{FileChange, ToolOutput};

#[derive(Debug, Deserialize)]
struct EditFileArgs {
    #[serde(alias = "file_path")]
    path: String,
    old_string: Option<String>,
    new_string: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    replace_all: Option<bool>,
    #[serde(default, deserialize_with = "lenient_edits")]
    edits: Option<Vec<EditArgs>>,
}

/// Accepts the edits as an array, or as a string holding that array (some models send it so).
fn lenient_edits<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> Result<Option<Vec<EditArgs>>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(de)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => {
            serde_json::from_str(&text).map(Some).map_err(|err| {
                D::Error::custom(format!(
                    "`edits` is a string that is not a JSON array of edits: {err}"
                ))
            })
        }
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(D::Error::custom),
    }
}

#[derive(Debug, Deserialize)]
struct EditArgs {
    old_string: String,
    new_string: String,
    #[serde(default, deserialize_with = "lenient_bool")]
    replace_all: Option<bool>,
}

/// One validated replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old: String,
    pub new: String,
    pub replace_all: bool,
}

pub struct EditFile;

#[async_trait]
impl Tool for EditFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "edit_file",
            description: "Replace exact text in a file you have read: old_string must match \
                          exactly (whitespace too, no line numbers) and be unique unless \
                          replace_all. Several changes: `edits` (in order, all or none).",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean"},
                    "edits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "old_string": {"type": "string"},
                                "new_string": {"type": "string"},
                                "replace_all": {"type": "boolean"}
                            },
                            "required": ["old_string", "new_string"]
                        }
                    }
                },
                "required": ["path"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: EditFileArgs = parse_args(args)?;
        let path = args.path.clone();
        to_edits(args)?;
        cx.write_access(&path)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: EditFileArgs = parse_args(&args)?;
        let real = cx.resolve(&args.path)?;
        let edits = to_edits(args)?;
        let display = real.display_in(cx.workspace());
        let place = cx.write_place(&real, &display)?;
        // The stamp is checked only once our turn has come: an edit queued behind another
        // sees that edit's result, whose stamp our own write recorded.
        let Some(_turn) = cx.write_turn(&real).await else {
            return Err(ToolError::Cancelled);
        };
        let env = cx.env.clone();
        let change = super::blocking("editing", move || {
            let buffers = env.buffers.as_deref();
            let current = load_text(buffers, &place, &display, &real)?;
            if current.meta.is_none() {
                return Err(missing_file(real.as_path(), &display));
            }
            check_fresh(&env.reads, &real, &display, &current)?;
            let edited = edit_in_encoding(&current.bytes, &edits, &display)?;
            let change = store_text(
                buffers,
                &env.reads,
                &real,
                &place,
                &display,
                &current,
                &edited.bytes,
                edited.replacements,
            )?;
            Ok(text_change(
                change,
                &current,
                edited.encoding,
                &edited.text_before,
                edited.text_after(),
                &display,
                edited.replacements,
            ))
        })
        .await?;
        Ok(ToolOutput::FileChanged(change))
    }

    /// The diff the edit would make, for the approval prompt; None when it would fail.
    fn preview(&self, args: &serde_json::Value, cx: &ToolCx) -> Option<FileChange> {
        let args: EditFileArgs = parse_args(args).ok()?;
        let real = cx.resolve(&args.path).ok()?;
        let edits = to_edits(args).ok()?;
        let display = real.display_in(cx.workspace());
        let place = cx.preview_place(&real)?;
        let current = load(&place, &display).ok()?;
        current.meta.as_ref()?;
        let edited = edit_in_encoding(&current.bytes, &edits, &display).ok()?;
        let text = Current {
            bytes: edited.text_before.to_vec(),
            meta: current.meta,
        };
        Some(change_of(
            &text,
            edited.text_after(),
            &display,
            edited.replacements,
        ))
    }
}

/// An edit applied to a file's content, in the file's own encoding.
struct Edited<'a> {
    encoding: TextEncoding,
    /// The new content, encoded as the file was.
    bytes: Vec<u8>,
    /// Before and after as UTF-8 (what the model and the user see); no copy of the new
    /// content for a UTF-8 file, whose text is `bytes`.
    text_before: Cow<'a, [u8]>,
    text_after: Option<Vec<u8>>,
    replacements: usize,
}

impl Edited<'_> {
    fn text_after(&self) -> &[u8] {
        self.text_after.as_deref().unwrap_or(&self.bytes)
    }
}

/// Decodes `bytes` (a UTF-8 file passes through as is, invalid bytes and all), applies the
/// edits to the text and encodes the result back. A character the encoding lacks, or content
/// that would not be written back byte for byte, is refused.
fn edit_in_encoding<'a>(
    bytes: &'a [u8],
    edits: &[Edit],
    display: &str,
) -> Result<Edited<'a>, ToolError> {
    let encoding = encoding::sniff_file(bytes).unwrap_or(TextEncoding::Utf8);
    let text_before = encoding::decode(bytes, encoding)
        .map_err(|err| ToolError::Failed(format!("{display}: {err}")))?;
    let (text_after, replacements) = apply_edits(&text_before, edits, display)?;
    if encoding.is_utf8() {
        return Ok(Edited {
            encoding,
            bytes: text_after,
            text_before,
            text_after: None,
            replacements,
        });
    }
    let bytes = {
        // The edited text is UTF-8: it came from decoding plus the model's strings.
        let text = std::str::from_utf8(&text_after).map_err(|_| {
            ToolError::Failed(format!("internal error: the edit of {display} is not text"))
        })?;
        encoding::encode(text, encoding)
            .map_err(|err| ToolError::Failed(format!("{display}: {err}; no edit was applied")))?
    };
    Ok(Edited {
        encoding,
        bytes,
        text_before,
        text_after: Some(text_after),
        replacements,
    })
}

/// Turns either form of the arguments into a list of checked edits.
fn to_edits(args: EditFileArgs) -> Result<Vec<Edit>, ToolError> {
    let invalid = |msg: &str| Err(ToolError::InvalidArgs(msg.into()));
    let edits = match (args.edits, args.old_string, args.new_string) {
        (Some(_), Some(_), _) => {
            return invalid("give either old_string/new_string or `edits`, not both");
        }
        (Some(edits), None, _) => edits
            .into_iter()
            .map(|e| Edit {
                old: e.old_string,
                new: e.new_string,
                replace_all: e.replace_all.unwrap_or(false),
            })
            .collect(),
        (None, Some(old), Some(new)) => vec![Edit {
            old,
            new,
            replace_all: args.replace_all.unwrap_or(false),
        }],
        (None, Some(_), None) => {
            return invalid("`new_string` is missing (use \"\" to delete the text)");
        }
        (None, None, _) => {
            return invalid("`old_string` and `new_string` are required (or `edits`)");
        }
    };
    if edits.is_empty() {
        return invalid("`edits` is empty");
    }
    for (i, edit) in edits.iter().enumerate() {
        let which = edit_label(i, edits.len());
        if edit.old.is_empty() {
            return Err(ToolError::InvalidArgs(format!(
                "{which}old_string is empty; edit_file replaces existing text. To create a file or \
                 replace all of it, use write_file"
            )));
        }
        if edit.old == edit.new {
            return Err(ToolError::InvalidArgs(format!(
                "{which}old_string and new_string are identical; nothing would change"
            )));
        }
    }
    Ok(edits)
}

fn edit_label(i: usize, count: usize) -> String {
    if count > 1 {
        format!("edit {} of {count}: ", i + 1)
    } else {
        String::new()
    }
}

/// Applies `edits` in order to `bytes`; returns the new content and the number of
/// replacements. Any failing edit fails the whole call, naming which one.
pub fn apply_edits(
    bytes: &[u8],
    edits: &[Edit],
    display: &str,
) -> Result<(Vec<u8>, usize), ToolError> {
    let crlf = uses_crlf(bytes);
    // Borrowed until the first replacement: no copy of a huge file before it is needed.
    let mut content = std::borrow::Cow::Borrowed(bytes);
    let mut replacements = 0;
    for (i, edit) in edits.iter().enumerate() {
        let (old, new) = if crlf {
            (to_crlf(&edit.old), to_crlf(&edit.new))
        } else {
            (edit.old.clone(), edit.new.clone())
        };
        let mut found: Vec<usize> = memchr::memmem::find_iter(&content, old.as_bytes()).collect();
        let (old, new) = if found.is_empty() && old != edit.old {
            // A mixed-line-break file: try the model's text as given.
            found = memchr::memmem::find_iter(&content, edit.old.as_bytes()).collect();
            (edit.old.clone(), edit.new.clone())
        } else {
            (old, new)
        };
        let which = edit_label(i, edits.len());
        let context = if edits.len() > 1 {
            " No edit was applied."
        } else {
            ""
        };
        match found.len() {
            0 => {
                return Err(ToolError::Failed(format!(
                    "{which}{}{context}",
                    not_found(&content, &edit.old, display)
                )));
            }
            1 => {}
            _ if edit.replace_all => {}
            _ => {
                return Err(ToolError::Failed(format!(
                    "{which}{}{context}",
                    ambiguous(&content, &found, display)
                )));
            }
        }
        content = std::borrow::Cow::Owned(replace_at(&content, &found, old.len(), new.as_bytes()));
        replacements += found.len();
    }
    Ok((content.into_owned(), replacements))
}

fn replace_at(content: &[u8], found: &[usize], old_len: usize, new: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + found.len() * new.len());
    let mut from = 0;
    for &at in found {
        out.extend_from_slice(&content[from..at]);
        out.extend_from_slice(new);
        from = at + old_len;
    }
    out.extend_from_slice(&content[from..]);
    out
}

#[cfg(test)]
#[path = "edit_file_tests.rs"]
mod tests;
