//! The doors out of the sandbox through the user's own servers, end to end through `cairn
//! exec` with a scripted model: the variables that name those servers never reach a command,
//! and the Unix sockets they listen on stay closed (issue 16, item 2).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::sandbox::{run, script};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::MockLlm;

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
