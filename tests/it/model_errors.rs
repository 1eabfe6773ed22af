//! What a user reads when the model cannot be reached or answers badly, through the real
//! `cairn exec` and the agent: a wrong base URL fails fast naming it, a refused key names its
//! variable, a stream cut mid-answer is retried, and a partial that no retry completed is kept
//! marked incomplete for the user and the model.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use std::time::{Duration, Instant};

use crate::support::agent::TestAgent;
use crate::support::cairn_cmd::Sandbox;
use cairn::agent::CUT_OFF_MARK;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, EndReason};
use cairn::testing::{MockLlm, Script};

/// The `error: …` line of a failed run's stderr.
fn error_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line in: {stderr}"))
}

/// A port on 127.0.0.1 that nothing listens on (bound, then let go).
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_with_a_wrong_base_url_fails_within_3s_naming_the_url_first() {
    let sb = Sandbox::new();
    let base_url = format!("http://127.0.0.1:{}/v1", closed_port());
    let started = Instant::now();
    let run = sb.exec(&base_url, &["hi"]).await;
    let took = started.elapsed();
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        took < Duration::from_secs(3),
        "took {took:?}: {}",
        run.stderr
    );
    let error = run
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {}", run.stderr));
    // The first line is the summary: the URL, the flag and the setting to check.
    assert!(
        error.contains(&base_url) && error.contains("--base-url") && error.contains("base_url"),
        "{error}"
    );
    assert!(error.contains("connection refused"), "{error}");
    // The library's words come after, never alone.
    assert!(!error.contains("tcp connect error"), "{error}");
    assert!(run.stderr.contains("cause: "), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_with_a_refused_key_names_the_provider_and_the_variable_it_came_from() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    )])
    .await;
    let run = sb
        .exec_raw(
            &[
                "exec",
                "--provider",
                "openai",
                "--base-url",
                &llm.url(),
                "hi",
            ],
            &[("OPENAI_API_KEY", "sk-wrong-key-0123456789")],
        )
        .await;
    assert_ne!(run.code, 0);
    let error = error_line(&run.stderr);
    assert!(
        error.contains("openai") && error.contains("OPENAI_API_KEY"),
        "{error}"
    );
    assert!(error.contains("Incorrect API key provided"), "{error}");
    assert!(!run.stderr.contains("sk-wrong-key"), "{}", run.stderr);
    assert_eq!(llm.requests().len(), 1, "a 401 is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_without_a_key_says_none_was_set_and_which_variable_to_set() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::status(
        401,
        r#"{"error":{"message":"missing bearer token"}}"#,
    )])
    .await;
    let run = sb.exec(&llm.url(), &["hi"]).await;
    assert_ne!(run.code, 0);
    let error = error_line(&run.stderr);
    assert!(
        error.contains("none is set") && error.contains("CAIRN_API_KEY"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_retries_a_stream_cut_mid_answer_once_and_prints_the_whole_answer() {
    let sb = Sandbox::new();
    let answer = "The tests fail because the fixture path is wrong.";
    let llm = MockLlm::start(vec![
        Script::text(answer).cut_after_chunks(3),
        Script::text(answer),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["why do the tests fail?"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout.trim(), answer);
    let retries: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("retrying"))
        .collect();
    assert_eq!(retries.len(), 1, "{}", run.stderr);
    assert!(retries[0].contains("cut off"), "{}", run.stderr);
    assert_eq!(llm.requests().len(), 2);
    // The log holds the one whole answer, not the cut attempt.
    let assistant: Vec<String> = sb
        .log_records()
        .iter()
        .filter(|r| r["type"] == "assistant")
        .map(|r| r["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(assistant, vec![answer.to_string()]);
}

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_no_retry_completed_is_kept_marked_for_the_user_and_the_model() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // The test agent allows 2 retries: three attempts, all cut after "one two ".
    let cut = || Script::text("one two three four").cut_after_chunks(3);
    let llm = MockLlm::start(vec![cut(), cut(), cut(), Script::text("sorry, again")]).await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("count").await;
    let AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. }) =
        agent.wait_for(ended).await
    else {
        unreachable!()
    };
    let EndReason::Failed(message) = reason else {
        panic!("{reason:?}")
    };
    let summary = message.lines().next().unwrap();
    assert!(
        summary.contains("cut off") && summary.contains("marked incomplete"),
        "{message}"
    );
    let shown = agent.seen.iter().rev().find_map(|e| match e {
        AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) => {
            Some(text.clone())
        }
        _ => None,
    });
    let shown = shown.expect("the partial answer is shown");
    assert!(
        shown.starts_with("one two") && shown.ends_with(CUT_OFF_MARK),
        "{shown}"
    );
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent.submit("go on").await;
    agent.wait_for(ended).await;
    let messages = llm.request(3)["messages"].as_array().unwrap().clone();
    let partial = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the partial is in the next request");
    let content = partial["content"].as_str().unwrap();
    assert!(
        content.starts_with("one two") && content.contains(CUT_OFF_MARK),
        "{content}"
    );
    let log = std::fs::read_to_string(&agent.log).unwrap();
    assert!(
        log.contains(CUT_OFF_MARK),
        "the log keeps the mark for a resume"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_check_warns_of_a_wrong_base_url_before_any_message() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let port = closed_port();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &base_url, Mode::Ask).await;
    let checked = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::EndpointChecked { .. })))
        .await;
    let AgentEvent::Report(ReportEvent::EndpointChecked {
        problem: Some(message),
    }) = checked
    else {
        panic!("{checked:?}")
    };
    assert!(message.starts_with("start-up check"), "{message}");
    let summary = message.lines().next().unwrap();
    assert!(
        summary.contains(&base_url) && summary.contains("--base-url"),
        "{message}"
    );
    assert!(summary.contains("connection refused"), "{message}");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_check_is_quiet_when_the_endpoint_answers() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![Script::text("hello")]).await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    let checked = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::EndpointChecked { .. })))
        .await;
    assert_eq!(
        checked,
        AgentEvent::Report(ReportEvent::EndpointChecked { problem: None })
    );
    agent.submit("hi").await;
    agent.wait_for(ended).await;
    assert_eq!(llm.requests().len(), 1, "the check is not a chat request");
    agent.shutdown().await;
}

