//! Stream shapes of real servers, replayed through the client: LiteLLM (OpenAI, Anthropic and
//! Responses-API routes), vLLM, llama.cpp's server, Ollama's OpenAI endpoint and OpenRouter.
//! The fixtures in `tests/fixtures/streams/` were written from each server's documentation and
//! source (chunk fields, id formats, where usage and reasoning travel, comments and the missing
//! final blank line), not captured, so they hold no one's data. Each is replayed once over HTTP
//! through `HttpModel` and once through the decoder in reads of a few bytes, and both must
//! assemble the same text, reasoning, tool calls, usage and finish reason.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::llm_client::{chat, settings};
use cairn::bus::Usage;
use cairn::llm::stream::ReplyDecoder;
use cairn::llm::{Completion, HttpModel};
use cairn::testing::{MockLlm, Script};

/// What a fixture must assemble into.
struct Expected {
    text: &'static str,
    reasoning: &'static str,
    /// (id, name, arguments as JSON)
    calls: Vec<(&'static str, &'static str, Value)>,
    usage: (u64, u64, u64),
    thinking_blocks: Value,
    reasoning_details: Value,
}

impl Expected {
    fn new(text: &'static str, reasoning: &'static str, usage: (u64, u64, u64)) -> Self {
        Self {
            text,
            reasoning,
            calls: Vec::new(),
            usage,
            thinking_blocks: json!([]),
            reasoning_details: json!([]),
        }
    }

    fn call(mut self, id: &'static str, name: &'static str, arguments: Value) -> Self {
        self.calls.push((id, name, arguments));
        self
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/streams")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn check(name: &str, completion: &Completion, expected: &Expected) {
    assert_eq!(completion.text, expected.text, "{name}: text");
    assert_eq!(
        completion.reasoning, expected.reasoning,
        "{name}: reasoning"
    );
    assert_eq!(
        completion.finish_reason.as_deref(),
        Some("tool_calls"),
        "{name}: finish reason"
    );
    let calls: Vec<(String, String, Value)> = completion
        .tool_calls
        .iter()
        .map(|c| {
            let arguments = serde_json::from_str(&c.arguments)
                .unwrap_or_else(|e| panic!("{name}: arguments {:?}: {e}", c.arguments));
            (c.id.0.clone(), c.name.clone(), arguments)
        })
        .collect();
    let wanted: Vec<(String, String, Value)> = expected
        .calls
        .iter()
        .map(|(id, n, a)| (id.to_string(), n.to_string(), a.clone()))
        .collect();
    assert_eq!(calls, wanted, "{name}: tool calls");
    let (prompt_tokens, completion_tokens, cached_tokens) = expected.usage;
    assert_eq!(
        completion.usage,
        Some(Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens,
        }),
        "{name}: usage"
    );
    let blocks = &completion.reasoning_blocks;
    assert_eq!(
        json!(blocks.thinking_blocks),
        expected.thinking_blocks,
        "{name}: thinking_blocks"
    );
    assert_eq!(
        json!(blocks.reasoning_details),
        expected.reasoning_details,
        "{name}: reasoning_details"
    );
}

/// The body fed in reads of 1 to 7 bytes: lines, UTF-8 characters and CRLF pairs split.
fn decode_in_pieces(body: &[u8]) -> Completion {
    let mut decoder = ReplyDecoder::new();
    let mut sink = |_| {};
    let mut at = 0;
    let mut step = 1;
    while at < body.len() {
        let end = (at + step).min(body.len());
        decoder.feed(&body[at..end], &mut sink).unwrap();
        at = end;
        step = step % 7 + 1;
    }
    decoder.finish(&mut sink).unwrap()
}

