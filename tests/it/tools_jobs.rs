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
    let (run, text) = fx.bash(json!({"command": "touch started"})).await;
    assert!(run.cancelled);
    assert_eq!(text, "$ touch started\n[cancelled]");
    assert!(!fx.path("started").exists());
}
