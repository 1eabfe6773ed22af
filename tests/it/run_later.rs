//! Files the user's own tools run later, through the real binary: in `auto` a file-tool write
//! to one runs with a warning (a `warned` event in `--json`, a line on stderr); in `auto-edit`
//! it asks (and headless, is not run); a command's writes to them are named in its result;
//! `.git/config` asks in every mode but `never`.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

fn json_events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes of files that run later, in several spellings, and one ordinary file.
fn writes() -> Vec<Script> {
    vec![
        Script::tool_call(
            "c1",
            "write_file",
            json!({"path": ".envrc", "content": "echo hi\n"}),
        ),
        Script::tool_call(
            "c2",
            "write_file",
            json!({"path": "sub/../.vscode/tasks.json", "content": "{}\n"}),
        ),
        Script::tool_call(
            "c3",
            "write_file",
            json!({"path": "notes.md", "content": "plain\n"}),
        ),
        Script::text("done"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_auto_a_write_that_runs_later_runs_with_a_warning_event() {
    let sb = Sandbox::new().file("sub/keep", "");
    let llm = MockLlm::start(writes()).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "--json", "set up"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(sb.read(".envrc"), "echo hi\n");
    assert_eq!(sb.read(".vscode/tasks.json"), "{}\n");
    let warned: Vec<(String, String)> = json_events(&run.stdout)
        .into_iter()
        .filter(|e| e["type"] == "tool" && e["event"] == "warned")
        .map(|e| {
            (
                e["call"].as_str().unwrap_or_default().to_string(),
                e["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(warned.len(), 2, "{}", run.stdout);
    assert_eq!(warned[0].0, "c1");
    assert!(warned[0].1.contains(".envrc") && warned[0].1.contains("run or obey later"));
    assert_eq!(warned[1].0, "c2");
    assert!(warned[1].1.contains(".vscode"), "{:?}", warned[1]);

    // Without --json the warning is a line of the progress.
    let sb = Sandbox::new().file("sub/keep", "");
    let llm = MockLlm::start(writes()).await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "set up"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        run.stderr.matches("warning: ran without asking").count(),
        2,
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("notes.md ("), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_auto_edit_a_write_that_runs_later_asks_and_headless_is_not_run() {
    let sb = Sandbox::new().file("sub/keep", "");
    let llm = MockLlm::start(writes()).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto-edit", "set up"])
        .await;
    assert_eq!(run.code, 3, "denied headless: {}", run.stderr);
    assert!(!sb.path(".envrc").exists());
    // The run ends at the held call; stderr says why, naming the file.
    assert!(
        run.stderr.contains("needs the user's approval") && run.stderr.contains(".envrc"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("warning: ran without asking"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_writes_to_files_that_run_later_are_named_in_its_result() {
    let sb = Sandbox::new();
    let command = "mkdir -p .vscode .github/workflows && echo 'echo x' > .envrc \
                   && echo '{}' > .vscode/settings.json && echo 'on: push' > .github/workflows/ci.yml \
                   && echo plain > notes.md";
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": command })),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "never", "set up"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let told = llm.tool_result(1, "c1").unwrap();
    assert!(
        told.contains("changed files the user's tools run or obey later: .envrc, .github/workflows/ci.yml, .vscode/settings.json"),
        "{told}"
    );
    let records = sb.log_records();
    let result = records
        .iter()
        .find(|r| r["type"] == "tool_result" && r["name"] == "bash")
        .unwrap();
    let flagged: Vec<&str> = result["result"]["output"]["runs_later"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        flagged,
        [
            ".envrc",
            ".github/workflows/ci.yml",
            ".vscode/settings.json"
        ]
    );
    assert!(
        run.stderr
            .contains("warning: the command changed files your tools run or obey later"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_git_config_asks_in_auto_and_runs_only_in_never() {
    for mode in ["auto", "auto-edit", "never"] {
        let sb = Sandbox::new().file(".git/config", "[core]\n");
        let llm = MockLlm::start(vec![
            Script::tool_call(
                "c1",
                "write_file",
                json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = ./x\n"}),
            ),
            Script::text("done"),
        ])
        .await;
        let run = sb.exec(&llm.url(), &["--mode", mode, "configure"]).await;
        if mode == "never" {
            assert_eq!(run.code, 0, "{mode}: {}", run.stderr);
        } else {
            assert_eq!(run.code, 3, "{mode} asks (denied headless): {}", run.stderr);
            assert_eq!(sb.read(".git/config"), "[core]\n", "{mode}");
        }
    }
}
