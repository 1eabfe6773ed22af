//! Whole sessions in the native formats against the scripted mock speaking each (`cairn exec
//! --api anthropic|responses`): the thinking block and its signature go back byte for byte
//! before the `tool_use` and the results lead the next user turn; a long session never has more
//! than four `cache_control` markers and never changes its tools or system bytes; a SIGKILL and
//! a resume rebuild what was sent before byte for byte; the Responses reasoning item goes back
//! in place, `store` false and one `prompt_cache_key`; and the figures of a 50-step session per
//! format (request bytes, cached share as the client counted it).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

const THINKING: &str = "I should read a.txt before answering.";

fn signature(thinking: &str) -> String {
    cairn::testing::mock_llm::native::thinking_signature(thinking)
}

fn encrypted(summary: &str) -> String {
    cairn::testing::mock_llm::native::encrypted_reasoning(summary)
}

async fn run(sb: &Sandbox, llm: &MockLlm, api: &str, extra: &[&str], prompt: &str) {
    let mut args = vec!["--api", api, "--mode", "never"];
    args.extend_from_slice(extra);
    args.push(prompt);
    let run = sb.exec(&llm.url(), &args).await;
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_thinking_goes_back_signed_before_the_tool_use_and_results_lead() {
    let sb = Sandbox::new().file("a.txt", "alpha\n");
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            cairn::testing::MockCall::new("toolu_a", "read_file", json!({"path": "a.txt"})),
            cairn::testing::MockCall::new("toolu_b", "glob", json!({"pattern": "*.txt"})),
        ])
        .with_reasoning(THINKING)
        .with_preface("Reading."),
        Script::text("alpha it is"),
    ])
    .await;
    run(&sb, &llm, "anthropic", &[], "what is in a.txt?").await;
    let recorded = llm.recorded();
    assert_eq!(recorded.len(), 2);
    assert!(recorded.iter().all(|r| r.path == "/v1/messages"));
    let second = &recorded[1].body;
    let messages = second["messages"].as_array().unwrap();
    let assistant = &messages[1];
    assert_eq!(assistant["role"], "assistant");
    let blocks = assistant["content"].as_array().unwrap();
    let kinds: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use", "tool_use"]);
    // Byte for byte: the block's JSON in the request is the block the stream built.
    let raw = String::from_utf8(recorded[1].raw.clone()).unwrap();
    // In the order the stream built it (type, thinking, then the signature that came last).
    let block = format!(
        r#"{{"type":"thinking","thinking":{},"signature":{}}}"#,
        json!(THINKING),
        json!(signature(THINKING))
    );
    assert!(raw.contains(&block), "{raw}");
    let user = messages[2]["content"].as_array().unwrap();
    assert_eq!(user[0]["type"], "tool_result");
    assert_eq!(user[0]["tool_use_id"], "toolu_a");
    assert_eq!(user[1]["tool_use_id"], "toolu_b");
    // The log keeps the block verbatim.
    let logged = sb
        .log_records()
        .into_iter()
        .find(|r| r["thinking_blocks"].is_array())
        .unwrap();
    let block: serde_json::Value = serde_json::from_str(&block).unwrap();
    assert_eq!(logged["thinking_blocks"][0], block);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_thirty_turns_keep_four_markers_at_most_and_fixed_tools_and_system() {
    let mut sb = Sandbox::new();
    let mut scripts = Vec::new();
    for i in 0..30 {
        sb = sb.file(
            &format!("f{i}.txt"),
            &format!("{}\n", "line of text ".repeat(40)),
        );
        scripts.push(
            Script::tool_call(
                &format!("toolu_{i}"),
                "read_file",
                json!({"path": format!("f{i}.txt")}),
            )
            .with_reasoning(&format!("Step {i}: read the next file.")),
        );
    }
    scripts.push(Script::text("read them all"));
    let llm = MockLlm::start(scripts).await;
    run(&sb, &llm, "anthropic", &[], "read every file").await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 31);
    let tools = requests[0]["tools"].as_array().unwrap();
    eprintln!("tools offered: {}", tools.len());
    assert!(tools.len() >= 10, "{}", tools.len());
    let strip = |v: &Value| {
        let mut v = v.clone();
        for block in v.as_array_mut().unwrap() {
            block.as_object_mut().unwrap().remove("cache_control");
        }
        v.to_string()
    };
    for (i, request) in requests.iter().enumerate() {
        let markers = request.to_string().matches("\"cache_control\"").count();
        assert!(markers <= 4, "request {i}: {markers} markers");
        assert_eq!(
            request["tools"], requests[0]["tools"],
            "request {i}: tools changed"
        );
        assert_eq!(
            request["system"], requests[0]["system"],
            "request {i}: system changed"
        );
        assert_eq!(strip(&request["tools"]), strip(&requests[0]["tools"]));
    }
    // By the end, the tools, the system and both last user turns are marked.
    assert_eq!(
        requests[30]
            .to_string()
            .matches("\"cache_control\"")
            .count(),
        4
    );
}

