//! OAuth for a streamable-HTTP MCP server end to end: a test authorization server on 127.0.0.1
//! fronting a test MCP server that requires its token. Before a login the server shows as
//! needing one (`cairn mcp list`, and a session that goes on without it). `cairn mcp login`
//! discovers the metadata, registers, prints the authorization URL (the test plays the
//! browser: it follows the URL, which redirects to cairn's loopback with the code) and keeps
//! the tokens in a file only the user reads. A session's calls then carry the token; when
//! the server stops taking it (a 401) and when it has expired by the clock, it is refreshed
//! and the call succeeds; when the refresh is refused, it needs a login again. No token shows
//! in any output, log or request to the model.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use crate::support::cairn_cmd::{Run, Sandbox};
use cairn::testing::mock_mcp::tool;
use cairn::testing::mock_mcp_http::{McpHttpScript, MockMcpHttp};
use cairn::testing::mock_oauth::MockOAuth;
use cairn::testing::{MockLlm, Script};

/// One session whose model calls `mcp__vault__echo` with `text`, then ends.
async fn call_echo(sb: &Sandbox, text: &str) -> (Run, String) {
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__vault__echo", json!({ "text": text })),
        Script::text("done"),
    ])
    .await;
    let url = llm.url();
    let run = sb
        .exec_raw(&["exec", "--base-url", &url, "--mode", "never", "go"], &[])
        .await;
    let result = llm.tool_result(1, "c1").unwrap_or_default();
    let mut sent = String::new();
    for request in llm.requests() {
        sent.push_str(&request.to_string());
    }
    (run, format!("{result}\n{sent}"))
}

/// Runs `cairn mcp login vault --no-browser`, follows the URL it prints as a browser would
/// (the authorize endpoint redirects to the loopback) and returns what it printed.
async fn login(sb: &Sandbox) -> Run {
    let mut child = sb
        .command(&["mcp", "login", "vault", "--no-browser"], &[])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = String::new();
    let authorize = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            printed.push_str(&line);
            printed.push('\n');
            if let Some(url) = line.trim().strip_prefix("http://") {
                return format!("http://{url}");
            }
        }
        panic!("no URL was printed: {printed}");
    })
    .await
    .unwrap();
    assert!(
        authorize.contains("code_challenge_method=S256"),
        "{authorize}"
    );
    assert!(authorize.contains("resource="), "{authorize}");
    // The browser: follows the redirect to cairn's loopback and shows its page.
    let browser = reqwest::Client::builder().no_proxy().build().unwrap();
    let page = browser.get(&authorize).send().await.unwrap();
    assert!(page.url().as_str().starts_with("http://127.0.0.1:"));
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Logged in"));
    while let Some(line) = lines.next_line().await.unwrap() {
        printed.push_str(&line);
        printed.push('\n');
    }
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: printed,
        stderr,
    }
}

