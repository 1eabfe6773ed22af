//! The native wire formats through the client: Anthropic's Messages stream and the Responses
//! API stream, from the fixtures in `tests/fixtures/native/` (written from the providers' own
//! documents, named at the top of each file, not captured), each replayed once over HTTP
//! through `HttpModel` and once through the decoder in reads of 1 to 7 bytes (lines and UTF-8
//! characters split); errors mid-stream, a usage-only end, a 529 then success; the path, the
//! headers and the request body each format sends.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::llm_client::settings;
use cairn::bus::Usage;
use cairn::llm::stream::ReplyDecoder;
use cairn::llm::{
    Api, ChatMessage, ChatModel, ChatRequest, Completion, HttpModel, LlmError, StreamDelta,
    WireMessages,
};
use cairn::testing::{MockLlm, Script};
use tokio_util::sync::CancellationToken;

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/native")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn model(url: String, api: Api) -> HttpModel {
    let mut settings = settings(url);
    settings.wire.api = api;
    settings.api_key = Some("sk-test".into());
    HttpModel::new(settings).unwrap()
}

async fn ask(model: &HttpModel) -> (Result<Completion, LlmError>, Vec<StreamDelta>) {
    let messages = WireMessages::from(vec![
        ChatMessage::System {
            content: "You are a test.".into(),
        },
        ChatMessage::User {
            content: "hello".into(),
        },
    ]);
    let mut deltas = Vec::new();
    let mut sink = |d: StreamDelta| deltas.push(d);
    let request = ChatRequest {
        messages: &messages,
        tools: &[],
    };
    let result = model
        .stream_chat(request, &mut sink, &CancellationToken::new())
        .await;
    (result, deltas)
}

/// The body in reads of 1 to 7 bytes.
fn decode_in_pieces(api: Api, body: &[u8]) -> Result<Completion, LlmError> {
    let mut decoder = ReplyDecoder::for_api(api, Default::default());
    let mut sink = |_| {};
    let mut at = 0;
    let mut step = 1;
    while at < body.len() {
        let end = (at + step).min(body.len());
        match decoder.feed(&body[at..end], &mut sink) {
            Ok(cairn::llm::stream::Progress::Done) => break,
            Ok(_) => {}
            Err(e) => return Err(e),
        }
        at = end;
        step = step % 7 + 1;
    }
    decoder.finish(&mut sink)
}

/// Over HTTP and in pieces, both must give the same completion.
async fn replay(api: Api, name: &str) -> Completion {
    let body = fixture(name);
    let llm = MockLlm::start([Script::raw(body.clone())]).await;
    let over_http = ask(&model(llm.url(), api))
        .await
        .0
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let in_pieces = decode_in_pieces(api, &body).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(over_http, in_pieces, "{name}");
    over_http
}

