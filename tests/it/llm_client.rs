//! The HTTP model client against the scripted mock server: what it sends, how it streams,
//! retries, gives up, and stops when cancelled.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use cairn::bus::Usage;
use cairn::llm::{
    AssembledCall, ChatMessage, ChatModel, ChatRequest, Completion, HttpModel, LlmError,
    ProviderSettings, ReplyLimits, StreamDelta, WireMessages,
};
use cairn::net::{Network, NetworkSettings};
use cairn::testing::{MockLlm, Script, token_text};
use cairn::tools::ToolSpec;

pub(crate) fn settings(url: String) -> ProviderSettings {
    ProviderSettings {
        provider: "custom".into(),
        base_url: url,
        api_key: None,
        model: "mock-model".into(),
        max_retries: 3,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
        wire: Default::default(),
    }
}

fn messages() -> Vec<ChatMessage> {
    vec![
        ChatMessage::System {
            content: "You are a test.".into(),
        },
        ChatMessage::User {
            content: "hello".into(),
        },
    ]
}

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file",
        description: "Read a file.",
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

/// One request; returns the result and every delta reported. `on` sees each delta as it
/// arrives (to cancel at a chosen moment).
async fn chat_with(
    model: &HttpModel,
    tools: &[ToolSpec],
    cancel: &CancellationToken,
    mut on: impl FnMut(&StreamDelta) + Send,
) -> (Result<Completion, LlmError>, Vec<StreamDelta>) {
    let messages = WireMessages::from(messages());
    let mut deltas = Vec::new();
    let mut sink = |d: StreamDelta| {
        on(&d);
        deltas.push(d);
    };
    let request = ChatRequest {
        messages: &messages,
        tools,
    };
    let result = model.stream_chat(request, &mut sink, cancel).await;
    (result, deltas)
}

pub(crate) async fn chat(model: &HttpModel) -> (Result<Completion, LlmError>, Vec<StreamDelta>) {
    chat_with(model, &[], &CancellationToken::new(), |_| {}).await
}

fn retries(deltas: &[StreamDelta]) -> Vec<(u32, Duration, String)> {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Retrying {
                attempt,
                wait,
                reason,
            } => Some((*attempt, *wait, reason.clone())),
            _ => None,
        })
        .collect()
}

fn streamed_text(deltas: &[StreamDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_streams_and_the_request_carries_stream_options_and_tools() {
    let usage = Usage {
        prompt_tokens: 120,
        completion_tokens: 7,
        cached_tokens: 100,
    };
    let llm = MockLlm::start([
        Script::reasoning_then_text("think first", "Hello there, world").with_usage(usage),
    ])
    .await;
    let model = HttpModel::new(ProviderSettings {
        max_tokens: Some(512),
        ..settings(llm.url())
    })
    .unwrap();

    let (result, deltas) = chat_with(
        &model,
        &[read_file_tool()],
        &CancellationToken::new(),
        |_| {},
    )
    .await;

    let completion = result.unwrap();
    assert_eq!(completion.text, "Hello there, world");
    assert_eq!(completion.reasoning, "think first");
    assert_eq!(completion.usage, Some(usage));
    assert_eq!(streamed_text(&deltas), "Hello there, world");
    assert!(
        deltas
            .iter()
            .filter(|d| matches!(d, StreamDelta::Text(_)))
            .count()
            > 1,
        "text arrived in pieces"
    );
    assert_eq!(deltas.last(), Some(&StreamDelta::Usage(usage)));

    let body = llm.request(0);
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 512);
    assert!(body.get("temperature").is_none());
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hello"}])
    );
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        }}])
    );
    assert_eq!(
        llm.header(0, "authorization"),
        None,
        "no key, no Authorization header"
    );
}

#[tokio::test]
async fn tools_are_omitted_when_empty_and_the_key_is_sent_as_bearer() {
    let llm = MockLlm::start([Script::text("a")]).await;
    let model = HttpModel::new(ProviderSettings {
        api_key: Some("sk-test".into()),
        ..settings(llm.url())
    })
    .unwrap();
    chat(&model).await.0.unwrap();
    assert!(llm.request(0).get("tools").is_none());
    assert_eq!(
        llm.header(0, "authorization").as_deref(),
        Some("Bearer sk-test")
    );
}

