//! Figures of the MCP client for the note, measured rather than guessed (ignored by
//! default: they time things). `cargo test --test it mcp_figures -- --ignored --nocapture`
//! prints: the first request's delay with 0, 1 and 5 stdio servers (the real `cairn exec`
//! against the scripted model, start to first request), the round trip of a stdio call through
//! the hub against the scripted server (whose own work, an echo, takes microseconds), and the
//! first request's bytes without MCP, with a 300-tool catalog (offered as `mcp_search` and
//! `mcp_call`), and with the same catalog forced into the array.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::time::{Duration, Instant};

use serde_json::json;

use crate::mcp::Server;
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::mock_mcp::{McpScript, tool};
use cairn::testing::{MockLlm, Script};

fn echo() -> McpScript {
    McpScript {
        tools: vec![tool("echo", "Echoes what it is sent.")],
        ..McpScript::default()
    }
}

/// From the start of `cairn exec` to the model's first request, the median of `runs`.
async fn first_request_delay(config: &str, runs: usize) -> Duration {
    let mut took = Vec::new();
    for _ in 0..runs {
        let sb = Sandbox::new().config(config);
        let llm = MockLlm::start(vec![Script::text("done")]).await;
        let url = llm.url();
        let started = Instant::now();
        let mut child = sb
            .command(&["exec", "--base-url", &url, "--mode", "auto", "go"], &[])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        llm.wait_for_requests(1, Duration::from_secs(30)).await;
        took.push(started.elapsed());
        child.wait().await.unwrap();
    }
    took.sort();
    took[took.len() / 2]
}

#[tokio::test]
#[ignore = "figures for the note: timing, run by hand"]
async fn mcp_figures() {
    let servers: Vec<Server> = (0..5).map(|_| Server::new(echo())).collect();
    let tables = |n: usize| -> String {
        servers[..n]
            .iter()
            .enumerate()
            .map(|(i, s)| s.table(&format!("s{i}"), ""))
            .collect()
    };
    for n in [0, 1, 5] {
        let delay = first_request_delay(&format!("[lsp]\nenabled = false\n{}", tables(n)), 5).await;
        eprintln!("FIGURE first request after {delay:?} with {n} stdio server(s) (median of 5)");
    }

    // A stdio call's round trip through the hub.
    let one = Server::new(echo());
    let config: cairn::config::McpServersFile =
        toml::from_str::<toml::Table>(&one.table("demo", ""))
            .unwrap()
            .get("mcp_servers")
            .unwrap()
            .clone()
            .try_into()
            .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let hub = cairn::mcp::McpHub::start(
        &config,
        None,
        cairn::mcp::McpRunSettings {
            workspace: ws.path().to_path_buf(),
            process: cairn::process::Settings::default(),
            network: None,
            data: None,
        },
    );
    let started = Instant::now();
    hub.settle(Duration::from_secs(10)).await;
    eprintln!(
        "FIGURE one stdio server ready (spawn, negotiate, list) in {:?}",
        started.elapsed()
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let calls = 200;
    let started = Instant::now();
    for i in 0..calls {
        let args = json!({"text": format!("call {i}")});
        let answer = hub
            .call(
                "demo",
                "echo",
                args.as_object().unwrap().clone(),
                &cancel,
                None,
            )
            .await;
        assert!(answer.is_ok(), "{answer:?}");
    }
    eprintln!(
        "FIGURE a stdio call (echo) round trip: {:?} on average over {calls}",
        started.elapsed() / calls
    );
    hub.shutdown().await;

    // Request bytes.
    let bytes = |llm: &MockLlm| llm.recorded()[0].raw.len();
    let base = "[lsp]\nenabled = false\n";
    let big = Server::new(McpScript {
        generate: 300,
        ..McpScript::default()
    });
    for (what, config) in [
        ("without MCP", base.to_string()),
        (
            "with a 300-tool catalog (mcp_search/mcp_call)",
            format!("{base}{}", big.table("big", "")),
        ),
        (
            "with the 300 tools in the array (window 10M)",
            format!("context_window = 10000000\n{base}{}", big.table("big", "")),
        ),
    ] {
        let sb = Sandbox::new().config(&config);
        let llm = MockLlm::start(vec![Script::text("done")]).await;
        let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
        assert_eq!(run.code, 0, "{run:?}");
        eprintln!("FIGURE first request {what}: {} bytes", bytes(&llm));
    }
}