/// Answers every request with `status` and an empty body, as a gateway in front of the
/// provider would; returns the base URL.
async fn answering_every_request_with(status: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let reply =
                    format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_check_says_when_the_provider_refuses_the_key() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let base_url = answering_every_request_with("401 Unauthorized").await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &base_url, Mode::Ask).await;
    let checked = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::EndpointChecked { .. })))
        .await;
    let AgentEvent::Report(ReportEvent::EndpointChecked {
        problem: Some(message),
    }) = checked
    else {
        panic!("{checked:?}")
    };
    assert!(
        message.contains("401") && message.contains("API key") && message.contains("CAIRN_API_KEY"),
        "{message}"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_at_the_start_up_check_still_means_a_server_is_there() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let base_url = answering_every_request_with("404 Not Found").await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &base_url, Mode::Ask).await;
    let checked = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::EndpointChecked { .. })))
        .await;
    assert_eq!(
        checked,
        AgentEvent::Report(ReportEvent::EndpointChecked { problem: None })
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_error_mid_answer_keeps_the_shown_text_marked() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![
        Script::stream_error("upstream model crashed")
            .error_code(400)
            .with_preface("I will start by "),
        Script::text("ok"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("fix it").await;
    let AgentEvent::Conversation(ConversationEvent::RequestEnded { reason, .. }) =
        agent.wait_for(ended).await
    else {
        unreachable!()
    };
    let EndReason::Failed(message) = reason else {
        panic!("{reason:?}")
    };
    assert!(
        message.starts_with("the provider reported an error: upstream model crashed")
            && message.contains("kept, marked incomplete"),
        "{message}"
    );
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent.submit("again").await;
    agent.wait_for(ended).await;
    let messages = llm.request(1)["messages"].as_array().unwrap().clone();
    let partial = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    let content = partial["content"].as_str().unwrap();
    assert!(
        content.starts_with("I will start by") && content.ends_with(CUT_OFF_MARK),
        "{content}"
    );
    agent.shutdown().await;
}
