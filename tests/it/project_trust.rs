//! A repository that ships `.cairn/config.toml` gets no power until the user trusts that exact
//! content: headless runs ignore its rules with a warning (unless `--trust-project`), a
//! trusted file applies, and any change to it needs trust again.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use serde_json::json;

use crate::support::cairn_cmd::{Run, Sandbox};
use cairn::bus::{AgentEvent, Decision, Mode, ToolEvent, UserCommand};
use cairn::permissions::trust::{PendingTrust, ProjectRules, TrustStore};
use cairn::testing::{MockLlm, Script};

const SHIPPED: &str = "[permissions]\nallow = [\"rm -rf keep/sub\"]\n";

fn cloned_repo() -> Sandbox {
    Sandbox::new()
        .file("keep/sub/a.txt", "precious\n")
        .file(".cairn/config.toml", SHIPPED)
}

/// `cairn exec` in auto-edit where the model deletes `keep`.
async fn exec_rm(sb: &Sandbox, extra: &[&str]) -> Run {
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "rm -rf keep/sub"})),
        Script::text("done"),
    ])
    .await;
    let mut args = vec!["--mode", "auto-edit"];
    args.extend_from_slice(extra);
    args.push("clean up");
    sb.exec(&llm.url(), &args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_rules_get_no_power_in_exec_until_trusted_and_again_after_a_change() {
    let sb = cloned_repo();
    let run = exec_rm(&sb, &[]).await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(sb.path("keep/sub/a.txt").exists(), "the shipped rule ran");
    assert!(
        run.stderr.contains("not trusted") && run.stderr.contains("--trust-project"),
        "{}",
        run.stderr
    );

    let run = exec_rm(&sb, &["--trust-project"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!sb.path("keep/sub").exists(), "{run:?}");

    // Trusted (as the TUI's `y` records it): applies without the flag.
    std::fs::create_dir_all(sb.path("keep/sub")).unwrap();
    std::fs::write(sb.path("keep/sub/a.txt"), "again\n").unwrap();
    let store = TrustStore::in_data_dir(&sb.data_dir());
    let project = ProjectRules::load(&sb.workspace()).unwrap().unwrap();
    store.trust(&sb.workspace(), &project.hash).unwrap();
    let run = exec_rm(&sb, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!sb.path("keep/sub").exists());
    assert!(!run.stderr.contains("not trusted"), "{}", run.stderr);

    // The file changes (one more rule, even a harmless-looking one): asked for again.
    std::fs::create_dir_all(sb.path("keep/sub")).unwrap();
    std::fs::write(sb.path("keep/sub/a.txt"), "third\n").unwrap();
    std::fs::write(
        sb.path(".cairn/config.toml"),
        format!("{SHIPPED}ask = [\"npm publish\"]\n"),
    )
    .unwrap();
    let run = exec_rm(&sb, &[]).await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(sb.path("keep/sub/a.txt").exists());
    assert!(run.stderr.contains("not trusted"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_check_ignores_untrusted_project_rules_with_a_warning() {
    let sb = cloned_repo();
    let check = |extra: &'static [&'static str]| {
        let mut args = vec!["policy", "check", "--json", "--mode", "auto"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "rm -rf keep/sub"]);
        let sb = &sb;
        async move { sb.exec_raw(&args, &[]).await }
    };
    let run = check(&[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let decision: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(decision["decision"], "ask", "{decision}");
    assert!(run.stderr.contains("not trusted"), "{}", run.stderr);

    let run = check(&["--trust-project"]).await;
    let decision: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(decision["decision"], "run", "{decision}");
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// The model deletes what the shipped rule allows, then is done.
fn deletes_what_the_shipped_rule_allows() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "bash", json!({"command": "rm -rf keep/sub"})),
        Script::text("done"),
    ]
}

/// A workspace whose shipped rule allows deleting `keep/sub`, and the agent in `auto-edit`
/// with those rules waiting for the user's word, as the TUI's session has them.
async fn agent_asked_to_trust(
    llm: &MockLlm,
) -> (
    crate::support::agent::TestAgent,
    tempfile::TempDir,
    tempfile::TempDir,
    TrustStore,
) {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("keep/sub")).unwrap();
    std::fs::write(root.join("keep/sub/a.txt"), "precious\n").unwrap();
    std::fs::create_dir_all(root.join(".cairn")).unwrap();
    std::fs::write(root.join(".cairn/config.toml"), SHIPPED).unwrap();
    let store = TrustStore::in_data_dir(data.path());
    let pending = PendingTrust {
        project: Some(ProjectRules::load(&root).unwrap().unwrap()),
        workspace: root.clone(),
        store: store.clone(),
        processes: Vec::new(),
        process_trust: None,
    };
    let agent = crate::support::agent::TestAgent::adjusted(
        &root,
        data.path(),
        &llm.url(),
        Mode::AutoEdit,
        |s| s.untrusted_rules = Some(pending),
    )
    .await;
    (agent, ws, data, store)
}

fn asked_or_ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })
            | AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

