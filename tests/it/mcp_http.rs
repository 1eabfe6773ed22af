//! Streamable-HTTP MCP servers end to end: the real `cairn exec` against the scripted model
//! and two scripted HTTP servers on 127.0.0.1, one stateful (2025-11-25: the 2026-07-28 probe
//! refused, `initialize`, a session id on every later request, a new session after a 404) and
//! one stateless (2026-07-28: the probe answered, no session). The bearer token is sent, the
//! configured headers too, and the token shows in no log, no output and no command's
//! environment.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::mock_mcp::tool;
use cairn::testing::mock_mcp_http::{McpHttpScript, MockMcpHttp};
use cairn::testing::{MockLlm, Script};

const TOKEN: &str = "mcp-bearer-0123456789abcdef";

#[tokio::test]
async fn http_servers_of_both_revisions_with_a_bearer_token_that_shows_nowhere() {
    let stateful = MockMcpHttp::start(McpHttpScript {
        tools: vec![tool("echo", "Echoes.")],
        bearer: Some(TOKEN.into()),
        expire_after_calls: Some(1),
        ..McpHttpScript::default()
    })
    .await;
    let stateless = MockMcpHttp::start(McpHttpScript {
        stateless: true,
        tools: vec![tool("echo", "Echoes too.")],
        ..McpHttpScript::default()
    })
    .await;
    let sb = Sandbox::new().config(&format!(
        "[mcp_servers.old]\nurl = '{}'\nbearer_token_env = 'MCP_TEST_BEARER'\nheaders = {{ X-Team = 'blue' }}\n\n[mcp_servers.new]\nurl = '{}'\n",
        stateful.url(),
        stateless.url()
    ));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__old__echo", json!({"text": "one"})),
        Script::tool_call("c2", "mcp__old__echo", json!({"text": "two"})),
        Script::tool_call("c3", "mcp__new__echo", json!({"text": "three"})),
        Script::tool_call(
            "c4",
            "bash",
            json!({"command": "echo \"token=[$MCP_TEST_BEARER]\""}),
        ),
        Script::text("done"),
    ])
    .await;
    let url = llm.url();
    let run = sb
        .exec_raw(
            &["exec", "--base-url", &url, "--mode", "never", "go"],
            &[("MCP_TEST_BEARER", TOKEN)],
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
        names.contains(&"mcp__old__echo".to_string())
            && names.contains(&"mcp__new__echo".to_string()),
        "{names:?}"
    );
    for (i, id, text) in [(1, "c1", "one"), (2, "c2", "two"), (3, "c3", "three")] {
        let result = llm.tool_result(i, id).unwrap();
        assert!(
            result.contains(&format!("echo: {{\"text\":\"{text}\"}}")),
            "{result}"
        );
    }

    // The stateful server: the probe refused, then `initialize`; every later request in a
    // session, with the token and the header; the expired session was opened again.
    let old = stateful.requests();
    assert_eq!(old[0].rpc(), "server/discover", "{old:?}");
    assert!(old.iter().any(|r| r.rpc() == "initialize"));
    for request in &old {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str()),
            "{request:?}"
        );
        assert_eq!(request.header("x-team"), Some("blue"), "{request:?}");
    }
    let calls: Vec<_> = old.iter().filter(|r| r.rpc() == "tools/call").collect();
    assert_eq!(calls[0].header("mcp-session-id"), Some("session-1"));
    assert_eq!(
        calls.last().unwrap().header("mcp-session-id"),
        Some("session-2")
    );
    assert_eq!(stateful.sessions(), 2);
    assert!(
        old.iter()
            .filter(|r| r.rpc() == "tools/call")
            .all(|r| r.header("mcp-protocol-version") == Some("2025-11-25")),
        "{old:?}"
    );

    // The stateless server: the probe answered, no `initialize`, no session.
    let new = stateless.requests();
    assert_eq!(new[0].rpc(), "server/discover", "{new:?}");
    assert!(!new.iter().any(|r| r.rpc() == "initialize"), "{new:?}");
    assert!(new.iter().all(|r| r.header("mcp-session-id").is_none()));
    let call = new.iter().find(|r| r.rpc() == "tools/call").unwrap();
    assert_eq!(call.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(call.body["params"]["arguments"], json!({"text": "three"}));

    // The token: in no command's environment, no output, no log.
    let shell = llm.tool_result(4, "c4").unwrap();
    assert!(shell.contains("token=[]"), "{shell}");
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));
    for request in llm.requests() {
        assert!(!request.to_string().contains(TOKEN));
    }
    // Everything cairn wrote: its log, the session log.
    let written = walk(&sb.data_dir());
    assert!(!written.is_empty());
    for path in written {
        let bytes = std::fs::read(&path).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "{}",
            path.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
