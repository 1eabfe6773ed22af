//! `cairn tool run` runs a tool as the agent does: a command in the sandbox of a session,
//! with the current directory as the workspace.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;

use crate::sandbox::landlock;
use crate::support::cairn_cmd::{CAIRN, read_pid, try_dir_outside_temp};

/// `cairn tool run bash COMMAND` in `workspace`, with private config and data directories.
fn tool_run_bash(workspace: &std::path::Path, command: &str) -> (bool, String, String) {
    let args = serde_json::json!({ "command": command }).to_string();
    tool_run(workspace, "bash", &args)
}

/// `cairn tool run TOOL ARGS` in `workspace`, with private config and data directories.
fn tool_run(workspace: &std::path::Path, tool: &str, args: &str) -> (bool, String, String) {
    // Outside the workspace, like a real HOME.
    let home = workspace.with_file_name("home");
    let output = Command::new(CAIRN)
        .current_dir(workspace)
        .env("HOME", &home)
        .env("CAIRN_CONFIG_DIR", home.join("config"))
        .env("CAIRN_DATA_DIR", home.join("data"))
        .env_remove("CAIRN_PROVIDER")
        .env_remove("CAIRN_BASE_URL")
        .args(["tool", "run", tool, args])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_command_run_by_hand_writes_only_inside_the_workspace() {
    if !landlock("a_command_run_by_hand_writes_only_inside_the_workspace") {
        return;
    }
    // The workspace's parent lies outside the temp directories, which the sandbox lets
    // commands write.
    let Some(outside) = try_dir_outside_temp("tool_run.rs") else {
        return;
    };
    let workspace = outside.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();

    let (_, stdout, stderr) = tool_run_bash(&workspace, "touch ../x");
    assert!(
        !outside.path().join("x").exists(),
        "`touch ../x` wrote outside the workspace: {stdout} / {stderr}"
    );
    assert!(
        stdout.contains("[sandbox: a write or a connection was refused"),
        "the output does not say the sandbox refused it: {stdout} / {stderr}"
    );

    // The same through another spelling: an absolute path outside, and a symlink out.
    let absolute = outside.path().join("y");
    let (_, stdout, _) = tool_run_bash(&workspace, &format!("echo hi > '{}'", absolute.display()));
    assert!(!absolute.exists(), "{stdout}");
    std::os::unix::fs::symlink(outside.path(), workspace.join("link")).unwrap();
    let (_, stdout, _) = tool_run_bash(&workspace, "echo hi > link/z");
    assert!(!outside.path().join("z").exists(), "{stdout}");

    let (ok, stdout, stderr) = tool_run_bash(&workspace, "touch inside && echo done");
    assert!(ok, "{stdout} / {stderr}");
    assert!(workspace.join("inside").exists(), "{stdout} / {stderr}");
    assert!(stdout.contains("done"), "{stdout}");
}

#[test]
fn a_command_run_by_hand_without_the_sandbox_says_so() {
    let root = tempfile::tempdir().unwrap();
    let workspace = root.path().join("ws");
    let config = root.path().join("home/config");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[sandbox]\nenabled = false\n").unwrap();
    let (ok, stdout, stderr) = tool_run_bash(&workspace, "echo ran");
    assert!(ok && stdout.contains("ran"), "{stdout} / {stderr}");
    assert!(
        stderr.contains("no sandbox (sandbox.enabled = false in the config)"),
        "{stderr}"
    );
}

/// The file tools keep to the same wall as the sandboxed command: no write outside the
/// workspace (by `..`, an absolute path or a symlink out, with either write tool) and no read
/// of a secret store, each refused with a reason; a write inside works.
#[test]
fn a_file_tool_run_by_hand_keeps_to_the_workspace_and_out_of_secret_stores() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let outside = dir.path().join("notes.txt");
    std::fs::write(&outside, "keep\n").unwrap();
    std::os::unix::fs::symlink(dir.path(), workspace.join("up")).unwrap();
    let write = |path: &str| serde_json::json!({ "path": path, "content": "hi\n" }).to_string();
    let attempts = [
        ("write_file", write("../x")),
        (
            "write_file",
            write(&dir.path().join("y").display().to_string()),
        ),
        ("write_file", write("up/z")),
        (
            "edit_file",
            serde_json::json!({
                "path": outside.display().to_string(),
                "old_string": "keep",
                "new_string": "lost",
            })
            .to_string(),
        ),
    ];
    for (tool, args) in &attempts {
        let (ok, stdout, stderr) = tool_run(&workspace, tool, args);
        assert!(!ok, "{tool} {args}: {stdout} / {stderr}");
        assert!(
            stdout.contains("outside the workspace"),
            "{tool} {args}: {stdout}"
        );
    }
    for name in ["x", "y", "z"] {
        assert!(!dir.path().join(name).exists(), "{name} was written");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");

    let keys = dir.path().join("home/.ssh");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("id_ed25519"), "PRIVATE KEY\n").unwrap();
    let read = serde_json::json!({ "path": keys.join("id_ed25519").display().to_string() });
    let (ok, stdout, _) = tool_run(&workspace, "read_file", &read.to_string());
    assert!(!ok && !stdout.contains("PRIVATE KEY"), "{stdout}");
    assert!(stdout.contains("secret store"), "{stdout}");

    let (ok, stdout, stderr) = tool_run(&workspace, "write_file", &write("in/ok.txt"));
    assert!(ok, "{stdout} / {stderr}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("in/ok.txt")).unwrap(),
        "hi\n"
    );
}

