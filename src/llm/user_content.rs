//! The content of a user message as chat completions take it: a plain string while it is only
//! text (byte for byte what cairn always sent, so text-only servers and old conversations see
//! no change), an array of `text` and `image_url` parts once it holds an image. Images travel
//! as `data:` URLs built once, when the image joins the conversation.

use std::borrow::Cow;
use std::sync::Arc;

use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use crate::content::ImageRef;

/// What an image counts for in the window estimate, in bytes of JSON (at 4 bytes a token,
/// about the 1,600 tokens a 2048 px image costs on OpenAI and Anthropic). Its data URL is far
/// longer but is not what the model's window counts.
pub const IMAGE_ESTIMATE_BYTES: u64 = 6_400;

/// Text and images, in order; two text parts are never adjacent (they are joined).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserContent {
    parts: Vec<WirePart>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WirePart {
    Text(String),
    /// `url` is the `data:<media type>;base64,…` URL of the stored bytes.
    Image {
        image: ImageRef,
        url: Arc<str>,
    },
}

impl UserContent {
    pub fn parts(&self) -> &[WirePart] {
        &self.parts
    }

    /// Adds text; after text it is joined with a blank line, as consecutive user messages
    /// always were.
    pub fn push_text(&mut self, text: &str) {
        match self.parts.last_mut() {
            Some(WirePart::Text(last)) => {
                last.push_str("\n\n");
                last.push_str(text);
            }
            _ => self.parts.push(WirePart::Text(text.to_string())),
        }
    }

    pub fn push_image(&mut self, image: ImageRef, bytes: &[u8]) {
        let url = data_url(&image.media_type, bytes);
        self.parts.push(WirePart::Image {
            image,
            url: url.into(),
        });
    }

    /// `other` after this content (two user messages merged into one).
    pub fn append(&mut self, other: &UserContent) {
        for part in &other.parts {
            match part {
                WirePart::Text(text) => self.push_text(text),
                image @ WirePart::Image { .. } => self.parts.push(image.clone()),
            }
        }
    }

    /// The text, with each image as a short `[image: …]` marker: what a text-only projection
    /// (a compaction's transcript, a rewind's list) shows.
    pub fn as_text(&self) -> Cow<'_, str> {
        match self.parts.as_slice() {
            [] => Cow::Borrowed(""),
            [WirePart::Text(text)] => Cow::Borrowed(text),
            parts => Cow::Owned(
                parts
                    .iter()
                    .map(|part| match part {
                        WirePart::Text(text) => text.clone(),
                        WirePart::Image { image, .. } => format!("[image: {}]", image.label()),
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
        }
    }

    pub fn images(&self) -> impl Iterator<Item = &ImageRef> {
        self.parts.iter().filter_map(|part| match part {
            WirePart::Image { image, .. } => Some(image),
            WirePart::Text(_) => None,
        })
    }

    /// Bytes of the images' URLs in the JSON, and how many images there are.
    pub fn image_url_bytes(&self) -> (u64, u64) {
        self.parts
            .iter()
            .fold((0, 0), |(bytes, n), part| match part {
                WirePart::Image { url, .. } => (bytes + url.len() as u64, n + 1),
                WirePart::Text(_) => (bytes, n),
            })
    }

    /// Puts `note` in place of every image with `hash`; true when one was there.
    pub fn replace_image(&mut self, hash: &str, note: &str) -> bool {
        let mut found = false;
        let mut parts = Vec::with_capacity(self.parts.len());
        for part in std::mem::take(&mut self.parts) {
            match part {
                WirePart::Image { image, .. } if image.hash == hash => {
                    found = true;
                    self.parts = parts;
                    self.push_text(note);
                    parts = std::mem::take(&mut self.parts);
                }
                WirePart::Text(text) if matches!(parts.last(), Some(WirePart::Text(_))) => {
                    self.parts = parts;
                    self.push_text(&text);
                    parts = std::mem::take(&mut self.parts);
                }
                other => parts.push(other),
            }
        }
        self.parts = parts;
        found
    }
}

impl From<String> for UserContent {
    fn from(text: String) -> Self {
        Self {
            parts: vec![WirePart::Text(text)],
        }
    }
}

impl From<&str> for UserContent {
    fn from(text: &str) -> Self {
        Self::from(text.to_string())
    }
}

/// `data:image/png;base64,…`
pub fn data_url(media_type: &str, bytes: &[u8]) -> String {
    use base64::Engine as _;
    let mut url = format!("data:{media_type};base64,");
    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut url);
    url
}

impl Serialize for UserContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.images().next().is_none() {
            return serializer.serialize_str(&self.as_text());
        }
        let mut seq = serializer.serialize_seq(Some(self.parts.len()))?;
        for part in &self.parts {
            match part {
                WirePart::Text(text) => {
                    seq.serialize_element(&json!({"type": "text", "text": text}))?
                }
                WirePart::Image { url, .. } => seq.serialize_element(&ImageUrlPart {
                    kind: "image_url",
                    image_url: ImageUrl { url },
                })?,
            }
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct ImageUrlPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    image_url: ImageUrl<'a>,
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: &'a str,
}

/// Reads what a request holds (tests and the mock server look at sent messages this way).
/// An image read back has only what the URL says: its media type and the URL's hash.
impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape {
            Text(String),
            Parts(Vec<Value>),
        }
        let mut content = UserContent::default();
        match Shape::deserialize(deserializer)? {
            Shape::Text(text) => content.push_text(&text),
            Shape::Parts(parts) => {
                for part in parts {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        content.push_text(text);
                    } else if let Some(url) = part.pointer("/image_url/url").and_then(Value::as_str)
                    {
                        content.parts.push(WirePart::Image {
                            image: image_of_url(url),
                            url: url.into(),
                        });
                    }
                }
            }
        }
        Ok(content)
    }
}

