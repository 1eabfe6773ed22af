#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;
use crate::agent::overflow::{is_context_overflow, window_in_error};

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        content: text.into(),
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ChatMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}],
    }))
    .unwrap()
}

fn result(id: &str, bytes: usize) -> ChatMessage {
    ChatMessage::Tool {
        tool_call_id: id.into(),
        content: "x".repeat(bytes),
    }
}

fn conversation() -> Vec<ChatMessage> {
    vec![
        user("fix the parser"),
        call(
            "a",
            "read_file",
            json!({"path": "src/x.rs", "offset": 1, "limit": 400}),
        ),
        result("a", 5000),
        call("b", "bash", json!({"command": "cargo test"})),
        result("b", 3000),
        call("c", "read_file", json!({"path": "small.rs"})),
        result("c", 100),
        call("d", "read_file", json!({"path": "src/y.rs"})),
        result("d", 5000),
    ]
}

#[test]
fn the_kept_tail_starts_at_a_call_never_at_its_result() {
    let messages = conversation();
    // Nothing to spare: only the last step (call d and its result).
    assert_eq!(recent_start(&messages, 0), 7);
    // Room for the last two steps.
    let two = serialized_len(&messages[5..]) + 10;
    assert_eq!(recent_start(&messages, two), 5);
    // Everything fits.
    assert_eq!(recent_start(&messages, 1 << 30), 0);
}

#[test]
fn bulky_old_results_become_stubs_that_say_how_to_get_them_again() {
    let mut messages = conversation();
    let original = messages.clone();
    let stubs = prune(&mut messages, 7);
    assert_eq!(stubs.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [2, 4]);
    // What the log keeps rebuilds the same conversation.
    let mut replayed = original;
    apply(&mut replayed, &stubs, None, 0);
    assert_eq!(replayed, messages);
    let ChatMessage::Tool { content, .. } = &messages[2] else {
        panic!()
    };
    assert_eq!(
        content,
        "[pruned: read_file src/x.rs lines 1-400 (4.9 KB) — read it again if needed]"
    );
    let ChatMessage::Tool { content, .. } = &messages[4] else {
        panic!()
    };
    assert!(
        content.starts_with("[pruned: bash `cargo test`"),
        "{content}"
    );
    // Small results and the kept tail stay; stubs are not pruned twice.
    assert_eq!(messages[6], result("c", 100));
    assert_eq!(messages[8], result("d", 5000));
    assert!(prune(&mut messages, 7).is_empty());
    apply(&mut replayed, &[], Some("summary"), 5);
    assert_eq!(replayed.len(), 5);
    assert_eq!(replayed[0], user("summary"));
    // Reads whose result is a stub no longer count as seen.
    assert_eq!(visible_reads(&messages), ["small.rs", "src/y.rs"]);
}

#[test]
fn the_transcript_keeps_the_request_and_the_latest_within_budget() {
    let mut messages = vec![user("the original request")];
    for i in 0..50 {
        messages.push(user(&format!("message {i} {}", "y".repeat(1000))));
    }
    let text = transcript(&messages, 10_000);
    assert!(serialized_len(text.as_str()) <= 10_000 + 200);
    assert!(text.starts_with("[user]\nthe original request"));
    assert!(text.contains("messages omitted"));
    assert!(text.contains("message 49 "));
    assert!(!text.contains("message 10 "));
}

#[test]
fn each_providers_too_long_answer_is_recognised() {
    let status = |message: &str| LlmError::Status {
        status: 400,
        message: message.into(),
    };
    for (provider, message) in [
        (
            "openai",
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
        ),
        (
            "deepseek",
            "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (140000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
        ),
        (
            "anthropic",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
        (
            "llama.cpp",
            "the request exceeds the available context size, try increasing it",
        ),
        (
            "vllm",
            "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (32000 in the messages, 1000 in the completion).",
        ),
    ] {
        assert!(is_context_overflow(&status(message)), "{provider}");
    }
    assert!(!is_context_overflow(&status("Invalid model")));
    assert!(!is_context_overflow(&LlmError::Status {
        status: 429,
        message: "too many tokens per minute".into()
    }));
    assert_eq!(
        window_in_error("This model's maximum context length is 131,072 tokens."),
        Some(131_072)
    );
    assert_eq!(window_in_error("prompt is too long"), None);
}

#[test]
fn todos_are_listed_with_their_state() {
    let todos = vec![
        TodoItem {
            content: "read".into(),
            status: TodoStatus::Completed,
        },
        TodoItem {
            content: "edit".into(),
            status: TodoStatus::InProgress,
        },
    ];
    assert_eq!(todo_lines(&todos), "- [x] read\n- [~] edit\n");
}
