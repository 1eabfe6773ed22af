//! The sandbox end to end: the real `cairn exec` against the scripted mock, in the default
//! configuration (sandbox on, network off), doing what an attacker would try. Skipped, with the
//! reason printed, only where the kernel has no Landlock.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::cairn_cmd::{Run, Sandbox, alive, eventually, read_pid};
use cairn::process::sandbox::{LandlockStatus, landlock_status};
use cairn::testing::{MockLlm, Script};

const KEY: &str = "sk-test-cairn-0123456789abcdef";

pub(crate) fn landlock(test: &str) -> bool {
    match landlock_status() {
        LandlockStatus::Available(_) => true,
        LandlockStatus::Unavailable(reason) => {
            eprintln!("SKIPPED {test}: {reason}");
            false
        }
    }
}

/// One `bash` call per command, then a closing text.
pub(crate) fn script(commands: &[&str]) -> Vec<Script> {
    let mut scripts: Vec<Script> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| {
            Script::tool_call(&format!("c{i}"), "bash", json!({ "command": command }))
        })
        .collect();
    scripts.push(Script::text("done"));
    scripts
}

pub(crate) async fn run(sb: &Sandbox, llm: &MockLlm, mode: &str, env: &[(&str, &str)]) -> Run {
    let url = llm.url();
    sb.exec_raw(&["exec", "--base-url", &url, "--mode", mode, "go"], env)
        .await
}

