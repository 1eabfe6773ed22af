//! The context window over a long session: every request extends the one before byte for byte
//! (todo updates, mode changes, a moved git branch and a resume included), so the provider's
//! prefix cache keeps hitting.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::agent::StartFrom;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, UserCommand};
use cairn::testing::{MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

/// The raw bytes of a request body up to the last byte of its last message (the `]` that
/// closes `messages` excluded). The body is `{"model":…,"messages":[…],"stream":…}`; a `"`
/// inside a string is escaped, so `],"stream":` only occurs where the array ends.
fn messages_prefix(raw: &[u8]) -> &[u8] {
    let end = raw
        .windows(11)
        .position(|w| w == b"],\"stream\":")
        .expect("a chat request body with messages then stream");
    &raw[..end]
}

/// Every request begins with exactly the bytes of the previous request's messages, followed
/// by at least one new message.
pub fn assert_append_only(bodies: &[Vec<u8>]) {
    for (i, pair) in bodies.windows(2).enumerate() {
        let (before, after) = (messages_prefix(&pair[0]), messages_prefix(&pair[1]));
        let shared = before.iter().zip(after).take_while(|(a, b)| a == b).count();
        assert!(
            after.starts_with(before) && after.get(before.len()) == Some(&b','),
            "request {} does not extend request {i}: they share {shared} of {} bytes; first difference:\n  before: {}\n  after:  {}",
            i + 1,
            before.len(),
            String::from_utf8_lossy(&before[shared..(shared + 200).min(before.len())]),
            String::from_utf8_lossy(&after[shared..(shared + 200).min(after.len())]),
        );
    }
}

fn todos(items: &[(&str, &str)]) -> serde_json::Value {
    json!({"todos": items.iter().map(|(c, s)| json!({"content": c, "status": s})).collect::<Vec<_>>()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_extends_the_previous_one_byte_for_byte_across_todos_modes_and_a_resume() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    std::fs::write(ws.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("t1", "todo_write", todos(&[("read a", "in_progress")])),
        Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call(
            "t2",
            "todo_write",
            todos(&[("read a", "completed"), ("edit a", "in_progress")]),
        ),
        Script::text("read it"),
        // After a mode change and a branch switch.
        Script::tool_call("b1", "bash", json!({"command": "echo hi"})),
        Script::tool_call(
            "t3",
            "todo_write",
            todos(&[("read a", "completed"), ("edit a", "completed")]),
        ),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.submit("read a.txt and plan").await;
    agent.wait_for(ended).await;
    agent.send(UserCommand::SetMode { mode: Mode::Auto }).await;
    std::fs::write(ws.path().join(".git/HEAD"), "ref: refs/heads/fix\n").unwrap();
    agent.submit("now finish").await;
    agent.wait_for(ended).await;
    let log = agent.log.clone();
    agent.shutdown().await;

    // Resumed in another mode: the old prompt goes out again, the new mode as a note.
    llm.push(Script::tool_call(
        "t4",
        "todo_write",
        todos(&[("wrap up", "in_progress")]),
    ));
    llm.push(Script::text("wrapped"));
    let mut resumed = TestAgent::spawn(
        ws.path(),
        data.path(),
        &llm.url(),
        Mode::AutoEdit,
        StartFrom::Resume(log),
    )
    .await;
    resumed.submit("wrap up").await;
    resumed.wait_for(ended).await;
    resumed.shutdown().await;

    let recorded = llm.recorded();
    assert_eq!(recorded.len(), 9);
    let bodies: Vec<Vec<u8>> = recorded.iter().map(|r| r.raw.clone()).collect();
    assert_append_only(&bodies);

    let last = &recorded[8].body["messages"];
    let system = last[0]["content"].as_str().unwrap();
    assert!(!system.contains("edit a"), "no todos in the system prompt");
    assert!(system.contains("Git branch: main") && system.contains("Permission mode: never"));
    let text = last.to_string();
    assert!(text.contains("the permission mode is now auto"), "{text}");
    assert!(
        text.contains("the git branch is now fix (was main)"),
        "{text}"
    );
    assert!(
        text.contains("the permission mode is now auto-edit"),
        "{text}"
    );
}

fn compactions_in(log: &std::path::Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"compacted\""))
        .count()
}

/// The replies of the long session, chosen from the request: a summary for a compaction's
/// request (it offers no tools), else step `n` of the session: a todo update every 10 steps,
/// an answer every 20th (ending the user's request), and reads of 8 KiB files in between.
fn long_session_replies(
    steps: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> impl Fn(&serde_json::Value) -> Option<Script> + Send + Sync {
    move |body| {
        if body.get("tools").is_none() {
            return Some(Script::text(
                "## Goal\nRead the files part by part.\n## Done so far\nRead many files.",
            ));
        }
        let n = steps.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let id = format!("c{n}");
        Some(match n % 20 {
            19 => Script::text(&format!("part {} done", n / 20)),
            0 | 10 => Script::tool_call(
                &id,
                "todo_write",
                todos(&[
                    (&format!("part {} step {n}", n / 20), "in_progress"),
                    ("write the report", "pending"),
                ]),
            ),
            k if k % 3 == 0 => Script::tool_call(
                &id,
                "bash",
                json!({"command": format!("cat f{}.txt", n % 7)}),
            ),
            _ => Script::tool_call(&id, "read_file", json!({"path": format!("f{}.txt", n % 7)})),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_300_step_session_in_a_32k_window_compacts_resumes_and_never_overflows() {
    const WINDOW: u64 = 32_768;
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for f in 0..7 {
        let text: String = (0..100)
            .map(|line| {
                format!(
                    "file {f} line {line:03}: {}\n",
                    "lorem ipsum dolor sit amet ".repeat(2)
                )
            })
            .collect();
        std::fs::write(ws.path().join(format!("f{f}.txt")), text).unwrap();
    }
    let llm = MockLlm::start(Vec::new()).await;
    llm.enforce_window(WINDOW);
    let steps = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    llm.respond_with(long_session_replies(steps.clone()));

    let url = llm.url();
    let spawn = |from| {
        TestAgent::spawn_with_window(ws.path(), data.path(), &url, Mode::Never, from, WINDOW)
    };
    let mut agent = spawn(StartFrom::New).await;
    let log = agent.log.clone();
    let mut compacted_events = 0;
    for part in 0..15 {
        if part == 8 {
            // Resume halfway, after at least one compaction: the rebuilt conversation is
            // exactly the compacted one that was last sent.
            assert!(
                compactions_in(&log) >= 1,
                "no compaction in the first 160 steps"
            );
            agent.shutdown().await;
            agent = spawn(StartFrom::Resume(log.clone())).await;
        }
        let before = llm.recorded().len();
        let compactions_before = compactions_in(&log);
        agent
            .submit(&format!("part {part}: read the files and keep notes"))
            .await;
        let end = agent.wait_for(ended).await;
        assert!(
            matches!(
                end,
                AgentEvent::Conversation(ConversationEvent::RequestEnded {
                    reason: cairn::bus::EndReason::Completed,
                    ..
                })
            ),
            "part {part}: {end:?}"
        );
        compacted_events += agent
            .seen
            .drain(..)
            .filter(|e| matches!(e, AgentEvent::Report(ReportEvent::Compacted { .. })))
            .count();
        if part == 8 && compactions_in(&log) == compactions_before {
            let recorded = llm.recorded();
            assert_append_only(&[
                recorded[before - 1].raw.clone(),
                recorded[before].raw.clone(),
            ]);
        }
    }
    agent.shutdown().await;

    assert_eq!(steps.load(std::sync::atomic::Ordering::SeqCst), 300);
    let tokens = llm.request_tokens();
    let largest = tokens.iter().max().copied().unwrap_or(0);
    assert!(
        largest <= WINDOW,
        "a request of {largest} tokens went over the {WINDOW}-token window"
    );
    assert!(compacted_events >= 1, "no compaction was shown");
    let compactions = compactions_in(&log);
    assert!(compactions >= 1);

    // Between compactions every request extends the one before.
    let with_tools: Vec<Vec<u8>> = llm
        .recorded()
        .into_iter()
        .filter(|r| r.body.get("tools").is_some())
        .map(|r| r.raw)
        .collect();
    let breaks = with_tools
        .windows(2)
        .filter(|pair| {
            let (a, b) = (messages_prefix(&pair[0]), messages_prefix(&pair[1]));
            !b.starts_with(a)
        })
        .count();
    assert!(
        breaks <= compactions,
        "{breaks} prefix breaks for {compactions} compactions"
    );

    let last = llm.recorded().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("part 14 step 290"),
        "the current todos are missing"
    );
    assert!(
        last.contains("part 14: read the files and keep notes"),
        "the request is missing"
    );
}

/// Error bodies of real servers refusing a request longer than the model's window.
fn too_long_bodies() -> Vec<(&'static str, String)> {
    vec![
        ("openai", cairn::testing::context_length_exceeded_body(128_000, 130_000)),
        (
            "deepseek",
            json!({"error": {"message": "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (140000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.", "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}).to_string(),
        ),
        (
            "anthropic via openrouter",
            json!({"error": {"message": "prompt is too long: 210000 tokens > 200000 maximum", "code": 400}}).to_string(),
        ),
        (
            "vllm",
            json!({"object": "error", "message": "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (32000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400}).to_string(),
        ),
        (
            "llama.cpp",
            json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 40_000, "n_ctx": 32_768}}).to_string(),
        ),
        (
            "ollama",
            json!({"error": {"message": "the input length exceeds the context length", "type": "api_error", "param": null, "code": null}}).to_string(),
        ),
    ]
}

/// A session of two big reads, then the provider's "too long", then (maybe) more.
async fn overflow_session(body: &str, then: Vec<Script>) -> (MockLlm, Vec<AgentEvent>, AgentEvent) {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        std::fs::write(ws.path().join(name), "some text\n".repeat(600)).unwrap();
    }
    let mut scripts = vec![
        Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call("r2", "read_file", json!({"path": "b.txt"})),
        Script::status(400, body),
    ];
    scripts.extend(then);
    let llm = MockLlm::start(scripts).await;
    llm.respond_with(|body| {
        body.get("tools")
            .is_none()
            .then(|| Script::text("## Goal\nread a and b"))
    });
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.submit("read a and b").await;
    let end = agent.wait_for(ended).await;
    let seen = std::mem::take(&mut agent.seen);
    agent.shutdown().await;
    (llm, seen, end)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_providers_too_long_answer_compacts_and_retries_once() {
    for (provider, body) in too_long_bodies() {
        let (llm, seen, end) = overflow_session(&body, vec![Script::text("done")]).await;
        assert!(
            matches!(
                &end,
                AgentEvent::Conversation(ConversationEvent::RequestEnded {
                    reason: cairn::bus::EndReason::Completed,
                    ..
                })
            ),
            "{provider}: {end:?}"
        );
        assert!(
            seen.iter()
                .any(|e| matches!(e, AgentEvent::Report(ReportEvent::Compacted { .. }))),
            "{provider}: no compaction"
        );
        // Two reads, the refused request, the summary, the retry.
        let requests = llm.recorded();
        assert_eq!(requests.len(), 5, "{provider}");
        let retry = requests[4].body["messages"].to_string();
        assert!(
            retry.contains("compacted") && retry.contains("read a and b"),
            "{provider}: {retry}"
        );
        assert!(
            retry.len() < requests[2].body["messages"].to_string().len(),
            "{provider}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_too_long_answer_ends_the_request_instead_of_looping() {
    let body = cairn::testing::context_length_exceeded_body(128_000, 130_000);
    let (llm, _, end) = overflow_session(
        &body,
        vec![Script::status(400, &body), Script::text("never sent")],
    )
    .await;
    let AgentEvent::Conversation(ConversationEvent::RequestEnded {
        reason: cairn::bus::EndReason::Failed(message),
        ..
    }) = end
    else {
        panic!("{end:?}")
    };
    assert!(message.contains("still too long"), "{message}");
    assert_eq!(llm.recorded().len(), 5);
    assert_eq!(llm.remaining(), 1, "the request stopped after one retry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_compact_a_file_whose_content_is_gone_must_be_read_again_before_an_edit() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha line\n".repeat(300)).unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
        Script::text("read it"),
        Script::tool_call("e1", "edit_file", json!({"path": "a.txt", "old_string": "alpha line\n", "new_string": "beta\n", "replace_all": true})),
        Script::text("could not"),
    ])
    .await;
    llm.respond_with(|body| {
        body.get("tools")
            .is_none()
            .then(|| Script::text("## Goal\nedit a.txt"))
    });
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.submit("read a.txt").await;
    agent.wait_for(ended).await;
    agent
        .send(UserCommand::Compact {
            focus: Some("the edit of a.txt".into()),
        })
        .await;
    let AgentEvent::Report(ReportEvent::Compacted {
        before,
        after,
        summarized,
        ..
    }) = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Compacted { .. })))
        .await
    else {
        unreachable!()
    };
    assert!(after < before && summarized > 0, "{before} -> {after}");
    agent.submit("now edit it").await;
    agent.wait_for(ended).await;
    agent.shutdown().await;

    let summary_request = llm.request(2).to_string();
    assert!(
        summary_request.contains("focus on: the edit of a.txt"),
        "{summary_request}"
    );
    let refused = llm.tool_result(4, "e1").unwrap();
    assert!(refused.contains("not read in this session"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "alpha line\n".repeat(300),
        "the file was not edited blind"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_json_reports_tokens_cost_and_cache_hits_at_the_configured_prices() {
    use crate::support::cairn_cmd::Sandbox;
    use cairn::bus::Usage;
    let sb = Sandbox::new()
        .config("[prices.models.\"my-model\"]\ninput = 2.0\ncached_input = 0.5\noutput = 10.0\n");
    let usage = |prompt, cached| Usage {
        prompt_tokens: prompt,
        completion_tokens: 100_000,
        cached_tokens: cached,
    };
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "todo_write", todos(&[("x", "pending")]))
            .with_usage(usage(1_000_000, 0)),
        Script::text("done").with_usage(usage(1_000_000, 900_000)),
    ])
    .await;
    let run = sb
        .exec(
            &llm.url(),
            &["--model", "my-model", "--mode", "never", "go"],
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let listed = sb.exec_raw(&["sessions", "--json"], &[]).await;
    let row: serde_json::Value =
        serde_json::from_str(listed.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(row["requests"], 2);
    assert_eq!(row["prompt_tokens"], 2_000_000);
    assert_eq!(row["cached_tokens"], 900_000);
    assert_eq!(row["cache_hit_ratio"], 0.45);
    // 1.1M uncached at $2, 0.9M cached at $0.5, 0.2M out at $10.
    let cost = row["cost_usd"].as_f64().unwrap();
    assert!((cost - (2.2 + 0.45 + 2.0)).abs() < 1e-9, "{cost}");
}
