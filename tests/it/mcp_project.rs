//! A project's MCP servers (SPEC §11.3, the one trust rule for project-defined processes): a
//! server in the workspace's `.cairn/config.toml` does not start before the user trusted it
//! as it is now, a trusted one starts (in the workspace-write sandbox) and its tools reach the
//! model, and a change to a file its command names asks again.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::mock_mcp::{McpScript, tool};
use cairn::testing::{MockLlm, Script};
use cairn::trust::ProcessTrust;

const MOCK_MCP: &str = env!("CARGO_BIN_EXE_mock-mcp");

/// A workspace whose project config defines the server `proj`, its script (`mcp.json`, named
/// by the command, so part of what is trusted) and its log inside the workspace (`logs/`).
fn project(description: &str) -> Sandbox {
    let sb = Sandbox::new();
    let script = McpScript {
        tools: vec![tool("echo", description)],
        // In a directory that exists: a served process in the workspace-write sandbox writes
        // in the workspace's entries, it creates none at its root.
        log: Some(sb.workspace().join("logs/mcp.log")),
        ..McpScript::default()
    };
    sb.file("logs/.keep", "")
        .file("mcp.json", &serde_json::to_string(&script).unwrap())
        .file(
            ".cairn/config.toml",
            &format!("[mcp_servers.proj]\ncommand = '{MOCK_MCP}'\nargs = ['mcp.json']\n"),
        )
}

fn offered(llm: &MockLlm, i: usize) -> Vec<String> {
    llm.request(i)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn trust_all(sb: &Sandbox) {
    let workspace = sb.workspace().canonicalize().unwrap();
    let trust = ProcessTrust::new(&sb.data_dir(), &workspace);
    let project = cairn::mcp::project::ProjectServers::load(
        &workspace,
        &cairn::config::McpServersFile::new(),
        trust.clone(),
    );
    for judged in project.untrusted() {
        trust.trust(&judged).unwrap();
    }
}

#[tokio::test]
async fn a_project_server_does_not_start_before_trust() {
    let sb = project("Echoes.");
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !offered(&llm, 0).iter().any(|n| n.starts_with("mcp_")),
        "{:?}",
        offered(&llm, 0)
    );
    assert!(
        !sb.path("logs/mcp.log").exists(),
        "the untrusted server was started"
    );
    assert!(
        run.stderr.contains("MCP server proj") && run.stderr.contains("not trusted yet"),
        "{}",
        run.stderr
    );
    let listed = sb.exec_raw(&["mcp", "list", "--json"], &[]).await;
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed["servers"][0]["name"], "proj");
    assert_eq!(listed["servers"][0]["origin"], "project");
    assert_eq!(listed["servers"][0]["state"], "awaiting_trust");
    assert!(
        !sb.path("logs/mcp.log").exists(),
        "`cairn mcp list` started it"
    );

    // Trusted as it is now: it starts, and its tool reaches the model and the server.
    trust_all(&sb);
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__proj__echo", json!({"text": "hi"})),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        offered(&llm, 0).contains(&"mcp__proj__echo".to_string()),
        "{:?}",
        offered(&llm, 0)
    );
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(result.contains(r#"echo: {"text":"hi"}"#), "{result}");

    // Its script changed: it asks again and does not start.
    std::fs::remove_file(sb.path("logs/mcp.log")).unwrap();
    let changed = sb.read("mcp.json").replace("Echoes.", "Echoes, changed.");
    let sb = sb.file("mcp.json", &changed);
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!offered(&llm, 0).iter().any(|n| n.starts_with("mcp_")));
    assert!(
        !sb.path("logs/mcp.log").exists(),
        "the changed server was started"
    );
    assert!(
        run.stderr.contains("changed since you trusted it"),
        "{}",
        run.stderr
    );
    // `--trust-project` trusts it for one run.
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "--trust-project", "go"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(offered(&llm, 0).contains(&"mcp__proj__echo".to_string()));
}
