//! Background jobs: `bash` with `background: true`, `job_output`, `job_kill`, the running-job
//! cap, and that no job outlives its session. Processes are proven dead by pid.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::tools::Tool;
use cairn::tools::bash::Bash;
use cairn::tools::job_tools::{JobKill, JobOutput};
use serde_json::json;

use crate::tools_bash::{Fixture, alive, assert_all_dead, fixture};

#[tokio::test]
async fn background_job_starts_reports_new_output_and_is_killed() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "echo $$ > pids; sleep 1000 & echo $! >> pids; echo ready; wait", "background": true}))
        .await;
    let job = run.job_id.clone().unwrap();
    assert_eq!(job, "job-1");
    assert!(
        text.contains("[started in the background as job-1;"),
        "{text}"
    );

    let (report, text) = fx
        .job(&JobOutput, json!({"job_id": job, "wait_ms": 10000}))
        .await;
    assert_eq!(report.stdout, "ready\n");
    assert!(report.running);
    assert!(text.contains("[still running after"), "{text}");
    let (report, text) = fx
        .job(&JobOutput, json!({"job_id": job, "wait_ms": 100}))
        .await;
    assert_eq!(report.stdout, "", "output is reported once");
    assert!(text.contains("[no new output; still running"), "{text}");

    // Models sometimes name a job by its number alone.
    let (report, text) = fx.job(&JobKill, json!({"job_id": 1})).await;
    assert!(!report.running && report.killed, "{report:?}");
    assert!(text.contains("[stopped by job_kill]"), "{text}");
    assert_all_dead(&fx.pids("pids"));

    let err = JobOutput
        .run(json!({"job_id": "job-9"}), &fx.cx)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("jobs of this session: job-1"),
        "{err}"
    );
}

#[tokio::test]
async fn a_finished_job_reports_its_exit_code_and_last_output() {
    let fx = fixture();
    let (run, _) = fx
        .bash(json!({"command": "echo one; echo two >&2; exit 4", "background": true}))
        .await;
    let job = run.job_id.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut stdout = String::new();
    let mut stderr = String::new();
    loop {
        let (report, text) = fx
            .job(&JobOutput, json!({"job_id": job, "wait_ms": 5000}))
            .await;
        stdout.push_str(&report.stdout);
        stderr.push_str(&report.stderr);
        if !report.running {
            assert_eq!(report.exit_code, Some(4));
            assert!(text.ends_with("[exit code: 4]"), "{text}");
            break;
        }
        assert!(Instant::now() < deadline, "the job never ended");
    }
    assert_eq!((stdout.as_str(), stderr.as_str()), ("one\n", "two\n"));
}

#[tokio::test]
async fn jobs_die_with_kill_all_and_when_the_table_is_dropped() {
    let fx = fixture();
    for _ in 0..2 {
        fx.bash(json!({"command": "sleep 1000 & echo $! >> pids; wait", "background": true}))
            .await;
    }
    fx.wait_for_pids("pids", 2).await;
    fx.cx.env.jobs.kill_all().await;
    assert_all_dead(&fx.pids("pids"));
    assert!(fx.cx.env.jobs.running().is_empty());

    let session = fixture();
    session
        .bash(json!({"command": "trap '' TERM; sleep 1000 & echo $! >> pids; wait", "background": true}))
        .await;
    let pids = session.wait_for_pids("pids", 1).await;
    assert!(alive(pids[0]));
    let Fixture { dir, cx } = session;
    drop(cx); // the last reference to the session's tools: the job table goes with it
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "a job survived the end of the session"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(dir);
}

#[tokio::test]
async fn a_job_with_long_output_is_read_as_head_and_tail_then_nothing_new() {
    let fx = fixture();
    let (run, _) = fx
        .bash(json!({"command": "seq 1 200000", "background": true}))
        .await;
    let job = run.job_id.unwrap();
    // Wait for the end without reading, so one read gets all of it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !fx.cx.env.jobs.running().is_empty() {
        assert!(Instant::now() < deadline, "the job never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (report, text) = fx.job(&JobOutput, json!({"job_id": job})).await;
    assert!(report.truncated);
    assert!(
        text.starts_with("[job-1] $ seq 1 200000\n1\n2\n3\n"),
        "{}",
        &text[..60]
    );
    assert!(text.len() <= 16 * 1024, "{} bytes", text.len());
    assert!(
        text.ends_with("199999\n200000\n[exited successfully]"),
        "{}",
        &text[text.len() - 80..]
    );
    let spill = report.spill_path.unwrap();
    assert!(
        text.contains(&format!("full output in {}]", spill.display())),
        "{text}"
    );
    let (report, text) = fx.job(&JobOutput, json!({"job_id": job})).await;
    assert_eq!((report.stdout.as_str(), report.running), ("", false));
    assert!(text.contains("[no new output]"), "{text}");
    drop(fx);
    assert!(!spill.exists(), "a job's spill file outlived the session");
}

#[tokio::test]
async fn a_job_that_exits_takes_its_leftovers_with_it() {
    let fx = fixture();
    let (run, _) = fx
        .bash(json!({"command": "sleep 1000 & echo $! > pids; echo started", "background": true}))
        .await;
    let job = run.job_id.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (report, _) = fx
            .job(&JobOutput, json!({"job_id": job, "wait_ms": 2000}))
            .await;
        if !report.running {
            break;
        }
        assert!(Instant::now() < deadline, "the job never ended");
    }
    assert_all_dead(&fx.pids("pids"));
}