/// The body goes out in pieces (see `WireMessages`), but as one body of known length: servers
/// and proxies that refuse chunked requests must see what they saw before, and a retry sends
/// the same bytes again.
#[tokio::test]
async fn the_body_has_a_content_length_and_is_not_chunked_also_on_a_retry() {
    let llm = MockLlm::start([Script::status(503, "{}"), Script::text("ok")]).await;
    let model = HttpModel::new(ProviderSettings {
        initial_backoff: Duration::from_millis(1),
        ..settings(llm.url())
    })
    .unwrap();
    let messages = WireMessages::from(vec![
        ChatMessage::System {
            content: "s".into(),
        },
        ChatMessage::User {
            content: "x".repeat(300_000).into(),
        },
    ]);
    let request = ChatRequest {
        messages: &messages,
        tools: &[],
    };
    let expected = model.request_body(request).unwrap();
    let result = model
        .stream_chat(request, &mut |_| {}, &CancellationToken::new())
        .await;
    assert_eq!(result.unwrap().text, "ok");
    let recorded = llm.recorded();
    assert_eq!(recorded.len(), 2);
    for (i, request) in recorded.iter().enumerate() {
        assert_eq!(request.raw, expected, "request {i}");
        assert_eq!(
            llm.header(i, "content-length"),
            Some(expected.len().to_string())
        );
        assert_eq!(llm.header(i, "transfer-encoding"), None);
    }
}

