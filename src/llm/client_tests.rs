#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn error_body_messages() {
    let cases = [
        (
            r#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#,
            400,
            "Invalid model",
        ),
        (
            r#"{"error":{"message":"Insufficient Balance"}}"#,
            402,
            "Insufficient Balance",
        ),
        (r#"{"detail":"Not Found"}"#, 404, "Not Found"),
        (
            "<html>\n<h1>502 Bad Gateway</h1>\n</html>",
            502,
            "<html> <h1>502 Bad Gateway</h1> </html>",
        ),
        ("", 503, "Service Unavailable"),
    ];
    for (body, status, expected) in cases {
        assert_eq!(error_body_message(body, status), expected);
    }
    let long = "x".repeat(2000);
    assert!(error_body_message(&long, 500).chars().count() <= 501);
}

fn settings(initial_ms: u64, max_ms: u64) -> ProviderSettings {
    ProviderSettings {
        provider: "custom".into(),
        base_url: "http://127.0.0.1:9/v1/".into(),
        api_key: Some("sk-secret".into()),
        model: "m".into(),
        max_retries: 5,
        initial_backoff: Duration::from_millis(initial_ms),
        max_backoff: Duration::from_millis(max_ms),
        idle_timeout: Duration::from_secs(5),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
        wire: Default::default(),
    }
}

#[test]
fn backoff_grows_with_jitter_and_is_capped() {
    let model = HttpModel::new(settings(100, 1000)).unwrap();
    for _ in 0..50 {
        let first = model.backoff(1, None);
        assert!(
            first >= Duration::from_millis(50) && first < Duration::from_millis(100),
            "{first:?}"
        );
        let third = model.backoff(3, None);
        assert!(
            third >= Duration::from_millis(200) && third < Duration::from_millis(400),
            "{third:?}"
        );
        assert_eq!(model.backoff(30, None), Duration::from_millis(1000));
    }
    assert_eq!(
        model.backoff(1, Some(Duration::from_millis(700))),
        Duration::from_millis(700)
    );
    assert_eq!(
        model.backoff(1, Some(Duration::from_secs(60))),
        Duration::from_millis(1000)
    );
}

#[test]
fn endpoint_and_debug_output_hide_the_key() {
    let model = HttpModel::new(settings(1, 1)).unwrap();
    assert_eq!(model.endpoint, "http://127.0.0.1:9/v1/chat/completions");
    assert!(!format!("{model:?}").contains("sk-secret"));
    assert!(!format!("{:?}", settings(1, 1)).contains("sk-secret"));
    model.set_model("other");
    assert_eq!(model.model(), "other");
    for (url, local) in [
        ("http://localhost:1/v1", true),
        ("http://[::1]:1/v1", true),
        ("https://api.deepseek.com", false),
    ] {
        assert_eq!(
            crate::net::is_loopback_host(reqwest::Url::parse(url).unwrap().host_str().unwrap()),
            local,
            "{url}"
        );
    }
    assert!(
        HttpModel::new(ProviderSettings {
            base_url: "localhost:11434".into(),
            ..settings(1, 1)
        })
        .is_err()
    );
}

/// The request as one struct, serialised whole: what the body was before the messages' JSON
/// was kept, and what it must stay byte for byte.
#[derive(serde::Serialize)]
struct WholeBody<'a> {
    model: String,
    messages: &'a [crate::llm::ChatMessage],
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

/// Every kind of message, with text that needs escaping: quotes, backslashes, control
/// characters, unicode beyond the BMP, the line separators JavaScript chokes on.
fn every_kind_of_message() -> Vec<crate::llm::ChatMessage> {
    use crate::llm::{ChatMessage, ReasoningBlocks, WireToolCall};
    use serde_json::json;
    let awkward = "naïve 日本語 🦀 \u{2028}\u{2029} \"quoted\" back\\slash \t\r\n \u{0}\u{1}\u{1f}\u{7f} </script>";
    vec![
        ChatMessage::System {
            content: format!("You are cairn. {awkward}"),
        },
        ChatMessage::User {
            content: format!("fix it {awkward}").into(),
        },
        ChatMessage::Assistant {
            content: None,
            reasoning_content: Some(format!("thinking {awkward}")),
            reasoning_blocks: ReasoningBlocks {
                thinking_blocks: vec![
                    json!({"type": "thinking", "thinking": awkward, "signature": "sig=="}),
                    json!({"type": "redacted_thinking", "data": "opaque"}),
                ],
                reasoning_details: vec![json!({
                    "type": "reasoning.text", "text": awkward, "signature": null,
                    "format": "anthropic-claude-v1", "index": 0, "n": 1.5e300,
                })],
                reasoning_items: Vec::new(),
            },
            tool_calls: vec![
                WireToolCall::function("c1", "read_file", r#"{"path": "src/ü.rs"}"#),
                WireToolCall::function("c2", "bash", "not json"),
            ],
        },
        ChatMessage::Tool {
            tool_call_id: "c1".into(),
            content: format!("1\tfn main() {{}}\n{awkward}"),
        },
        ChatMessage::Tool {
            tool_call_id: "c2".into(),
            content: String::new(),
        },
        ChatMessage::User {
            content: "[cairn] The mode is now `plan`.".into(),
        },
        ChatMessage::Assistant {
            content: Some(format!("done {awkward}")),
            reasoning_content: None,
            reasoning_blocks: ReasoningBlocks::default(),
            tool_calls: Vec::new(),
        },
    ]
}

#[test]
fn the_body_from_kept_message_json_is_byte_identical_to_serialising_the_whole_request() {
    let messages = every_kind_of_message();
    let tool = crate::llm::ToolSpec {
        name: "read_file",
        description: "Read a file \"exactly\".",
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    };
    let mut with_limits = settings(1, 1);
    with_limits.model = "deepseek/\"v4\" ✓".into();
    with_limits.max_tokens = Some(8192);
    with_limits.temperature = Some(0.3);
    for settings in [settings(1, 1), with_limits] {
        let model = HttpModel::new(settings.clone()).unwrap();
        for tools in [&[][..], std::slice::from_ref(&tool)] {
            // Grown one message at a time, as a session grows: every prefix is checked.
            let mut kept = crate::llm::WireMessages::new();
            for message in &messages {
                kept.push_merging_users(message);
                let request = ChatRequest {
                    messages: &kept,
                    tools,
                };
                let expected = serde_json::to_vec(&WholeBody {
                    model: settings.model.clone(),
                    messages: kept.as_slice(),
                    stream: true,
                    stream_options: StreamOptions {
                        include_usage: true,
                    },
                    tools: wire_tools(tools),
                    max_tokens: settings.max_tokens,
                    temperature: settings.temperature,
                })
                .unwrap();
                let body = model.request_body(request).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&body),
                    String::from_utf8_lossy(&expected)
                );
                assert_eq!(body, expected);
            }
        }
    }
}
