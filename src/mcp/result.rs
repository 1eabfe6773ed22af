//! What the model reads of a tool's answer: its text parts in order, a resource's text, a
//! link's address, a note for an image (or binary) it cannot be given here, and the
//! `structuredContent` as JSON when the answer has no text. Long answers are capped like
//! command output: the head and the tail reach the model, the whole answer is kept in a spill
//! file the note names.

use std::path::PathBuf;

/// Bytes of an answer the model reads; past it, the head and the tail.
pub const MAX_TEXT: usize = 40_000;
const TAIL: usize = 10_000;

/// An answer as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpAnswer {
    pub text: String,
    pub structured: Option<serde_json::Value>,
    pub is_error: bool,
    pub spill_path: Option<PathBuf>,
}

/// Reads a `CallToolResult` (as JSON).
pub fn answer(result: &serde_json::Value) -> McpAnswer {
    let mut parts: Vec<String> = Vec::new();
    for item in result["content"].as_array().into_iter().flatten() {
        match item["type"].as_str().unwrap_or("") {
            "text" => parts.push(item["text"].as_str().unwrap_or("").to_string()),
            "image" | "audio" => parts.push(format!(
                "[{} {}, {} bytes: not passed on to the model here]",
                item["type"].as_str().unwrap_or(""),
                item["mimeType"].as_str().unwrap_or("?"),
                item["data"].as_str().map_or(0, |d| d.len() / 4 * 3)
            )),
            "resource" => {
                let resource = &item["resource"];
                let uri = resource["uri"].as_str().unwrap_or("");
                match resource["text"].as_str() {
                    Some(text) => parts.push(format!("[resource {uri}]\n{text}")),
                    None => parts.push(format!("[resource {uri}: binary, not shown]")),
                }
            }
            "resource_link" => parts.push(format!(
                "[resource link {}{}]",
                item["uri"].as_str().unwrap_or(""),
                item["name"]
                    .as_str()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            )),
            other => parts.push(format!("[{other} content not shown]")),
        }
    }
    let structured = result
        .get("structuredContent")
        .filter(|v| !v.is_null())
        .cloned();
    let mut text = parts.join("\n");
    if text.trim().is_empty()
        && let Some(value) = &structured
    {
        text = serde_json::to_string_pretty(value).unwrap_or_default();
    }
    if text.is_empty() {
        text = "(the tool returned nothing)".into();
    }
    let (text, spill_path) = capped(text);
    McpAnswer {
        text,
        structured,
        is_error: result["isError"] == true,
        spill_path,
    }
}

/// `text` cut to its head and tail when longer than `MAX_TEXT`, the whole of it in a spill
/// file (when one can be written).
fn capped(text: String) -> (String, Option<PathBuf>) {
    if text.len() <= MAX_TEXT {
        return (text, None);
    }
    let spill = spill(&text);
    let head_end = floor_boundary(&text, MAX_TEXT - TAIL);
    let tail_start = ceil_boundary(&text, text.len() - TAIL);
    let omitted = tail_start - head_end;
    let where_ = spill
        .as_ref()
        .map(|p| format!("; the whole answer is in {}", p.display()))
        .unwrap_or_default();
    let cut = format!(
        "{}\n[… {omitted} bytes cut{where_} …]\n{}",
        &text[..head_end],
        &text[tail_start..]
    );
    (cut, spill)
}

fn spill(text: &str) -> Option<PathBuf> {
    let file = tempfile::Builder::new()
        .prefix("cairn-mcp-")
        .suffix(".txt")
        .tempfile()
        .ok()?;
    std::fs::write(file.path(), text).ok()?;
    file.keep().ok().map(|(_, path)| path)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn text_parts_images_and_structured_content_are_read() {
        let got = answer(&json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "two"}
        ], "structuredContent": {"n": 1}}));
        assert_eq!(
            got.text,
            "one\n[image image/png, 3 bytes: not passed on to the model here]\ntwo"
        );
        assert_eq!(got.structured, Some(json!({"n": 1})));
        assert!(!got.is_error);
        let only = answer(&json!({"content": [], "structuredContent": {"n": 1}, "isError": true}));
        assert!(only.text.contains("\"n\": 1") && only.is_error);
    }

    #[test]
    fn a_long_answer_keeps_head_and_tail_and_spills_the_whole() {
        let long = format!("HEAD{}TAIL", "é".repeat(MAX_TEXT));
        let got = answer(&json!({"content": [{"type": "text", "text": long}]}));
        assert!(got.text.starts_with("HEAD") && got.text.ends_with("TAIL"));
        assert!(got.text.len() < MAX_TEXT + 200, "{}", got.text.len());
        let spilled = got.spill_path.unwrap();
        assert_eq!(std::fs::read_to_string(&spilled).unwrap(), long);
        std::fs::remove_file(spilled).unwrap();
    }
}
