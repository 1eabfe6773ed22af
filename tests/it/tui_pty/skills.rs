//! User commands and skills in the TUI: the palette lists them with their hints and origin,
//! picks up a file added while it runs, and `/name args` sends the expanded text.

use super::harness::Tui;
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_command_shows_in_the_palette_and_expands_its_arguments() {
    let sb = Sandbox::new()
        .file(
            ".cairn/commands/review.md",
            "---\ndescription: review a file\nargument-hint: \"[FILE] [FOCUS]\"\n---\nREVIEW $1 FOCUSING ON $2 (ALL: $ARGUMENTS)\n",
        )
        .file(
            ".agents/skills/release/SKILL.md",
            "---\nname: release\ndescription: cut a release\n---\nRELEASE-BODY\n",
        );
    let llm = MockLlm::start(vec![Script::text("Reviewed it.")]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 120, 30);
    tui.wait_for_text("What should we work on?").await;
    tui.send("/rev");
    let screen = tui.wait_for_text("review a file").await;
    assert!(
        screen.contains("/review [FILE] [FOCUS]") && screen.contains("(project .cairn/commands)"),
        "{screen}"
    );
    // A command written while cairn runs is offered the next time the palette opens.
    std::fs::write(
        sb.path(".cairn/commands/fresh.md"),
        "---\ndescription: brand new\n---\nx\n",
    )
    .unwrap();
    tui.send("\x7f\x7f\x7f\x7f");
    tui.wait_for("the palette closed", |s| !s.contains(" commands "))
        .await;
    tui.send("/fr");
    tui.wait_for_text("brand new").await;
    tui.send("\x7f\x7f\x7f");
    tui.wait_for("the palette closed", |s| !s.contains(" commands "))
        .await;
    tui.send("/skills\r");
    let screen = tui.wait_for_text("cut a release").await;
    assert!(
        screen.contains("listed") && screen.contains(".agents/skills"),
        "{screen}"
    );
    tui.send("/review src/main.rs errors\r");
    tui.wait_for_text("Reviewed it.").await;
    let sent = llm.request(0).to_string();
    assert!(
        sent.contains("REVIEW src/main.rs FOCUSING ON errors (ALL: src/main.rs errors)"),
        "{sent}"
    );
    tui.quit().await;
}
