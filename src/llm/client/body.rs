//! The chat-completions body: the envelope's fields around the messages (already encoded,
//! see `WireMessages`), sent as pieces that a retry shares instead of copying; and the
//! `tools` array as the request and `cairn tool list` show it.

use tokio_util::bytes::Bytes;

/// A request body as the pieces it was built from; cloning one shares them.
#[derive(Debug, Clone)]
pub(super) struct RequestPieces(pub(super) Vec<Bytes>);

impl RequestPieces {
    pub(super) fn len(&self) -> usize {
        self.0.iter().map(Bytes::len).sum()
    }

    pub(super) fn concat(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.len());
        for piece in &self.0 {
            body.extend_from_slice(piece);
        }
        body
    }

    /// One body, written piece by piece (hyper writes them together with one `writev`).
    pub(super) fn to_body(&self) -> reqwest::Body {
        let pieces = self.0.clone().into_iter().map(Ok::<_, std::io::Error>);
        reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
    }
}

/// The body opens with these, the model name between them; the messages follow.
pub(super) const MODEL_KEY: &[u8] = b"{\"model\":";
pub(super) const MESSAGES_KEY: &[u8] = b",\"messages\":";

/// The request's fields after the messages, in the order they are sent.
#[derive(serde::Serialize)]
pub(super) struct RequestRest<'a> {
    pub(super) stream: bool,
    pub(super) stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) temperature: Option<f32>,
    /// Sent only when configured (OpenAI's reasoning models, DeepSeek and others take it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reasoning_effort: Option<&'a str>,
}

#[derive(serde::Serialize)]
pub(super) struct StreamOptions {
    pub(super) include_usage: bool,
}

/// A tool schema as the request's `tools` array wants it; `ToolSpec` serialises to exactly
/// `{name, description, parameters}`.
#[derive(serde::Serialize)]
pub struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: &'a crate::llm::wire::ToolSpec,
}

/// The request's `tools` array; `cairn tool list` prints the same.
pub fn wire_tools(specs: &[crate::llm::wire::ToolSpec]) -> Vec<WireTool<'_>> {
    specs
        .iter()
        .map(|spec| WireTool {
            kind: "function",
            function: spec,
        })
        .collect()
}
