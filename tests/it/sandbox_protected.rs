//! The workspace-write sandbox end to end with the real `cairn exec`: everyday commands that
//! change the workspace's top level and `.git` work, and whatever a command leaves in git
//! config, hooks or `.cairn/` is put back before anything can run it. Skipped, with the reason
//! printed, where the kernel has no Landlock (or git is missing).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use cairn::bus::ReportEvent;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::sandbox::{git, git_available, landlock, run, script};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

const ID: &str = "git -c user.name=t -c user.email=t@example.com";

/// Every protected entry: path → (mode, content or link target). Sample hooks are not
/// protected: git never runs them.
fn protected(ws: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut found = BTreeMap::new();
    for top in [
        ".git/config",
        ".git/hooks",
        ".git/modules/sub/config",
        ".cairn",
    ] {
        walk(ws, Path::new(top), &mut found);
    }
    found
}

fn walk(ws: &Path, rel: &Path, found: &mut BTreeMap<String, (u32, Vec<u8>)>) {
    let path = ws.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return;
    };
    if meta.is_file() && rel.extension().is_some_and(|e| e == "sample") {
        return;
    }
    let body = if meta.is_file() {
        std::fs::read(&path).unwrap()
    } else if meta.file_type().is_symlink() {
        std::fs::read_link(&path)
            .unwrap()
            .into_os_string()
            .into_encoded_bytes()
    } else {
        Vec::new()
    };
    found.insert(rel.display().to_string(), (meta.mode(), body));
    if meta.is_dir() {
        for entry in std::fs::read_dir(&path).unwrap() {
            walk(ws, &rel.join(entry.unwrap().file_name()), found);
        }
    }
}

