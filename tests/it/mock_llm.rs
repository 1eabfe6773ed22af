//! The scripted mock server itself: a huge answer streamed whole, the fallback turn, request
//! inspection helpers and the standalone `mock-llm` binary.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::llm_client::{chat, settings};
use cairn::llm::{
    ChatMessage, ChatModel, ChatRequest, HttpModel, WireFunction, WireMessages, WireToolCall,
};
use cairn::testing::{MockLlm, NO_MORE_TURNS, Script};

/// A huge answer arrives whole (its speed is the benches' business,
/// not a timed test's: a loaded CI machine made a time limit here fail now and then).
#[tokio::test]
async fn the_mock_streams_all_of_a_200k_token_answer() {
    let llm = MockLlm::start([Script::text_tokens(200_000)]).await;
    let body = reqwest::Client::new()
        .post(format!("{}/chat/completions", llm.url()))
        .body("{}")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.ends_with("data: [DONE]\n\n"));
    let words: usize = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|chunk| {
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .map(|text| text.split_whitespace().count())
        .sum();
    assert_eq!(words, 200_000);
}

/// Like a real provider, the mock keeps a connection open after a whole streamed reply, and the
/// client reuses it: a long session does not pay a connection (a TLS handshake, with a real
/// provider) per step. A cut stream closes its connection, and the next request opens another.
#[tokio::test]
async fn the_client_reuses_the_connection_between_requests() {
    let llm = MockLlm::start([
        Script::text("one"),
        Script::text("two"),
        Script::text("cut here").cut_after_chunks(1),
        Script::text("four"),
        Script::text("five"),
    ])
    .await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    assert_eq!(chat(&model).await.0.unwrap().text, "one");
    assert_eq!(chat(&model).await.0.unwrap().text, "two");
    assert_eq!(llm.connections(), 1);
    // Whether the cut reply is retried or not, the next reply comes on one new connection.
    let _ = chat(&model).await;
    let _ = chat(&model).await;
    assert_eq!(llm.connections(), 2);
}

#[tokio::test]
async fn the_mock_answers_when_the_script_runs_out() {
    let llm = MockLlm::start([]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    assert_eq!(chat(&model).await.0.unwrap().text, NO_MORE_TURNS);
    llm.wait_for_requests(1, Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_mock_finds_tool_results_by_call_id() {
    let llm = MockLlm::start([Script::text("done")]).await;
    let model = HttpModel::new(settings(llm.url())).unwrap();
    let messages = vec![
        ChatMessage::User {
            content: "go".into(),
        },
        ChatMessage::Assistant {
            content: None,
            reasoning_content: None,
            reasoning_blocks: Default::default(),
            tool_calls: vec![WireToolCall {
                id: "c1".into(),
                kind: "function".into(),
                function: WireFunction {
                    name: "bash".into(),
                    arguments: "{}".into(),
                },
            }],
        },
        ChatMessage::Tool {
            tool_call_id: "c1".into(),
            content: "[exit code: 1]".into(),
        },
    ];
    let messages = WireMessages::from(messages);
    let request = ChatRequest {
        messages: &messages,
        tools: &[],
    };
    model
        .stream_chat(request, &mut |_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(llm.tool_result(0, "c1").as_deref(), Some("[exit code: 1]"));
    assert_eq!(llm.tool_result(0, "c2"), None);
}

#[tokio::test]
async fn the_mock_llm_binary_serves_a_script_file_and_records_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let record = dir.path().join("requests.jsonl");
    std::fs::write(&script, r#"[{"text": "from the file"}]"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .arg("--script")
        .arg(&script)
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
        "{line}"
    );

    let model = HttpModel::new(settings(url)).unwrap();
    let text = chat(&model).await.0.map(|c| c.text);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(text.unwrap(), "from the file");
    let recorded: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&record)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(recorded["model"], "mock-model");
    assert!(
        child.try_wait().unwrap().is_some(),
        "the server process is gone"
    );
}

#[tokio::test]
async fn a_strict_mock_rejects_history_with_arguments_that_are_not_an_object() {
    let llm = MockLlm::start_strict([Script::text("accepted")]).await;
    let client = reqwest::Client::new();
    let post = |arguments: &str| {
        let body = serde_json::json!({
            "model": "m",
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "Error: bad"},
            ],
        });
        client
            .post(format!("{}/chat/completions", llm.url()))
            .body(body.to_string())
            .send()
    };
    for invalid in [r#"{"command": "ls""#, "[1]", ""] {
        let response = post(invalid).await.unwrap();
        assert_eq!(response.status().as_u16(), 400, "{invalid:?}");
        let text = response.text().await.unwrap();
        assert!(text.contains("valid dictionary"), "{text}");
    }
    // A rejected request plays no script: the valid one still gets it.
    let response = post(r#"{"command": "ls"}"#).await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.text().await.unwrap().contains("accepted"));
}
