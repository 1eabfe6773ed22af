//! End-to-end runs of the real `cairn exec` against the scripted mock: what the user sees
//! (exit status, stdout, files), what the model was sent back, and what the log kept.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::cairn_cmd::{Run, Sandbox};
use cairn::testing::{MockCall, MockLlm, ReasoningFormat, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_reads_edits_runs_and_plans_then_answers() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "notes.txt"})).split_arguments_every(5),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "world", "new_string": "cairn"}),
        )
        .split_arguments_every(3),
        Script::tool_call(
            "c3",
            "bash",
            json!({"command": "cat notes.txt && echo 'done' >&2"}),
        ),
        Script::tool_call(
            "c4",
            "todo_write",
            json!({"todos": [
                {"content": "rename world", "status": "completed"},
                {"content": "tell the user", "status": "in_progress"}
            ]}),
        ),
        Script::text("Renamed world to cairn."),
    ])
    .await;
    let run: Run = sb
        .exec(&llm.url(), &["--mode", "auto", "rename world to cairn"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "Renamed world to cairn.");
    assert_eq!(sb.read("notes.txt"), "hello cairn\n");

    let read = llm.tool_result(1, "c1").unwrap();
    assert!(read.contains("hello world"), "{read}");
    let edit = llm.tool_result(2, "c2").unwrap();
    assert!(
        edit.contains("notes.txt") && !edit.starts_with("Error"),
        "{edit}"
    );
    let bash = llm.tool_result(3, "c3").unwrap();
    assert!(
        bash.contains("hello cairn") && bash.contains("[stderr]") && bash.contains("done"),
        "{bash}"
    );
    let todos = llm.tool_result(4, "c4").unwrap();
    assert!(
        todos.contains("- [x] rename world") && todos.contains("- [~] tell the user"),
        "{todos}"
    );
    // The todo list reaches the model as the tool's result; the system prompt never changes.
    let system = llm.request(4)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!system.contains("tell the user"), "{system}");
    assert_eq!(llm.request(0)["messages"][0], llm.request(4)["messages"][0]);

    let records = sb.log_records();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "meta");
    assert_eq!(kinds[1], "system");
    assert_eq!(kinds[2], "user");
    let results = records
        .iter()
        .filter(|r| r["type"] == "tool_result")
        .count();
    assert_eq!(results, 4);
    // Each call was logged before its result.
    let first_call = kinds.iter().position(|k| *k == "assistant").unwrap();
    let first_result = kinds.iter().position(|k| *k == "tool_result").unwrap();
    assert!(first_call < first_result);
    let edit_record = records
        .iter()
        .find(|r| r["type"] == "tool_result" && r["call"] == "c2")
        .unwrap();
    assert!(
        edit_record["result"]["output"]["diff"]
            .as_str()
            .unwrap()
            .contains("+hello cairn")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_tool_call_runs_nothing_and_is_retried() {
    // Nothing ran and no text was shown, so the cut is retried (issue 19: retry by cause);
    // the half-received call itself never runs.
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch ran.txt"}))
            .split_arguments_every(4)
            .cut_after_chunks(4),
        Script::text("nothing to do after all"),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "never", "make a file"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("retrying"), "{}", run.stderr);
    assert!(
        run.stdout.contains("nothing to do after all"),
        "{}",
        run.stdout
    );
    assert!(
        !sb.path("ran.txt").exists(),
        "a half-received call must never run"
    );
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_is_waited_out_then_succeeds() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::status(429, r#"{"error":{"message":"rate limited"}}"#).retry_after(1),
        Script::text("fine now"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["hi"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "fine now");
    assert!(run.stderr.contains("retrying in 1.0s"), "{}", run.stderr);
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_tool_arguments_become_an_error_the_model_recovers_from() {
    let sb = Sandbox::new().file("a.txt", "x\n");
    let llm = MockLlm::start(vec![
        Script::tool_calls([MockCall::raw("c1", "read_file", r#"{"path": "a.txt""#)]),
        Script::tool_call("c2", "no_such_tool", json!({})),
        Script::tool_call("c3", "read_file", json!({"path": "a.txt"})),
        Script::text("recovered"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["read a"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let bad = llm.tool_result(1, "c1").unwrap();
    assert!(
        bad.starts_with("Error: ") && bad.contains("not valid JSON"),
        "{bad}"
    );
    let unknown = llm.tool_result(2, "c2").unwrap();
    assert!(
        unknown.contains("unknown tool") && unknown.contains("read_file"),
        "{unknown}"
    );
    assert!(llm.tool_result(3, "c3").unwrap().contains('x'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_invalid_call_does_not_end_a_session_with_a_strict_server() {
    let sb = Sandbox::new().file("a.txt", "x\n");
    // Anthropic behind a proxy answers 400 to any history holding arguments that are not an
    // object; the mock plays that role.
    let llm = MockLlm::start_strict(vec![
        Script::tool_calls([MockCall::raw("c1", "read_file", r#"{"path": "a.txt""#)]),
        Script::tool_call("c2", "read_file", json!({"path": "a.txt"})),
        Script::text("read it"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["read a"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "read it");
    assert_eq!(llm.requests().len(), 3, "no request was rejected");
    let sent = &llm.request(1)["messages"];
    let call = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(call["tool_calls"][0]["function"]["arguments"], "{}");
    // The model still learns what it sent and why it did not run.
    let bad = llm.tool_result(1, "c1").unwrap();
    assert!(
        bad.contains("not valid JSON") && bad.contains(r#"{"path": "a.txt""#),
        "{bad}"
    );
    // The log keeps what the model really sent; a resumed session repairs it again.
    let records = sb.log_records();
    assert!(
        records.iter().any(|r| r["type"] == "assistant"
            && r["tool_calls"][0]["arguments"] == r#"{"path": "a.txt""#),
        "the log keeps what the model really sent"
    );
    let again = MockLlm::start_strict(vec![Script::text("still fine")]).await;
    let run = sb.exec(&again.url(), &["--continue", "more"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "still fine");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_reasoning_goes_back_with_tool_calls_and_survives_a_resume() {
    for (format, key, expected) in [
        (
            ReasoningFormat::ThinkingBlocks,
            "thinking_blocks",
            json!([{"type": "thinking", "thinking": "I should read a.", "signature": "sig-mock"}]),
        ),
        (
            ReasoningFormat::ReasoningDetails,
            "reasoning_details",
            json!([{
                "type": "reasoning.text", "text": "I should read a.", "signature": "sig-mock",
                "format": "anthropic-claude-v1", "index": 0,
            }]),
        ),
    ] {
        let sb = Sandbox::new().file("a.txt", "x\n");
        let llm = MockLlm::start(vec![
            Script::tool_call("c1", "read_file", json!({"path": "a.txt"}))
                .with_reasoning("I should read a.")
                .reasoning_format(format),
            Script::text("read it"),
        ])
        .await;
        let run = sb.exec(&llm.url(), &["read a"]).await;
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        let assistant = |body: &Value| {
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
                .cloned()
                .unwrap()
        };
        let sent = assistant(&llm.request(1));
        assert_eq!(sent[key], expected, "{format:?}: {sent}");
        assert_eq!(sent["reasoning_content"], "I should read a.");

        // The log keeps the blocks, so a resumed session sends them again unchanged.
        let again = MockLlm::start(vec![Script::text("still fine")]).await;
        let run = sb.exec(&again.url(), &["--continue", "more"]).await;
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
        assert_eq!(assistant(&again.request(0)), sent, "{format:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_never_ends_is_stopped_and_both_user_and_model_are_told() {
    let sb = Sandbox::new().config("max_reply_bytes = 20000\nmax_tool_call_bytes = 5000\n");
    let llm = MockLlm::start(vec![Script::endless_text("again and ")]).await;
    let run = sb.exec(&llm.url(), &["go"]).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("stopped") && run.stderr.contains("max_reply_bytes"),
        "{}",
        run.stderr
    );
    let kept = sb
        .log_records()
        .into_iter()
        .find(|r| r["type"] == "assistant")
        .unwrap();
    assert_eq!(kept["text"].as_str().unwrap().len(), 20000);

    // A runaway call is stopped too, and the next request tells the model what happened.
    let llm = MockLlm::start(vec![
        Script::endless_arguments("write_file"),
        Script::text("smaller then"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--continue", "write it"]).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("max_tool_call_bytes"), "{}", run.stderr);
    let run = sb.exec(&llm.url(), &["--continue", "try again"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let messages = llm.request(1)["messages"].to_string();
    assert!(
        messages.contains("stopped because") && messages.contains("max_tool_call_bytes"),
        "{messages}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_cut_at_the_output_limit_fails_with_a_warning_and_can_be_continued() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::text("The first half of the ans").finish_reason("length"),
        Script::text("wer, and the rest."),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["explain"]).await;
    assert_eq!(
        run.code, 1,
        "the README promises 1 for a truncated response"
    );
    assert!(
        run.stderr
            .contains("warning: the answer was cut at the output limit"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stdout.trim(),
        "The first half of the ans",
        "what arrived is printed"
    );

    let run = sb.exec(&llm.url(), &["--continue", "/continue"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let messages = llm.request(1)["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], cairn::bus::CONTINUE_PROMPT);
    assert!(
        messages.to_string().contains("The first half of the ans"),
        "the cut answer stays in the conversation"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_needing_approval_is_denied_headless_and_the_run_fails() {
    let sb = Sandbox::new().file("keep/a.txt", "precious\n");
    let llm = MockLlm::start(vec![Script::tool_call(
        "c1",
        "bash",
        json!({"command": "rm -rf keep"}),
    )])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "clean up"]).await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(sb.path("keep/a.txt").exists());
    assert!(run.stderr.contains("approval"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_one_event_per_line() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("hi there")]).await;
    let run = sb.exec(&llm.url(), &["--json", "hello"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["type"], "session_started");
    assert!(events.iter().any(|e| e["type"] == "text_delta"));
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "request_ended" && e["reason"]["kind"] == "completed")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ended_has_one_shape_on_success_and_on_failure() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::status(
        400,
        "{\"error\":{\"message\":\"bad model\"}}",
    )])
    .await;
    let run = sb.exec(&llm.url(), &["--json", "hello"]).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let ended: Value = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "request_ended")
        .unwrap();
    assert_eq!(ended["reason"]["kind"], "failed", "{ended}");
    assert!(ended["reason"]["message"].is_string(), "{ended}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_events_number_the_model_step_under_turn_as_they_always_did() {
    // Scripts read `turn` from the step events; inside, the model step is a `StepId`.
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("hi there")]).await;
    let run = sb.exec(&llm.url(), &["--json", "hello"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let events: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for kind in [
        "step_started",
        "text_delta",
        "assistant_message",
        "step_ended",
        "request_ended",
    ] {
        let event = events
            .iter()
            .find(|e| e["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {events:#?}"));
        assert_eq!(event["turn"], 1, "{event}");
        assert!(event.get("step").is_none(), "{event}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_json_event_parses_with_a_parser_that_rejects_duplicate_keys() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let runs: Vec<(Vec<Script>, &[&str])> = vec![
        (
            vec![
                Script::tool_call("c1", "read_file", json!({"path": "notes.txt"}))
                    .with_reasoning("look first"),
                Script::tool_call(
                    "c2",
                    "edit_file",
                    json!({"path": "notes.txt", "old_string": "world", "new_string": "cairn"}),
                ),
                Script::tool_calls([
                    MockCall::new("c3", "bash", json!({"command": "echo hi"})),
                    MockCall::raw("c4", "read_file", "{broken"),
                ]),
                Script::tool_call(
                    "c5",
                    "todo_write",
                    json!({"todos": [{"content": "x", "status": "completed"}]}),
                ),
                Script::reasoning_then_text("done thinking", "Renamed."),
            ],
            &["--mode", "auto"],
        ),
        (
            vec![
                Script::status(503, r#"{"error":{"message":"busy"}}"#).retry_after_ms(10),
                Script::text("after a retry"),
            ],
            &[],
        ),
        (
            vec![Script::stream_error("crashed mid-way").with_preface("partial ")],
            &[],
        ),
        (
            vec![Script::tool_call(
                "c1",
                "bash",
                json!({"command": "rm -rf notes.txt"}),
            )],
            &["--mode", "ask"],
        ),
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for (scripts, flags) in runs {
        let llm = MockLlm::start(scripts).await;
        let mut args = vec!["--json"];
        args.extend_from_slice(flags);
        args.push("go");
        let run = sb.exec(&llm.url(), &args).await;
        for line in run.stdout.lines() {
            if let Err(e) = crate::support::strict_json::parse_strict(line) {
                panic!("{e} in {line}");
            }
            let event: Value = serde_json::from_str(line).unwrap();
            let kind = match event["event"].as_str() {
                Some(sub) => format!("{}.{sub}", event["type"].as_str().unwrap()),
                None => event["type"].as_str().unwrap().to_string(),
            };
            kinds.insert(kind);
        }
    }
    for expected in [
        "tool.requested",
        "tool.finished",
        "retrying",
        "usage",
        "reasoning_delta",
        "assistant_message",
        "request_ended",
    ] {
        assert!(kinds.contains(expected), "{expected} not seen in {kinds:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_can_come_from_stdin_and_secrets_never_reach_the_log() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let run = sb
        .exec_with_stdin(
            &llm.url(),
            &[],
            "from stdin",
            &[("CAIRN_API_KEY", "sk-secret-123")],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(llm.request(0)["messages"][1]["content"], "from stdin");
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!log.contains("sk-secret-123"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_is_reported_before_any_request() {
    let sb = Sandbox::new();
    let run = sb
        .exec_raw(&["exec", "--provider", "openai", "hi"], &[])
        .await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("OPENAI_API_KEY"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_outside_the_workspace_is_held_and_the_model_is_told_why() {
    let sb = Sandbox::new();
    std::os::unix::fs::symlink(std::env::temp_dir(), sb.path("tmplink")).unwrap();
    let target = format!("cairn-outside-{}.txt", std::process::id());
    let llm = MockLlm::start(vec![Script::tool_calls([
        MockCall::new(
            "c1",
            "write_file",
            json!({"path": "../escape.txt", "content": "x"}),
        ),
        MockCall::new(
            "c2",
            "write_file",
            json!({"path": format!("tmplink/{target}"), "content": "x"}),
        ),
    ])])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "write outside"])
        .await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(!sb.path("../escape.txt").exists());
    assert!(
        !std::env::temp_dir().join(&target).exists(),
        "a symlink must not lead a write out"
    );
    let records = sb.log_records();
    for call in ["c1", "c2"] {
        let result = records
            .iter()
            .find(|r| r["type"] == "tool_result" && r["call"] == call)
            .unwrap();
        let text = result["result"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("Error: ") && text.contains("outside the workspace"),
            "{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_made_earlier_in_the_same_reply_cannot_carry_a_write_outside() {
    // In a subdirectory: the sandbox lets commands create no top-level entries.
    let sb = Sandbox::new().file("src/.keep", "");
    let outside = tempfile::tempdir().unwrap();
    let link = format!("ln -s {} src/k", outside.path().display());
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            MockCall::new("c1", "bash", json!({ "command": link })),
            MockCall::new(
                "c2",
                "write_file",
                json!({"path": "src/k/planted.txt", "content": "x"}),
            ),
        ]),
        Script::text("ok"),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "link and write"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(sb.path("src/k").exists(), "the link itself was allowed");
    assert!(
        !outside.path().join("planted.txt").exists(),
        "the write followed the new link out"
    );
    let result = llm.tool_result(1, "c2").unwrap();
    assert!(
        result.starts_with("Error: ") && result.contains("changed"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_sandbox_on_a_command_cannot_write_outside_and_the_model_is_told() {
    use cairn::process::sandbox::{LandlockStatus, landlock_status};
    if let LandlockStatus::Unavailable(reason) = landlock_status() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: this kernel has no Landlock ({reason})");
        }
        return;
    }
    let sb = Sandbox::new()
        .file(
            "sandbox.toml",
            "[sandbox]\nenabled = true\nnetwork = false\n",
        )
        .file("sub/.keep", "");
    // Not under a temp directory, which sandboxed commands may write.
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp("exec_e2e.rs") else {
        return;
    };
    let target = outside.path().join("escaped.txt");
    let command = format!("touch sub/inside.txt && touch {}", target.display());
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": command })),
        Script::text("ok"),
    ])
    .await;
    let config = sb.path("sandbox.toml");
    let run = sb
        .exec(
            &llm.url(),
            &[
                "--mode",
                "never",
                "--config",
                config.to_str().unwrap(),
                "try",
            ],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        sb.path("sub/inside.txt").exists(),
        "writes inside the workspace are allowed"
    );
    assert!(!target.exists(), "the sandbox let a write out");
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(result.contains("[sandbox:"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_in_plan_mode_changes_nothing_and_the_plan_is_the_answer() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            MockCall::new(
                "c1",
                "write_file",
                json!({"path": "notes.txt", "content": "gone\n"}),
            ),
            MockCall::new("c2", "bash", json!({"command": "echo x > f"})),
            MockCall::new("c3", "bash", json!({"command": "cat notes.txt"})),
        ]),
        Script::tool_call("c4", "exit_plan_mode", json!({"plan": "1. rename"})),
        Script::text("Plan: 1. rename"),
    ])
    .await;
    let run: Run = sb
        .exec(&llm.url(), &["--mode", "plan", "plan the rename"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "Plan: 1. rename");
    assert_eq!(sb.read("notes.txt"), "hello world\n");
    assert!(!sb.path("f").exists());
    for call in ["c1", "c2"] {
        let told = llm.tool_result(1, call).unwrap();
        assert!(told.contains("exit_plan_mode"), "{call}: {told}");
    }
    let cat = llm.tool_result(1, "c3").unwrap();
    assert!(cat.contains("hello world"), "read-only commands run: {cat}");
    let plan = llm.tool_result(2, "c4").unwrap();
    assert!(plan.contains("nobody can approve"), "{plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_slash_command_is_an_error_and_nothing_is_sent() {
    let sb = Sandbox::new().file(".cairn/commands/review.md", "Review $ARGUMENTS.\n");
    let llm = MockLlm::start(vec![Script::text("never")]).await;
    let run = sb.exec(&llm.url(), &["/nosuch"]).await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("unknown command /nosuch") && run.stderr.contains("/review"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("unknown command").count(),
        1,
        "{}",
        run.stderr
    );
    // A built-in of the full-screen UI says where it works.
    let run = sb.exec(&llm.url(), &["/undo"]).await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("full-screen UI only"), "{}", run.stderr);
    assert!(llm.requests().is_empty(), "nothing reached the model");
    // The user's own command runs.
    let llm = MockLlm::start(vec![Script::text("Reviewed.")]).await;
    let run = sb.exec(&llm.url(), &["/review src"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(llm.request(0).to_string().contains("Review src."));
    // The session keeps the user's words and is titled by them, not by the expansion.
    let user = sb
        .log_records()
        .into_iter()
        .find(|r| r["type"] == "user")
        .unwrap();
    assert_eq!(user["typed"], "/review src", "{user}");
    let (_, listed, _) = sb.exec_raw_sync(&["sessions"]);
    assert!(listed.contains("/review src"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_request_failed_is_replaced_by_the_next_never_joined() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::status(400, "{\"error\":{\"message\":\"bad request\"}}"),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["first try"]).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    let run = sb.exec(&llm.url(), &["--continue", "first try"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let sent = llm.request(1);
    let users: Vec<&Value> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 1, "{sent}");
    assert_eq!(users[0]["content"], "first try", "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_image_or_base_url_is_a_usage_error_said_once() {
    let sb = Sandbox::new().file("notes.png", "not an image\n");
    let llm = MockLlm::start(vec![Script::text("never")]).await;
    for (args, said) in [
        (
            vec!["--image", "notes.png", "look"],
            "not an image cairn can send",
        ),
        (vec!["--image", "missing.png", "look"], "missing.png"),
    ] {
        let run = sb.exec(&llm.url(), &args).await;
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr.matches(said).count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = sb
        .exec_raw(&["exec", "--base-url", "not a url", "hi"], &[])
        .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("invalid base URL").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(llm.requests().is_empty());
}
