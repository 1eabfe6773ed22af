//! The Landlock sandbox through the real binary: `cairn __sandbox ... -- bash -c CMD`, as the
//! bash tool spawns it. Skipped, with a visible message, where the kernel lacks Landlock.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use cairn::permissions::sandbox::{LandlockStatus, SandboxPolicy, landlock_status};

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

fn landlock_available(test: &str) -> bool {
    match landlock_status() {
        LandlockStatus::Available(_) => true,
        LandlockStatus::Unavailable(reason) => {
            eprintln!("SKIPPED {test}: {reason}");
            false
        }
    }
}

fn sandboxed(workspace: &Path, network: bool, command: &str) -> Output {
    let policy = SandboxPolicy {
        writable: vec![workspace.to_path_buf()],
        network,
    };
    Command::new(CAIRN)
        .args(policy.child_args(command, false))
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_sandboxed_command_writes_in_the_workspace_but_not_outside() {
    if !landlock_available("a_sandboxed_command_writes_in_the_workspace_but_not_outside") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let inside_file = ws.path().join("inside.txt");
    let outside_file = outside.path().join("outside.txt");
    let command = format!(
        "echo in > '{}' && echo out > '{}'",
        inside_file.display(),
        outside_file.display()
    );
    let out = sandboxed(ws.path(), true, &command);
    let stderr = text(&out.stderr);
    assert_ne!(
        out.status.code(),
        Some(0),
        "the outside write must fail: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&inside_file).unwrap(), "in\n");
    assert!(
        !outside_file.exists(),
        "nothing may be written outside the workspace"
    );
    assert!(stderr.contains("Permission denied"), "{stderr}");
    // What the bash tool adds for the model and the user.
    let policy = SandboxPolicy {
        writable: vec![ws.path().to_path_buf()],
        network: true,
    };
    let note = policy.blocked_note(&stderr).unwrap();
    assert!(
        note.contains("sandbox") && note.contains(&ws.path().display().to_string()),
        "{note}"
    );
    // Reading outside stays allowed; /dev/null, /dev/stdout and /dev/stderr stay writable.
    let out = sandboxed(
        ws.path(),
        true,
        "cat /etc/hostname > /dev/null; ls / > /dev/null && echo ok > /dev/stdout && echo err > /dev/stderr",
    );
    assert_eq!(text(&out.stdout), "ok\n", "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "err\n");
    // A file outside, opened for reading, cannot be written through /proc/self/fd.
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "kept\n").unwrap();
    let command = format!(
        "exec 3< '{}'; echo changed > /proc/self/fd/3",
        secret.display()
    );
    let out = sandboxed(ws.path(), true, &command);
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "kept\n");
}

/// Waits up to a deadline for a connection on a non-blocking listener.
fn accepted_within(listener: &TcpListener, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        match listener.accept() {
            Ok(_) => return true,
            Err(err) if err.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::yield_now();
            }
            Err(_) => return false,
        }
    }
}

#[test]
fn with_the_network_off_a_command_cannot_connect_to_a_local_listener() {
    if !landlock_available("with_the_network_off_a_command_cannot_connect_to_a_local_listener") {
        return;
    }
    if !matches!(landlock_status(), LandlockStatus::Available(abi) if abi >= 4) {
        eprintln!("SKIPPED network test: Landlock below ABI 4 cannot block TCP");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let out = sandboxed(ws.path(), false, &connect);
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(!text(&out.stdout).contains("connected"));
    assert!(
        stderr.contains("Permission denied"),
        "the failure says why: {stderr}"
    );
    // The child has exited, so a connection it made would already be queued.
    assert!(
        !accepted_within(&listener, Duration::ZERO),
        "no connection may reach the listener"
    );

    let out = sandboxed(ws.path(), true, &connect);
    assert_eq!(text(&out.stdout), "connected\n", "{}", text(&out.stderr));
    assert!(accepted_within(&listener, Duration::from_secs(5)));
}

#[test]
fn bad_sandbox_arguments_are_refused_before_running_anything() {
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran");
    let out = Command::new(CAIRN)
        .args(["__sandbox", "--bogus", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cairn sandbox: unknown argument `--bogus`"),
        "{}",
        text(&out.stderr)
    );
    assert!(!marker.exists());
}

#[test]
fn a_command_that_cannot_be_executed_is_reported() {
    if !landlock_available("a_command_that_cannot_be_executed_is_reported") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let out = Command::new(CAIRN)
        .args(["__sandbox", "--write"])
        .arg(ws.path())
        .args(["--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(
        text(&out.stderr).contains("cannot run /nonexistent/program"),
        "{}",
        text(&out.stderr)
    );
}
