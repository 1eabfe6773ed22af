//! Background jobs in the real binary: a job a scripted bash call started shows on its card
//! and in the status line, `/jobs` lists it, shows its output and kills it (the process is
//! gone), and quitting with a job running warns once and leaves no process behind.

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{DEADLINE, Tui, process_alive, read_pid};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// A job that writes its pid, prints `ready`, then sleeps: started the way models trained on
/// other agents ask for it.
fn sleeper_call() -> Script {
    Script::tool_call(
        "c1",
        "bash",
        json!({
            "command": "echo $$ > run/job.pid; echo ready-$((40 + 2)); exec sleep 1000",
            "run_in_background": true
        }),
    )
}

async fn the_job_runs(sb: &Sandbox, tui: &Tui) -> i32 {
    tui.wait_for_text("running as job-1").await;
    tui.wait_for_text("⚙ 1 job").await;
    let pid_file = sb.path("run/job.pid");
    let start = Instant::now();
    loop {
        if let Some(pid) = read_pid(&pid_file) {
            return pid;
        }
        assert!(start.elapsed() < DEADLINE, "the job never wrote its pid");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn gone(pid: i32, what: &str) {
    let start = Instant::now();
    while process_alive(pid) {
        assert!(
            start.elapsed() < DEADLINE,
            "{what}: the job's process lives on"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_jobs_lists_a_background_job_shows_its_output_and_kills_it() {
    let sb = Sandbox::new().file("run/.keep", "");
    let llm = MockLlm::start(vec![
        sleeper_call(),
        Script::text("The server runs as job-1."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 30);
    tui.submit("start the server").await;
    let pid = the_job_runs(&sb, &tui).await;
    tui.wait_for_text("The server runs as job-1.").await;
    tui.send("/jobs\r");
    let screen = tui.wait_for_text("Background jobs").await;
    assert!(
        screen.contains("job-1") && screen.contains("running"),
        "{screen}"
    );
    // Enter: the job's output, kept up to date.
    tui.press("\r").await;
    tui.wait_for_text("ready-42").await;
    tui.press("k").await;
    tui.wait_for_text("Kill this job?").await;
    assert!(
        process_alive(pid),
        "nothing is killed before the confirmation"
    );
    tui.press("y").await;
    tui.wait_for_text("killed by you").await;
    gone(pid, "after the kill").await;
    // Back to the list, closed; the card and the status line follow.
    tui.press("\x1b").await;
    tui.wait_for("the list again", |s| s.contains("Enter output"))
        .await;
    tui.press("\x1b").await;
    let screen = tui
        .wait_for("the view closed", |s| !s.contains("Background jobs"))
        .await;
    assert!(screen.contains("job-1 · killed by you"), "{screen}");
    assert!(!screen.contains("⚙ 1 job"), "{screen}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_quitting_with_a_job_running_warns_once_and_leaves_no_process() {
    let sb = Sandbox::new().file("run/.keep", "");
    let llm = MockLlm::start(vec![sleeper_call(), Script::text("Started.")]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 30);
    tui.submit("start the server").await;
    let pid = the_job_runs(&sb, &tui).await;
    tui.wait_for_text("Started.").await;
    tui.send("\x03");
    tui.wait_for_text("1 job still running: it will be stopped; Ctrl+C again to quit")
        .await;
    assert!(process_alive(pid), "the first Ctrl+C only warns");
    tui.send("\x03");
    let start = Instant::now();
    loop {
        if let Some(status) = tui.child.try_wait().unwrap() {
            assert!(status.success(), "cairn exited with {status:?}");
            break;
        }
        assert!(start.elapsed() < DEADLINE, "cairn did not quit");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    gone(pid, "after cairn quit").await;
}
