//! Crash safety and resume: a session killed with SIGKILL in the middle of a tool call can be
//! resumed, and the conversation then sent to the model is valid and complete.
#![allow(clippy::unwrap_used)]

use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::cairn_cmd::{Sandbox, alive, eventually, read_pid};
use cairn::testing::{MockLlm, Script};

/// Every assistant tool call is followed by exactly one tool message with its id.
fn assert_valid_conversation(messages: &[Value]) {
    let mut i = 0;
    while i < messages.len() {
        if let Some(calls) = messages[i]["tool_calls"].as_array() {
            let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
            let answered: Vec<&str> = messages[i + 1..]
                .iter()
                .take_while(|m| m["role"] == "tool")
                .map(|m| m["tool_call_id"].as_str().unwrap())
                .collect();
            let mut sorted_ids = ids.clone();
            sorted_ids.sort();
            let mut sorted_answered = answered.clone();
            sorted_answered.sort();
            assert_eq!(
                sorted_ids, sorted_answered,
                "calls and results differ at message {i}"
            );
            i += answered.len();
        }
        i += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_mid_tool_call_resumes_with_a_valid_conversation() {
    let sb = Sandbox::new()
        .file("a.txt", "alpha\n")
        .file("run/.keep", "");
    let pid_file = sb.path("run/sleeper.pid");
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call(
            "c2",
            "bash",
            json!({"command": "echo $$ > run/sleeper.pid; exec sleep 60"}),
        ),
    ])
    .await;
    let mut child = sb
        .command(
            &[
                "exec",
                "--base-url",
                &llm.url(),
                "--mode",
                "never",
                "look around",
            ],
            &[],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    eventually("the command to start", || read_pid(&pid_file).is_some()).await;
    let sleeper = read_pid(&pid_file).unwrap();
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    // cairn had no chance to clean up; the command dies with its parent (PDEATHSIG).
    eventually("the orphaned command to die", || !alive(sleeper)).await;

    let id = sb.session_id();
    let resumed = MockLlm::start(vec![Script::text("picked up where we left off")]).await;
    let run = sb
        .exec(
            &resumed.url(),
            &["--resume", &id, "--mode", "never", "go on"],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "picked up where we left off");

    let sent = resumed.request(0);
    let messages = sent["messages"].as_array().unwrap().clone();
    assert_valid_conversation(&messages);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "user"
        ]
    );
    assert_eq!(messages[1]["content"], "look around");
    assert!(messages[3]["content"].as_str().unwrap().contains("alpha"));
    assert_eq!(messages[4]["tool_calls"][0]["id"], "c2");
    assert_eq!(messages[5]["content"], "[interrupted]");
    assert_eq!(messages[6]["content"], "go on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_picks_the_latest_session_of_this_directory_and_sessions_lists_it() {
    let sb = Sandbox::new();
    let first = MockLlm::start(vec![Script::text("one")]).await;
    assert_eq!(sb.exec(&first.url(), &["first prompt"]).await.code, 0);
    let second = MockLlm::start(vec![Script::text("two")]).await;
    let run = sb
        .exec(&second.url(), &["--continue", "second prompt"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let messages = second.request(0)["messages"].as_array().unwrap().clone();
    let texts: Vec<&str> = messages
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(texts, ["first prompt", "one", "second prompt"]);

    let listed = sb.exec_raw(&["sessions"], &[]).await;
    assert_eq!(listed.code, 0);
    assert_eq!(listed.stdout.lines().count(), 1, "{}", listed.stdout);
    assert!(listed.stdout.contains("first prompt") && listed.stdout.contains(&sb.session_id()));
    let json = sb.exec_raw(&["sessions", "--json"], &[]).await;
    let row: Value = serde_json::from_str(json.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(row["first_prompt"], "first prompt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_log_line_is_skipped_with_a_warning_and_nothing_else_is_lost() {
    let sb = Sandbox::new();
    let first = MockLlm::start(vec![Script::text("one")]).await;
    assert_eq!(sb.exec(&first.url(), &["first prompt"]).await.code, 0);
    let log = sb.log_path();
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("{\"type\":\"user\",\"text\":\"half a li");
    std::fs::write(&log, text).unwrap();
    let second = MockLlm::start(vec![Script::text("two")]).await;
    let run = sb
        .exec(&second.url(), &["--resume", &sb.session_id(), "again"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("truncated last line"), "{}", run.stderr);
    let messages = second.request(0)["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_another_directory_is_not_resumed_here_and_the_error_says_where() {
    let sb = Sandbox::new().file("sub/.keep", "");
    let llm = MockLlm::start(vec![Script::text("hi"), Script::text("again")]).await;
    let run = sb.exec(&llm.url(), &["hello"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let id = sb.session_id();
    // The same data directory, another working directory.
    let mut cmd = sb.command(
        &["exec", "--base-url", &llm.url(), "--resume", &id, "more"],
        &[],
    );
    cmd.current_dir(sb.path("sub"));
    let out = cmd.stdin(Stdio::null()).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let here = std::fs::canonicalize(sb.workspace()).unwrap();
    let fix = format!("cd {} && cairn --resume {id}", here.display());
    assert!(stderr.contains(&fix), "{stderr}");
    assert_eq!(stderr.matches("was recorded in").count(), 1, "{stderr}");
    assert_eq!(
        llm.requests().len(),
        1,
        "nothing was sent for the refused resume"
    );
    // In its own directory it resumes.
    let run = sb.exec(&llm.url(), &["--resume", &id, "more"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_history_of_a_directory_comes_back_from_its_logs() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("one"), Script::text("two")]).await;
    for prompt in ["first question", "second question"] {
        let run = sb.exec(&llm.url(), &[prompt]).await;
        assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    }
    let here = std::fs::canonicalize(sb.workspace()).unwrap();
    let history = cairn::session_log::prompt_history(&sb.sessions_dir(), &here, 10);
    assert_eq!(history, ["first question", "second question"]);
    // Another directory has none of it.
    let elsewhere = cairn::session_log::prompt_history(&sb.sessions_dir(), &here.join("sub"), 10);
    assert!(elsewhere.is_empty());
    let last = cairn::session_log::prompt_history(&sb.sessions_dir(), &here, 1);
    assert_eq!(last, ["second question"]);
}
