//! The hook points besides the tool calls, end to end with real scripts: a `user_prompt`
//! guard that refuses a message keeps it from the model (and one that fails does too), a
//! `session_start` hook's context reaches the first request, a `notification` hook hears of
//! the turn's end.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use crate::hooks::{Scripts, hook_config};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_prompt_guard_keeps_a_refused_or_unchecked_message_from_the_model() {
    let scripts = Scripts::new();
    let refuse = scripts.script(
        "no-secrets.sh",
        "case \"$(cat)\" in *password*) echo 'prompt names a password' >&2; exit 2;; esac\n",
    );
    let sb = Sandbox::new().config(&hook_config("user_prompt", &refuse, ""));
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb.exec(&llm.url(), &["the password is hunter2"]).await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("blocked by hook user_prompt #1: prompt names a password"),
        "{}",
        run.stderr
    );
    assert!(llm.requests().is_empty(), "the message reached the model");

    let run = sb.exec(&llm.url(), &["fix the tests"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(llm.requests().len(), 1);

    let crashing = scripts.script("crash.sh", "cat >/dev/null; exit 5\n");
    let sb = Sandbox::new().config(&hook_config("user_prompt", &crashing, ""));
    let run = sb.exec(&llm.url(), &["fix the tests"]).await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(
        llm.requests().len(),
        1,
        "a failing guard let the message through"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_context_reaches_the_first_request_after_the_system_prompt() {
    let scripts = Scripts::new();
    let command = scripts.script(
        "start.sh",
        "cat >/dev/null; echo 'the release branch is frozen'\n",
    );
    let sb = Sandbox::new().config(&hook_config("session_start", &command, ""));
    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let run = sb.exec(&llm.url(), &["hello"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = llm.request(0)["messages"].to_string();
    assert!(
        messages.contains("the release branch is frozen"),
        "{messages}"
    );
    let system = llm.request(0)["messages"][0]["content"].to_string();
    assert!(!system.contains("frozen"), "the system prompt changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_hook_hears_that_the_turn_ended_even_headless() {
    let scripts = Scripts::new();
    let heard = scripts.path("heard.txt");
    let append = scripts.script("note.sh", &format!("cat >> '{}'\n", heard.display()));
    let sb = Sandbox::new().config(&hook_config("notification", &append, ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch x"})),
        Script::text("done"),
    ])
    .await;
    // The held call is denied (nobody to ask) and the turn ends.
    let run = sb.exec(&llm.url(), &["--mode", "ask", "go"]).await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let text = std::fs::read_to_string(&heard).unwrap();
    assert!(
        text.contains("\"event\":\"notification\"") && text.contains("the turn ended (denied)"),
        "{text}"
    );
}