#[tokio::test]
async fn an_oauth_login_is_stored_used_and_refreshed_and_its_tokens_show_nowhere() {
    let server = MockMcpHttp::start(McpHttpScript {
        tools: vec![tool("echo", "Echoes.")],
        ..McpHttpScript::default()
    })
    .await;
    let auth = MockOAuth::start(server.url()).await;
    let sb = Sandbox::new().config(&format!("[mcp_servers.vault]\nurl = '{}'\n", auth.url()));
    let mut shown = Vec::new();

    // No login yet: shown as needing one, and a session goes on without the server.
    let list = sb.exec_raw(&["mcp", "list"], &[]).await;
    assert!(
        list.stdout
            .contains("vault (http): needs login: run `cairn mcp login vault`"),
        "{list:?}"
    );
    let llm = MockLlm::start(vec![Script::text("hello")]).await;
    let url = llm.url();
    let before = sb
        .exec_raw(&["exec", "--base-url", &url, "--mode", "never", "go"], &[])
        .await;
    assert_eq!(before.code, 0, "{before:?}");
    assert!(
        before
            .stderr
            .contains("MCP server `vault`: needs login: run `cairn mcp login vault`"),
        "{before:?}"
    );

    // The login: metadata found from the 401, cairn registered, PKCE and the resource checked
    // by the token endpoint (the mock refuses otherwise).
    let logged = login(&sb).await;
    assert_eq!(logged.code, 0, "{logged:?}");
    assert!(logged.stdout.contains("Logged in to `vault`"), "{logged:?}");
    let seen = auth.seen();
    for step in [
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "GET /authorize",
        "POST /token",
    ] {
        assert!(seen.iter().any(|s| s == step), "{step}: {seen:?}");
    }
    assert_eq!(auth.access_tokens().len(), 1);
    let files: Vec<_> = std::fs::read_dir(sb.data_dir().join("mcp-oauth"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let token_file = files[0].clone();
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&token_file).unwrap()).unwrap();
    assert_eq!(stored["access_token"], auth.access_tokens()[0].as_str());
    shown.push(list);
    shown.push(before);
    shown.push(logged);

    // A session: the call reaches the server with the token.
    let (run, sent) = call_echo(&sb, "one").await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        sent.contains(r#"echo: {\"text\":\"one\"}"#) || sent.contains(r#"echo: {"text":"one"}"#),
        "{sent}"
    );
    let first = format!("Bearer {}", auth.access_tokens()[0]);
    assert!(
        auth.mcp_authorizations()
            .iter()
            .any(|a| a.as_deref() == Some(first.as_str()))
    );
    assert!(server.requests().iter().any(|r| r.rpc() == "tools/call"));
    shown.push(run);
    let mut to_model = sent;

    // The server stops taking the access token: a 401, a refresh, the call succeeds.
    auth.expire_access_tokens();
    let calls_before = server
        .requests()
        .iter()
        .filter(|r| r.rpc() == "tools/call")
        .count();
    let (run, sent) = call_echo(&sb, "two").await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(sent.contains("two"), "{sent}");
    assert_eq!(auth.refreshes(), 1);
    assert_eq!(auth.access_tokens().len(), 2);
    let calls = server
        .requests()
        .iter()
        .filter(|r| r.rpc() == "tools/call")
        .count();
    assert_eq!(calls, calls_before + 1);
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&token_file).unwrap()).unwrap();
    assert_eq!(stored["access_token"], auth.access_tokens()[1].as_str());
    assert_eq!(stored["refresh_token"], auth.refresh_tokens()[1].as_str());
    shown.push(run);
    to_model.push_str(&sent);

    // The access token expired by the clock: refreshed before it is sent, no 401 first.
    let mut aged = stored.clone();
    aged["expires_at"] = json!(1);
    std::fs::write(&token_file, aged.to_string()).unwrap();
    let asked_before = auth.mcp_authorizations().len();
    let (run, sent) = call_echo(&sb, "three").await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(sent.contains("three"), "{sent}");
    assert_eq!(auth.refreshes(), 2);
    let third = format!("Bearer {}", auth.access_tokens()[2]);
    let asked = auth.mcp_authorizations();
    assert!(
        asked[asked_before..]
            .iter()
            .all(|a| a.as_deref() == Some(third.as_str())),
        "{asked:?}"
    );
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    shown.push(run);
    to_model.push_str(&sent);

    // The grant revoked and the access token refused: the refresh is refused, and the server
    // needs a login again.
    auth.expire_access_tokens();
    auth.revoke_refresh_tokens();
    let list = sb.exec_raw(&["mcp", "list"], &[]).await;
    assert!(
        list.stdout
            .contains("vault (http): needs login: run `cairn mcp login vault`"),
        "{list:?}"
    );
    shown.push(list);

    // No token in any output, any request to the model, or anything cairn wrote but the
    // token file.
    let secrets: Vec<String> = auth
        .access_tokens()
        .into_iter()
        .chain(auth.refresh_tokens())
        .collect();
    let written: Vec<_> = walk(&sb.data_dir())
        .into_iter()
        .filter(|p| *p != token_file)
        .collect();
    assert!(!written.is_empty());
    for secret in &secrets {
        for run in &shown {
            assert!(
                !run.stdout.contains(secret) && !run.stderr.contains(secret),
                "{run:?}"
            );
        }
        assert!(!to_model.contains(secret));
        for path in &written {
            let bytes = std::fs::read(path).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(secret),
                "{}",
                path.display()
            );
        }
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
