//! Content parts end to end: a log written before parts existed still resumes with the same
//! conversation; `@` mentions attach files, ranges and listings to the first request (and
//! count as reads); images reach the model as `image_url` parts, are refused for text-only
//! models, and a provider's refusal of one replaces it with a note for good.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

const OLD_LOG: &str = include_str!("../fixtures/logs/20260101-000000-0001.jsonl");

fn messages(llm: &MockLlm, i: usize) -> Vec<Value> {
    llm.request(i)["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_written_before_content_parts_resumes_with_the_same_conversation() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.sessions_dir()).unwrap();
    std::fs::write(
        sb.sessions_dir().join("20260101-000000-0001.jsonl"),
        OLD_LOG,
    )
    .unwrap();
    let llm = MockLlm::start(vec![Script::text("again")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &[
                "--resume",
                "20260101-000000-0001",
                "--mode",
                "never",
                "more",
            ],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let sent = messages(&llm, 0);
    assert_eq!(
        sent[0]["content"],
        "You are cairn (the prompt of a session logged before content parts)."
    );
    assert_eq!(
        sent[1],
        json!({"role": "user", "content": "list the files"})
    );
    // The reasoning of a tool-calling turn goes back with it, signature and all.
    assert_eq!(
        sent[2],
        json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "I should run ls.",
            "thinking_blocks": [{"type": "thinking", "thinking": "I should run ls.", "signature": "EqoB=="}],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}],
        })
    );
    assert_eq!(
        sent[3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt\n"})
    );
    assert_eq!(
        sent[4],
        json!({"role": "assistant", "content": "There is one file, a.txt."})
    );
    let texts: Vec<&str> = sent[5..]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["thanks", "You are welcome.", "more"]);
    // The records appended after the old ones are read back by the same reader.
    let records = sb.log_records();
    assert!(
        records
            .iter()
            .any(|r| r["type"] == "assistant" && r["text"] == "again"),
        "{records:?}"
    );
}