async fn replay(name: &str, expected: Expected) {
    let body = fixture(name);
    let llm = MockLlm::start([Script::raw(body.clone())]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let completion = chat(&model)
        .await
        .0
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    check(name, &completion, &expected);
    check(name, &decode_in_pieces(&body), &expected);
}

#[tokio::test]
async fn litellm_openai_route_with_parallel_calls_and_null_ids_on_fragments() {
    let expected = Expected::new("Let me check both files.", "", (1830, 52, 1536))
        .call(
            "call_Vx8kQ2mN7rT4yW1zA3bC5dE6",
            "read_file",
            json!({"path": "src/main.rs"}),
        )
        .call(
            "call_Qw9eR3tY6uI0oP2aS4dF7gH8",
            "read_file",
            json!({"path": "Cargo.toml"}),
        );
    replay("litellm_openai.sse", expected).await;
}

#[tokio::test]
async fn litellm_anthropic_route_keeps_the_signed_thinking_block() {
    let mut expected = Expected::new(
        "I'll run the test suite.",
        "The user wants the tests run.",
        (2210, 97, 2048),
    )
    .call(
        "toolu_01KqL8x3VZbM2nR7fT9wYc4P",
        "bash",
        json!({"command": "cargo test -q"}),
    );
    expected.thinking_blocks = json!([{
        "type": "thinking",
        "thinking": "The user wants the tests run.",
        "signature": "EqQBCkgIBxABGAIqQH5bT0hNVf3zQ2p1Yk9rR0xzWlB3dE1iVjZ6Y0hYbjJHa1FpS0RvU2VhV0pIM2Z1dWtBPT0SDJh3m8c",
    }]);
    replay("litellm_anthropic.sse", expected).await;
}

#[tokio::test]
async fn litellm_responses_route_with_reasoning_summary_and_usage_after_finish() {
    let expected = Expected::new(
        "",
        "**Locating the config**\n\nI need the config file first.",
        (3120, 188, 2944),
    )
    .call(
        "call_R8nY2kP5qW7eT1uI3oA6sD9f",
        "glob",
        json!({"pattern": "**/*.toml"}),
    );
    replay("litellm_responses.sse", expected).await;
}

#[tokio::test]
async fn vllm_reasoning_under_two_names_is_kept_once_and_long_tool_ids_survive() {
    let expected = Expected::new("", "Search for the function name.", (1204, 71, 0)).call(
        "chatcmpl-tool-5e1f0c9b8a7d4e3f9a2b1c0d8e7f6a5b",
        "grep",
        json!({"pattern": "fn parse_config\\("}),
    );
    replay("vllm.sse", expected).await;
}

#[tokio::test]
async fn llama_cpp_server_with_usage_on_the_finish_chunk_and_no_final_blank_line() {
    let expected = Expected::new("Reading it now — ✓", "Check the file.", (912, 38, 896)).call(
        "Fq3hN8bV1cX6zL4kJ9gD2sA7pM5wE0rT",
        "read_file",
        json!({"path": "README.md"}),
    );
    replay("llama_cpp.sse", expected).await;
}

#[tokio::test]
async fn ollama_whole_calls_sharing_index_zero_stay_two_calls() {
    let expected = Expected::new("Listing files.", "List the directory first.", (640, 45, 0))
        .call("call_hk81qg8b", "bash", json!({"command": "ls -la"}))
        .call("call_p2x7m4nz", "glob", json!({"pattern": "*.md"}));
    replay("ollama.sse", expected).await;
}

#[tokio::test]
async fn openrouter_processing_comments_reasoning_details_and_cost_in_usage() {
    let mut expected = Expected::new(
        "Updating the header.",
        "Plan: edit the header.",
        (4012, 143, 3584),
    )
    .call(
        "toolu_vrtx_01Hd8sK2mQ4wR6tY8uI0oP",
        "edit_file",
        json!({"path": "README.md", "old_string": "# cairn", "new_string": "# cairn — a coding agent"}),
    );
    expected.reasoning_details = json!([{
        "type": "reasoning.text",
        "text": "Plan: edit the header.",
        "format": "anthropic-claude-v1",
        "index": 0,
        "signature": "ErcBCkgIBxACGAIiQMpZ3Qw8RnTk2Lx9Vb4Hs6Jd1Fg0Ya7Uc5Ie3Ko2Mp4Nq6Ro8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij6Kl8Mn0Op2",
    }]);
    replay("openrouter.sse", expected).await;
}
