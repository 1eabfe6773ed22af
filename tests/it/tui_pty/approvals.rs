//! The approval prompt in the real binary cannot be typed into: a prompt that opens while the
//! user types takes none of the typing (it lands in the input), Esc closes it as a denial
//! without ending the turn, and Ctrl+C stops the agent but keeps the draft.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{DEADLINE, Tui};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// Types like a person: one key every 60 ms (the pace is what is tested, not a wait).
/// Returns the longest gap there really was between two keys, for the failure message.
async fn type_like_a_person(tui: &mut Tui, text: &str) -> Duration {
    let mut longest = Duration::ZERO;
    let mut last = Instant::now();
    for c in text.chars() {
        tui.send(&c.to_string());
        longest = longest.max(last.elapsed());
        last = Instant::now();
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    longest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_an_approval_opening_while_typing_approves_nothing() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch marker"})),
        Script::text("Left it."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("set things up").await;
    // The prompt opens while this is being typed: every `y`, `a`, `p` and `n` in it would
    // answer a prompt that took keys.
    let typed = "yes any news? please approve all";
    let longest = type_like_a_person(&mut tui, typed).await;
    let screen = tui.wait_for_text("approve once").await;
    assert!(
        screen.contains(typed),
        "the typing is in the input (longest gap between keys {longest:?}):\n{screen}"
    );
    assert!(screen.contains("Allow bash?"), "{screen}");
    assert!(!sb.path("marker").exists(), "the command did not run");
    assert_eq!(llm.requests().len(), 1, "the model got no decision");
    tui.press("n").await;
    tui.wait_for_text("Left it.").await;
    assert!(!sb.path("marker").exists());
    let told = llm.tool_result(1, "c1").unwrap();
    assert!(told.contains("denied"), "{told}");
    let screen = tui.contents();
    assert!(
        screen.contains(typed),
        "the draft is still there:\n{screen}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_esc_on_an_approval_denies_it_and_the_turn_goes_on() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch marker"})),
        Script::text("Understood, not touching it."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("set things up").await;
    tui.wait_for_text("approve once").await;
    tui.press("\x1b").await;
    let screen = tui.wait_for_text("Understood, not touching it.").await;
    assert!(!screen.contains("Allow bash?"), "{screen}");
    assert!(screen.contains("denied by you"), "{screen}");
    assert!(
        !screen.contains("interrupted"),
        "the turn was not cancelled:\n{screen}"
    );
    let told = llm.tool_result(1, "c1").unwrap();
    assert!(told.contains("denied") && told.contains("Esc"), "{told}");
    assert!(!sb.path("marker").exists());
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_ctrl_c_stops_the_agent_and_keeps_the_draft() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "sleep 300"})),
        Script::text("stopped"),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 100, 30);
    tui.submit("wait a while").await;
    tui.wait_for_text("sleep 300").await;
    tui.send("half a thought");
    tui.wait_for_text("half a thought").await;
    tui.send("\x03");
    let screen = tui
        .wait_for("the interrupt", |s| s.contains("interrupted"))
        .await;
    assert!(screen.contains("half a thought"), "{screen}");
    assert!(
        screen.contains("cancelled"),
        "the card says cancelled:\n{screen}"
    );
    // The second Ctrl+C quits.
    tui.send("\x03");
    let start = Instant::now();
    while tui.child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < DEADLINE, "cairn did not quit");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_plan_mode_changes_nothing_until_the_plan_is_approved() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            cairn::testing::MockCall::new(
                "c1",
                "edit_file",
                json!({"path": "notes.txt", "old_string": "world", "new_string": "cairn"}),
            ),
            cairn::testing::MockCall::new("c2", "bash", json!({"command": "echo x > f"})),
            cairn::testing::MockCall::new("c3", "bash", json!({"command": "rg foo"})),
        ]),
        Script::tool_call(
            "c4",
            "exit_plan_mode",
            json!({"plan": "1. rename world to cairn\n2. run the tests"}),
        ),
        Script::text("Starting on the plan."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "plan", 100, 30);
    tui.wait_for_text("│ plan · ").await;
    tui.submit("rename world").await;
    let card = tui.wait_for_text("Plan: approve it?").await;
    assert!(card.contains("rename world to cairn"), "{card}");
    assert!(card.contains("run the tests"), "{card}");
    // Nothing changed on disk, and the model was told how to go on.
    assert_eq!(sb.read("notes.txt"), "hello world\n");
    assert!(!sb.path("f").exists());
    for call in ["c1", "c2"] {
        let told = llm.tool_result(1, call).unwrap();
        assert!(
            told.contains("plan mode") && told.contains("exit_plan_mode"),
            "{call}: {told}"
        );
    }
    let rg = llm.tool_result(1, "c3").unwrap();
    assert!(!rg.contains("plan mode"), "a read-only command runs: {rg}");
    // Approving switches the mode (auto-edit is the first choice, → picks auto).
    tui.wait_for_text("approve, then work in").await;
    tui.press("\x1b[C").await;
    tui.wait_for_text("approve, then work in auto ").await;
    tui.press("y").await;
    let screen = tui.wait_for_text("Starting on the plan.").await;
    assert!(screen.contains("│ auto · "), "{screen}");
    assert!(screen.contains("mode → auto"), "{screen}");
    let approved = llm.tool_result(2, "c4").unwrap();
    assert!(
        approved.contains("approved") && approved.contains("auto"),
        "{approved}"
    );
    tui.wait_for_text("idle").await;
    // Shift+Tab cycles ask → auto-edit → auto → plan, and the status line follows.
    for mode in ["plan", "ask", "auto-edit", "auto"] {
        tui.send("\x1b[Z");
        tui.wait_for_text(&format!("│ {mode} · ")).await;
    }
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_slash_opens_the_palette_and_tab_completes_co_to_compact() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.wait_for_text("What should we work on?").await;
    tui.send("/");
    let screen = tui.wait_for_text(" commands ").await;
    assert!(
        screen.contains("/compact") && screen.contains("/new") && screen.contains("Tab completes"),
        "{screen}"
    );
    tui.send("co");
    tui.wait_for_text("/cost").await;
    tui.send("\t");
    tui.wait_for("the input completed to /compact", |s| {
        s.contains("/compact ") && !s.contains(" commands ")
    })
    .await;
    tui.quit().await;
}
