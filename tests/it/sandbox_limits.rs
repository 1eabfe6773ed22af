//! Bounded commands end to end through `cairn exec`: a fork of 500 children and a 2 GiB
//! allocation hit the per-command limits and the result says so, in the read-only profile's
//! defaults and in configured workspace-write ones; real builds still run; no cgroup is left
//! behind (issue 16, item 4). The allocations are bounded (2 GiB) and the children sleep, so a
//! limit that failed to bind cannot hurt the machine.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::Command;

use crate::sandbox::{git, git_available, landlock, run, script};
use crate::support::cairn_cmd::Sandbox;
use cairn::process::limits;
use cairn::testing::MockLlm;

/// Forks up to 500 sleeping children, then ends them; prints how many it got.
const FORK_500: &str = "python3 -c 'import os, signal, sys, time
children = []
failed = None
try:
    for _ in range(500):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
except OSError as err:
    failed = err
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
sys.stderr.write(\"forked %d %s\\n\" % (len(children), failed or \"\"))
sys.exit(1 if failed else 0)'";

/// Touches 2 GiB (zeroed memory would not count until written).
const ALLOCATE_2G: &str = "python3 -c 'b = b\"x\" * (2 << 30); print(\"allocated\", len(b))'";

fn ready(test: &str) -> bool {
    if !landlock(test) {
        return false;
    }
    if let Some(note) = limits::binding() {
        eprintln!("SKIPPED {test}: the limits do not bind here: {note}");
        return false;
    }
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED {test}: python3 is not installed");
        return false;
    }
    true
}

/// The pids cgroup directories of the cairn process `pid` that still exist.
fn cgroups_left_by(pid: &str) -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut left = Vec::new();
    let prefix = format!("cairn-{pid}-");
    for mount in mounts
        .lines()
        .filter(|l| l.contains("cgroup"))
        .filter_map(|l| l.split_whitespace().nth(1))
    {
        let walk = walk_dirs(PathBuf::from(mount), 3);
        left.extend(walk.into_iter().filter(|dir| {
            dir.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        }));
    }
    left
}

