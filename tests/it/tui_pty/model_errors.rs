//! Model errors in the real binary's UI: a wrong base URL fails fast and names the URL.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use super::harness::Tui;
use crate::model_errors::closed_port;
use crate::support::cairn_cmd::Sandbox;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_wrong_base_url_fails_within_3s_naming_the_url() {
    let sb = Sandbox::new();
    let port = closed_port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut tui = Tui::start(&sb, &base_url, "auto-edit", 200, 40);
    // The start-up check warns first (the next test); the message is sent after it.
    tui.wait_for_text("start-up check").await;
    tui.send("hello?");
    tui.wait_for_text("hello?").await;
    tui.send("\r");
    let sent = Instant::now();
    let screen = tui
        .wait_for("the failure", |s| s.contains("failed: could not reach"))
        .await;
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}:\n{screen}");
    let failure: String = screen
        .lines()
        .skip_while(|l| !l.contains("failed: could not reach"))
        .take(3)
        .collect();
    assert!(failure.contains(&format!("127.0.0.1:{port}")), "{screen}");
    assert!(failure.contains("--base-url"), "{screen}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_the_start_up_check_warns_of_a_wrong_base_url_before_the_first_message() {
    let sb = Sandbox::new();
    let port = closed_port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let tui = Tui::start(&sb, &base_url, "auto-edit", 200, 40);
    let screen = tui
        .wait_for("the start-up warning", |s| s.contains("start-up check"))
        .await;
    let warning: String = screen
        .lines()
        .skip_while(|l| !l.contains("start-up check"))
        .take(3)
        .collect();
    assert!(warning.contains(&format!("127.0.0.1:{port}")), "{screen}");
    assert!(warning.contains("--base-url"), "{screen}");
    assert!(
        !screen.contains("failed:"),
        "the warning came before any message:\n{screen}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_the_ui_comes_up_and_takes_a_message_while_the_check_waits() {
    // A server that accepts and never answers: the check waits its whole timeout, and the
    // screen must not.
    let (addr, _connections) = crate::support::net_servers::silent_server().await;
    let sb = Sandbox::new();
    let mut tui = Tui::start(&sb, &format!("http://{addr}/v1"), "auto-edit", 120, 30);
    tui.submit("typed while the check waits").await;
    let screen = tui.contents();
    assert!(!screen.contains("start-up check"), "{screen}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_an_interrupted_answer_stays_marked_and_is_in_the_next_request() {
    use cairn::testing::{MockLlm, Script};
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::endless_text("step ").chunk_delay(Duration::from_millis(20)),
        Script::text("Starting over, shorter."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 120, 30);
    tui.submit("write the plan").await;
    tui.wait_for_text("step step step").await;
    tui.send("\x03");
    let screen = tui
        .wait_for_text("[interrupted by the user: the reply stopped here]")
        .await;
    assert!(
        screen.contains("step step step"),
        "the partial stays:\n{screen}"
    );
    tui.send("shorter-please");
    tui.wait_for_text("shorter-please").await;
    tui.send("\r");
    tui.wait_for_text("Starting over, shorter.").await;
    let messages = llm.request(1)["messages"].as_array().unwrap().clone();
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the interrupted answer is in the next request");
    let text = assistant["content"].as_str().unwrap();
    assert!(
        text.starts_with("step step step")
            && text.ends_with("[interrupted by the user: the reply stopped here]"),
        "{text}"
    );
    let last = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.starts_with("[cairn] The user interrupted") && last.ends_with("shorter-please"),
        "{last}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_stream_cut_mid_answer_is_retried_once_and_shown_whole_once() {
    use cairn::testing::{MockLlm, Script};
    let sb = Sandbox::new();
    let answer = "The fixture path is wrong: tests read data/ from the repository root.";
    let llm = MockLlm::start(vec![
        Script::text(answer).cut_after_chunks(4),
        Script::text(answer),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 160, 30);
    tui.submit("why do the tests fail?").await;
    let screen = tui.wait_for_text("repository root.").await;
    assert_eq!(screen.matches("The fixture path").count(), 1, "{screen}");
    assert!(
        screen.contains("cut off") && screen.contains("retrying"),
        "the retry is said:\n{screen}"
    );
    assert!(!screen.contains("failed:"), "{screen}");
    assert_eq!(llm.requests().len(), 2);
    tui.quit().await;
}
