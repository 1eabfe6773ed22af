//! Request building of the native formats against made-up conversations.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use crate::llm::{ReasoningBlocks, ToolSpec, WireMessages, WireToolCall};

fn settings(api: Api) -> ProviderSettings {
    ProviderSettings {
        provider: "test".into(),
        base_url: "http://localhost/v1".into(),
        api_key: Some("k".into()),
        model: "claude-sonnet-4-5".into(),
        max_retries: 0,
        initial_backoff: std::time::Duration::ZERO,
        max_backoff: std::time::Duration::ZERO,
        idle_timeout: std::time::Duration::from_secs(1),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
        wire: crate::llm::WireOptions {
            api,
            ..Default::default()
        },
    }
}

fn tools(n: usize, description: &'static str) -> Vec<ToolSpec> {
    (0..n)
        .map(|i| ToolSpec {
            name: Box::leak(format!("tool_{i}").into_boxed_str()),
            description,
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        })
        .collect()
}

fn body(api: Api, messages: &[ChatMessage], tools: &[ToolSpec]) -> Value {
    let settings = settings(api);
    let wire = WireMessages::from(messages.to_vec());
    let bytes = native_body(
        BodyContext {
            model: &settings.model,
            settings: &settings,
        },
        ChatRequest {
            messages: &wire,
            tools,
        },
    )
    .unwrap()
    .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn thinking_turn() -> Vec<ChatMessage> {
    vec![
        ChatMessage::System {
            content: "be brief".into(),
        },
        ChatMessage::User {
            content: "list files".into(),
        },
        ChatMessage::Assistant {
            content: Some("Looking.".into()),
            reasoning_content: Some("I should run ls.".into()),
            reasoning_blocks: ReasoningBlocks {
                thinking_blocks: vec![
                    json!({"type": "thinking", "thinking": "I should run ls.", "signature": "EqQBCkYIBxgCKkA=="}),
                    json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
                    json!({"type": "thinking", "thinking": "unsigned, cut"}),
                ],
                reasoning_details: vec![json!({"type": "reasoning.text", "text": "foreign"})],
                reasoning_items: vec![json!({"type": "reasoning", "encrypted_content": "gAAA"})],
            },
            tool_calls: vec![
                WireToolCall::function("toolu_01", "bash", r#"{"command":"ls"}"#),
                WireToolCall::function("toolu_02", "glob", "not json"),
            ],
        },
        ChatMessage::Tool {
            tool_call_id: "toolu_01".into(),
            content: "a.rs".into(),
        },
        ChatMessage::User {
            content: "(a note arrived while the calls ran)".into(),
        },
        ChatMessage::Tool {
            tool_call_id: "toolu_02".into(),
            content: String::new(),
        },
    ]
}

#[test]
fn anthropic_turns_carry_signed_thinking_first_and_results_first() {
    let body = body(Api::Anthropic, &thinking_turn(), &tools(2, "d"));
    assert_eq!(body["system"][0]["text"], "be brief");
    assert_eq!(body["stream"], true);
    // The model's output limit from the table of models (claude-sonnet-4: 64k).
    assert_eq!(body["max_tokens"], 64_000);
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{body:#}");
    let assistant = messages[1]["content"].as_array().unwrap();
    let kinds: Vec<&str> = assistant
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    // Signed thinking and redacted thinking verbatim and in order, the unsigned fragment and
    // the other formats' blobs left out; text, then the calls.
    assert_eq!(
        kinds,
        [
            "thinking",
            "redacted_thinking",
            "text",
            "tool_use",
            "tool_use"
        ]
    );
    assert_eq!(assistant[0]["signature"], "EqQBCkYIBxgCKkA==");
    assert_eq!(assistant[0]["thinking"], "I should run ls.");
    assert_eq!(assistant[1]["data"], "EmwKAhgBEgy3va3pzix");
    assert_eq!(assistant[3]["input"], json!({"command": "ls"}));
    // Arguments that are not an object go back as `{}` (the API refuses anything else).
    assert_eq!(assistant[4]["input"], json!({}));
    let user = messages[2]["content"].as_array().unwrap();
    let kinds: Vec<&str> = user.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["tool_result", "tool_result", "text"]);
    assert_eq!(user[1]["content"], "(no output)");
    assert!(!body.to_string().contains("foreign"));
    assert!(!body.to_string().contains("gAAA"));
}

#[test]
fn anthropic_cache_markers_stay_within_four_and_skip_short_prefixes() {
    // Short: nothing reaches the 1024-token minimum, so no marker at all.
    let body_short = body(Api::Anthropic, &thinking_turn(), &tools(2, "d"));
    assert!(!body_short.to_string().contains("cache_control"));
    // Long tools: the last tool, the system and the last two user turns.
    let long = Box::leak("x".repeat(600).into_boxed_str());
    let body_long = body(Api::Anthropic, &thinking_turn(), &tools(20, long));
    let text = body_long.to_string();
    assert_eq!(text.matches("cache_control").count(), 4, "{body_long:#}");
    assert!(body_long["tools"][19]["cache_control"].is_object());
    assert!(body_long["tools"][18].get("cache_control").is_none());
    assert!(body_long["system"][0]["cache_control"].is_object());
    assert_eq!(min_tokens("claude-haiku-4-5"), 4096);
    assert_eq!(min_tokens("claude-3-5-haiku-latest"), 2048);
    assert_eq!(min_tokens("claude-opus-4-1"), 1024);
}

fn min_tokens(model: &str) -> u64 {
    cache_plan::min_cacheable_tokens(model)
}

#[test]
fn responses_items_replay_reasoning_in_place_and_pair_calls_by_call_id() {
    let body = body(Api::Responses, &thinking_turn(), &tools(2, "d"));
    assert_eq!(body["store"], false);
    // The test model is no OpenAI reasoning model: no include, which others refuse.
    assert!(body.get("include").is_none());
    for (model, reasons) in [
        ("gpt-5", true),
        ("gpt-5-codex", true),
        ("o3", true),
        ("openai/o4-mini", true),
        ("gpt-5-chat-latest", false),
        ("gpt-4.1", false),
        ("gpt-4o", false),
        ("o3x", false),
    ] {
        assert_eq!(super::responses::reasons(model), reasons, "{model}");
    }
    assert_eq!(body["instructions"], "be brief");
    assert!(
        body["prompt_cache_key"]
            .as_str()
            .unwrap()
            .starts_with("cairn-")
    );
    assert_eq!(body["tools"][0]["type"], "function");
    let input = body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "message",
            "function_call_output"
        ]
    );
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "encrypted_content": "gAAA"})
    );
    assert_eq!(input[3]["call_id"], "toolu_01");
    assert_eq!(input[5]["call_id"], "toolu_01");
    assert!(!body.to_string().contains("EqQBCkYIBxgCKkA=="));
    // The key is a function of what never changes in a session.
    let again = super::responses::cache_key("be brief", &[]);
    assert_eq!(again, super::responses::cache_key("be brief", &[]));
    assert_ne!(again, super::responses::cache_key("be briefer", &[]));
}

