//! The process service for callers that are not the bash tool (hooks, MCP stdio servers,
//! language servers): a program given as an argv runs with its input on stdin and its own
//! variables, in its own group; a timeout or a stop ends the group and what it started; a
//! served program talks over its pipes and leaves nothing behind when stopped or dropped.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use cairn::process::{self, Ending, Grant, Input, Program, Which};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::tools_bash::{alive, assert_all_dead};

/// Runs `program` to its end with `input`, no live tail and nothing to cancel it.
async fn run(
    program: &Program<'_>,
    input: Input,
    timeout: Duration,
) -> std::io::Result<process::Finished> {
    process::run_program(program, input, timeout, &CancellationToken::new(), None).await
}

fn text(finished: &process::Finished, which: Which) -> String {
    let total = finished.capture.total(which);
    finished.capture.view(which, 0, total, 64 * 1024).text
}

/// Reads pids written one per line to `file` by the program, waiting up to a deadline.
async fn wait_for_pids(file: &Path, count: usize) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(Instant::now() < deadline, "{file:?} holds {pids:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_all_dead(pids: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(*pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_all_dead(pids);
}

#[tokio::test]
async fn a_program_gets_its_input_and_variables_and_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let settings = process::Settings::default();
    // The argv runs as given: its words are not split again ($1 is two words).
    let program = Program::new(
        [
            "bash",
            "-c",
            "read -r d; echo \"${d^^}\"; echo \"$HOOK_EVENT|$PWD|$1\"; exit 3",
            "hook",
            "two words",
        ],
        dir.path(),
        &settings,
        Grant::Unsandboxed,
    )
    .env("HOOK_EVENT", "pre tool");
    let finished = run(
        &program,
        Input::Bytes(b"{\"tool\": \"bash\"}".to_vec()),
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    assert_eq!(finished.ending, Ending::Exited);
    assert_eq!(finished.status.code(), Some(3));
    let out = text(&finished, Which::Stdout);
    assert!(out.starts_with("{\"TOOL\": \"BASH\"}\n"), "{out}");
    let cwd = dir.path().canonicalize().unwrap();
    assert!(
        out.contains(&format!("pre tool|{}|two words", cwd.display())),
        "{out}"
    );
}

#[tokio::test]
async fn a_program_gets_the_scrubbed_environment_not_cairns_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let settings = process::Settings {
        hidden_env: vec!["PROCESS_PROGRAM_TEST_KEY".into()],
        ..process::Settings::default()
    };
    // SAFETY: only this test reads the variable.
    unsafe { std::env::set_var("PROCESS_PROGRAM_TEST_KEY", "sk-should-not-leak") };
    let program = Program::new(["env"], dir.path(), &settings, Grant::Unsandboxed);
    let finished = run(&program, Input::Null, Duration::from_secs(20))
        .await
        .unwrap();
    let out = text(&finished, Which::Stdout);
    assert!(out.contains("PATH="), "{out}");
    assert!(!out.contains("sk-should-not-leak"), "{out}");
}

#[tokio::test]
async fn a_timeout_ends_the_program_with_its_group_and_what_left_it() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let settings = process::Settings {
        kill_grace: Duration::from_millis(200),
        ..process::Settings::default()
    };
    // A child in the group, and a grandchild that left the session but holds the pipe.
    let script = format!(
        "sleep 300 & echo $! >> {p}; setsid sh -c 'echo $$ >> {p}; exec sleep 300' & \
         echo $$ >> {p}; sleep 300",
        p = pids.display()
    );
    let program = Program::new(
        ["bash", "-c", &script],
        dir.path(),
        &settings,
        Grant::Unsandboxed,
    );
    let started = Instant::now();
    let finished = run(&program, Input::Null, Duration::from_millis(500))
        .await
        .unwrap();
    assert_eq!(finished.ending, Ending::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));
    let all = wait_for_pids(&pids, 3).await;
    wait_all_dead(&all).await;
}

#[tokio::test]
async fn a_command_line_that_cannot_start_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let settings = process::Settings::default();
    let error_of = |argv: Vec<&'static str>| {
        let settings = &settings;
        let dir = dir.path().to_path_buf();
        async move {
            let program = Program::new(argv, &dir, settings, Grant::Unsandboxed);
            run(&program, Input::Null, Duration::from_secs(5))
                .await
                .err()
                .map(|err| err.to_string())
        }
    };
    let empty = error_of(vec![]).await.unwrap();
    assert!(empty.contains("empty command line"), "{empty}");
    let missing = error_of(vec!["no-such-interpreter-for-cairn"])
        .await
        .unwrap();
    assert!(missing.contains("No such file"), "{missing}");
}

