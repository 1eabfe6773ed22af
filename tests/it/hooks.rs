//! Hooks end to end: the real `cairn exec` against the scripted mock, with real hook scripts
//! in a temp directory, configured in the user's config (SPEC §11.9). A guard that denies
//! keeps the command from running and tells the model; a guard that fails denies unless it
//! says `on_error = "allow"`; a hook's `allow` passes no secret rule or protected path; a
//! changed input is judged again; context is appended; a stop hook is bounded.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use serde_json::json;

use crate::support::cairn_cmd::{Run, Sandbox, alive, processes_in_group, read_pid};
use cairn::testing::{MockLlm, Script};

/// A directory of hook scripts outside the workspace.
pub(crate) struct Scripts {
    dir: tempfile::TempDir,
}

impl Scripts {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes `name` with `body` (a `sh` script) and returns the command that runs it.
    pub(crate) fn script(&self, name: &str, body: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        format!("sh '{}'", path.display())
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// The user's config with one `[[hooks.EVENT]]` entry.
pub(crate) fn hook_config(event: &str, command: &str, extra: &str) -> String {
    format!("[[hooks.{event}]]\ncommand = '''{command}'''\n{extra}\n")
}

/// Denies any command that contains `git push`, with a reason on stderr.
const DENY_PUSH: &str = r#"input=$(cat)
case "$input" in
  *"git push"*) echo "pushing is not allowed from an agent" >&2; exit 2;;
esac
exit 0
"#;

async fn run_bash(sb: &Sandbox, command: &str, mode: &str) -> (MockLlm, Run) {
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": command })),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", mode, "go"]).await;
    (llm, run)
}

