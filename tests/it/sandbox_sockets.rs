//! The doors out of the sandbox through the user's own servers, end to end through `cairn
//! exec` with a scripted model: the variables that name those servers never reach a command,
//! and the Unix sockets they listen on stay closed (issue 16, item 2).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use cairn::process;
use std::io::{Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::sandbox::{git, git_available, landlock, run, script};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// What a user inside tmux, a desktop session and an editor's terminal has in the environment.
const SERVER_VARS: &[(&str, &str)] = &[
    ("TMUX", "/tmp/tmux-1000/default,4242,0"),
    ("TMUX_PANE", "%3"),
    ("STY", "4242.pts-0.host"),
    ("DOCKER_HOST", "unix:///var/run/docker.sock"),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
    ("XDG_RUNTIME_DIR", "/run/user/1000"),
    ("DISPLAY", ":0"),
    ("WAYLAND_DISPLAY", "wayland-0"),
    ("KITTY_LISTEN_ON", "unix:/tmp/kitty-4242"),
    ("NVIM", "/run/user/1000/nvim.4242.0"),
    ("VSCODE_IPC_HOOK_CLI", "/run/user/1000/vscode-ipc-1.sock"),
    ("EMACS_SOCKET_NAME", "/run/user/1000/emacs/server"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.4242"),
    ("GPG_AGENT_INFO", "/run/user/1000/gnupg/S.gpg-agent:0:1"),
    ("SWAYSOCK", "/run/user/1000/sway-ipc.sock"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variables_naming_the_users_servers_never_reach_a_command() {
    let sb = Sandbox::new().config("[bash]\npass_env = [\"DISPLAY\"]\n");
    // Read-only (runs unasked) and workspace-write, sandboxed or not: the same environment.
    let llm = MockLlm::start(script(&["env", "env > seen.txt; echo written"])).await;
    let run = run(&sb, &llm, "never", SERVER_VARS).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let read_only = llm.tool_result(1, "c0").unwrap();
    let written = sb.read("seen.txt");
    assert!(read_only.contains("PATH="), "the command ran: {read_only}");
    for seen in [&read_only, &written] {
        for (name, _) in SERVER_VARS.iter().filter(|(name, _)| *name != "DISPLAY") {
            assert!(
                !seen.lines().any(|l| l.starts_with(&format!("{name}="))),
                "{name} reached the command: {seen}"
            );
        }
        // `pass_env` lets a chosen one through.
        assert!(seen.lines().any(|l| l == "DISPLAY=:0"), "{seen}");
    }
}

/// A stand-in for tmux's server: answers every connection with a short HTTP reply (so `curl
/// --unix-socket` can talk to it) and counts them.
struct Server {
    connections: Arc<AtomicUsize>,
}

impl Server {
    fn start(listener: UnixListener) -> Self {
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counted.fetch_add(1, Ordering::SeqCst);
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                let _ = stream
                    .write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 14\r\n\r\nserver-reached");
            }
        });
        Self { connections }
    }

    fn at(path: &Path) -> Self {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        Self::start(UnixListener::bind(path).unwrap())
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn curl_available(test: &str) -> bool {
    let found = Command::new("curl").arg("--version").output().is_ok();
    if !found {
        eprintln!("SKIPPED {test}: curl is not installed");
    }
    found
}

/// A repository whose `core.fsmonitor` runs `payload` whenever `git status` runs: a command
/// the classifier judges read-only that runs code the model wrote.
fn planted_repository(sb: &Sandbox, payload: &str) {
    let ws = sb.workspace();
    git(&ws, &["init", "-q"]);
    let hook = ws.join("../fsmonitor.sh");
    std::fs::write(&hook, format!("#!/bin/sh\n{payload}\nexit 1\n")).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(&ws, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_command_reaches_no_server_of_the_users_unless_listed() {
    let test = "a_read_only_command_reaches_no_server_of_the_users_unless_listed";
    if !landlock(test) || !curl_available(test) || !git_available() {
        return;
    }
    // tmux's server, outside the workspace; the payload names it in the command text.
    let sb = Sandbox::new().file("src/lib.rs", "// code\n");
    let socket = sb.workspace().join("../tmux-1000/default");
    let tmux = Server::at(&socket);
    let payload = format!(
        "curl -sS --max-time 5 --unix-socket '{}' http://tmux/run-shell > \"$TMPDIR/got\" 2>&1; cat \"$TMPDIR/got\" >&2",
        socket.display()
    );
    planted_repository(&sb, &payload);
    let llm = MockLlm::start(script(&["git status"])).await;
    let first = run(&sb, &llm, "auto-edit", &[("TMUX", "x")]).await;
    assert_eq!(first.code, 0, "stderr: {}", first.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(!result.contains("server-reached"), "{result}");
    assert_eq!(
        tmux.connections(),
        0,
        "the read-only sandbox connected: {result}"
    );

    // Listed, the same command gets through (every sandboxed command may use it).
    let listed = format!(
        "[sandbox]\nallow_unix_sockets = [\"{}\"]\n",
        socket.display()
    );
    let sb = sb.config(&listed);
    let llm = MockLlm::start(script(&["git status"])).await;
    let listed_run = run(&sb, &llm, "auto-edit", &[]).await;
    assert_eq!(listed_run.code, 0, "stderr: {}", listed_run.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(tmux.connections() >= 1, "listed, it connects: {result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_command_connects_only_inside_the_workspace_and_says_what_was_refused() {
    let test = "an_approved_command_connects_only_inside_the_workspace_and_says_what_was_refused";
    if !landlock(test) || !curl_available(test) {
        return;
    }
    let sb = Sandbox::new().file("src/.keep", "");
    let outside = sb.workspace().join("../tmux-1000/default");
    let tmux = Server::at(&outside);
    let inside = Server::at(&sb.path("run/app.sock"));
    // A symlink in the workspace to the outside socket is the outside socket.
    std::os::unix::fs::symlink(&outside, sb.path("link.sock")).unwrap();
    let name = format!("cairn-test-{}", std::process::id());
    let abstract_server = Server::start(
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap(),
    );
    let curl = |how: &str| format!("curl -sS --max-time 5 {how} http://x/");
    let commands = [
        curl(&format!("--unix-socket '{}'", outside.display())),
        curl("--unix-socket link.sock"),
        curl(&format!("--abstract-unix-socket {name}")),
        curl("--unix-socket run/app.sock"),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let llm = MockLlm::start(script(&commands)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let outside_real = std::fs::canonicalize(&outside).unwrap();
    for (i, refused) in [
        outside_real.display().to_string(),
        outside_real.display().to_string(),
        format!("@{name}"),
    ]
    .iter()
    .enumerate()
    {
        let result = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        assert!(!result.contains("server-reached"), "{result}");
        assert!(
            result.contains("[sandbox: refused Unix socket:") && result.contains(refused.as_str()),
            "the result names what was refused: {result}"
        );
    }
    assert_eq!(tmux.connections(), 0);
    assert_eq!(abstract_server.connections(), 0);
    let result = llm.tool_result(4, "c3").unwrap();
    assert!(result.contains("server-reached"), "{result}");
    assert_eq!(inside.connections(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_refused_a_socket_asks_again_and_u_runs_it_outside_the_sandbox() {
    use cairn::agent::StartFrom;
    use cairn::bus::Mode;
    use cairn::bus::{AgentEvent, Decision, ToolEvent};
    use cairn::process::sandbox::SandboxPolicy;
    use serde_json::json;

    use crate::support::agent::TestAgent;

    let test = "a_command_refused_a_socket_asks_again_and_u_runs_it_outside_the_sandbox";
    if !landlock(test) || !curl_available(test) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let servers = tempfile::tempdir().unwrap();
    let socket = servers.path().join("docker.sock");
    let docker = Server::at(&socket);
    let curl = format!(
        "curl -sS --max-time 5 --unix-socket '{}' http://docker/containers",
        socket.display()
    );
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": curl })),
        Script::tool_call("c2", "bash", json!({ "command": curl })),
        Script::text("done"),
    ])
    .await;
    let listed = servers.path().join("listed.sock");
    let bash = process::Settings {
        sandbox: Some(SandboxPolicy {
            workspace: std::fs::canonicalize(ws.path()).unwrap(),
            writable: Vec::new(),
            network: false,
            unix_sockets: vec![listed.clone()],
            deny_read: cairn::secret_stores::SecretStores::from_env(&[], &[]).unwrap(),
        }),
        ..process::Settings::default()
    };
    let mut agent = TestAgent::spawn_with(
        ws.path(),
        sessions.path(),
        &llm.url(),
        Mode::AutoEdit,
        StartFrom::New,
        bash,
    )
    .await;
    agent.submit("list the containers").await;
    let asked = |e: &AgentEvent| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. }));
    let AgentEvent::Tool(ToolEvent::AwaitingApproval {
        why,
        reach,
        decisions,
        ..
    }) = agent.wait_for(asked).await
    else {
        unreachable!()
    };
    // The prompt says which sockets an approved command would get, in a field of its own
    // (the reason stays the reason).
    let reach = reach.expect("the event says what the sandbox reaches");
    assert!(
        reach.contains("allow_unix_sockets") && reach.contains(listed.to_str().unwrap()),
        "{reach}"
    );
    assert!(!why.contains("allow_unix_sockets"), "{why}");
    assert!(decisions.contains(&cairn::bus::DecisionKind::ApproveUnsandboxed));
    agent.decide("c1", Decision::Approve).await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { why, .. }) = agent.wait_for(asked).await
    else {
        unreachable!()
    };
    let first = llm.tool_result(1, "c1").unwrap();
    assert!(first.contains("[sandbox: refused Unix socket:"), "{first}");
    assert_eq!(docker.connections(), 0);
    assert!(why.contains("sandbox refused"), "{why}");
    agent.decide("c2", Decision::ApproveUnsandboxed).await;
    agent
        .wait_for(
            |e| matches!(e, AgentEvent::Tool(ToolEvent::Finished { call, .. }) if call.0 == "c2"),
        )
        .await;
    assert_eq!(docker.connections(), 1, "`u` ran it outside the sandbox");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_refused_a_socket_says_so_in_its_report() {
    let test = "a_background_job_refused_a_socket_says_so_in_its_report";
    if !landlock(test) || !curl_available(test) {
        return;
    }
    let sb = Sandbox::new().file("src/.keep", "");
    let outside = sb.workspace().join("../tmux-1000/default");
    let tmux = Server::at(&outside);
    let curl = format!(
        // Silent, so the report waits for its end.
        "curl -sS --max-time 5 --unix-socket '{}' http://tmux/ > /dev/null 2>&1",
        outside.display()
    );
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            serde_json::json!({ "command": curl, "background": true }),
        ),
        Script::tool_call(
            "c2",
            "job_output",
            serde_json::json!({ "job_id": "job-1", "wait_ms": 10000 }),
        ),
        Script::tool_call(
            "c3",
            "job_output",
            serde_json::json!({ "job_id": "job-1", "wait_ms": 10000 }),
        ),
        Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The first read may come while it runs; the second waits for its end.
    let report = format!(
        "{}\n{}",
        llm.tool_result(2, "c2").unwrap(),
        llm.tool_result(3, "c3").unwrap_or_default()
    );
    let outside_real = std::fs::canonicalize(&outside).unwrap();
    assert!(
        report.contains("[sandbox: refused Unix socket:")
            && report.contains(&outside_real.display().to_string()),
        "{report}"
    );
    assert_eq!(tmux.connections(), 0);
}

/// A Unix datagram socket reaches any path by `sendto`: none is made, however it is asked
/// for (`SOCK_DGRAM`, or `SOCK_RAW`, which the kernel makes a datagram socket too), so a
/// server's datagram socket outside the workspace receives nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_unix_datagram_socket_is_made_however_it_is_asked_for() {
    let test = "no_unix_datagram_socket_is_made_however_it_is_asked_for";
    if !landlock(test) {
        return;
    }
    if Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_err()
    {
        eprintln!("SKIPPED {test}: python3 is not installed");
        return;
    }
    let sb = Sandbox::new().file("src/.keep", "");
    let outside = sb.workspace().join("../journal-dgram.sock");
    let server = std::os::unix::net::UnixDatagram::bind(&outside).unwrap();
    server.set_nonblocking(true).unwrap();
    let send = |kind: &str| {
        format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX, socket.{kind}); s.sendto(b'x', '{}'); print('sent-{kind}')\"",
            outside.display()
        )
    };
    let commands = [send("SOCK_DGRAM"), send("SOCK_RAW")];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let llm = MockLlm::start(script(&commands)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    for (i, kind) in ["SOCK_DGRAM", "SOCK_RAW"].iter().enumerate() {
        let result = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        let sent = format!("sent-{kind}");
        assert!(!result.lines().any(|l| l == sent), "{result}");
        assert!(result.contains("[sandbox:"), "the model is told: {result}");
    }
    let mut buf = [0u8; 16];
    assert!(server.recv(&mut buf).is_err(), "a datagram got through");
}

/// Netlink by allowlist (issue 32, the filter's audit): a sandboxed command still reads the
/// routing tables (`getaddrinfo`, `ip`), but the protocol that carries messages between
/// unprivileged processes (NETLINK_USERSOCK) and generic netlink are never made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_netlink_protocols_allowed_are_made() {
    let test = "only_the_netlink_protocols_allowed_are_made";
    if !landlock(test) {
        return;
    }
    if Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_err()
    {
        eprintln!("SKIPPED {test}: python3 is not installed");
        return;
    }
    let sb = Sandbox::new().file("src/.keep", "");
    let make = |protocol: u32, name: &str| {
        format!(
            "python3 -c \"import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, {protocol}); print('made-{name}')\""
        )
    };
    let commands = [make(0, "route"), make(2, "usersock"), make(16, "generic")];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let llm = MockLlm::start(script(&commands)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = |i: usize| llm.tool_result(i + 1, &format!("c{i}")).unwrap();
    assert!(
        result(0).lines().any(|l| l == "made-route"),
        "{}",
        result(0)
    );
    for (i, name) in [(1, "usersock"), (2, "generic")] {
        let made = format!("made-{name}");
        assert!(!result(i).lines().any(|l| l == made), "{}", result(i));
        assert!(result(i).contains("PermissionError"), "{}", result(i));
    }
}