#[tokio::test]
async fn a_served_program_talks_over_its_pipes_and_stop_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let settings = process::Settings {
        kill_grace: Duration::from_millis(200),
        ..process::Settings::default()
    };
    // An echo server that also starts a helper in its group and notes on stderr.
    let script = format!(
        "sleep 300 & echo $! >> {p}; echo $$ >> {p}; echo ready >&2; \
         while read -r line; do echo \"got $line\"; done",
        p = pids.display()
    );
    let program = Program::new(
        ["bash", "-c", &script],
        dir.path(),
        &settings,
        Grant::Unsandboxed,
    );
    let mut served = process::serve(&program).unwrap();
    let mut stdin = served.stdin.take().unwrap();
    let mut lines = BufReader::new(served.stdout.take().unwrap()).lines();
    stdin.write_all(b"{\"jsonrpc\":\"2.0\"}\n").await.unwrap();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(line.as_deref(), Some("got {\"jsonrpc\":\"2.0\"}"));
    assert!(served.try_exited().unwrap().is_none());
    let all = wait_for_pids(&pids, 2).await;
    assert!(all.contains(&(served.pid() as i32)));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !served.stderr_tail(1024).contains("ready") {
        assert!(Instant::now() < deadline, "stderr never arrived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    served.stop().await;
    wait_all_dead(&all).await;
}

#[tokio::test]
async fn a_served_program_dropped_unstopped_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let settings = process::Settings::default();
    let script = format!(
        "sleep 300 & echo $! >> {p}; echo $$ >> {p}; exec sleep 300",
        p = pids.display()
    );
    let program = Program::new(
        ["bash", "-c", &script],
        dir.path(),
        &settings,
        Grant::Unsandboxed,
    );
    let served = process::serve(&program).unwrap();
    let all = wait_for_pids(&pids, 2).await;
    drop(served);
    wait_all_dead(&all).await;
}

/// A descriptor cairn inherited without close-on-exec (a socket or pipe its parent left
/// open) reaches no program: writing to it fails, sandboxed or not, and nothing arrives.
#[tokio::test]
async fn a_descriptor_cairn_inherited_reaches_no_program() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let dir = tempfile::tempdir().unwrap();
    let settings = process::Settings::default();
    let mut ends = [0i32; 2];
    // SAFETY: pipe fills the two descriptors; plain `pipe` leaves them inheritable, as a
    // parent's would be.
    assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
    // A number no other test uses, far above what the test binary opens.
    let leaked = 917;
    // SAFETY: dup2 onto a descriptor number nothing else in this process uses.
    assert_eq!(unsafe { libc::dup2(ends[1], leaked) }, leaked);
    // SAFETY: these descriptors are ours alone from here on.
    let (read, write, leaked_end) = unsafe {
        (
            OwnedFd::from_raw_fd(ends[0]),
            OwnedFd::from_raw_fd(ends[1]),
            OwnedFd::from_raw_fd(leaked),
        )
    };
    let script = format!(
        "ls /proc/self/fd | tr '\\n' ' '; echo; if echo leaked >&{leaked}; then echo WROTE; else echo REFUSED; fi"
    );
    for grant in [Grant::Unsandboxed, Grant::WorkspaceWrite] {
        let program = Program::new(
            ["bash", "-c", script.as_str()],
            dir.path(),
            &settings,
            grant,
        );
        let finished = run(&program, Input::Null, Duration::from_secs(20))
            .await
            .unwrap();
        let out = text(&finished, Which::Stdout);
        assert!(
            out.contains("REFUSED") && !out.contains("WROTE"),
            "{grant:?}: {out}"
        );
        let listed: Vec<&str> = out
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        assert!(
            !listed.contains(&leaked.to_string().as_str()),
            "{grant:?}: the program holds {listed:?}"
        );
    }
    drop((write, leaked_end));
    let mut buf = [0u8; 64];
    // Every writer is closed: a read returns at once, with what any program wrote.
    // SAFETY: reading into a buffer of the size given.
    let got = unsafe {
        libc::read(
            std::os::fd::AsRawFd::as_raw_fd(&read),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    assert_eq!(got, 0, "a program wrote into the inherited pipe");
}
