//! A repository that ships `.cairn/config.toml` gets no power until the user trusts that exact
//! content: headless runs ignore its rules with a warning (unless `--trust-project`), a
//! trusted file applies, and any change to it needs trust again.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use crate::support::cairn_cmd::{Run, Sandbox};
use cairn::permissions::trust::{ProjectRules, TrustStore};
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