/// A committed repository with a hook, a submodule's git dir and project rules.
fn repository() -> Sandbox {
    let sb = Sandbox::new()
        .file("src/lib.rs", "// code\n")
        .file(".cairn/config.toml", "[permissions]\nask = [\"curl\"]\n");
    let ws = sb.workspace();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    let hook = ws.join(".git/hooks/pre-push");
    std::fs::write(&hook, "#!/bin/sh\necho checked\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let module = ws.join(".git/modules/sub");
    std::fs::create_dir_all(module.join("hooks")).unwrap();
    std::fs::write(module.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(module.join("config"), "[core]\n\tbare = false\n").unwrap();
    sb
}

/// No file named `PWNED` anywhere in the workspace.
fn pwned(ws: &Path) -> bool {
    let out = Command::new("find")
        .arg(ws)
        .args(["-name", "PWNED"])
        .output()
        .unwrap();
    !out.stdout.is_empty()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everyday_commands_change_the_top_level_and_git_inside_the_sandbox() {
    if !landlock("everyday_commands_change_the_top_level_and_git_inside_the_sandbox")
        || !git_available()
    {
        return;
    }
    let sb = Sandbox::new()
        .file("a.txt", "a\n")
        .file("src/lib.rs", "// code\n");
    let commit = format!(
        "{ID} add -A && {ID} commit -qm first && git checkout -qb feature && echo more >> b.txt && {ID} stash -q && {ID} stash pop -q && echo committed"
    );
    let llm = MockLlm::start(script(&[
        "touch NEWFILE && mkdir build && mv a.txt b.txt && echo made",
        "git init -q && echo inited",
        &commit,
    ]))
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    for (i, said) in ["made", "inited", "committed"].iter().enumerate() {
        let result = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        assert!(result.contains(said), "{result}");
        assert!(
            !result.contains("[exit code") && !result.contains("[sandbox:"),
            "{result}"
        );
        assert!(!result.contains("[cairn put back"), "{result}");
    }
    assert!(sb.path("NEWFILE").exists() && sb.path("build").is_dir());
    assert_eq!(sb.read("b.txt"), "a\nmore\n");
    let log = Command::new("git")
        .args(["log", "--format=%s", "feature"])
        .current_dir(sb.workspace())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout), "first\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_command_leaves_in_git_config_hooks_or_cairn_is_put_back() {
    if !landlock("what_a_command_leaves_in_git_config_hooks_or_cairn_is_put_back")
        || !git_available()
    {
        return;
    }
    let sb = repository();
    let ws = sb.workspace();
    let before = protected(&ws);
    assert!(before.len() >= 6, "{before:?}");
    let attacks = [
        "git config core.fsmonitor 'touch PWNED'",
        "echo >> .git/config",
        "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "echo 'touch PWNED' >> .git/hooks/pre-push",
        "rm -rf .git/hooks",
        "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > evil.config && rm .git/config && ln -s ../evil.config .git/config",
        "ln .git/config x && echo '[core] fsmonitor = touch PWNED' >> x",
        "mv .git/config .git/c2 && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .git/config",
        "echo '[core] fsmonitor = touch PWNED' >> .git/modules/sub/config",
        "echo 'allow = [\"rm\"]' > .cairn/config.toml",
        "mv .git .git-old && mkdir .git && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .git/config",
    ];
    let llm = MockLlm::start(script(&attacks)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    for (i, attack) in attacks.iter().enumerate() {
        let result = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        assert!(
            result.contains("[cairn put back ")
                && result.contains("ask the user to run it without the sandbox]"),
            "{attack}: {result}"
        );
    }
    let first = llm.tool_result(1, "c0").unwrap();
    assert!(
        first.contains("[cairn put back .git/config (changed)"),
        "{first}"
    );
    assert_eq!(
        protected(&ws),
        before,
        "the protected set is byte-identical"
    );
    // The hard link the command made is a file of its own now.
    let config = std::fs::metadata(ws.join(".git/config")).unwrap();
    assert_ne!(config.ino(), std::fs::metadata(ws.join("x")).unwrap().ino());
    assert!(!ws.join(".git-old").exists());
    // What the user runs next, outside any sandbox, runs nothing planted.
    let status = Command::new("git")
        .arg("status")
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    assert!(!pwned(&ws));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_left_running_is_gone_before_the_check() {
    if !landlock("a_child_left_running_is_gone_before_the_check") || !git_available() {
        return;
    }
    let sb = repository();
    let ws = sb.workspace();
    let before = protected(&ws);
    // Both write after the command's main process exited: one in its group, one detached.
    let late = "setsid -f sh -c 'sleep 0.5; echo \"[core] fsmonitor = touch PWNED\" >> .git/config; touch src/late1'; \
                (sleep 0.5; echo '[core] fsmonitor = touch PWNED' >> .git/config; touch src/late2) & echo left";
    // The next command looks after the moment they would have written; were they alive, they
    // would have written during it.
    let llm = MockLlm::start(vec![
        Script::tool_call("c0", "bash", json!({ "command": late })),
        Script::tool_call("c1", "bash", json!({ "command": "sleep 1.5; ls src" })),
        Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let listing = llm.tool_result(2, "c1").unwrap();
    assert!(!listing.contains("late"), "{listing}");
    assert!(!sb.path("src/late1").exists() && !sb.path("src/late2").exists());
    assert_eq!(protected(&ws), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monitor_planted_by_an_allowed_command_never_runs() {
    if !landlock("a_monitor_planted_by_an_allowed_command_never_runs") || !git_available() {
        return;
    }
    // The default mode: the model writes a Makefile (file writes run unasked) and runs `make`,
    // which the user allowed; the recipe plants an fsmonitor. Then a read-only `git status`.
    let sb = repository().config("[permissions]\nallow = [\"make\"]\n");
    let ws = sb.workspace();
    let config = sb.read(".git/config");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c0",
            "write_file",
            json!({ "path": "Makefile", "content": "all:\n\tgit config core.fsmonitor 'touch PWNED'\n\t@echo planted\n" }),
        ),
        Script::tool_call("c1", "bash", json!({ "command": "make" })),
        Script::tool_call("c2", "bash", json!({ "command": "git status" })),
        Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "auto-edit", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let made = llm.tool_result(2, "c1").unwrap();
    assert!(made.contains("planted"), "make ran unasked: {made}");
    assert!(
        made.contains("[cairn put back .git/config (changed)"),
        "{made}"
    );
    assert!(
        run.stderr.contains("cairn put back .git/config")
            || run.stdout.contains("cairn put back .git/config"),
        "the user is told too: {}",
        run.stderr
    );
    let status = llm.tool_result(3, "c2").unwrap();
    assert!(!status.starts_with("Error"), "{status}");
    assert_eq!(sb.read(".git/config"), config);
    // And the user's own git, later, outside any sandbox.
    Command::new("git")
        .arg("status")
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(!pwned(&ws));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_becomes_a_job_is_checked_when_it_ends() {
    if !landlock("a_command_that_becomes_a_job_is_checked_when_it_ends") || !git_available() {
        return;
    }
    // It outlives its timeout, goes on as a job with the sandbox it started with, and plants
    // a monitor after the check at its timeout; the check at its end puts it back.
    let sb = repository();
    let ws = sb.workspace();
    let before = protected(&ws);
    let late = "sleep 0.6; echo '[core] fsmonitor = touch PWNED' >> .git/config; sleep 0.2";
    let llm = MockLlm::start(vec![
        Script::tool_call("c0", "bash", json!({ "command": late, "timeout_ms": 200 })),
        Script::tool_call(
            "c1",
            "job_output",
            json!({ "job_id": "job-1", "wait_ms": 20000 }),
        ),
        Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let promoted = llm.tool_result(1, "c0").unwrap();
    assert!(promoted.contains("background job job-1"), "{promoted}");
    let ended = llm.tool_result(2, "c1").unwrap();
    assert!(
        ended.contains("[exited successfully]")
            && ended.contains("[cairn put back .git/config (changed)"),
        "{ended}"
    );
    assert_eq!(protected(&ws), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_config_change_is_put_back_and_u_then_makes_it() {
    use cairn::bus::{AgentEvent, Decision, ToolEvent};

    use crate::support::agent::TestAgent;

    if !landlock("an_approved_config_change_is_put_back_and_u_then_makes_it") {
        return;
    }
    let Some(ws) = crate::support::cairn_cmd::try_dir_outside_temp("sandbox_protected.rs") else {
        return;
    };
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::write(ws.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.path().join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let change = "printf '[user]\\n\\temail = me@example.com\\n' >> .git/config";
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": change })),
        Script::tool_call("c2", "bash", json!({ "command": change })),
        Script::text("done"),
    ])
    .await;
    let mut agent = TestAgent::sandboxed(ws.path(), sessions.path(), &llm.url()).await;
    agent.submit("set my email").await;
    let asked = |e: &AgentEvent| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. }));
    agent.wait_for(asked).await;
    // `y`: it runs in the sandbox, and what it wrote to the config is put back, with a warning.
    agent.decide("c1", Decision::Approve).await;
    let warned = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Warning { message }) if message.contains("put back")))
        .await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { why, .. }) = agent.wait_for(asked).await
    else {
        unreachable!()
    };
    assert!(
        format!("{warned:?}").contains(".git/config (changed)"),
        "{warned:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join(".git/config")).unwrap(),
        "[core]\n\tbare = false\n"
    );
    let first = llm.tool_result(1, "c1").unwrap();
    assert!(
        first.contains("[cairn put back .git/config (changed)"),
        "{first}"
    );
    assert!(why.contains("`u` runs it without the sandbox"), "{why}");
    // `u`: the user lets it out, once.
    agent.decide("c2", Decision::ApproveUnsandboxed).await;
    agent
        .wait_for(
            |e| matches!(e, AgentEvent::Tool(ToolEvent::Finished { call, .. }) if call.0 == "c2"),
        )
        .await;
    assert!(
        std::fs::read_to_string(ws.path().join(".git/config"))
            .unwrap()
            .contains("me@example.com")
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_job_keeps_the_strict_profile() {
    if !landlock("a_background_job_keeps_the_strict_profile") || !git_available() {
        return;
    }
    // No check runs after a job while the model works on, so a job never gets `.git`,
    // `.cairn` or the workspace's top level; inside top-level directories it writes.
    let sb = repository();
    let ws = sb.workspace();
    let before = protected(&ws);
    let job = "{ echo '[core] fsmonitor = touch PWNED' >> .git/config; echo x > .cairn/x; touch NEWTOP; echo ok > src/ok; } 2> src/errors; echo finished > src/done";
    let look = "for i in $(seq 400); do [ -s src/done ] && break; sleep 0.05; done; cat src/done src/errors";
    let llm = MockLlm::start(vec![
        Script::tool_call("c0", "bash", json!({ "command": job, "background": true })),
        Script::tool_call("c1", "bash", json!({ "command": look })),
        Script::text("done"),
    ])
    .await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let output = llm.tool_result(2, "c1").unwrap();
    assert!(output.contains("finished"), "{output}");
    assert_eq!(output.matches("Permission denied").count(), 3, "{output}");
    assert!(!output.contains("[cairn put back"), "{output}");
    assert_eq!(protected(&ws), before);
    assert!(!sb.path("NEWTOP").exists());
    assert_eq!(sb.read("src/ok"), "ok\n");
}