fn calls(completion: &Completion) -> Vec<(String, String, Value)> {
    completion
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.id.0.clone(),
                c.name.clone(),
                serde_json::from_str(&c.arguments).unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn anthropic_thinking_signature_redacted_block_and_parallel_tool_use() {
    let completion = replay(Api::Anthropic, "anthropic_thinking_parallel.sse").await;
    assert_eq!(completion.text, "Reading both — one moment.");
    assert_eq!(
        completion.reasoning,
        "Two files to read, both at once — café first."
    );
    // The thinking block whole, its signature joined from its two deltas, byte for byte; the
    // redacted block verbatim after it.
    assert_eq!(
        json!(completion.reasoning_blocks.thinking_blocks),
        json!([
            {"type": "thinking", "thinking": "Two files to read, both at once — café first.",
             "signature": "EqQBCkgIBxABGAIqQGc3Yk1vT2t4UlZ6bW5QcTJ3RTRyNlR5OHVJMG9QPT0SDKx9n4=="},
            {"type": "redacted_thinking",
             "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
        ])
    );
    // input_json_delta fragments cut inside a \u escape pair join to the character.
    assert_eq!(
        calls(&completion),
        [
            (
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6".to_string(),
                "read_file".to_string(),
                json!({"path": "café/😀.rs"})
            ),
            (
                "toolu_01Bq7mN2vX9cK4rT8yW3zL5p".to_string(),
                "read_file".to_string(),
                json!({"path": "Cargo.toml"})
            ),
        ]
    );
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    // The prompt is what was read from the cache plus what was not.
    assert_eq!(
        completion.usage,
        Some(Usage {
            prompt_tokens: 14 + 2048,
            completion_tokens: 118,
            cached_tokens: 2048,
        })
    );
}

#[tokio::test]
async fn anthropic_usage_only_end_counts_the_last_usage() {
    let completion = replay(Api::Anthropic, "anthropic_usage_only_end.sse").await;
    assert_eq!(completion.text, "Done: all green.");
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        completion.usage,
        Some(Usage {
            prompt_tokens: 1503,
            completion_tokens: 7,
            cached_tokens: 0,
        })
    );
}

#[tokio::test]
async fn anthropic_overloaded_error_mid_stream_is_retried_and_said() {
    let llm = MockLlm::start([
        Script::raw(fixture("anthropic_error_mid_stream.sse")),
        Script::raw(fixture("anthropic_usage_only_end.sse")),
    ])
    .await;
    let (result, deltas) = ask(&model(llm.url(), Api::Anthropic)).await;
    assert_eq!(result.unwrap().text, "Done: all green.");
    let retried: Vec<&String> = deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Retrying { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(retried.len(), 1, "{deltas:?}");
    assert!(retried[0].contains("Overloaded"), "{retried:?}");
    // Without retries, the partial comes back with the provider's words.
    let once = MockLlm::start([Script::raw(fixture("anthropic_error_mid_stream.sse"))]).await;
    let mut settings = settings(once.url());
    settings.wire.api = Api::Anthropic;
    settings.max_retries = 0;
    let error = ask(&HttpModel::new(settings).unwrap()).await.0.unwrap_err();
    match error {
        LlmError::Truncated { reason, partial } => {
            assert!(reason.contains("Overloaded"), "{reason}");
            assert_eq!(partial.text, "Partial answ");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn anthropic_529_overloaded_then_success_and_the_request_it_sent() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let llm = MockLlm::start([
        Script::status(529, &overloaded.to_string()),
        Script::raw(fixture("anthropic_usage_only_end.sse")),
    ])
    .await;
    let (result, deltas) = ask(&model(llm.url(), Api::Anthropic)).await;
    assert_eq!(result.unwrap().text, "Done: all green.");
    assert!(
        deltas.iter().any(|d| matches!(d, StreamDelta::Retrying { reason, .. } if reason.contains("529") && reason.contains("Overloaded"))),
        "{deltas:?}"
    );
    let recorded = llm.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].path, "/v1/messages");
    assert_eq!(llm.header(0, "x-api-key").as_deref(), Some("sk-test"));
    assert_eq!(
        llm.header(0, "anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert_eq!(llm.header(0, "authorization"), None);
    // The same bytes again.
    assert_eq!(recorded[0].raw, recorded[1].raw);
    let body = &recorded[0].body;
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a test."}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    );
    assert_eq!(body["stream"], true);
    // `max_tokens` is required: an unknown model gets the fallback.
    assert_eq!(body["max_tokens"], 8192);
}

#[tokio::test]
async fn responses_reasoning_item_text_and_interleaved_calls() {
    let completion = replay(Api::Responses, "responses_reasoning_parallel.sse").await;
    assert_eq!(completion.text, "Reading both — one moment.");
    assert_eq!(
        completion.reasoning,
        "**Reading both**\n\nCafé first, then the manifest."
    );
    assert_eq!(
        json!(completion.reasoning_blocks.reasoning_items),
        json!([{
            "id": "rs_68a1a", "type": "reasoning",
            "summary": [
                {"type": "summary_text", "text": "**Reading both**"},
                {"type": "summary_text", "text": "Café first, then the manifest."},
            ],
            "encrypted_content": "gAAAAABoZ3Jl-ENCRYPTED-7dC2x9Qm==",
        }])
    );
    assert_eq!(
        calls(&completion),
        [
            (
                "call_Vx8kQ2mN7rT4yW1z".to_string(),
                "read_file".to_string(),
                json!({"path": "café/😀.rs"})
            ),
            (
                "call_Qw9eR3tY6uI0oP2a".to_string(),
                "read_file".to_string(),
                json!({"path": "Cargo.toml"})
            ),
        ]
    );
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        completion.usage,
        Some(Usage {
            prompt_tokens: 3120,
            completion_tokens: 188,
            cached_tokens: 2944,
        })
    );
}

#[tokio::test]
async fn responses_without_event_lines_and_ending_with_done_read_the_same() {
    let plain = replay(Api::Responses, "responses_reasoning_parallel.sse").await;
    let bare = replay(Api::Responses, "responses_no_event_lines.sse").await;
    assert_eq!(plain, bare);
}

#[tokio::test]
async fn responses_usage_only_end_and_failed_mid_stream() {
    let completion = replay(Api::Responses, "responses_usage_only_end.sse").await;
    assert_eq!(completion.text, "All green.");
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    assert_eq!(completion.usage.unwrap().prompt_tokens, 1500);
    let llm = MockLlm::start([Script::raw(fixture("responses_failed_mid_stream.sse"))]).await;
    let mut settings = settings(llm.url());
    settings.wire.api = Api::Responses;
    settings.max_retries = 0;
    let error = ask(&HttpModel::new(settings).unwrap()).await.0.unwrap_err();
    match error {
        LlmError::Truncated { reason, partial } => {
            assert!(reason.contains("failed to generate"), "{reason}");
            assert_eq!(partial.text, "Half an ans");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn responses_request_is_stateless_and_keyed_and_429_without_retry_after_is_retried() {
    let limited = json!({"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded", "code": "rate_limit_exceeded"}});
    let llm = MockLlm::start([
        Script::status(429, &limited.to_string()),
        Script::raw(fixture("responses_usage_only_end.sse")),
    ])
    .await;
    let mut settings = settings(llm.url());
    settings.wire.api = Api::Responses;
    settings.api_key = Some("sk-test".into());
    // A reasoning model: its reasoning is asked for encrypted.
    settings.model = "gpt-5".into();
    let (result, deltas) = ask(&HttpModel::new(settings).unwrap()).await;
    assert_eq!(result.unwrap().text, "All green.");
    assert!(
        deltas
            .iter()
            .any(|d| matches!(d, StreamDelta::Retrying { .. }))
    );
    let recorded = llm.recorded();
    assert_eq!(recorded[0].path, "/v1/responses");
    assert_eq!(
        llm.header(0, "authorization").as_deref(),
        Some("Bearer sk-test")
    );
    let body = &recorded[0].body;
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["instructions"], "You are a test.");
    assert!(
        body["prompt_cache_key"]
            .as_str()
            .unwrap()
            .starts_with("cairn-")
    );
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}])
    );
}

