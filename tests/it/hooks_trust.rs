//! A project's hooks: they run in the workspace-write sandbox (no write outside the
//! workspace), and one trusted at the start whose script changes during the session (here:
//! by the model's own command) is no longer the hook the user trusted: as a guard it fails,
//! so it denies.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use serde_json::json;

use crate::support::agent::TestAgent;
use crate::support::cairn_cmd::Sandbox;
use cairn::bus::{AgentEvent, Mode};
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_hook_trusted_during_the_session_runs_from_then_on() {
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir_all(ws.path().join(".cairn")).unwrap();
    std::fs::write(ws.path().join(".cairn/config.toml"), GUARD).unwrap();
    std::fs::write(
        ws.path().join("guard.sh"),
        "cat >/dev/null; echo 'project guard says no' >&2; exit 2\n",
    )
    .unwrap();
    let workspace = std::fs::canonicalize(ws.path()).unwrap();
    let trust = cairn::trust::ProcessTrust::new(data.path(), &workspace);
    let run = cairn::hooks::RunSettings {
        workspace: workspace.clone(),
        ..Default::default()
    };
    let loaded = cairn::hooks::load(
        &Default::default(),
        std::path::Path::new("config.toml"),
        None,
        run,
        trust.clone(),
    )
    .unwrap();
    assert_eq!(loaded.untrusted.len(), 1);
    let hooks = std::sync::Arc::new(loaded.hooks);
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch first"})),
        Script::text("done"),
        Script::tool_call("c2", "bash", json!({"command": "touch second"})),
        Script::text("done"),
    ])
    .await;
    let mut agent =
        TestAgent::with_hooks(ws.path(), data.path(), &llm.url(), Mode::Never, hooks).await;
    agent.submit("one").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(
        ws.path().join("first").exists(),
        "an untrusted project hook ran"
    );
    trust.trust(&loaded.untrusted[0]).unwrap();
    agent.submit("two").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(
        !ws.path().join("second").exists(),
        "the trusted guard did not run"
    );
    assert!(
        llm.tool_result(3, "c2")
            .unwrap()
            .contains("project guard says no")
    );
    agent.shutdown().await;
}

/// The start-up trust prompt offers the project's untrusted hooks next to its rules: the
/// pending trust carries them as the user is shown them (the command, the script it runs);
/// until the user's "y" the hook is left out, after it (`TrustProjectRules`) the hook runs
/// from the next call, trusted by content hash; a changed script asks again at the next
/// start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_prompt_trusts_the_project_hooks_it_shows() {
    use cairn::bus::UserCommand;
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir_all(ws.path().join(".cairn")).unwrap();
    std::fs::write(ws.path().join(".cairn/config.toml"), GUARD).unwrap();
    std::fs::write(
        ws.path().join("guard.sh"),
        "cat >/dev/null; echo 'project guard says no' >&2; exit 2\n",
    )
    .unwrap();
    let workspace = std::fs::canonicalize(ws.path()).unwrap();
    let load = || {
        let run = cairn::hooks::RunSettings {
            workspace: workspace.clone(),
            ..Default::default()
        };
        let trust = cairn::trust::ProcessTrust::new(data.path(), &workspace);
        cairn::hooks::load(
            &Default::default(),
            std::path::Path::new("config.toml"),
            None,
            run,
            trust,
        )
        .unwrap()
    };
    let pending_of = |loaded: &cairn::hooks::Loaded| cairn::permissions::trust::PendingTrust {
        project: None,
        workspace: workspace.clone(),
        store: cairn::permissions::trust::TrustStore::in_data_dir(data.path()),
        processes: loaded.untrusted.clone(),
        process_trust: loaded.hooks.trust.clone(),
    };
    let loaded = load();
    let pending = pending_of(&loaded);
    let shown = pending.shown();
    assert!(shown.listing.is_empty(), "{shown:?}");
    assert_eq!(shown.processes.len(), 1, "{shown:?}");
    assert!(
        shown.processes[0].contains("guard.sh") && shown.processes[0].contains("(runs guard.sh)"),
        "{shown:?}"
    );
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch first"})),
        Script::text("done"),
        Script::tool_call("c2", "bash", json!({"command": "touch second"})),
        Script::text("done"),
    ])
    .await;
    let hooks = std::sync::Arc::new(loaded.hooks);
    let mut agent = TestAgent::adjusted(ws.path(), data.path(), &llm.url(), Mode::Never, |s| {
        s.hooks = hooks;
        s.untrusted_rules = Some(pending);
    })
    .await;
    agent.submit("one").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(
        ws.path().join("first").exists(),
        "a hook ran before the user trusted it"
    );
    agent.send(UserCommand::TrustProjectRules).await;
    let answer = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Report(ReportEvent::ProjectRulesTrusted { .. })
            )
        })
        .await;
    assert!(
        matches!(
            answer,
            AgentEvent::Report(ReportEvent::ProjectRulesTrusted {
                rules: 0,
                processes: 1,
                unremembered: None,
                ..
            })
        ),
        "{answer:?}"
    );
    agent.submit("two").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(
        !ws.path().join("second").exists(),
        "the trusted guard did not run"
    );
    assert!(
        llm.tool_result(3, "c2")
            .unwrap()
            .contains("project guard says no")
    );
    agent.shutdown().await;
    // The next start: trusted, nothing to ask; the script changed, it asks again.
    assert!(load().untrusted.is_empty());
    assert!(pending_of(&load()).is_empty());
    std::fs::write(ws.path().join("guard.sh"), "cat >/dev/null; exit 0\n").unwrap();
    let shown = pending_of(&load()).shown();
    assert_eq!(shown.processes.len(), 1, "{shown:?}");
    assert!(
        shown.processes[0].contains("changed since you trusted it"),
        "{shown:?}"
    );
}