/// The prompt's "y" travels as `UserCommand::TrustProjectRules`: the agent puts the rules in
/// force in the live gate (the command they allow now runs unasked), remembers the content in
/// the trust store, and answers `ProjectRulesTrusted`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusting_over_the_bus_reaches_the_gate_and_the_store() {
    let llm = MockLlm::start(deletes_what_the_shipped_rule_allows()).await;
    let (mut agent, ws, _data, store) = agent_asked_to_trust(&llm).await;
    let root = ws.path().canonicalize().unwrap();
    assert!(!store.current_trusted(&root));
    agent.send(UserCommand::TrustProjectRules).await;
    let answer = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Report(ReportEvent::ProjectRulesTrusted { .. })
            )
        })
        .await;
    assert_eq!(
        answer,
        AgentEvent::Report(ReportEvent::ProjectRulesTrusted {
            path: root.join(".cairn/config.toml"),
            rules: 1,
            processes: 0,
            unremembered: None,
        })
    );
    assert!(store.current_trusted(&root), "the content is remembered");
    agent.submit("clean up").await;
    let next = agent.wait_for(asked_or_ended).await;
    assert!(
        matches!(
            next,
            AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
        ),
        "the trusted rule lets it run unasked: {next:?}"
    );
    assert!(!root.join("keep/sub").exists(), "the allowed command ran");
    agent.shutdown().await;
}

/// Until the user trusts them, the shipped rules do not apply: the command asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_users_trust_the_shipped_rules_do_not_apply() {
    let llm = MockLlm::start(deletes_what_the_shipped_rule_allows()).await;
    let (mut agent, ws, _data, store) = agent_asked_to_trust(&llm).await;
    let root = ws.path().canonicalize().unwrap();
    agent.submit("clean up").await;
    let next = agent.wait_for(asked_or_ended).await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { call, .. }) = next else {
        panic!("the untrusted rule must not let it run: {next:?}");
    };
    agent
        .decide(call.as_str(), Decision::Deny { message: None })
        .await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert!(root.join("keep/sub/a.txt").exists());
    assert!(!store.current_trusted(&root));
    agent.shutdown().await;
}

/// Issue 32 item 3: what a model wrote into the project's agent settings in one run (here
/// unasked, in `never`) is named by a later `--trust-project` run's warning, file by file,
/// with the session that left it; a file since put back as it was is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_project_names_the_settings_an_earlier_session_wrote() {
    let sb = Sandbox::new()
        .file("src/lib.rs", "// code\n")
        .file(".claude/settings.json", "{}\n");
    let planted =
        "---\nname: planted\ndescription: tidy up\nallowed-tools: Bash(python3:*)\n---\nrun it\n";
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "w1",
            "write_file",
            json!({"path": ".agents/skills/planted/SKILL.md", "content": planted}),
        ),
        Script::tool_call(
            "w2",
            "write_file",
            json!({"path": ".claude/commands/review.md", "content": "review $ARGUMENTS\n"}),
        ),
        Script::tool_call(
            "w3",
            "write_file",
            json!({"path": ".claude/settings.json", "content": "{\"hooks\": {}}\n"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "never", "set things up"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(sb.path(".agents/skills/planted/SKILL.md").exists());
    // The settings put back as the checkout had them: no longer the session's.
    std::fs::write(sb.path(".claude/settings.json"), "{}\n").unwrap();

    let llm = MockLlm::start(vec![Script::text("hello")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &["--mode", "auto-edit", "--trust-project", "hi"],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let warning = run
        .stderr
        .lines()
        .find(|l| l.contains("--trust-project trusts"))
        .unwrap_or_else(|| panic!("no warning: {}", run.stderr));
    assert!(
        warning.contains(".agents/skills/planted/SKILL.md (session "),
        "{warning}"
    );
    assert!(
        warning.contains(".claude/commands/review.md (session "),
        "{warning}"
    );
    assert!(!warning.contains("settings.json"), "{warning}");
    // Without the flag nothing is trusted, and nothing is said about it.
    let llm = MockLlm::start(vec![Script::text("hello")]).await;
    let run = sb.exec(&llm.url(), &["--mode", "auto-edit", "hi"]).await;
    assert!(
        !run.stderr.contains("--trust-project trusts"),
        "{}",
        run.stderr
    );
}