fn walk_dirs(dir: PathBuf, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(entry.path());
            if depth > 0 {
                out.extend(walk_dirs(entry.path(), depth - 1));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_limits_stop_a_fork_flood_and_a_large_allocation_and_say_so() {
    let test = "configured_limits_stop_a_fork_flood_and_a_large_allocation_and_say_so";
    if !ready(test) {
        return;
    }
    let sb = Sandbox::new()
        .file("src/.keep", "")
        .config("[sandbox]\nmax_processes = 200\nmax_memory_mb = 512\n");
    let llm = MockLlm::start(script(&[FORK_500, ALLOCATE_2G, "echo $PPID"])).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let forks = llm.tool_result(1, "c0").unwrap();
    assert!(
        forks.contains("[limit: the command hit its limit of 200 processes"),
        "{forks}"
    );
    assert!(!forks.contains("forked 500"), "{forks}");
    let allocation = llm.tool_result(2, "c1").unwrap();
    assert!(
        allocation.contains("[limit: the command hit its limit of 512 MiB of memory"),
        "{allocation}"
    );
    assert!(!allocation.contains("\nallocated "), "{allocation}");
    // cairn (the commands' parent) has exited: none of its groups is left.
    let echo = llm.tool_result(3, "c2").unwrap();
    let cairn = echo.lines().nth(1).unwrap().trim().to_owned();
    assert!(
        cgroups_left_by(&cairn).is_empty(),
        "{:?}",
        cgroups_left_by(&cairn)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_command_is_bounded_by_the_read_only_defaults() {
    let test = "a_read_only_command_is_bounded_by_the_read_only_defaults";
    if !ready(test) || !git_available() {
        return;
    }
    // `git status` runs unasked; the repository's fsmonitor makes it run the payload.
    let sb = Sandbox::new().file("src/lib.rs", "// code\n");
    let ws = sb.workspace();
    git(&ws, &["init", "-q"]);
    let hook = ws.join("../fsmonitor.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\n{FORK_500} >&2\n{ALLOCATE_2G} >&2\nexit 1\n"),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&hook).status().unwrap();
    git(&ws, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    let llm = MockLlm::start(script(&["git status"])).await;
    let run = run(&sb, &llm, "auto-edit", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(
        result.contains("256 processes") && result.contains("1024 MiB of memory"),
        "{result}"
    );
    assert!(
        !result.contains("forked 500") && !result.contains("\nallocated "),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builds_still_run_in_workspace_write_under_the_default_limits() {
    let test = "builds_still_run_in_workspace_write_under_the_default_limits";
    if !landlock(test) {
        return;
    }
    let sb = Sandbox::new()
        .file(
            "hello/Cargo.toml",
            "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .file("hello/src/main.rs", "fn main() { println!(\"built-and-ran\"); }\n")
        .file(
            "mk/Makefile",
            "all: a b c d\n\t@echo made-all\na b c d:\n\t@echo $@ > $@.out\n",
        )
        .file(
            "js/package.json",
            "{\"name\":\"t\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node -e \\\"console.log('npm-tested')\\\"\"}}\n",
        );
    let has = |tool: &str| {
        let found = Command::new(tool).arg("--version").output().is_ok();
        if !found {
            eprintln!("SKIPPED part of {test}: {tool} is not installed");
        }
        found
    };
    // cargo keeps its target dir in the workspace; offline, the crate has no dependencies.
    let mut commands = Vec::new();
    let mut expected = Vec::new();
    if has("cargo") {
        commands.push("cd hello && CARGO_TARGET_DIR=target cargo run --offline -q");
        expected.push("built-and-ran");
    }
    if has("make") {
        commands.push("make -C mk -j 4");
        expected.push("made-all");
    }
    if has("npm") {
        commands.push("cd js && npm test --silent --offline");
        expected.push("npm-tested");
    }
    if commands.is_empty() {
        return;
    }
    let llm = MockLlm::start(script(&commands)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    for (i, want) in expected.iter().enumerate() {
        let result = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        assert!(result.contains(want), "{}: {result}", commands[i]);
        assert!(!result.contains("[limit:"), "{result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_that_hits_its_limit_says_so_in_its_report() {
    let test = "a_background_job_that_hits_its_limit_says_so_in_its_report";
    if !ready(test) {
        return;
    }
    let sb = Sandbox::new()
        .file("src/.keep", "")
        .config("[sandbox]\nmax_processes = 200\n");
    let llm = MockLlm::start(vec![
        cairn::testing::Script::tool_call(
            "c1",
            "bash",
            serde_json::json!({ "command": FORK_500, "background": true }),
        ),
        cairn::testing::Script::tool_call(
            "c2",
            "job_output",
            serde_json::json!({ "job_id": "job-1", "wait_ms": 20000 }),
        ),
        cairn::testing::Script::tool_call(
            "c3",
            "job_output",
            serde_json::json!({ "job_id": "job-1", "wait_ms": 20000 }),
        ),
        cairn::testing::Script::tool_call(
            "c4",
            "job_output",
            serde_json::json!({ "job_id": "job-1", "wait_ms": 20000 }),
        ),
        cairn::testing::Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // A read returns early with new output while the job runs (its last line may arrive
    // apart from the rest); by the third the job has ended and its report is whole.
    let report = format!(
        "{}\n{}\n{}",
        llm.tool_result(2, "c2").unwrap(),
        llm.tool_result(3, "c3").unwrap_or_default(),
        llm.tool_result(4, "c4").unwrap_or_default()
    );
    assert!(
        report.contains("[limit: the command hit its limit of 200 processes"),
        "{report}"
    );
    assert!(!report.contains("forked 500"), "{report}");
}
