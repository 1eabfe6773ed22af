//! Content parts: what a message is made of, independent of any provider's wire format. A
//! user message is its typed text followed by parts (an attached file's text, an image); an
//! assistant message is its text plus a reasoning part. The log stores parts, the conversation
//! carries them, and each wire format (`llm::wire` for chat completions) projects them its own
//! way. Images are stored content-addressed beside the session log and named by hash here, so
//! a log line never holds image bytes.

pub mod mentions;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The name content is addressed by (a stored image, a trusted config or skill): SHA-256 of
/// `bytes`, lower-case hex.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// One part of a message after its typed text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text { text: String },
    Image(ImageRef),
}

impl Part {
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text { text: text.into() }
    }
}

/// An image as the log names it: its bytes live in the session's image store under `hash`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageRef {
    /// SHA-256 of the stored bytes, lower-case hex.
    pub hash: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// Where it came from, for people (a file name, `clipboard`).
    pub name: String,
    pub width: u32,
    pub height: u32,
    /// Bytes stored (after any downscaling).
    pub bytes: u64,
}

impl ImageRef {
    /// What the user and a text-only projection see of it: `shot.png (1.2 MB, 2048×1536)`.
    pub fn label(&self) -> String {
        image_label(&self.name, self.bytes, self.width, self.height)
    }
}

/// The images among `parts`.
pub fn images(parts: &[Part]) -> impl Iterator<Item = &ImageRef> {
    parts.iter().filter_map(|part| match part {
        Part::Image(image) => Some(image),
        Part::Text { .. } => None,
    })
}

/// How an image is named to people, wherever it is shown (a chip in the composer before it
/// is sent, the transcript after): `shot.png (1.2 MB, 2048×1536)`.
pub fn image_label(name: &str, bytes: u64, width: u32, height: u32) -> String {
    format!("{name} ({}, {width}×{height})", human_bytes(bytes))
}

/// Whether a file's name says image: `@shot.png` and a pasted `shot.png` are attached as
/// images, not as text (the bytes decide later whether it really is one).
pub fn is_image_path(path: &std::path::Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "png" | "jpg" | "jpeg" | "gif" | "webp"
        )
    })
}

/// `812 B`, `14.2 KB`, `1.3 MB`.
pub fn human_bytes(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// The reasoning part of an assistant message: the visible text, and whatever the provider
/// sent with it that must travel back verbatim. Its serde form is the one logs have always
/// had (`reasoning`, `thinking_blocks`, `reasoning_details` beside the text), so old logs read
/// as they are; `signature` and `opaque` hold what native provider APIs add (a signature of
/// the text, an encrypted or redacted blob), kept byte for byte.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasoningPart {
    #[serde(
        default,
        rename = "reasoning",
        skip_serializing_if = "String::is_empty"
    )]
    pub text: String,
    #[serde(flatten)]
    pub blocks: ReasoningBlocks,
    #[serde(
        default,
        rename = "reasoning_signature",
        skip_serializing_if = "Option::is_none"
    )]
    pub signature: Option<String>,
    #[serde(
        default,
        rename = "reasoning_opaque",
        skip_serializing_if = "Option::is_none"
    )]
    pub opaque: Option<Value>,
}

impl ReasoningPart {
    pub fn new(text: impl Into<String>, blocks: ReasoningBlocks) -> Self {
        Self {
            text: text.into(),
            blocks,
            signature: None,
            opaque: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.blocks.is_empty()
            && self.signature.is_none()
            && self.opaque.is_none()
    }
}

/// The structured reasoning of one assistant message, verbatim: Anthropic's signed
/// `thinking_blocks` (the Messages API's own `thinking`/`redacted_thinking` blocks, or the
/// same blocks through LiteLLM), OpenRouter's `reasoning_details`, and the Responses API's
/// `reasoning` output items (`encrypted_content` included). Each wire format sends back the
/// kind it takes and drops the others (`llm::formats`). Merging of streamed fragments is in
/// `llm::reasoning`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasoningBlocks {
    /// `[{"type":"thinking","thinking":…,"signature":…}, {"type":"redacted_thinking","data":…}]`
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking_blocks: Vec<Value>,
    /// `[{"type":"reasoning.text","text":…,"signature":…,"format":…,"index":0}, …]`
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning_details: Vec<Value>,
    /// The Responses API's reasoning items in output order:
    /// `[{"type":"reasoning","id":"rs_…","summary":[…],"encrypted_content":…}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning_items: Vec<Value>,
}

impl ReasoningBlocks {
    pub fn is_empty(&self) -> bool {
        self.thinking_blocks.is_empty()
            && self.reasoning_details.is_empty()
            && self.reasoning_items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn content_is_named_by_its_sha256_in_lower_case_hex() {
        // The names already in trust stores and image stores: every byte as two digits.
        assert_eq!(
            content_hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(content_hash(&[0x00]).len(), 64);
    }

    #[test]
    fn the_reasoning_part_reads_and_writes_the_fields_logs_always_had() {
        let old = json!({
            "reasoning": "think",
            "thinking_blocks": [{"type": "thinking", "thinking": "think", "signature": "s"}],
        });
        let part: ReasoningPart = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(part.text, "think");
        assert_eq!(part.blocks.thinking_blocks.len(), 1);
        assert_eq!(serde_json::to_value(&part).unwrap(), old);
        assert!(ReasoningPart::default().is_empty());
        assert_eq!(
            serde_json::to_value(ReasoningPart::default()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn parts_are_tagged_and_images_are_named_by_hash() {
        let image = ImageRef {
            hash: "ab".into(),
            media_type: "image/png".into(),
            name: "shot.png".into(),
            width: 2048,
            height: 1536,
            bytes: 1_234_567,
        };
        let parts = vec![Part::text("a"), Part::Image(image.clone())];
        let value = serde_json::to_value(&parts).unwrap();
        assert_eq!(value[0], json!({"type": "text", "text": "a"}));
        assert_eq!(value[1]["type"], "image");
        assert_eq!(value[1]["hash"], "ab");
        let back: Vec<Part> = serde_json::from_value(value).unwrap();
        assert_eq!(back, parts);
        assert_eq!(image.label(), "shot.png (1.2 MB, 2048×1536)");
        assert_eq!(human_bytes(812), "812 B");
    }
}