#[test]
fn auth_headers_follow_the_format() {
    let anthropic = auth_headers(Api::Anthropic, Some("sk-ant"));
    assert!(anthropic.contains(&("x-api-key", "sk-ant".to_string())));
    assert!(anthropic.contains(&("anthropic-version", ANTHROPIC_VERSION.to_string())));
    assert_eq!(
        auth_headers(Api::Responses, Some("sk")),
        [("authorization", "Bearer sk".to_string())]
    );
    assert!(auth_headers(Api::Chat, None).is_empty());
}

#[test]
fn a_thirty_turn_session_with_twenty_tools_never_passes_four_markers_nor_changes_its_prefix() {
    let long = Box::leak(
        "a tool that does one thing well; "
            .repeat(8)
            .into_boxed_str(),
    );
    let specs = tools(20, long);
    let mut conversation = vec![
        ChatMessage::System {
            content: "You are cairn.".repeat(100),
        },
        ChatMessage::User {
            content: "go".into(),
        },
    ];
    let mut first: Option<(String, String)> = None;
    for turn in 0..30 {
        let body = body(Api::Anthropic, &conversation, &specs);
        let text = body.to_string();
        assert!(text.matches("cache_control").count() <= 4, "turn {turn}");
        let fixed = (body["tools"].to_string(), body["system"].to_string());
        match &first {
            None => first = Some(fixed),
            Some(first) => assert_eq!(&fixed, first, "turn {turn}"),
        }
        let id = format!("toolu_{turn}");
        conversation.push(ChatMessage::Assistant {
            content: None,
            reasoning_content: None,
            reasoning_blocks: ReasoningBlocks {
                thinking_blocks: vec![json!({"type": "thinking", "thinking": format!("t{turn}"), "signature": format!("s{turn}")})],
                ..Default::default()
            },
            tool_calls: vec![WireToolCall::function(&id, "tool_1", r#"{"path":"x"}"#)],
        });
        conversation.push(ChatMessage::Tool {
            tool_call_id: id,
            content: "output ".repeat(50),
        });
    }
}

#[test]
fn effort_budget_and_ttl_reach_the_formats_that_take_them() {
    let mut settings = settings(Api::Responses);
    settings.wire.reasoning_effort = Some("high".into());
    settings.wire.thinking_budget = Some(200_000);
    settings.wire.cache_ttl = crate::llm::CacheTtl::OneHour;
    settings.max_tokens = Some(16_000);
    let wire = WireMessages::from(thinking_turn());
    let long = Box::leak("x".repeat(600).into_boxed_str());
    let specs = tools(20, long);
    let request = ChatRequest {
        messages: &wire,
        tools: &specs,
    };
    let build = |settings: &ProviderSettings| -> Value {
        let cx = BodyContext {
            model: "claude-sonnet-4-5",
            settings,
        };
        serde_json::from_slice(&native_body(cx, request).unwrap().unwrap()).unwrap()
    };
    let responses = build(&settings);
    // A reasoning effort says the model reasons: its reasoning comes back encrypted.
    assert_eq!(responses["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        responses["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(responses["max_output_tokens"], 16_000);
    settings.wire.api = Api::Anthropic;
    let anthropic = build(&settings);
    // The budget stays below max_tokens, as the API requires.
    assert_eq!(
        anthropic["thinking"],
        json!({"type": "enabled", "budget_tokens": 15_999})
    );
    assert_eq!(anthropic["max_tokens"], 16_000);
    assert_eq!(
        anthropic["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert!(anthropic.get("reasoning").is_none());
    // A forced call and thinking do not go together: `any` becomes `auto`.
    settings.wire.tool_choice = Some(crate::llm::ToolChoice::Required);
    assert_eq!(build(&settings)["tool_choice"], json!({"type": "auto"}));
    settings.wire.thinking_budget = None;
    assert_eq!(build(&settings)["tool_choice"], json!({"type": "any"}));
}

#[test]
fn images_become_each_format_s_image_part() {
    let image = crate::content::ImageRef {
        hash: "ab".into(),
        media_type: "image/png".into(),
        name: "shot.png".into(),
        width: 1,
        height: 1,
        bytes: 3,
    };
    let mut content = crate::llm::UserContent::default();
    content.push_text("what is this?");
    content.push_image(image, b"png");
    let conversation = vec![ChatMessage::User { content }];
    let anthropic = body(Api::Anthropic, &conversation, &[]);
    assert_eq!(
        anthropic["messages"][0]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "cG5n"}})
    );
    let responses = body(Api::Responses, &conversation, &[]);
    assert_eq!(
        responses["input"][0]["content"][1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,cG5n"})
    );
    assert_eq!(
        responses["input"][0]["content"][0],
        json!({"type": "input_text", "text": "what is this?"})
    );
}