fn image_of_url(url: &str) -> ImageRef {
    use sha2::Digest as _;
    let media_type = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split(';').next())
        .unwrap_or("image/png");
    ImageRef {
        hash: format!("{:x}", sha2::Sha256::digest(url.as_bytes())),
        media_type: media_type.to_string(),
        name: "image".into(),
        width: 0,
        height: 0,
        bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn image(hash: &str) -> ImageRef {
        ImageRef {
            hash: hash.into(),
            media_type: "image/png".into(),
            name: "a.png".into(),
            width: 2,
            height: 1,
            bytes: 3,
        }
    }

    #[test]
    fn text_only_content_is_the_plain_string_it_always_was() {
        let mut content = UserContent::from("first");
        content.append(&UserContent::from("second"));
        assert_eq!(
            serde_json::to_string(&content).unwrap(),
            r#""first\n\nsecond""#
        );
    }

    #[test]
    fn an_image_makes_an_array_of_text_and_image_url_parts() {
        let mut content = UserContent::from("look");
        content.push_image(image("h1"), b"\x89PNG");
        content.push_text("and this");
        let value = serde_json::to_value(&content).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
                {"type": "text", "text": "and this"},
            ])
        );
        let back: UserContent = serde_json::from_value(value).unwrap();
        assert_eq!(back.images().count(), 1);
        assert_eq!(
            back.as_text(),
            "look\n\n[image: image (0 B, 0×0)]\n\nand this"
        );
    }

    #[test]
    fn a_replaced_image_becomes_text_joined_with_its_neighbours() {
        let mut content = UserContent::from("look");
        content.push_image(image("h1"), b"x");
        content.push_text("then");
        content.push_image(image("h2"), b"y");
        assert!(content.replace_image("h1", "[image removed]"));
        assert!(!content.replace_image("h1", "[image removed]"));
        assert_eq!(content.parts().len(), 2);
        assert_eq!(
            content.parts()[0],
            WirePart::Text("look\n\n[image removed]\n\nthen".into())
        );
        assert_eq!(content.image_url_bytes().1, 1);
    }
}
