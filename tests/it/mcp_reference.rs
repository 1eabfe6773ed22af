//! A reference server of the ecosystem: `@modelcontextprotocol/server-everything` (npm), the
//! protocol's own test bed, over stdio with the real `cairn exec`. Its tools reach the first
//! request and a call its answer, a prompt runs from `/mcp:everything:NAME`, a resource
//! attaches with `@everything:URI`, `cairn mcp list` shows it ready, and no process of it
//! survives. The package is not a dependency of the project: where `mcp-server-everything`
//! is not on the PATH (`npm install -g @modelcontextprotocol/server-everything`) the test
//! says why and passes without running; it never reaches the network.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

const BINARY: &str = "mcp-server-everything";

/// The server's program on the PATH, with `node` to run it.
fn everything() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join(BINARY))
        .find(|p| p.is_file());
    let Some(program) = found else {
        return Err(format!(
            "{BINARY} is not on the PATH (npm install -g @modelcontextprotocol/server-everything)"
        ));
    };
    let node = std::env::split_paths(&path).any(|dir| dir.join("node").is_file());
    if !node {
        return Err("node is not on the PATH".into());
    }
    Ok(program)
}

/// The processes whose environment holds `marker` (the server's `env` sets it).
fn marked(marker: &str) -> Vec<i32> {
    let needle = format!("CAIRN_REFERENCE_MARKER={marker}");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .filter(|pid| crate::support::cairn_cmd::alive(*pid))
        .collect()
}

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
        other => other.to_string(),
    }
}

#[tokio::test]
async fn a_session_against_the_reference_server_everything() {
    let program = match everything() {
        Ok(program) => program,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let marker = format!("{}-{}", std::process::id(), line!());
    let sb = Sandbox::new().config(&format!(
        "[mcp_servers.everything]\ncommand = '{}'\nargs = ['stdio']\nenv = {{ CAIRN_REFERENCE_MARKER = '{marker}' }}\n",
        program.display()
    ));

    // Its tools, a call, and a prompt as the user's turn.
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__everything__get-sum", json!({"a": 2, "b": 3})),
        Script::text("done"),
    ])
    .await;
    let run = sb
        .exec(
            &llm.url(),
            &["--mode", "auto", "/mcp:everything:args-prompt Paris"],
        )
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let names: Vec<String> = llm.request(0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        names.contains(&"mcp__everything__echo".to_string())
            && names.contains(&"mcp__everything__get-sum".to_string()),
        "{names:?}"
    );
    // It announces that its tools change: the pair is offered from the start.
    assert!(names.contains(&"mcp_search".to_string()), "{names:?}");
    assert_eq!(user_text(&llm, 0), "What's weather in Paris?");
    let sum = llm.tool_result(1, "c1").unwrap();
    assert!(sum.contains("The sum of 2 and 3 is 5."), "{sum}");
    assert!(marked(&marker).is_empty(), "a server process survived");

    // A resource with `@`.
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb
        .exec(
            &llm.url(),
            &["summarise @everything:demo://resource/static/document/architecture.md"],
        )
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let text = user_text(&llm, 0);
    assert!(
        text.contains("sent the resource demo://resource/static/document/architecture.md")
            && text.contains("# Everything Server"),
        "{text:.400}"
    );

    // `cairn mcp list` sees it ready.
    let list = sb.exec_raw(&["mcp", "list", "--json"], &[]).await;
    let listed: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(listed["servers"][0]["state"], "ready", "{listed}");
    assert!(marked(&marker).is_empty(), "a server process survived");
}