#[tokio::test]
async fn running_jobs_are_capped_and_a_cancelled_call_starts_nothing() {
    let fx = fixture();
    for _ in 0..cairn::tools::jobs::MAX_RUNNING {
        fx.bash(json!({"command": "sleep 1000", "background": true}))
            .await;
    }
    let err = Bash
        .run(json!({"command": "sleep 1000", "background": true}), &fx.cx)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("stop one with job_kill first"),
        "{err}"
    );
    fx.cx.env.jobs.kill_all().await;
    assert!(fx.cx.env.jobs.running().is_empty());

    fx.cx.cancel.cancel();
    let err = Bash
        .run(json!({"command": "touch started"}), &fx.cx)
        .await
        .unwrap_err();
    assert!(matches!(err, cairn::tools::ToolError::Cancelled), "{err}");
    assert_eq!(err.to_string(), "[cancelled]");
    assert!(!fx.path("started").exists());
}

/// Prints "before", waits (inside the command) for the test to create `go`, prints "after" and
/// waits on a child sleep: a command that outlives a short timeout and then says more.
const SLOW: &str = "echo $$ > pids; sleep 1000 & echo $! >> pids; echo before; \
                    while [ ! -e go ]; do sleep 0.02; done; echo after; wait";

#[tokio::test]
async fn a_command_past_its_timeout_becomes_a_job_that_can_be_read_and_killed() {
    let fx = fixture();
    let started = Instant::now();
    let (run, text) = fx.bash(json!({"command": SLOW, "timeout_ms": 1500})).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the call must return at its timeout, took {:?}",
        started.elapsed()
    );
    assert_eq!(run.job_id.as_deref(), Some("job-1"));
    assert_eq!(run.timed_out_after_ms, Some(1500));
    assert_eq!((run.exit_code, run.signal.as_deref()), (None, None));
    assert_eq!(run.stdout, "before\n", "the output so far");
    assert!(
        text.ends_with(
            "before\n[timed out after 1500ms; still running as background job job-1: job_output \
             reads its further output, job_kill stops it]"
        ),
        "{text}"
    );
    let pids = fx.wait_for_pids("pids", 2).await;
    assert!(
        pids.iter().all(|pid| alive(*pid)),
        "promotion kills nothing"
    );

    std::fs::write(fx.path("go"), "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut later = String::new();
    while !later.contains("after") {
        let (report, _) = fx
            .job(&JobOutput, json!({"job_id": "job-1", "wait_ms": 5000}))
            .await;
        assert!(report.running, "{report:?}");
        later.push_str(&report.stdout);
        assert!(Instant::now() < deadline, "no later output: {later:?}");
    }
    assert_eq!(
        later, "after\n",
        "job_output starts after what the call showed"
    );

    let (report, text) = fx.job(&JobKill, json!({"job_id": "job-1"})).await;
    assert!(!report.running && report.killed, "{report:?}");
    assert!(text.contains("[stopped by job_kill]"), "{text}");
    assert_all_dead(&pids);
}

#[tokio::test]
async fn a_promoted_job_dies_with_the_session() {
    let session = fixture();
    let (run, _) = session
        .bash(json!({"command": SLOW, "timeout_ms": 200, "on_timeout": "background"}))
        .await;
    assert!(run.job_id.is_some());
    let pids = session.wait_for_pids("pids", 2).await;
    let Fixture { dir, cx } = session;
    drop(cx);
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "a promoted job survived the end of the session"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(dir);
}

#[tokio::test]
async fn with_a_full_job_table_a_timeout_kills_as_before() {
    let fx = fixture();
    for _ in 0..cairn::tools::jobs::MAX_RUNNING {
        fx.bash(json!({"command": "sleep 1000", "background": true}))
            .await;
    }
    let (run, text) = fx
        .bash(json!({"command": "echo $$ > pids; sleep 1000", "timeout_ms": 200}))
        .await;
    assert_eq!(run.job_id, None);
    assert!(text.ends_with("[timed out after 200ms]"), "{text}");
    assert_all_dead(&fx.pids("pids"));
    fx.cx.env.jobs.kill_all().await;
}
