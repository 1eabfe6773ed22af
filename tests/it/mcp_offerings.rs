//! An MCP server's prompts and resources end to end: the real `cairn exec` against the
//! scripted model and the scripted stdio server. `/mcp:server:prompt ARGS` runs the server's
//! prompt with the arguments typed (in order, the last taking the rest) and its messages are
//! the user's turn; `@server:uri` attaches the resource's text, capped as a file's is; a
//! prompt that does not exist, or lacks a required argument, sends nothing. (The `/` palette
//! and the `@` finder offering them: `tui::tests::mcp_offerings`.)
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::mcp::Server;
use crate::support::cairn_cmd::{Sandbox, alive};
use cairn::testing::mock_mcp::{McpScript, prompt, resource, tool};
use cairn::testing::{MockLlm, Script};

fn offering() -> McpScript {
    let big: String = (1..=2100).map(|i| format!("big line {i}\n")).collect();
    McpScript {
        tools: vec![tool("echo", "Echoes what it is sent.")],
        prompts: vec![prompt(
            "review",
            "Reviews a file.",
            &[("file", true), ("focus", false)],
        )],
        resources: vec![
            resource("test://notes/one", "notes", "NOTE BODY 42"),
            resource("test://big", "big", &big),
        ],
        ..McpScript::default()
    }
}

/// The text of the last user message of request `i`, whatever its shape (text or parts).
fn user_text(llm: &MockLlm, i: usize) -> String {
    let request = llm.request(i);
    let user = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap();
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn a_prompt_runs_with_the_arguments_typed_after_its_name() {
    let demo = Server::new(offering());
    let sb = Sandbox::new().config(&demo.table("demo", ""));
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb
        .exec(&llm.url(), &["/mcp:demo:review src/a.rs the error paths"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    // The server was asked for the prompt with the arguments typed, in order.
    let got: Vec<Value> = demo
        .received()
        .into_iter()
        .filter(|m| m["method"] == "prompts/get")
        .collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["params"]["name"], "review");
    assert_eq!(
        got[0]["params"]["arguments"],
        json!({"file": "src/a.rs", "focus": "the error paths"})
    );
    // Its messages are the user's turn.
    let text = user_text(&llm, 0);
    assert!(text.starts_with("PROMPT review with {"), "{text}");
    assert!(text.contains("\"focus\":\"the error paths\""), "{text}");
    assert!(
        text.ends_with("[the prompt's assistant message]\nok"),
        "{text}"
    );
    assert!(!text.contains("/mcp:demo:review"), "{text}");

    // Arguments by name.
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb
        .exec(&llm.url(), &["/mcp:demo:review focus=speed file=b.rs"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let last = demo
        .received()
        .into_iter()
        .rfind(|m| m["method"] == "prompts/get")
        .unwrap();
    assert_eq!(
        last["params"]["arguments"],
        json!({"file": "b.rs", "focus": "speed"})
    );
    for pid in demo.pids() {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn a_prompt_that_does_not_exist_or_lacks_an_argument_sends_nothing() {
    let demo = Server::new(offering());
    let sb = Sandbox::new().config(&demo.table("demo", ""));
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb.exec(&llm.url(), &["/mcp:demo:nope"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("no MCP server offers the prompt /mcp:demo:nope"),
        "{}",
        run.stderr
    );
    let run = sb.exec(&llm.url(), &["/mcp:demo:review"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("/mcp:demo:review needs file: /mcp:demo:review <file> [focus]"),
        "{}",
        run.stderr
    );
    assert!(llm.requests().is_empty(), "a request was sent");
    for pid in demo.pids() {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn a_resource_attaches_with_at_and_reaches_the_model_capped_as_a_file() {
    let demo = Server::new(offering());
    let sb = Sandbox::new().config(&demo.table("demo", ""));
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &["summarise @demo:test://notes/one and @demo:test://big and @demo:test://gone"],
        )
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let text = user_text(&llm, 0);
    assert!(
        text.contains(
            "[cairn] The user attached @demo:test://notes/one, shown below as the MCP server `demo` sent the resource test://notes/one:\nNOTE BODY 42"
        ),
        "{text}"
    );
    // Capped as a file is: the first 2000 lines, and a note of the rest.
    assert!(
        text.contains("big line 2000\n[100 more lines of 2100 not shown]"),
        "{text:.300}"
    );
    assert!(!text.contains("big line 2001"));
    // A resource the server does not have is not attached; the user is told.
    assert!(
        run.stderr
            .contains("@demo:test://gone was not attached: the MCP server `demo` did not give the resource test://gone"),
        "{}",
        run.stderr
    );
    let reads: Vec<Value> = demo
        .received()
        .into_iter()
        .filter(|m| m["method"] == "resources/read")
        .map(|m| m["params"]["uri"].clone())
        .collect();
    assert_eq!(
        reads,
        [
            json!("test://notes/one"),
            json!("test://big"),
            json!("test://gone")
        ]
    );
    for pid in demo.pids() {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn the_offerings_are_published_once_the_servers_started() {
    use tokio::io::AsyncBufReadExt as _;
    let mut script = offering();
    script.tools.push(tool("slow", "Takes its time."));
    let demo = Server::new(script);
    let sb = Sandbox::new().config(&demo.table("my server", ""));
    // The model's call waits on the server until the run is interrupted: the offerings are
    // read while the run lives.
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__my_server__slow", json!({})),
        Script::text("done"),
    ])
    .await;
    let url = llm.url();
    let mut child = sb
        .command(
            &["exec", "--json", "--base-url", &url, "--mode", "auto", "go"],
            &[],
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let found = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let event: Value = serde_json::from_str(&line).unwrap_or_default();
            if event["type"] == "mcp_offerings" {
                return Some(event);
            }
        }
        None
    })
    .await;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait()).await;
    let offered = found.ok().flatten().expect("no offerings were published");
    assert_eq!(
        offered["prompts"],
        json!([{"command": "/mcp:my_server:review", "args": "<file> [focus]", "description": "Reviews a file.", "server": "my server"}])
    );
    assert_eq!(
        offered["resources"],
        json!([
            {"mention": "my_server:test://notes/one", "name": "notes"},
            {"mention": "my_server:test://big", "name": "big"}
        ])
    );
    for pid in demo.pids() {
        assert!(!alive(pid), "server process {pid} survived");
    }
}