pub(crate) fn git(workspace: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

pub(crate) fn git_available() -> bool {
    let found = Command::new("git").arg("--version").output().is_ok();
    if !found {
        eprintln!("SKIPPED: git is not installed");
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misjudged_read_only_command_runs_unasked_but_writes_nothing() {
    if !landlock("a_misjudged_read_only_command_runs_unasked_but_writes_nothing")
        || !git_available()
    {
        return;
    }
    // `git status` is read-only, unless the repository's config says otherwise: a planted
    // fsmonitor hook runs with it. In the read-only sandbox it can write nowhere.
    let sb = Sandbox::new().file("src/lib.rs", "// code\n");
    let ws = sb.workspace();
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp("sandbox.rs") else {
        return;
    };
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    let hook = format!(
        "#!/bin/sh\necho pwned > '{out}/outside'\necho pwned > '{ws}/src/inside'\necho pwned > /tmp/cairn-test-pwned-$$ && echo tmp-written > '{ws}/src/tmp'\necho ran > \"$TMPDIR/ran\" && echo private-temp-ok\nexit 1\n",
        out = outside.path().display(),
        ws = ws.display()
    );
    let hook_path = outside.path().join("hook.sh");
    std::fs::write(&hook_path, hook).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&hook_path)
        .status()
        .unwrap();
    git(
        &ws,
        &["config", "core.fsmonitor", hook_path.to_str().unwrap()],
    );

    let llm = MockLlm::start(script(&["git status"])).await;
    let run = run(&sb, &llm, "auto-edit", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(
        !result.starts_with("Error"),
        "git status ran unasked: {result}"
    );
    assert!(!outside.path().join("outside").exists(), "{result}");
    assert!(!sb.path("src/inside").exists(), "{result}");
    assert!(!sb.path("src/tmp").exists(), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn even_in_never_mode_commands_write_only_in_the_workspace_and_reach_no_network() {
    if !landlock("even_in_never_mode_commands_write_only_in_the_workspace_and_reach_no_network") {
        return;
    }
    let sb = Sandbox::new().file("src/.keep", "");
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp("sandbox.rs") else {
        return;
    };
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let write = format!(
        "echo in > src/in.txt; echo out > '{}/out.txt'",
        outside.path().display()
    );
    let tcp_cmd = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{} && echo tcp-connected",
        tcp.local_addr().unwrap().port()
    );
    let udp_cmd = format!(
        "echo hello > /dev/udp/127.0.0.1/{} && echo udp-sent",
        udp.local_addr().unwrap().port()
    );
    let llm = MockLlm::start(script(&[&write, &tcp_cmd, &udp_cmd])).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    assert_eq!(sb.read("src/in.txt"), "in\n");
    assert!(!outside.path().join("out.txt").exists());
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(
        result.contains("Permission denied") && result.contains("[sandbox:"),
        "the model is told the sandbox refused: {result}"
    );
    let result = llm.tool_result(2, "c1").unwrap();
    assert!(!result.lines().any(|l| l == "tcp-connected"), "{result}");
    assert!(
        matches!(tcp.accept(), Err(err) if err.kind() == ErrorKind::WouldBlock),
        "a TCP connection got through"
    );
    let result = llm.tool_result(3, "c2").unwrap();
    assert!(!result.lines().any(|l| l == "udp-sent"), "{result}");
    let mut buf = [0u8; 16];
    assert!(
        matches!(udp.recv(&mut buf), Err(err) if err.kind() == ErrorKind::WouldBlock),
        "a UDP datagram got through"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_command_can_read_the_key() {
    if !landlock("no_command_can_read_the_key") {
        return;
    }
    let sb = Sandbox::new().file("src/.keep", "");
    let attempts = [
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        // Every ancestor up to init.
        "p=$$; while [ \"$p\" -gt 1 ]; do tr '\\0' '\\n' < /proc/$p/environ; p=$(awk '{print $4}' /proc/$p/stat); done",
        "head -c 100000 /proc/$PPID/mem | tr -cd '[:print:]'; cat /proc/$PPID/maps",
        "env; cat /proc/self/environ",
        "cat \"$HOME\"/config/config.toml; grep -r sk-test \"$HOME\" 2>/dev/null",
    ];
    let llm = MockLlm::start(script(&attempts)).await;
    let run = run(&sb, &llm, "never", &[("CAIRN_API_KEY", KEY)]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The key did reach the provider: it was there to steal.
    assert_eq!(
        llm.header(0, "authorization").as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    for i in 0..attempts.len() {
        let result = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        assert!(!result.contains(KEY), "attempt {i} read the key: {result}");
        // Redaction of the key would mean the command got to it. (Other secrets of the
        // environment the tests run in may be redacted: they are not this test's key.)
        assert!(
            !result.contains("[redacted CAIRN_API_KEY"),
            "attempt {i} got to the key: {result}"
        );
    }
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!log.contains(KEY), "the key is in the session log");
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));

    // Without the sandbox, cairn's own environment holds no key either.
    let sb = Sandbox::new().file("config/config.toml", "[sandbox]\nenabled = false\n");
    let llm = MockLlm::start(script(&["tr '\\0' '\\n' < /proc/$PPID/environ; env"])).await;
    let run = sb
        .exec_raw(
            &["exec", "--base-url", &llm.url(), "--mode", "never", "go"],
            &[
                ("CAIRN_API_KEY", KEY),
                ("CAIRN_CONFIG_DIR", sb.path("config").to_str().unwrap()),
            ],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(result.contains("PATH="), "the command ran: {result}");
    assert!(
        !result.contains(KEY) && !result.contains("[redacted CAIRN_API_KEY"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_a_command_prints_are_redacted_before_the_model_and_the_log() {
    let token = "tok-0123456789-deploy";
    let sb = Sandbox::new().file("src/key.txt", &format!("key = {KEY}\ndeploy = {token}\n"));
    let llm = MockLlm::start(script(&[
        "cat src/key.txt; echo \"${MY_DEPLOY_TOKEN:-scrubbed}\"",
    ]))
    .await;
    let run = run(
        &sb,
        &llm,
        "never",
        &[("CAIRN_API_KEY", KEY), ("MY_DEPLOY_TOKEN", token)],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(
        result.contains("key = [redacted CAIRN_API_KEY]")
            && result.contains("[redacted MY_DEPLOY_TOKEN]")
            && result.contains("scrubbed"),
        "{result}"
    );
    assert!(!result.contains(KEY) && !result.contains(token), "{result}");
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    assert!(!log.contains(KEY) && !log.contains(token));
    assert!(log.contains("[redacted MY_DEPLOY_TOKEN]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_kill_cairn() {
    if !landlock("a_command_cannot_kill_cairn") {
        return;
    }
    let sb = Sandbox::new();
    let llm = MockLlm::start(script(&[
        "kill -9 $PPID; kill -TERM $PPID; kill -STOP $PPID; echo tried",
    ]))
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "done");
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(
        result.contains("tried") && result.contains("Operation not permitted"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_session_started_survives_exec() {
    let sb = Sandbox::new().file("src/.keep", "");
    let wait_for = |files: &[&str]| {
        let all: Vec<String> = files.iter().map(|f| format!("[ -s src/{f} ]")).collect();
        format!(
            "for i in $(seq 200); do {} && break; sleep 0.05; done",
            all.join(" && ")
        )
    };
    let detach = format!(
        "setsid -f sh -c 'echo $$ > src/p1; exec sleep 1000'; \
         ( sh -c 'echo $$ > src/p2; exec sleep 1000' & ) ; \
         nohup sh -c 'echo $$ > src/p3; exec sleep 1000' > /dev/null 2>&1 & disown; {}",
        wait_for(&["p1", "p2", "p3"])
    );
    let check = format!(
        "{}; for p in p1 p2 p3 j0 j1; do test -e /proc/$(cat src/$p) && echo $p-alive; done; true",
        wait_for(&["j0", "j1"])
    );
    let llm = MockLlm::start(vec![
        Script::tool_call("c0", "bash", json!({ "command": detach })),
        Script::tool_call(
            "c1",
            "bash",
            json!({
                "command": "setsid -f sh -c 'echo $$ > src/j1; exec sleep 1000'; echo $$ > src/j0; exec sleep 1000",
                "background": true
            }),
        ),
        Script::tool_call("c2", "bash", json!({ "command": check })),
        Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let check = llm.tool_result(3, "c2").unwrap();
    // What a foreground command detached died with it; the background job and what it
    // detached live on until the session ends.
    for gone in ["p1-alive", "p2-alive", "p3-alive"] {
        assert!(!check.contains(gone), "{check}");
    }
    assert!(
        check.contains("j0-alive") && check.contains("j1-alive"),
        "{check}"
    );
    // And after exec: nothing at all.
    let pids: Vec<i32> = ["p1", "p2", "p3", "j0", "j1"]
        .iter()
        .map(|f| read_pid(&sb.path(&format!("src/{f}"))).unwrap())
        .collect();
    eventually("every process the session started is gone", || {
        pids.iter().all(|pid| !alive(*pid))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_landlock_commands_that_change_things_ask_and_read_only_ones_run() {
    let sb = Sandbox::new().file("src/.keep", "");
    let llm = MockLlm::start(script(&["ls -a src", "touch src/made"])).await;
    let run = run(&sb, &llm, "auto", &[("CAIRN_TEST_NO_LANDLOCK", "1")]).await;
    assert_ne!(run.code, 0, "a held call ends a headless run");
    assert!(run.stderr.contains("no sandbox"), "{}", run.stderr);
    let ls = llm.tool_result(1, "c0").unwrap();
    assert!(ls.contains(".keep"), "{ls}");
    // The run stopped at the held call: its result is in the log.
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    let touch = log
        .lines()
        .find(|l| l.contains("\"tool_result\"") && l.contains("\"c1\""))
        .unwrap();
    assert!(
        touch.contains("needs the user's approval") && touch.contains("no sandbox"),
        "{touch}"
    );
    assert!(!sb.path("src/made").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_sandbox_off_commands_run_with_full_permissions() {
    let sb = Sandbox::new().file("config/config.toml", "[sandbox]\nenabled = false\n");
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp("sandbox.rs") else {
        return;
    };
    let command = format!(
        "touch '{}/made' && touch top-level",
        outside.path().display()
    );
    let llm = MockLlm::start(script(&[&command])).await;
    let run = sb
        .exec_raw(
            &["exec", "--base-url", &llm.url(), "--mode", "never", "go"],
            &[("CAIRN_CONFIG_DIR", sb.path("config").to_str().unwrap())],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(outside.path().join("made").exists());
    assert!(sb.path("top-level").exists());
}

#[test]
fn the_sandbox_subcommand_runs_a_command_read_only() {
    if !landlock("the_sandbox_subcommand_runs_a_command_read_only") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    let out = Command::new(crate::support::cairn_cmd::CAIRN)
        .args(["__sandbox", "--read-only", "--workspace"])
        .arg(ws.path())
        .args([
            "--",
            "bash",
            "-c",
            "echo t > \"$TMPDIR/t\" && echo \"$TMPDIR\"; echo x > src/x",
        ])
        .current_dir(ws.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let temp = stdout.trim();
    assert!(
        temp.contains("cairn-cmd-"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !Path::new(temp).exists(),
        "the private temp dir is removed after the command"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the refused write is the status"
    );
    assert!(!ws.path().join("src/x").exists());
    let out = Command::new(crate::support::cairn_cmd::CAIRN)
        .args(["__sandbox", "--bogus", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_asks_again_and_u_runs_it_without_the_sandbox() {
    use cairn::bus::{AgentEvent, Decision, ToolEvent};

    use crate::support::agent::TestAgent;

    if !landlock("a_refused_command_asks_again_and_u_runs_it_without_the_sandbox") {
        return;
    }
    let Some(ws) = crate::support::cairn_cmd::try_dir_outside_temp("sandbox.rs") else {
        return;
    };
    let sessions = tempfile::tempdir().unwrap();
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp("sandbox.rs") else {
        return;
    };
    let target = outside.path().join("made");
    let touch = format!("touch '{}'", target.display());
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": touch })),
        Script::tool_call("c2", "bash", json!({ "command": touch })),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::sandboxed(ws.path(), sessions.path(), &llm.url()).await;
    agent.submit("make it").await;
    let asked = |e: &AgentEvent| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. }));
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { sandboxed, .. }) =
        agent.wait_for(asked).await
    else {
        unreachable!()
    };
    assert!(sandboxed, "the prompt says the command would run sandboxed");
    // `y`: the workspace-write sandbox refuses the write outside, and says so.
    agent.decide("c1", Decision::Approve).await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { why, .. }) = agent.wait_for(asked).await
    else {
        unreachable!()
    };
    assert!(!target.exists());
    let first = llm.tool_result(1, "c1").unwrap();
    assert!(first.contains("[sandbox:"), "{first}");
    assert!(why.contains("sandbox refused"), "{why}");
    // `u`: the same command, once, without the sandbox.
    agent.decide("c2", Decision::ApproveUnsandboxed).await;
    agent
        .wait_for(
            |e| matches!(e, AgentEvent::Tool(ToolEvent::Finished { call, .. }) if call.0 == "c2"),
        )
        .await;
    assert!(target.exists());
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_env_lets_a_chosen_secret_through_to_commands_but_not_to_the_model() {
    let token = "tok-0123456789-passed";
    let sb = Sandbox::new().file(
        "config/config.toml",
        "[bash]\npass_env = [\"MY_DEPLOY_TOKEN\"]\n",
    );
    let llm = MockLlm::start(script(&[
        "test \"$MY_DEPLOY_TOKEN\" = tok-0123456789-passed && echo seen; echo \"$MY_DEPLOY_TOKEN\"; echo \"${OTHER_TOKEN:-hidden}\"",
    ]))
    .await;
    let run = sb
        .exec_raw(
            &["exec", "--base-url", &llm.url(), "--mode", "never", "go"],
            &[
                ("CAIRN_CONFIG_DIR", sb.path("config").to_str().unwrap()),
                ("MY_DEPLOY_TOKEN", token),
                ("OTHER_TOKEN", "tok-9876543210-other"),
            ],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = llm.tool_result(1, "c0").unwrap();
    assert!(
        result.contains("seen\n[redacted MY_DEPLOY_TOKEN]\nhidden"),
        "{result}"
    );
}