/// The bytes before the last message (Messages API) or the last items (Responses API) that
/// the resumed request adds to.
fn before_last_user_turn(raw: &[u8]) -> &[u8] {
    let text = std::str::from_utf8(raw).unwrap();
    let at = text.rfind("{\"role\":\"user\"").unwrap();
    &raw[..at]
}

async fn kill_during_second_request(sb: &Sandbox, llm: &MockLlm, api: &str, model: &str) {
    let mut child = sb
        .command(
            &[
                "exec",
                "--base-url",
                &llm.url(),
                "--api",
                api,
                "--model",
                model,
                "--mode",
                "never",
                "read a.txt",
            ],
            &[],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    llm.wait_for_requests(2, Duration::from_secs(30)).await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_sigkill_and_resume_rebuild_the_request_byte_for_byte() {
    let sb = Sandbox::new().file("a.txt", &"alpha\n".repeat(800));
    let first = MockLlm::start(vec![
        Script::tool_call("toolu_1", "read_file", json!({"path": "a.txt"}))
            .with_reasoning(THINKING),
        Script::keep_alive_only(Duration::from_millis(20)),
    ])
    .await;
    kill_during_second_request(&sb, &first, "anthropic", "claude-sonnet-4-5").await;
    let killed = first.recorded()[1].raw.clone();
    let resumed = MockLlm::start(vec![Script::text("done")]).await;
    run(
        &sb,
        &resumed,
        "anthropic",
        &["--resume", &sb.session_id(), "--model", "claude-sonnet-4-5"],
        "go on",
    )
    .await;
    let again = resumed.recorded()[0].raw.clone();
    // Everything before the last user turn is the same bytes: tools, system, the first turn
    // with its marker, the assistant turn with its signed thinking block.
    assert_eq!(
        String::from_utf8_lossy(before_last_user_turn(&killed)),
        String::from_utf8_lossy(before_last_user_turn(&again))
    );
    // The last turn is the same result, with the new words after it.
    let body: Value = serde_json::from_slice(&again).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    let kinds: Vec<&str> = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tool_result", "text"]);
    assert!(String::from_utf8_lossy(&again).contains(&signature(THINKING)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_reasoning_goes_back_in_place_stateless_with_one_cache_key_across_a_resume() {
    let sb = Sandbox::new().file("a.txt", &"alpha\n".repeat(800));
    let first = MockLlm::start(vec![
        Script::tool_call("call_1", "read_file", json!({"path": "a.txt"})).with_reasoning(THINKING),
        Script::keep_alive_only(Duration::from_millis(20)),
    ])
    .await;
    kill_during_second_request(&sb, &first, "responses", "gpt-5").await;
    let recorded = first.recorded();
    assert!(recorded.iter().all(|r| r.path == "/v1/responses"));
    let second = &recorded[1].body;
    assert_eq!(second["store"], false);
    assert_eq!(second["include"], json!(["reasoning.encrypted_content"]));
    let input = second["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["encrypted_content"], encrypted(THINKING));
    assert_eq!(input[1]["id"], "rs_mock");
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(input[3]["call_id"], "call_1");
    let resumed = MockLlm::start(vec![Script::text("done")]).await;
    run(
        &sb,
        &resumed,
        "responses",
        &["--resume", &sb.session_id(), "--model", "gpt-5"],
        "go on",
    )
    .await;
    let again = resumed.recorded()[0].raw.clone();
    let killed = &recorded[1].raw;
    // The resumed request is the killed one with the new user message after it.
    let open = &killed[..killed.len() - 2];
    assert_eq!(
        String::from_utf8_lossy(open),
        String::from_utf8_lossy(&again[..open.len()])
    );
    let keys: Vec<Value> = recorded
        .iter()
        .map(|r| r.body["prompt_cache_key"].clone())
        .chain([resumed.request(0)["prompt_cache_key"].clone()])
        .collect();
    assert!(
        keys.iter().all(|k| *k == keys[0] && k.is_string()),
        "{keys:?}"
    );
}

/// A 50-step session (49 reads of distinct files, then an answer) in `api`: the request
/// bytes sent, and the cached share of the prompt tokens as the client logged them.
async fn fifty_steps(api: &str) -> (u64, f64, f64) {
    let mut sb = Sandbox::new();
    let mut scripts = Vec::new();
    for i in 0..49 {
        sb = sb.file(
            &format!("f{i}.txt"),
            &format!("file {i}: {}\n", "some source text ".repeat(60)),
        );
        scripts.push(
            Script::tool_call(
                &format!("call_{i}"),
                "read_file",
                json!({"path": format!("f{i}.txt")}),
            )
            .with_reasoning(&format!("Step {i}: the next file.")),
        );
    }
    scripts.push(Script::text("all read"));
    let llm = MockLlm::start(scripts).await;
    llm.simulate_cache();
    run(&sb, &llm, api, &["--max-steps", "60"], "read every file").await;
    let bytes: u64 = llm.recorded().iter().map(|r| r.raw.len() as u64).sum();
    assert_eq!(llm.recorded().len(), 50);
    let (mut prompt, mut cached) = (0u64, 0u64);
    for record in sb.log_records() {
        if record["type"] == "usage" {
            prompt += record["prompt_tokens"].as_u64().unwrap_or(0);
            cached += record["cached_tokens"].as_u64().unwrap_or(0);
        }
    }
    let counts = llm.cache_counts();
    let mock_prompt: u64 = counts.iter().map(|c| c.prompt).sum();
    let mock_read: u64 = counts.iter().map(|c| c.read).sum();
    // The client counted what the mock reported, in each format's own fields.
    assert_eq!((prompt, cached), (mock_prompt, mock_read), "{api}");
    let share = cached as f64 / prompt.max(1) as f64;
    let last = counts.last().unwrap();
    let last_share = last.read as f64 / last.prompt.max(1) as f64;
    eprintln!(
        "FIGURES {api}: 50 requests, {bytes} request bytes, {prompt} prompt tokens, {cached} cached ({:.1}%), last request {:.1}% cached",
        share * 100.0,
        last_share * 100.0
    );
    (bytes, share, last_share)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_step_sessions_in_each_format_hit_the_cache() {
    for api in ["chat", "anthropic", "responses"] {
        let (bytes, share, last) = fifty_steps(api).await;
        assert!(bytes > 0);
        assert!(share > 0.8, "{api}: {share}");
        assert!(last > 0.9, "{api}: {last}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_format_on_resume_drops_the_other_format_s_blobs_and_keeps_the_text() {
    let sb = Sandbox::new().file("a.txt", "alpha\n");
    let first = MockLlm::start(vec![
        Script::tool_call("call_1", "read_file", json!({"path": "a.txt"}))
            .with_reasoning(THINKING)
            .with_preface("Let me look."),
        Script::text("alpha"),
    ])
    .await;
    run(&sb, &first, "responses", &["--model", "o3"], "read a.txt").await;
    // The Responses reasoning item is in the log, verbatim.
    let logged = sb
        .log_records()
        .into_iter()
        .find(|r| r["reasoning_items"].is_array())
        .unwrap();
    assert_eq!(
        logged["reasoning_items"][0]["encrypted_content"],
        encrypted(THINKING)
    );
    for (api, path) in [
        ("anthropic", "/v1/messages"),
        ("chat", "/v1/chat/completions"),
    ] {
        let next = MockLlm::start(vec![Script::text("ok")]).await;
        run(&sb, &next, api, &["--resume", &sb.session_id()], "and now?").await;
        let recorded = next.recorded();
        assert_eq!(recorded[0].path, path);
        let raw = String::from_utf8(recorded[0].raw.clone()).unwrap();
        assert!(!raw.contains("encrypted_content"), "{api}: {raw}");
        assert!(!raw.contains("reasoning_items"), "{api}: {raw}");
        // The visible text of the turn and its call stay.
        assert!(raw.contains("Let me look."), "{api}: {raw}");
        assert!(raw.contains("call_1"), "{api}: {raw}");
    }
}