/// The text the model was given for `call` (a headless run that stops at a held call sends
/// no further request: the log has it).
fn logged_result(sb: &Sandbox, call: &str) -> String {
    sb.log_records()
        .into_iter()
        .find(|r| r["type"] == "tool_result" && r["call"] == call)
        .map(|r| r["result"]["text"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

fn hook_records(sb: &Sandbox) -> Vec<serde_json::Value> {
    sb.log_records()
        .into_iter()
        .filter(|r| r["type"] == "hook")
        .collect()
}

/// `cairn exec --json` gives a hook's denial as its own event (the TUI's one-line card):
/// the event, the hook's name and command, what it did and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_is_a_hook_event_in_json_output() {
    let scripts = Scripts::new();
    let command = scripts.script("deny-push.sh", DENY_PUSH);
    let sb = Sandbox::new().config(&hook_config("pre_tool", &command, "matcher = 'bash'"));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": "git push" })),
        Script::text("done"),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--json", "--mode", "never", "go"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let hooks: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["type"] == "hook")
        .collect();
    assert_eq!(hooks.len(), 1, "{}", run.stdout);
    let hook = &hooks[0];
    assert_eq!(hook["event"], "pre_tool");
    assert_eq!(hook["hook"], "pre_tool #1");
    assert_eq!(hook["act"], "denied");
    assert_eq!(hook["command"], command.as_str());
    assert_eq!(hook["why"], "pushing is not allowed from an agent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_hook_denying_git_push_keeps_it_from_running_and_tells_the_model() {
    let scripts = Scripts::new();
    let command = scripts.script("deny-push.sh", DENY_PUSH);
    let sb = Sandbox::new().config(&hook_config("pre_tool", &command, "matcher = 'bash'"));
    let (llm, run) = run_bash(&sb, "touch pushed && git push origin main", "never").await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!sb.path("pushed").exists(), "the command ran");
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(
        result.contains("blocked by hook pre_tool #1")
            && result.contains("pushing is not allowed from an agent"),
        "{result}"
    );
    assert!(
        run.stderr.contains("hook pre_tool #1 denied"),
        "{}",
        run.stderr
    );
    let records = hook_records(&sb);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"], "deny");
    assert_eq!(records[0]["event"], "pre_tool");
    assert!(records[0]["millis"].is_u64());

    // A command it has no objection to runs.
    let sb = Sandbox::new().config(&hook_config("pre_tool", &command, "matcher = 'bash'"));
    let (_, run) = run_bash(&sb, "touch ran", "never").await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(sb.path("ran").exists(), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_that_fails_denies_unless_it_says_on_error_allow() {
    let scripts = Scripts::new();
    let broken = [
        (
            "exit-1",
            scripts.script("exit1.sh", "cat >/dev/null; echo oops >&2; exit 1\n"),
            "exited with code 1",
            "",
        ),
        (
            "cut-json",
            scripts.script("cut.sh", "cat >/dev/null; printf '{\"decision\": '\n"),
            "not valid JSON",
            "",
        ),
        (
            "timeout",
            scripts.script("slow.sh", "cat >/dev/null; sleep 30\n"),
            "timed out after 1s",
            "timeout_secs = 1",
        ),
        (
            "no-interpreter",
            "no-such-interpreter-xyz /nothing.py".to_string(),
            "could not be started",
            "",
        ),
    ];
    for (what, command, why, extra) in &broken {
        let sb = Sandbox::new().config(&hook_config("pre_tool", command, extra));
        let (llm, run) = run_bash(&sb, "touch ran", "never").await;
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert!(!sb.path("ran").exists(), "{what}: the command ran");
        let result = llm.tool_result(1, "c1").unwrap();
        assert!(
            result.contains("blocked by hook pre_tool #1") && result.contains(why),
            "{what}: {result}"
        );
        assert!(
            run.stderr.contains("hook pre_tool #1 failed, so it denies"),
            "{what}: {}",
            run.stderr
        );

        let extra = format!("{extra}\non_error = 'allow'");
        let sb = Sandbox::new().config(&hook_config("pre_tool", command, &extra));
        let (_, run) = run_bash(&sb, "touch ran", "never").await;
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert!(
            sb.path("ran").exists(),
            "{what} with on_error=allow: {}",
            run.stderr
        );
        assert!(run.stderr.contains("on_error"), "{what}: {}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_times_out_leaves_no_process_behind() {
    let scripts = Scripts::new();
    let pid_file = scripts.path("hook.pid");
    let child_file = scripts.path("child.pid");
    let body = format!(
        "cat >/dev/null\necho $$ > '{}'\nsleep 60 &\necho $! > '{}'\nwait\n",
        pid_file.display(),
        child_file.display()
    );
    let command = scripts.script("hang.sh", &body);
    let sb = Sandbox::new().config(&hook_config("pre_tool", &command, "timeout_secs = 1"));
    let started = std::time::Instant::now();
    let (llm, run) = run_bash(&sb, "touch ran", "never").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(llm.tool_result(1, "c1").unwrap().contains("timed out"));
    let pid = read_pid(&pid_file).expect("the hook wrote its pid");
    let child = read_pid(&child_file).expect("the hook wrote its child's pid");
    assert!(!alive(pid) && !alive(child), "a hook process survived");
    assert!(processes_in_group(pid).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_a_hook_changes_is_judged_again_and_never_runs_silently() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "rewrite.sh",
        "cat >/dev/null; echo '{\"decision\": \"allow\", \"updated_input\": {\"command\": \"rm -rf build\"}}'\n",
    );
    let sb = Sandbox::new()
        .file("build/out.o", "x")
        .config(&hook_config("pre_tool", &command, ""));
    let (_, run) = run_bash(&sb, "ls", "auto-edit").await;
    assert!(sb.path("build/out.o").exists(), "the changed input ran");
    let result = logged_result(&sb, "c1");
    assert!(
        result.contains("needs the user's approval") && result.contains("rm -rf build"),
        "{result}"
    );
    assert!(
        run.stderr.contains("changed the call's input"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_from_a_hook_passes_no_secret_rule_and_no_protected_path() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "allow.sh",
        "cat >/dev/null; echo '{\"decision\": \"allow\"}'\n",
    );
    let sb = Sandbox::new()
        .file(".git/config", "[core]\n")
        .config(&hook_config("pre_tool", &command, ""));
    // The run's HOME is the sandbox's root, beside the workspace.
    let home = sb.workspace().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE-KEY-BYTES\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "cat ~/.ssh/id_rsa"})),
        Script::tool_call(
            "c2",
            "write_file",
            json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = evil\n"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto-edit", "go"]).await;
    assert_ne!(run.code, 0, "{}", run.stderr);
    let secret = logged_result(&sb, "c1");
    assert!(
        !secret.contains("PRIVATE-KEY-BYTES") && secret.contains("needs the user's approval"),
        "{secret}"
    );
    // The first held call ends a headless run; the protected write is checked alone (in a
    // sandbox of its own: its log is then the only one).
    let sb = Sandbox::new()
        .file(".git/config", "[core]\n")
        .config(&hook_config("pre_tool", &command, ""));
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c2",
            "write_file",
            json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = evil\n"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    assert_ne!(run.code, 0, "{}", run.stderr);
    let write = logged_result(&sb, "c2");
    assert!(write.contains("needs the user's approval"), "{write}");
    assert_eq!(sb.read(".git/config"), "[core]\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_context_is_appended_and_the_earlier_request_stays_a_prefix() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "lint.sh",
        "cat >/dev/null; echo '{\"additional_context\": \"lint: 0 warnings\"}'\n",
    );
    let sb = Sandbox::new().config(&hook_config("post_tool", &command, "matcher = 'bash'"));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "echo hello"})),
        Script::tool_call("c2", "bash", json!({"command": "echo again"})),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "never", "go"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = llm.tool_result(1, "c1").unwrap();
    let (hello, lint) = (
        result.find("hello").unwrap(),
        result.find("lint: 0 warnings").unwrap(),
    );
    assert!(hello < lint, "{result}");
    let first = llm.request(1)["messages"].as_array().unwrap().clone();
    let second = llm.request(2)["messages"].as_array().unwrap().clone();
    assert_eq!(second[..first.len()], first[..], "the prefix changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_that_always_denies_makes_exactly_max_stop_blocks_extra_steps() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "tests.sh",
        "cat >/dev/null; echo 'the tests fail' >&2; exit 2\n",
    );
    let sb = Sandbox::new().config(&hook_config("stop", &command, ""));
    let llm = MockLlm::start((0..6).map(|i| Script::text(&format!("done {i}")))).await;
    let run = sb.exec(&llm.url(), &["--mode", "never", "go"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(llm.requests().len(), 4, "one step and three more");
    let last = llm.request(3)["messages"].to_string();
    assert!(last.contains("the tests fail"), "{last}");
    assert!(run.stderr.contains("max_stop_blocks"), "{}", run.stderr);
    assert_eq!(hook_records(&sb).len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_environment_has_no_provider_key_but_cairns_variables() {
    let scripts = Scripts::new();
    let env_file = scripts.path("env.txt");
    let command = scripts.script(
        "env.sh",
        &format!("cat >/dev/null; env > '{}'\n", env_file.display()),
    );
    let sb = Sandbox::new().config(&hook_config("session_start", &command, ""));
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb
        .exec_raw(
            &["exec", "--base-url", &llm.url(), "go"],
            &[
                ("CAIRN_API_KEY", "sk-hook-test-key-123456"),
                ("MY_TOKEN", "tok-987"),
            ],
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let env = std::fs::read_to_string(&env_file).unwrap();
    assert!(!env.contains("sk-hook-test-key-123456"), "{env}");
    assert!(!env.contains("tok-987"), "{env}");
    assert!(
        env.contains("CAIRN_SESSION_ID=") && env.contains("CAIRN_WORKSPACE="),
        "{env}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_settings_with_a_pre_tool_use_hook_on_bash_work() {
    let scripts = Scripts::new();
    // Claude's convention: JSON on stdin with tool_name and tool_input.command.
    let guard = scripts.script(
        "claude-guard.sh",
        r#"input=$(cat)
case "$input" in *'"tool_name":"Bash"'*) ;; *) exit 0;; esac
case "$input" in *'git push'*) echo "Claude guard: no push" >&2; exit 2;; esac
exit 0
"#,
    );
    let sb = Sandbox::new();
    let home = sb.workspace().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}
    ]}});
    std::fs::write(home.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (llm, run) = run_bash(&sb, "touch pushed && git push", "never").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!sb.path("pushed").exists());
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(
        result.contains("PreToolUse #1") && result.contains("Claude guard: no push"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_hook_runs_only_once_trusted_and_asks_again_after_its_script_changes() {
    let sb = Sandbox::new()
        .file(
            ".cairn/config.toml",
            "[[hooks.pre_tool]]\ncommand = 'sh \"$CAIRN_WORKSPACE/guard.sh\"'\n",
        )
        .file(
            "guard.sh",
            "cat >/dev/null; echo 'project guard says no' >&2; exit 2\n",
        );
    let (llm, run) = run_bash(&sb, "touch ran", "never").await;
    assert!(sb.path("ran").exists(), "an untrusted project hook ran");
    assert!(llm.tool_result(1, "c1").is_some());
    assert!(run.stderr.contains("not trusted"), "{}", run.stderr);
    std::fs::remove_file(sb.path("ran")).unwrap();

    let (code, out, err) = sb.exec_raw_sync(&["hooks", "trust", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("guard.sh"),
        "the listing names the script: {out}"
    );
    let (_, run) = run_bash(&sb, "touch ran", "never").await;
    assert!(!sb.path("ran").exists(), "{}", run.stderr);

    // An edited script is not the one the user trusted.
    std::fs::write(sb.path("guard.sh"), "cat >/dev/null; exit 0\n").unwrap();
    let (_, run) = run_bash(&sb, "touch ran", "never").await;
    assert!(sb.path("ran").exists(), "{}", run.stderr);
    assert!(
        run.stderr.contains("changed since you trusted it"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_test_prints_the_decision_and_hooks_list_the_origin() {
    let scripts = Scripts::new();
    let command = scripts.script("deny-push.sh", DENY_PUSH);
    let sb = Sandbox::new().config(&hook_config("pre_tool", &command, "matcher = 'bash'"));
    let args = json!({"command": "git push origin main"}).to_string();
    let (code, out, err) = sb.exec_raw_sync(&[
        "hooks", "test", "pre_tool", "--tool", "bash", "--args", &args,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("decision: deny (blocked by hook pre_tool #1: pushing is not allowed"),
        "{out}"
    );
    let (_, out, _) = sb.exec_raw_sync(&[
        "hooks",
        "test",
        "pre_tool",
        "--args",
        "{\"command\": \"ls\"}",
    ]);
    assert!(out.contains("decision: no opinion"), "{out}");
    let (code, out, err) = sb.exec_raw_sync(&["hooks", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("pre_tool #1") && out.contains("matcher bash"),
        "{out}"
    );
}
