//! The user's own shell and steering in the real binary: `!cmd` shows its output and reaches
//! the model's next request, `!!cmd` only the transcript; Esc stops a command's whole group; a
//! message sent while a three-call reply runs reaches the request after those results, one held
//! with Ctrl+Q the request after the turn, and the log says when each was delivered.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use serde_json::{Value, json};

use super::harness::{DEADLINE, Tui, process_alive};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockCall, MockLlm, Script};

/// The request's messages as `role: text` lines (tool results as `tool CALL: text`, the
/// assistant's calls as `assistant calls c1,c2`).
fn conversation(request: &Value) -> Vec<String> {
    let text = |content: &Value| match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m["role"].as_str().unwrap() {
            "tool" => format!(
                "tool {}: {}",
                m["tool_call_id"].as_str().unwrap(),
                text(&m["content"])
            ),
            "assistant" if m["tool_calls"].is_array() => {
                let ids: Vec<&str> = m["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["id"].as_str().unwrap())
                    .collect();
                format!("assistant calls {}", ids.join(","))
            }
            role => format!("{role}: {}", text(&m["content"])),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_bang_echo_reaches_the_next_request_and_double_bang_only_the_transcript() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("Noted.")]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.wait_for_text("What should we work on?").await;
    tui.send("!echo hi");
    tui.wait_for_text("!echo hi").await;
    tui.send("\r");
    tui.wait_for("the finished ! card", |s| s.contains("✓ !  echo hi"))
        .await;
    tui.send("!!echo only-for-me");
    tui.wait_for_text("!!echo only-for-me").await;
    tui.send("\r");
    let screen = tui
        .wait_for("the finished !! card", |s| {
            s.contains("✓ !!  echo only-for-me")
        })
        .await;
    assert!(
        screen
            .lines()
            .any(|l| l.contains("hi") && !l.contains("echo")),
        "the output is in the transcript:\n{screen}"
    );
    assert!(llm.requests().is_empty(), "a command is not a request");
    tui.send("what did it print?\r");
    tui.wait_for_text("Noted.").await;
    let sent = conversation(&llm.request(0));
    let told: Vec<&String> = sent.iter().filter(|m| m.contains("$ echo hi")).collect();
    assert_eq!(told.len(), 1, "{sent:#?}");
    assert!(
        told[0].starts_with("user: ")
            && told[0].contains("own shell")
            && told[0].contains("$ echo hi\nhi\n"),
        "{told:?}"
    );
    assert!(
        !sent.iter().any(|m| m.contains("only-for-me")),
        "!! stays out of the context: {sent:#?}"
    );
    assert!(
        sent.last().unwrap().ends_with("what did it print?"),
        "{sent:#?}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_esc_stops_a_users_command_and_everything_it_started() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.wait_for_text("What should we work on?").await;
    tui.send("!bash -c 'trap \"\" TERM; sleep 300 & echo $! >> pids; echo $$ >> pids; wait' & echo $$ >> pids; wait");
    tui.send("\r");
    let pids = sb.path("pids");
    let start = Instant::now();
    let pids: Vec<i32> = loop {
        let found: Vec<i32> = std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if found.len() >= 3 {
            break found;
        }
        assert!(start.elapsed() < DEADLINE, "the command did not start");
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    tui.send("\x1b");
    tui.wait_for_text("cancelled").await;
    for pid in &pids {
        assert!(!process_alive(*pid), "process {pid} survived Esc");
    }
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_message_sent_during_three_calls_reaches_the_request_after_their_results() {
    let sb = Sandbox::new();
    // The first call waits for the test to let it go: the message is typed while it runs.
    let wait = "while [ ! -f go ]; do sleep 0.05; done; echo one";
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            MockCall::new("c1", "bash", json!({"command": wait})),
            MockCall::new("c2", "bash", json!({"command": "echo two"})),
            MockCall::new("c3", "bash", json!({"command": "echo three"})),
        ]),
        Script::text("Steered as asked."),
        Script::text("And later too."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 110, 32);
    tui.submit("run the three").await;
    tui.wait_for_text("while [ ! -f go ]").await;
    tui.send("also check the docs");
    tui.wait_for_text("also check the docs").await;
    tui.send("\r");
    tui.wait_for_text("next step: also check the docs").await;
    tui.send("after all that");
    tui.wait_for_text("after all that").await;
    tui.send("\x11");
    tui.wait_for_text("after the turn: after all that").await;
    std::fs::write(sb.path("go"), "").unwrap();
    tui.wait_for_text("And later too.").await;
    let second = conversation(&llm.request(1));
    let tail: Vec<&str> = second[second.len() - 5..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(tail[0], "assistant calls c1,c2,c3", "{second:#?}");
    assert!(
        tail[1].starts_with("tool c1:")
            && tail[2].starts_with("tool c2:")
            && tail[3].starts_with("tool c3:"),
        "the results follow their calls directly: {second:#?}"
    );
    assert_eq!(tail[4], "user: also check the docs", "{second:#?}");
    assert!(!second.iter().any(|m| m.contains("after all that")));
    let third = conversation(&llm.request(2));
    assert_eq!(
        third[third.len() - 2..],
        ["assistant: Steered as asked.", "user: after all that"],
        "the held message is a request of its own after the turn: {third:#?}"
    );
    // The log says when each queued message was delivered.
    let log = std::fs::read_to_string(sb.log_path()).unwrap();
    let delivered: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["type"] == "delivered")
        .collect();
    assert_eq!(delivered.len(), 2, "{log}");
    assert_eq!(delivered[0]["step"], 1, "after the first step: {log}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_steering_message_pulled_back_and_edited_is_sent_only_as_edited() {
    let sb = Sandbox::new();
    let wait = "while [ ! -f go ]; do sleep 0.05; done; echo done";
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": wait})),
        Script::text("Fixed it."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 110, 32);
    tui.submit("run it").await;
    tui.wait_for_text("while [ ! -f go ]").await;
    tui.send("use the old api");
    tui.wait_for_text("use the old api").await;
    tui.send("\r");
    tui.wait_for_text("next step: use the old api").await;
    // Alt+Up selects it, Enter pulls it back into the input.
    tui.send("\x1b[1;3A");
    tui.wait_for_text("Enter: back into the input").await;
    tui.send("\r");
    let screen = tui.wait_for_text("withdrawn: back in the input").await;
    assert!(!screen.contains("next step: use the old api"), "{screen}");
    // Ctrl+U clears the line; the edited message goes instead.
    tui.send("\x15");
    tui.send("use the new api");
    tui.wait_for_text("use the new api").await;
    tui.send("\r");
    tui.wait_for_text("next step: use the new api").await;
    std::fs::write(sb.path("go"), "").unwrap();
    tui.wait_for_text("Fixed it.").await;
    let second = conversation(&llm.request(1));
    assert_eq!(
        second.last().unwrap(),
        "user: use the new api",
        "{second:#?}"
    );
    assert!(!second.iter().any(|m| m.contains("old api")), "{second:#?}");
    let records: Vec<Value> = std::fs::read_to_string(sb.log_path())
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let withdrawn: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "withdrawn")
        .collect();
    assert_eq!(withdrawn.len(), 1);
    assert_eq!(withdrawn[0]["text"], "use the old api");
    tui.quit().await;
}
