//! `/init` through the engine: the built-in prompt, asking to improve an AGENTS.md that
//! exists, and no user command taking its name.
#![allow(clippy::unwrap_used)]

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_init_asks_to_improve_an_existing_agents_md_and_no_command_can_replace_it() {
    let sb = Sandbox::new()
        .file("AGENTS.md", "# old notes\n")
        .file(".cairn/commands/init.md", "SHADOW-INIT $ARGUMENTS\n");
    let llm = MockLlm::start(vec![Script::text("Improved.")]).await;
    let run = sb.exec(&llm.url(), &["/init keep it short"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sent = llm.request(0).to_string();
    assert!(sent.contains("already has an AGENTS.md"), "{sent}");
    assert!(sent.contains("The user adds: keep it short"), "{sent}");
    assert!(!sent.contains("SHADOW-INIT"), "{sent}");
    // The system prompt already holds the file being improved.
    assert!(sent.contains("# old notes"), "{sent}");
}