#[tokio::test]
async fn rate_limit_429_waits_the_servers_retry_after_then_succeeds() {
    let body = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    let llm = MockLlm::start([Script::status(429, body).retry_after(1), Script::text("ok")]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();

    let started = Instant::now();
    let (result, deltas) = chat(&model).await;

    assert_eq!(result.unwrap().text, "ok");
    let retries = retries(&deltas);
    assert_eq!(retries.len(), 1, "{deltas:?}");
    let (attempt, wait, reason) = &retries[0];
    assert_eq!(
        (*attempt, *wait),
        (1, Duration::from_secs(1)),
        "the server's Retry-After is honoured"
    );
    assert!(
        reason.contains("429") && reason.contains("Rate limit reached"),
        "{reason}"
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_ms_is_preferred_and_capped_by_max_backoff() {
    let llm = MockLlm::start([
        Script::status(429, "{}").retry_after(30).retry_after_ms(40),
        Script::status(503, "").retry_after(30),
        Script::text("ok"),
    ])
    .await;
    let model = HttpModel::new(ProviderSettings {
        max_backoff: Duration::from_millis(60),
        ..settings(llm.url())
    })
    .unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "ok");
    let waits: Vec<Duration> = retries(&deltas).into_iter().map(|r| r.1).collect();
    assert_eq!(
        waits,
        [Duration::from_millis(40), Duration::from_millis(60)]
    );
}

#[tokio::test]
async fn server_error_500_is_retried_with_backoff() {
    let llm = MockLlm::start([
        Script::status(500, r#"{"error":{"message":"internal"}}"#),
        Script::text("recovered"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "recovered");
    let retries = retries(&deltas);
    assert_eq!(retries.len(), 1);
    assert!(
        retries[0].1 <= Duration::from_millis(5),
        "tiny configured backoff: {:?}",
        retries[0].1
    );
    assert!(
        retries[0].2.contains("500") && retries[0].2.contains("internal"),
        "{}",
        retries[0].2
    );
}

#[tokio::test]
async fn retries_are_bounded_and_the_last_status_is_reported() {
    let scripts = (0..5).map(|_| Script::status(503, "<html><body>Service down</body></html>"));
    let llm = MockLlm::start(scripts).await;
    let model = HttpModel::new(ProviderSettings {
        max_retries: 2,
        ..settings(llm.url())
    })
    .unwrap();
    let (result, deltas) = chat(&model).await;
    match result {
        Err(LlmError::Status {
            status: 503,
            message,
        }) => assert!(message.contains("Service down"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        retries(&deltas).iter().map(|r| r.0).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(llm.requests().len(), 3);
}

#[tokio::test]
async fn bad_request_400_is_not_retried_and_shows_the_providers_message() {
    let body = r#"{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#;
    let llm = MockLlm::start([Script::status(400, body), Script::text("never")]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    match result {
        Err(e @ LlmError::Status { status: 400, .. }) => {
            assert_eq!(e.to_string(), "the provider answered 400: Model Not Exist");
        }
        other => panic!("{other:?}"),
    }
    assert!(retries(&deltas).is_empty());
    assert_eq!((llm.requests().len(), llm.remaining()), (1, 1));
}

#[tokio::test]
async fn exhausted_quota_is_not_retried() {
    let openai = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    let deepseek = r#"{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}"#;
    for (status, body, expected) in [
        (429, openai, "You exceeded your current quota"),
        (402, deepseek, "Insufficient Balance"),
    ] {
        let llm = MockLlm::start([Script::status(status, body), Script::text("never")]).await;
        let model = HttpModel::new(settings(llm.url())).unwrap();
        let (result, deltas) = chat(&model).await;
        match result {
            Err(LlmError::QuotaExhausted { message }) => {
                assert!(message.starts_with(expected), "{message}")
            }
            other => panic!("{status}: {other:?}"),
        }
        assert!(retries(&deltas).is_empty());
        assert_eq!(llm.requests().len(), 1);
    }
}

#[tokio::test]
async fn a_stream_cut_after_text_is_retried_and_the_answer_completes() {
    // Chunks: role, "one ", "two ", then the connection closes. Nothing runs before a reply
    // is whole, so the same request again is safe; `Retrying` voids what was streamed.
    let llm = MockLlm::start([
        Script::text("one two three four").cut_after_chunks(3),
        Script::text("one two three four"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "one two three four");
    let retries = retries(&deltas);
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(retries[0].2.contains("cut off"), "{retries:?}");
    let retry_at = deltas
        .iter()
        .position(|d| matches!(d, StreamDelta::Retrying { .. }))
        .unwrap();
    assert_eq!(streamed_text(&deltas[..retry_at]), "one two ");
    assert_eq!(streamed_text(&deltas[retry_at..]), "one two three four");
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_on_every_attempt_gives_the_last_partial_and_says_so() {
    let cut = || Script::text("one two three four").cut_after_chunks(3);
    let llm = MockLlm::start([cut(), cut(), cut(), cut(), Script::text("never")]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    match result {
        Err(LlmError::Truncated { partial, reason }) => {
            assert_eq!(partial.text, "one two ");
            assert!(reason.contains("3 retries were cut off too"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(retries(&deltas).len(), 3);
    assert_eq!(llm.requests().len(), 4);
}

#[tokio::test]
async fn a_stream_that_ends_without_a_finish_reason_after_text_is_retried() {
    // A clean end of body, no `finish_reason`, no `[DONE]`: a proxy closed the stream.
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"half \"}}]}\n\n";
    let llm = MockLlm::start([Script::raw(body), Script::text("whole answer")]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "whole answer");
    assert_eq!(retries(&deltas).len(), 1);
}

#[tokio::test]
async fn an_answer_cut_at_the_output_limit_inside_a_tool_call_is_not_retried() {
    // `length` is the model's limit, not the network: the same request ends the same way.
    let llm = MockLlm::start([
        Script::tool_call("c1", "read_file", json!({"path": "a.txt"}))
            .with_preface("reading ")
            .finish_reason("length"),
        Script::text("never"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert!(
        matches!(result, Err(LlmError::CallCut { .. })),
        "{result:?}"
    );
    assert!(retries(&deltas).is_empty());
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_any_content_is_retried() {
    let llm = MockLlm::start([
        Script::text("lost").cut_after_chunks(1),
        Script::text("fine"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "fine");
    assert_eq!(streamed_text(&deltas), "fine");
    assert_eq!(retries(&deltas).len(), 1);
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let llm =
        MockLlm::start([Script::text("slow answer").chunk_delay(Duration::from_secs(5))]).await;
    let settings = ProviderSettings {
        max_retries: 0,
        idle_timeout: Duration::from_millis(200),
        ..settings(llm.url())
    };
    let model = HttpModel::new(settings).unwrap();
    let started = Instant::now();
    let (result, _) = chat(&model).await;
    assert!(
        matches!(result, Err(LlmError::Connection(ref m)) if m.contains("no data")),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn cancelling_a_slow_stream_returns_promptly() {
    let llm = MockLlm::start([
        Script::text("a b c d e f g h i j").chunk_delay(Duration::from_millis(300))
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let (result, deltas) = chat_with(&model, &[], &cancel, |d| {
        if matches!(d, StreamDelta::Text(_)) {
            cancel.cancel();
        }
    })
    .await;
    assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(streamed_text(&deltas), "a ");
}

#[tokio::test]
async fn cancelling_during_a_backoff_wait_returns_promptly() {
    let llm = MockLlm::start([
        Script::status(429, "{}").retry_after(30),
        Script::text("never"),
    ])
    .await;
    let model = HttpModel::new(ProviderSettings {
        max_backoff: Duration::from_secs(60),
        ..settings(llm.url())
    })
    .unwrap();
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let (result, _) = chat_with(&model, &[], &cancel, |d| {
        if matches!(d, StreamDelta::Retrying { .. }) {
            cancel.cancel();
        }
    })
    .await;
    assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn parallel_tool_calls_split_across_chunks_are_assembled() {
    let write = json!({"path": "notes/ü.txt", "content": "héllo 日本 🎉\n\"quoted\"\n"});
    let read = json!({"path": "src/lib.rs"});
    let llm = MockLlm::start([Script::tool_calls([
        ("c1", "write_file", write.clone()),
        ("c2", "read_file", read.clone()),
    ])
    .with_preface("Let me do both.")
    .split_arguments_every(3)])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, _) = chat(&model).await;
    let completion = result.unwrap();
    assert_eq!(completion.text, "Let me do both.");
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    let ids: Vec<&str> = completion
        .tool_calls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["c1", "c2"]);
    let args: Vec<serde_json::Value> = completion
        .tool_calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap())
        .collect();
    assert_eq!(args, [write, read]);
}

#[tokio::test]
async fn tool_calls_without_ids_get_synthesised_ids() {
    let llm = MockLlm::start([
        Script::tool_call("ignored", "glob", json!({"pattern": "*.rs"})).id_missing(),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let completion = chat(&model).await.0.unwrap();
    let [AssembledCall { id, name, .. }] = completion.tool_calls.as_slice() else {
        panic!("{completion:?}")
    };
    assert!(id.as_str().starts_with("call_"), "{id}");
    assert_eq!(name, "glob");
}

#[tokio::test]
async fn an_error_event_before_any_content_is_retried_like_a_5xx() {
    // A proxy answers 200, sends the role chunk, then its upstream fails.
    let llm = MockLlm::start([
        Script::stream_error("upstream overloaded"),
        Script::stream_error("rate limited upstream").error_code(429),
        Script::text("second time lucky"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "second time lucky");
    let reasons: Vec<String> = retries(&deltas).into_iter().map(|r| r.2).collect();
    assert_eq!(reasons.len(), 2, "{deltas:?}");
    assert!(reasons[0].contains("upstream overloaded"), "{reasons:?}");
    assert_eq!(llm.requests().len(), 3);
}

#[tokio::test]
async fn an_error_event_with_a_final_code_is_not_retried_after_content_or_before() {
    let llm = MockLlm::start([
        Script::stream_error("upstream model crashed")
            .error_code(400)
            .with_preface("I will "),
        Script::stream_error("the request exceeds the available context size").error_code(400),
        Script::text("never"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert!(
        matches!(result, Err(LlmError::Provider { ref message, .. }) if message == "upstream model crashed"),
        "{result:?}"
    );
    assert!(retries(&deltas).is_empty());
    let (result, deltas) = chat(&model).await;
    assert!(
        matches!(result, Err(LlmError::Provider { ref message, transient: false }) if message.contains("context size")),
        "{result:?}"
    );
    assert!(retries(&deltas).is_empty());
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_passing_error_event_mid_answer_is_retried_and_the_answer_completes() {
    let llm = MockLlm::start([
        Script::stream_error("the server is overloaded")
            .error_code(503)
            .with_preface("I will "),
        Script::text("I will fix it."),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "I will fix it.");
    let retries = retries(&deltas);
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(retries[0].2.contains("overloaded"), "{retries:?}");
}

#[tokio::test]
async fn a_404_without_a_model_in_it_names_the_base_url_to_check() {
    let llm = MockLlm::start([Script::status(
        404,
        r#"{"error":{"message":"Invalid URL (POST /chat/completions)"}}"#,
    )])
    .await;
    // The version part is missing: `/chat/completions` lands on no route.
    let base_url = llm.url().trim_end_matches("/v1").to_string() + "/api";
    let model = HttpModel::new(settings(base_url.clone())).unwrap();
    let (result, _) = chat(&model).await;
    let Err(LlmError::Status {
        status: 404,
        message,
    }) = result
    else {
        panic!("{result:?}")
    };
    assert!(
        message.contains("--base-url") && message.contains(&base_url),
        "{message}"
    );
}

#[tokio::test]
async fn a_404_about_the_model_does_not_blame_the_url() {
    let llm = MockLlm::start([Script::status(
        404,
        r#"{"error":{"message":"The model `gpt-9` does not exist"}}"#,
    )])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let (result, _) = chat(&model).await;
    let Err(LlmError::Status { message, .. }) = result else {
        panic!("{result:?}")
    };
    assert!(
        message.contains("gpt-9") && !message.contains("--base-url"),
        "{message}"
    );
}

#[tokio::test]
async fn retry_after_renamed_by_a_proxy_is_honoured_and_capped() {
    let llm = MockLlm::start([
        Script::status(429, "{}").header("llm_provider-retry-after", "0.03"),
        Script::status(429, "{}").header("x-ratelimit-reset-tokens", "20ms"),
        Script::status(503, "{}").header("x-ratelimit-reset-requests", "6m0s"),
        Script::text("ok"),
    ])
    .await;
    let model = HttpModel::new(ProviderSettings {
        max_backoff: Duration::from_millis(70),
        ..settings(llm.url())
    })
    .unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "ok");
    let waits: Vec<Duration> = retries(&deltas).into_iter().map(|r| r.1).collect();
    let ms = Duration::from_millis;
    assert_eq!(waits, [ms(30), ms(20), ms(70)]);
}

#[tokio::test]
async fn raw_llama_cpp_body_with_done_and_no_blank_line() {
    let body = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n\
                data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n\
                data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":3}}\n\n\
                data: [DONE]";
    let llm = MockLlm::start([Script::raw(body)]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let completion = chat(&model).await.0.unwrap();
    assert_eq!(completion.text, "hi");
}

#[tokio::test]
async fn a_huge_answer_streams_whole() {
    let llm = MockLlm::start([Script::text_tokens(200_000)]).await;
    // About 1.2 MB of text: more than the default cap, which a real model never reaches.
    let model = HttpModel::new(ProviderSettings {
        limits: ReplyLimits {
            max_reply_bytes: 4 << 20,
            ..ReplyLimits::default()
        },
        ..settings(llm.url())
    })
    .unwrap();
    let completion = chat(&model).await.0.unwrap();
    assert_eq!(completion.text, token_text(200_000));
    assert_eq!(completion.usage.unwrap().completion_tokens, 200_000 * 4 / 4);
}

#[tokio::test]
async fn a_refused_connection_is_retried_once_quickly_then_names_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let settings = ProviderSettings {
        max_retries: 5,
        ..settings(base_url.clone())
    };
    let model = HttpModel::new(settings).unwrap();
    let (result, deltas) = chat(&model).await;
    let message = match result {
        Err(LlmError::Connection(message)) => message,
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains(&format!("{base_url}/chat/completions")),
        "{message}"
    );
    // One summary line a user acts on first, the library's own words after it.
    let (summary, cause) = message.split_once('\n').unwrap();
    assert!(
        summary.contains(&base_url) && summary.contains("--base-url"),
        "{message}"
    );
    assert!(summary.contains("connection refused"), "{message}");
    assert!(!summary.contains("tcp connect error"), "{message}");
    assert!(cause.starts_with("cause: "), "{message}");
    // One quick retry (a server being restarted), not five with backoff.
    let retries = retries(&deltas);
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(retries[0].1 <= Duration::from_millis(250), "{retries:?}");
}

/// Answers one request with `content_type` and `body`, the way a server the mock cannot
/// imitate would; returns the base URL.
async fn serve_once(content_type: &'static str, body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        // Read until the JSON body's closing brace: the request head and body are small.
        while !request.ends_with(b"}") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(body.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
    });
    url
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_answers_json_is_understood() {
    let answer = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"whole answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
    let url = serve_once("application/json", answer).await;
    let model = HttpModel::new(settings(url)).unwrap();
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "whole answer");
    assert_eq!(streamed_text(&deltas), "whole answer");
}

#[tokio::test]
async fn an_html_page_instead_of_a_stream_is_reported_not_retried() {
    let url = serve_once(
        "text/html; charset=utf-8",
        "<html><body>Please log in to the proxy</body></html>",
    )
    .await;
    let model = HttpModel::new(settings(url)).unwrap();
    let (result, deltas) = chat(&model).await;
    match result {
        Err(LlmError::Protocol(message)) => {
            assert!(message.contains("Please log in to the proxy"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(retries(&deltas).is_empty());
}

fn limited(url: String, limits: ReplyLimits) -> HttpModel {
    HttpModel::new(ProviderSettings {
        max_retries: 0,
        limits,
        ..settings(url)
    })
    .unwrap()
}

#[tokio::test]
async fn a_reply_that_never_ends_is_stopped_at_the_cap_keeping_what_arrived() {
    let llm = MockLlm::start([Script::endless_text("forever and ")]).await;
    let max = 64 * 1024;
    let model = limited(
        llm.url(),
        ReplyLimits {
            max_reply_bytes: max,
            ..ReplyLimits::default()
        },
    );
    let (result, deltas) = chat(&model).await;
    let Err(LlmError::Capped { reason, partial }) = result else {
        panic!("{result:?}")
    };
    assert!(reason.contains("max_reply_bytes"), "{reason}");
    assert_eq!(partial.text.len(), max, "exactly up to the cap");
    assert!(partial.text.starts_with("forever and forever"));
    let shown: usize = deltas
        .iter()
        .map(|d| match d {
            StreamDelta::Text(t) => t.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(shown, max, "the user saw what was kept, no more");
}

#[tokio::test]
async fn a_tool_call_whose_arguments_never_end_is_stopped_and_not_returned() {
    let llm = MockLlm::start([Script::endless_arguments("write_file")]).await;
    let model = limited(
        llm.url(),
        ReplyLimits {
            max_call_bytes: 16 * 1024,
            ..ReplyLimits::default()
        },
    );
    let (result, _) = chat(&model).await;
    let Err(LlmError::Capped { reason, partial }) = result else {
        panic!("{result:?}")
    };
    assert!(
        reason.contains("write_file") && reason.contains("max_tool_call_bytes"),
        "{reason}"
    );
    assert!(partial.tool_calls.is_empty());
}

#[tokio::test]
async fn keep_alive_comments_alone_are_not_a_first_byte() {
    // Even a local server, which has no first-byte limit by default, can be given one; the
    // comments it sends meanwhile do not count as an answer.
    let llm = MockLlm::start([Script::keep_alive_only(Duration::from_millis(20))]).await;
    let network = Network::new(NetworkSettings {
        local_first_byte_timeout: Some(Duration::from_millis(300)),
        ..NetworkSettings::default()
    })
    .unwrap();
    let model = HttpModel::with_network(
        ProviderSettings {
            max_retries: 0,
            ..settings(llm.url())
        },
        &network,
    )
    .unwrap();
    let (result, _) = chat(&model).await;
    match result {
        Err(LlmError::Connection(message)) => {
            assert!(message.contains("sent nothing within 0.3s"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn steady_data_cannot_outlast_the_overall_deadline() {
    let llm =
        MockLlm::start([Script::text_tokens(100_000).chunk_delay(Duration::from_millis(10))]).await;
    let model = HttpModel::new(ProviderSettings {
        max_retries: 0,
        idle_timeout: Duration::from_secs(10),
        limits: ReplyLimits {
            request_timeout: Duration::from_millis(300),
            ..ReplyLimits::default()
        },
        ..settings(llm.url())
    })
    .unwrap();
    let (result, _) = chat(&model).await;
    match result {
        Err(LlmError::Truncated { reason, partial }) => {
            assert!(reason.contains("request_timeout_secs"), "{reason}");
            assert!(!partial.text.is_empty(), "what arrived is kept");
        }
        other => panic!("{other:?}"),
    }
}
