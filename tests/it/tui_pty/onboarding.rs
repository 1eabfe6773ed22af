//! Onboarding in the real binary: the welcome screen's facts (workspace from `~`, branch,
//! sandbox, AGENTS.md) with a setup notice below them, `/init` writing AGENTS.md through the
//! usual approval, and the resume hint printed on quit.

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{DEADLINE, Tui};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_the_welcome_names_the_workspace_and_quitting_prints_how_to_resume() {
    let sb = Sandbox::new()
        .file(".git/HEAD", "ref: refs/heads/feature/welcome\n")
        .file("AGENTS.md", "# How to work here\n\nRun the tests.\n");
    let llm = MockLlm::start(vec![Script::text("Hi there.")]).await;
    // No Landlock, whatever the kernel: the welcome says why, and the start-up warning
    // shows below it.
    let mut tui = Tui::start_env(
        &sb,
        &["--base-url", &llm.url(), "--mode", "auto-edit"],
        &[("CAIRN_TEST_NO_LANDLOCK", "1")],
        120,
        32,
    );
    let screen = tui.wait_for_text("What should we work on?").await;
    // HOME is the sandbox's root, and the workspace is its `ws`.
    for fact in [
        "~/ws",
        "feature/welcome",
        "off: Landlock is disabled for this test run",
        "loaded from ~/ws/AGENTS.md (35 B)",
        "Shift+Tab",
    ] {
        assert!(screen.contains(fact), "{fact:?} missing:\n{screen}");
    }
    tui.wait_for_text("no sandbox: Landlock is disabled").await;
    assert!(tui.contents().contains("feature/welcome"));

    tui.submit("hello").await;
    tui.wait_for_text("Hi there.").await;
    let screen = tui.contents();
    assert!(!screen.contains("feature/welcome"), "{screen}");
    let id = sb.session_id();
    let after = tui.quit().await;
    let hint = format!("cairn --resume {id}");
    let start = Instant::now();
    loop {
        let screen = after.lock().unwrap().screen().contents();
        if screen.contains(&hint) && screen.contains("cairn --continue") {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no resume hint after quitting:\n{screen}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_init_has_the_model_write_agents_md_through_the_usual_approval() {
    let sb = Sandbox::new().file("Cargo.toml", "[package]\nname = \"demo\"\n");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "w1",
            "write_file",
            json!({"path": "AGENTS.md", "content": "# demo\n\nRun `cargo test`.\n"}),
        ),
        Script::text("Wrote AGENTS.md."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "ask", 120, 32);
    tui.wait_for_text("none here: /init has the model draft one")
        .await;
    tui.send("/init");
    tui.wait_for_text("draft AGENTS.md, or improve").await;
    tui.send("\r");
    let screen = tui.wait_for_text("approve once").await;
    assert!(
        screen.contains("AGENTS.md") && screen.contains("Run `cargo test`."),
        "the write waits for approval with its diff:\n{screen}"
    );
    assert!(!sb.path("AGENTS.md").exists(), "nothing written before");
    tui.press("y").await;
    tui.wait_for_text("Wrote AGENTS.md.").await;
    assert_eq!(sb.read("AGENTS.md"), "# demo\n\nRun `cargo test`.\n");
    let sent = llm.request(0).to_string();
    assert!(
        sent.contains("create AGENTS.md at the repository root with write_file"),
        "{sent}"
    );
    tui.quit().await;
}
