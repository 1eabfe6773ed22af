//! The real binary killed (SIGKILL) right after a change, while the model's next answer is
//! held open: `cairn undo` still takes the workspace back to before the change. After an edit
//! the checkpoint is written while the next request streams, so the kill finds it pending:
//! the log holds the batch's Before and no After, and undo completes it from the workspace.
//! And `.gitignore` = `*` written by the model hides nothing from a command's list or undo.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::json;

use crate::support::cairn_cmd::{Sandbox, reverted, undo_json};
use cairn::testing::{MockLlm, Script};

/// Runs `cairn exec` over `steps`, then a reply that never ends; kills it with SIGKILL once
/// the mock holds that request.
async fn killed_while_the_next_request_streams(sb: &Sandbox, steps: Vec<Script>) {
    let held = steps.len() + 1;
    let mut script = steps;
    script.push(Script::keep_alive_only(Duration::from_millis(50)));
    let llm = MockLlm::start(script).await;
    let url = llm.url();
    let mut child = sb
        .command(
            &["exec", "--base-url", &url, "--mode", "auto", "change"],
            &[],
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    llm.wait_for_requests(held, Duration::from_secs(20)).await;
    // tokio's kill is SIGKILL: no handler, no flush, no cleanup runs.
    child.kill().await.unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cairn_killed_right_after_a_command_is_undone_to_before_it() {
    let sb = Sandbox::new().file("keep.txt", "original\n");
    killed_while_the_next_request_streams(
        &sb,
        vec![Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo made > made.txt && echo changed > keep.txt"}),
        )],
    )
    .await;
    assert!(sb.path("made.txt").exists());

    let (code, report) = undo_json(&sb);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        reverted(&report),
        [
            ("keep.txt".into(), "restored".into()),
            ("made.txt".into(), "removed".into())
        ]
    );
    assert_eq!(sb.read("keep.txt"), "original\n");
    assert!(!sb.path("made.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cairn_killed_while_an_edits_checkpoint_is_pending_is_undone_to_before_it() {
    let sb = Sandbox::new().file("a.txt", "one\n");
    killed_while_the_next_request_streams(
        &sb,
        vec![
            Script::tool_call("r1", "read_file", json!({"path": "a.txt"})),
            Script::tool_call(
                "e1",
                "edit_file",
                json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"}),
            ),
            Script::tool_call(
                "w1",
                "write_file",
                json!({"path": "b.txt", "content": "new\n"}),
            ),
        ],
    )
    .await;
    assert_eq!(sb.read("a.txt"), "ONE\n");
    assert!(sb.path("b.txt").exists());
    let records = sb.log_records();
    let kinds: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "checkpoint")
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    // The edit's After was logged when the write's Before waited for it; the write's own
    // After was pending while the next answer streamed.
    assert_eq!(kinds, ["before", "after", "before"], "{records:#?}");

    let (code, report) = undo_json(&sb);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        reverted(&report),
        [
            ("a.txt".into(), "restored".into()),
            ("b.txt".into(), "removed".into())
        ]
    );
    assert_eq!(sb.read("a.txt"), "one\n");
    assert!(!sb.path("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitignore_of_everything_written_by_the_model_hides_nothing_from_undo() {
    let sb = Sandbox::new().file("a.txt", "one\n");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "w1",
            "write_file",
            json!({"path": ".gitignore", "content": "*\n"}),
        ),
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "mkdir -p out && echo made > out/fresh.txt && echo two > a.txt"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "hide"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let told = llm.tool_result(2, "c1").unwrap();
    assert!(
        told.contains("out/fresh.txt (created)") && told.contains("a.txt"),
        "{told}"
    );

    let (code, report) = undo_json(&sb);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        reverted(&report),
        [
            (".gitignore".into(), "removed".into()),
            ("a.txt".into(), "restored".into()),
            ("out/fresh.txt".into(), "removed".into()),
        ]
    );
    assert!(!sb.path(".gitignore").exists());
    assert!(!sb.path("out/fresh.txt").exists());
    assert_eq!(sb.read("a.txt"), "one\n");
}
