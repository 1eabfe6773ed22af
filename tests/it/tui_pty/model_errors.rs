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
    tui.submit("hello?").await;
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
