//! A project's hooks: they run in the workspace-write sandbox (no write outside the
//! workspace), and one trusted at the start whose script changes during the session (here:
//! by the model's own command) is no longer the hook the user trusted: as a guard it fails,
//! so it denies.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

const GUARD: &str = "[[hooks.pre_tool]]\ncommand = 'sh \"$CAIRN_WORKSPACE/guard.sh\"'\n";

fn trusted(sb: &Sandbox) {
    let (code, out, err) = sb.exec_raw_sync(&["hooks", "trust", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_hook_runs_in_the_workspace_write_sandbox() {
    if !crate::sandbox::landlock("a_project_hook_runs_in_the_workspace_write_sandbox") {
        return;
    }
    let sb = Sandbox::new().file(".cairn/config.toml", GUARD).file(
        "guard.sh",
        "cat >/dev/null; touch \"$CAIRN_WORKSPACE/inside\"; touch \"$HOME/escaped\"; exit 0\n",
    );
    trusted(&sb);
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "true"})),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "never", "go"]).await;
    assert!(
        sb.path("inside").exists(),
        "the hook did not run: {}",
        run.stderr
    );
    let home = sb.workspace().parent().unwrap().to_path_buf();
    assert!(
        !home.join("escaped").exists(),
        "a project hook wrote outside the workspace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_guard_whose_script_changes_mid_session_denies() {
    let sb = Sandbox::new()
        .file(".cairn/config.toml", GUARD)
        .file("guard.sh", "cat >/dev/null; exit 0\n");
    trusted(&sb);
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo 'exit 0 # changed' >> guard.sh"}),
        ),
        Script::tool_call("c2", "bash", json!({"command": "touch ran"})),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "never", "go"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(sb.read("guard.sh").contains("changed"), "{}", run.stderr);
    assert!(
        !sb.path("ran").exists(),
        "the changed guard let the call through"
    );
    let result = llm.tool_result(2, "c2").unwrap();
    assert!(
        result.contains("blocked by hook pre_tool #1 (.cairn/config.toml)")
            && result.contains("changed since you trusted it"),
        "{result}"
    );
}
