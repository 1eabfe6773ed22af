//! The figures of `cairn acp` (issue 36's note): the time from `session/prompt` to the first
//! `session/update` against the mock model (median of several prompts in one session), and the
//! resident memory of an idle `cairn acp` (initialized, one session open, nothing running).
//! Printed (stderr) for the note; the bounds asserted are loose, only catching a gross regression.
#![allow(clippy::unwrap_used, clippy::print_stderr)] // printing the figures is its point

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::cairn_cmd::Sandbox;
use crate::support::editor::Raw;
use cairn::testing::{MockLlm, Script};

const PROMPTS: usize = 9;

/// VmRSS of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn figures_first_update_after_a_prompt_and_idle_memory() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(
        (0..PROMPTS)
            .map(|i| Script::text(&format!("answer {i}")))
            .collect::<Vec<_>>(),
    )
    .await;
    let mut raw = Raw::start(&sb, &["--base-url", &llm.url()]);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#)
        .await;
    raw.until_response(1).await;
    let initialized_kib = rss_kib(raw.pid());
    let ws = sb.workspace();
    raw.send(
        &json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd": ws, "mcpServers": []}})
            .to_string(),
    )
    .await;
    let (new, _) = raw.until_response(2).await;
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    // The commands announcement follows the answer; then the session is idle.
    loop {
        let frame = raw.next().await;
        if frame["params"]["update"]["sessionUpdate"] == "available_commands_update" {
            break;
        }
    }
    let idle_kib = rss_kib(raw.pid());

    let (mut firsts, mut kinds, mut chunks) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..PROMPTS {
        let id = 10 + i as i64;
        let sent = Instant::now();
        raw.send(
            &json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{
                "sessionId": session, "prompt": [{"type": "text", "text": format!("say {i}")}]}})
            .to_string(),
        )
        .await;
        let mut first = None;
        let mut chunk = None;
        loop {
            let frame = raw.next().await;
            if frame["method"] == "session/update" {
                let kind = frame["params"]["update"]["sessionUpdate"].clone();
                first.get_or_insert_with(|| {
                    (sent.elapsed(), kind.as_str().unwrap_or("?").to_string())
                });
                if kind == "agent_message_chunk" {
                    chunk.get_or_insert_with(|| sent.elapsed());
                }
            }
            if frame["id"] == id && frame.get("method").is_none() {
                assert_eq!(frame["result"]["stopReason"], "end_turn", "{frame}");
                break;
            }
        }
        let (at, kind) = first.expect("no update before the answer");
        firsts.push(at);
        kinds.push(kind);
        chunks.push(chunk.expect("no message chunk"));
    }
    let after_kib = rss_kib(raw.pid());
    raw.close().await;

    firsts.sort();
    chunks.sort();
    kinds.sort();
    kinds.dedup();
    let median = firsts[PROMPTS / 2];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "acp figures: first update after session/prompt ({kinds:?}): median {:.1} ms (min {:.1}, \
         max {:.1}, n={PROMPTS}); first message chunk: median {:.1} ms; \
         idle RSS: {initialized_kib} KiB initialized, {idle_kib} KiB with a session open, \
         {after_kib} KiB after {PROMPTS} prompts",
        ms(median),
        ms(firsts[0]),
        ms(firsts[PROMPTS - 1]),
        ms(chunks[PROMPTS / 2]),
    );
    assert!(median < Duration::from_secs(5), "{firsts:?}");
    assert!(idle_kib < 512 * 1024, "{idle_kib} KiB");
}