/// cairn is the subreaper of its commands, so the end of a command looks for what it left
/// among cairn's descendants: a job in a group of its own (`set -m`) is found and ended there.
#[test]
fn a_leftover_in_a_group_of_its_own_is_ended_by_the_subreaper() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let started = std::time::Instant::now();
    let (ok, stdout, stderr) =
        tool_run_bash(&workspace, "set -m; sleep 1000 & echo $! > pid; echo done");
    assert!(ok, "{stdout} / {stderr}");
    assert!(stdout.contains("done"), "{stdout} / {stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let pid = read_pid(&workspace.join("pid")).unwrap();
    assert!(
        !crate::tools_bash::alive(pid),
        "the background sleep ({pid}) outlived its command"
    );
}

#[test]
fn leftovers_that_leave_the_group_or_the_session_are_ended_by_the_subreaper_too() {
    // Other ways out of the command's group: a session of its own, a double fork whose parent
    // exits at once, nohup under setsid. Each orphan comes to cairn, so each is found.
    for (name, command) in [
        ("setsid", "setsid sleep 1000 & echo $! > pid; echo done"),
        (
            "double fork",
            "(setsid sleep 1000 & echo $! > pid) & wait; echo done",
        ),
        (
            "nohup in a new session",
            "(setsid nohup sleep 1000 >/dev/null 2>&1 & echo $! > pid) & wait; echo done",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let (ok, stdout, stderr) = tool_run_bash(&workspace, command);
        assert!(ok && stdout.contains("done"), "{name}: {stdout} / {stderr}");
        let pid = read_pid(&workspace.join("pid")).unwrap();
        assert!(
            !crate::tools_bash::alive(pid),
            "{name}: the background sleep ({pid}) outlived its command"
        );
    }
}

/// The tools' names in `cairn tool list`'s answer.
fn listed(sb: &crate::support::cairn_cmd::Sandbox, args: &[&str]) -> Vec<String> {
    let out = sb.exec_raw_sync(&[&["tool", "list"], args].concat());
    assert_eq!(out.0, 0, "stderr: {}", out.2);
    let tools: serde_json::Value = serde_json::from_str(&out.1).unwrap();
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tool_list_shows_what_a_session_sends_and_takes_a_config_file() {
    let sb = crate::support::cairn_cmd::Sandbox::new().file(
        "extra.toml",
        "vision = true\n[web.search]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:9\"\n",
    );
    let plain = listed(&sb, &[]);
    for name in ["read_file", "bash", "web_fetch", "skill", "exit_plan_mode"] {
        assert!(plain.iter().any(|n| n == name), "{name} missing: {plain:?}");
    }
    assert!(!plain.iter().any(|n| n == "web_search"), "{plain:?}");
    let path = sb.path("extra.toml");
    let configured = listed(&sb, &["--config", path.to_str().unwrap()]);
    for name in ["web_search", "read_image"] {
        assert!(
            configured.iter().any(|n| n == name),
            "{name} missing: {configured:?}"
        );
    }
}