#[tokio::test]
async fn a_wrong_route_names_the_format_and_the_root() {
    let llm = MockLlm::start([Script::status(404, "")]).await;
    let mut settings = settings(llm.url());
    settings.wire.api = Api::Anthropic;
    let error = ask(&HttpModel::new(settings).unwrap()).await.0.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("Anthropic Messages API"), "{text}");
    assert!(text.contains("/messages"), "{text}");
}

#[tokio::test]
async fn models_are_listed_from_the_anthropic_root() {
    let llm = MockLlm::start([]).await;
    llm.serve_models(&["claude-sonnet-4-5", "claude-haiku-4-5"]);
    let listed = model(llm.url(), Api::Anthropic)
        .list_models()
        .await
        .unwrap();
    assert_eq!(listed, ["claude-sonnet-4-5", "claude-haiku-4-5"]);
}

#[tokio::test]
async fn a_native_reply_past_max_reply_bytes_is_capped_as_on_chat() {
    for api in [Api::Anthropic, Api::Responses] {
        let llm = MockLlm::start([Script::text_tokens(4_000)]).await;
        let mut settings = settings(llm.url());
        settings.wire.api = api;
        settings.limits.max_reply_bytes = 1_000;
        let error = ask(&HttpModel::new(settings).unwrap()).await.0.unwrap_err();
        match error {
            LlmError::Capped { reason, partial } => {
                assert!(reason.contains("max_reply_bytes"), "{api}: {reason}");
                assert_eq!(partial.text.len(), 1_000, "{api}");
            }
            other => panic!("{api}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn anthropic_errors_show_the_provider_s_words_and_name_the_key_variable() {
    let invalid = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "messages.1.content.0: thinking blocks cannot be modified"}});
    let llm = MockLlm::start([Script::status(400, &invalid.to_string())]).await;
    let error = ask(&model(llm.url(), Api::Anthropic)).await.0.unwrap_err();
    match error {
        LlmError::Status { status, message } => {
            assert_eq!(status, 400);
            assert_eq!(
                message,
                "messages.1.content.0: thinking blocks cannot be modified"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(llm.recorded().len(), 1, "a 400 is not retried");
    let denied = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    let llm = MockLlm::start([Script::status(401, &denied.to_string())]).await;
    let model = model(llm.url(), Api::Anthropic).with_key_env(Some("ANTHROPIC_API_KEY".into()));
    let text = ask(&model).await.0.unwrap_err().to_string();
    assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    assert!(text.contains("invalid x-api-key"), "{text}");
}

#[test]
fn chat_sends_reasoning_effort_only_when_set() {
    let messages = WireMessages::from(vec![ChatMessage::User {
        content: "hi".into(),
    }]);
    let request = ChatRequest {
        messages: &messages,
        tools: &[],
    };
    let plain = HttpModel::new(settings("http://127.0.0.1:9/v1".into())).unwrap();
    let plain: Value = serde_json::from_slice(&plain.request_body(request).unwrap()).unwrap();
    assert!(plain.get("reasoning_effort").is_none());
    let mut effort = settings("http://127.0.0.1:9/v1".into());
    effort.wire.reasoning_effort = Some("high".into());
    let effort = HttpModel::new(effort).unwrap();
    let effort: Value = serde_json::from_slice(&effort.request_body(request).unwrap()).unwrap();
    assert_eq!(effort["reasoning_effort"], "high");
    assert_eq!(effort["messages"], plain["messages"]);
}
