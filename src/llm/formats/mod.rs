//! The wire-format seam (SPEC §11.1, §11.7): one conversation of content parts (`ChatMessage`s
//! with their reasoning blocks) projected onto the format the provider speaks. `chat` is the
//! chat-completions body of `client/body.rs` (each message encoded once, see `WireMessages`);
//! `anthropic` (Messages) and `responses` (OpenAI Responses) build their bodies here. Each
//! format sends back the provider-opaque state it produced, verbatim and in the order it came
//! (thinking blocks with their signatures, encrypted reasoning items), and drops what another
//! format produced: the log keeps it all, and the visible reasoning text stays in the
//! transcript. The stream side of each format is in `stream::anthropic` and
//! `stream::responses`.

pub mod anthropic;
pub mod cache_plan;
pub mod responses;

use super::{Api, ChatMessage, ChatRequest, ProviderSettings, WirePart};

/// The `anthropic-version` header every Messages request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One message of a Messages API body: a role and its content blocks (built by `anthropic`,
/// weighed by `cache_plan`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MessagesTurn {
    pub role: &'static str,
    pub content: Vec<serde_json::Value>,
}

/// What a native body is built from besides the conversation and the tools.
#[derive(Debug, Clone, Copy)]
pub struct BodyContext<'a> {
    pub model: &'a str,
    pub settings: &'a ProviderSettings,
}

/// The body of a request in a native format, exactly as POSTed. `None` for the chat format,
/// whose body the client builds from the messages' kept JSON.
pub fn native_body(
    cx: BodyContext<'_>,
    request: ChatRequest<'_>,
) -> Option<Result<Vec<u8>, serde_json::Error>> {
    match cx.settings.wire.api {
        Api::Chat => None,
        Api::Anthropic => Some(anthropic::body(cx, request)),
        Api::Responses => Some(responses::body(cx, request)),
    }
}

/// The headers that carry the key (and the version, for Anthropic): `x-api-key` and
/// `anthropic-version` for the Messages API, `Authorization: Bearer` for the others.
pub fn auth_headers(api: Api, key: Option<&str>) -> Vec<(&'static str, String)> {
    let key = key.filter(|k| !k.is_empty());
    match api {
        Api::Anthropic => {
            let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
            if let Some(key) = key {
                headers.push(("x-api-key", key.to_string()));
            }
            headers
        }
        Api::Chat | Api::Responses => key
            .map(|key| vec![("authorization", format!("Bearer {key}"))])
            .unwrap_or_default(),
    }
}

/// The system prompt of a conversation: its system messages joined.
pub(super) fn system_text(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A `data:<media type>;base64,<data>` URL split into its media type and data.
pub(super) fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    Some((head.strip_suffix(";base64")?, data))
}

/// The text parts and images of a user message, in order, for the formats that take parts.
pub(super) fn user_parts(content: &super::UserContent) -> impl Iterator<Item = &WirePart> {
    content.parts().iter()
}

#[cfg(test)]
#[path = "formats_tests.rs"]
mod tests;
