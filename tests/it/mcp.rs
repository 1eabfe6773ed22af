//! MCP servers end to end (SPEC §11.3): the real `cairn exec` against the scripted mock model,
//! with the scripted stdio server (`mock-mcp`) configured in the user's config. The servers'
//! tools reach the first request under their `mcp__` names, a call reaches the server with its
//! arguments and its answer the next request, a hung server does not hold the first request, a
//! server that dies gives a clear error and is started again once, unannotated tools ask (and
//! headless runs deny them) unless a rule allows them, and no server process survives the run.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::cairn_cmd::{Run, Sandbox, alive};
use cairn::mcp::names::tool_name;
use cairn::testing::mock_mcp::{McpScript, tool};
use cairn::testing::{MockLlm, Script};

const MOCK_MCP: &str = env!("CARGO_BIN_EXE_mock-mcp");

/// A scripted server: its script file and its log, in a temp dir outside the workspace.
pub(crate) struct Server {
    dir: tempfile::TempDir,
}

impl Server {
    pub(crate) fn new(mut script: McpScript) -> Self {
        let dir = tempfile::tempdir().unwrap();
        script.log = Some(dir.path().join("log.jsonl"));
        std::fs::write(
            dir.path().join("script.json"),
            serde_json::to_string(&script).unwrap(),
        )
        .unwrap();
        Self { dir }
    }

    /// Its `[mcp_servers.NAME]` table, with `extra` keys.
    pub(crate) fn table(&self, name: &str, extra: &str) -> String {
        format!(
            "[mcp_servers.\"{name}\"]\ncommand = '{MOCK_MCP}'\nargs = ['{}']\n{extra}\n",
            self.script().display()
        )
    }

    fn script(&self) -> PathBuf {
        self.dir.path().join("script.json")
    }

    /// Every message it received, in order (and its pid record first).
    pub(crate) fn received(&self) -> Vec<Value> {
        read_log(&self.dir.path().join("log.jsonl"))
    }

    pub(crate) fn calls(&self) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m["method"] == "tools/call")
            .collect()
    }

    /// The pids of every process of it that started.
    pub(crate) fn pids(&self) -> Vec<i32> {
        self.received()
            .iter()
            .filter_map(|m| m["pid"].as_i64())
            .map(|p| i32::try_from(p).unwrap())
            .collect()
    }
}

fn read_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn echo_tools() -> McpScript {
    McpScript {
        tools: vec![
            tool("echo", "Echoes what it is sent."),
            tool("die", "Exits."),
            json!({
                "name": "peek",
                "description": "Reads something.",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true}
            }),
        ],
        ..McpScript::default()
    }
}

/// The tool names of request `i`.
fn offered(llm: &MockLlm, i: usize) -> Vec<String> {
    llm.request(i)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

async fn exec(sb: &Sandbox, llm: &MockLlm, mode: &str) -> Run {
    sb.exec(&llm.url(), &["--mode", mode, "go"]).await
}

#[tokio::test]
async fn tools_reach_the_first_request_and_a_call_reaches_the_server_and_back() {
    let demo = Server::new(echo_tools());
    let long = "t".repeat(80);
    let spaced = Server::new(McpScript {
        tools: vec![tool(&long, "A tool with a long name.")],
        ..McpScript::default()
    });
    let sb = Sandbox::new().config(&format!(
        "{}{}",
        demo.table("demo", ""),
        spaced.table("my server", "")
    ));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__demo__echo", json!({"text": "hi"})),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto").await;
    assert_eq!(run.code, 0, "{run:?}");

    let names = offered(&llm, 0);
    let long_name = tool_name("my server", &long);
    assert!(long_name.len() <= 64 && long_name.starts_with("mcp__my_server__tt"));
    let mcp: Vec<&String> = names.iter().filter(|n| n.starts_with("mcp__")).collect();
    assert_eq!(
        mcp,
        [
            "mcp__demo__die",
            "mcp__demo__echo",
            "mcp__demo__peek",
            &long_name
        ],
        "sorted, after the built-in tools"
    );
    // The server's schema and description, as sent.
    let echo = llm.request(0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__demo__echo")
        .cloned()
        .unwrap();
    assert_eq!(echo["function"]["description"], "Echoes what it is sent.");
    assert_eq!(
        echo["function"]["parameters"]["properties"]["text"]["type"],
        "string"
    );
    // The call reached the server with its arguments; its answer reached the next request.
    let calls = demo.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["params"]["name"], "echo");
    assert_eq!(calls[0]["params"]["arguments"], json!({"text": "hi"}));
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(result.contains(r#"echo: {"text":"hi"}"#), "{result}");
    // The same tools array in every request of the session.
    assert_eq!(llm.request(0)["tools"], llm.request(1)["tools"]);
    // Nothing of either server runs once cairn is done.
    for pid in demo.pids().into_iter().chain(spaced.pids()) {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn a_server_that_never_initializes_does_not_hold_the_first_request() {
    let hung = McpScript {
        never_initialize: true,
        ..echo_tools()
    };
    let (slow, late) = (Server::new(hung.clone()), Server::new(hung));
    let fine = Server::new(echo_tools());
    let sb = Sandbox::new().config(&format!(
        "{}{}{}",
        slow.table("slow", "startup_timeout_secs = 1"),
        late.table("late", "startup_timeout_secs = 30"),
        fine.table("fine", "")
    ));
    let llm = MockLlm::start(vec![Script::text("done")]).await;
    let started = std::time::Instant::now();
    let run = exec(&sb, &llm, "auto").await;
    let took = started.elapsed();
    assert_eq!(run.code, 0, "{run:?}");
    // The first request waited at most 3 s for the servers (the run ends right after it).
    assert!(took < std::time::Duration::from_millis(5_000), "{took:?}");
    assert!(
        run.stderr.contains("MCP server `slow`: timed out"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("MCP server `late` was not ready for the first request"),
        "{}",
        run.stderr
    );
    let names = offered(&llm, 0);
    assert!(names.contains(&"mcp__fine__echo".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("mcp__slow") || n.starts_with("mcp__late"))
    );
    for pid in slow
        .pids()
        .into_iter()
        .chain(late.pids())
        .chain(fine.pids())
    {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn a_server_that_dies_gives_a_clear_error_and_is_started_again_once() {
    let demo = Server::new(echo_tools());
    let sb = Sandbox::new().config(&demo.table("demo", ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__demo__die", json!({})),
        Script::tool_call("c2", "mcp__demo__echo", json!({"text": "again"})),
        Script::tool_call("c3", "mcp__demo__die", json!({})),
        Script::tool_call("c4", "mcp__demo__echo", json!({"text": "third"})),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto").await;
    assert_eq!(run.code, 0, "{run:?}");
    let died = llm.tool_result(1, "c1").unwrap();
    assert!(
        died.contains("the MCP server `demo` exited during the call")
            && died.contains("dying as asked"),
        "{died}"
    );
    let again = llm.tool_result(2, "c2").unwrap();
    assert!(again.contains("echo: {\"text\":\"again\"}"), "{again}");
    // Once only: after the second death its tools answer that it is gone.
    let gone = llm.tool_result(4, "c4").unwrap();
    assert!(
        gone.contains("the MCP server `demo` is not available: exited"),
        "{gone}"
    );
    assert_eq!(demo.pids().len(), 2, "started twice");
    for pid in demo.pids() {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn an_unannotated_tool_asks_in_auto_edit_a_rule_allows_it_and_headless_denies_it() {
    let demo = Server::new(echo_tools());
    let sb = Sandbox::new().config(&demo.table("demo", ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__demo__echo", json!({"text": "hi"})),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto-edit").await;
    assert!(demo.calls().is_empty(), "the held call ran: {run:?}");
    assert!(
        run.stderr.contains("mcp__demo__echo") || run.stdout.contains("mcp__demo__echo"),
        "{run:?}"
    );

    // A read-only hint of the user's own server runs in auto-edit.
    let peek = Server::new(echo_tools());
    let sb = Sandbox::new().config(&peek.table("demo", ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__demo__peek", json!({})),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto-edit").await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(peek.calls().len(), 1, "{run:?}");

    // A rule for every tool of the server lets it run.
    let allowed = Server::new(echo_tools());
    let sb = Sandbox::new().config(&format!(
        "[permissions]\nallow = [\"mcp__demo__*\"]\n{}",
        allowed.table("demo", "")
    ));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__demo__echo", json!({"text": "hi"})),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto-edit").await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(allowed.calls().len(), 1, "{run:?}");
}

/// The tools array of every request, as sent.
fn tools_arrays(llm: &MockLlm) -> Vec<Value> {
    llm.requests().iter().map(|r| r["tools"].clone()).collect()
}

#[tokio::test]
async fn a_300_tool_catalog_is_reached_through_mcp_search_and_mcp_call_with_a_fixed_array() {
    let big = Server::new(McpScript {
        generate: 300,
        ..McpScript::default()
    });
    let sb = Sandbox::new().config(&big.table("big", ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp_search", json!({"query": "number 42"})),
        Script::tool_call(
            "c2",
            "mcp_call",
            json!({"server": "big", "tool": "tool_042", "arguments": {"text": "x"}}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto").await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("more than a tenth of the window"),
        "{}",
        run.stderr
    );
    let names = offered(&llm, 0);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    assert!(names.ends_with(&["mcp_search".to_string(), "mcp_call".to_string()]));
    let found = llm.tool_result(1, "c1").unwrap();
    assert!(
        found.contains("tool `tool_042`") && found.contains("arguments schema: {"),
        "{found}"
    );
    let calls = big.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["params"]["name"], "tool_042");
    assert_eq!(calls[0]["params"]["arguments"], json!({"text": "x"}));
    assert!(
        llm.tool_result(2, "c2")
            .unwrap()
            .contains("tool_042 called")
    );
    // Byte-identical tools arrays: the schemas arrived as results, the prefix stayed.
    let arrays = tools_arrays(&llm);
    assert!(arrays.windows(2).all(|w| w[0] == w[1]));
}

#[tokio::test]
async fn tools_list_changed_mid_session_changes_no_request_prefix() {
    let changing = Server::new(McpScript {
        list_changed: true,
        ..echo_tools()
    });
    let sb = Sandbox::new().config(&changing.table("live", ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__live__echo", json!({"text": "first"})),
        Script::tool_call("c2", "mcp_search", json!({"query": "added"})),
        Script::tool_call(
            "c3",
            "mcp_call",
            json!({"server": "live", "tool": "added_later", "arguments": {}}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = exec(&sb, &llm, "auto").await;
    assert_eq!(run.code, 0, "{run:?}");
    let names = offered(&llm, 0);
    assert!(names.contains(&"mcp__live__echo".to_string()), "{names:?}");
    assert!(names.contains(&"mcp_search".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("added_later")),
        "{names:?}"
    );
    // The new tool is found and called through the pair.
    let found = llm.tool_result(2, "c2").unwrap();
    assert!(
        found.contains("added_later"),
        "{found} {:?}",
        changing.received()
    );
    assert!(
        llm.tool_result(3, "c3")
            .unwrap()
            .contains("added_later called")
    );
    // Every request starts with the whole of the one before: nothing before it changed.
    let requests = llm.requests();
    for pair in requests.windows(2) {
        assert_eq!(pair[0]["tools"], pair[1]["tools"]);
        let (before, after) = (
            pair[0]["messages"].as_array().unwrap(),
            pair[1]["messages"].as_array().unwrap(),
        );
        assert_eq!(before[..], after[..before.len()]);
    }
}

/// The first request of a plain session (a fresh git workspace with a README, no AGENTS.md,
/// skills, MCP or language servers, the issue's measure): its size, counted as if the
/// workspace's path were 24 characters (the temp dir's name varies), and the mock.
pub(crate) async fn plain_first_request(config: &str) -> (usize, MockLlm) {
    let sb = Sandbox::new()
        .file("README.md", "# demo\n\nA small project.\n")
        .config(config);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(sb.workspace())
        .status();
    assert!(git.is_ok_and(|s| s.success()));
    let llm = MockLlm::start(vec![Script::text("hi")]).await;
    let run = sb.exec(&llm.url(), &["hello"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let raw = llm.recorded()[0].raw.len();
    let path = sb.workspace().to_string_lossy().len();
    (raw - path + 24, llm)
}

#[tokio::test]
async fn a_plain_session_s_first_request_stays_small() {
    // No language server: the machine's PATH may have one.
    let (bytes, llm) = plain_first_request("[lsp]\nenabled = false\n").await;
    let body = llm.request(0);
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // No skill exists, so `skill` takes no room; every other tool is there.
    assert!(!names.contains(&"skill"), "{names:?}");
    assert_eq!(names.len(), 13, "{names:?}");
    // The twelve tools of a plain session came to 5,869 bytes (issue 34: under 6 KB); the
    // subagent tool, offered in every session since, brings it to 6,432.
    assert!(bytes < 6_500, "the first request is {bytes} bytes");
}

#[tokio::test]
async fn progress_reaches_the_card_and_an_interrupt_sends_notifications_cancelled() {
    use tokio::io::AsyncBufReadExt as _;
    let mut script = echo_tools();
    script.tools.push(tool("slow", "Takes its time."));
    let demo = Server::new(script);
    let sb = Sandbox::new().config(&demo.table("demo", ""));
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "mcp__demo__slow", json!({})),
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
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The server's progress notifications reach the call's live tail (its card).
    let mut tails = String::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let event: Value = serde_json::from_str(&line).unwrap_or_default();
            if let Some(chunk) = event["chunk"].as_str() {
                tails.push_str(chunk);
            }
            // Both, in either order (the SDK handles notifications side by side).
            if tails.contains("progress 1/4: step 1") && tails.contains("progress 2/4: step 2") {
                return;
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no progress reached the tail: {tails:?}");
    // Ctrl+C (Esc in the TUI) interrupts the call: the server is told.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(!status.success() || status.code().is_some());
    let received = demo.received();
    let call_id = received
        .iter()
        .find(|m| m["method"] == "tools/call")
        .map(|m| m["id"].clone())
        .unwrap();
    let cancelled = received
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .cloned();
    let cancelled = cancelled.unwrap_or_else(|| panic!("no cancellation in {received:?}"));
    assert_eq!(cancelled["params"]["requestId"], call_id);
    for pid in demo.pids() {
        assert!(!alive(pid), "server process {pid} survived");
    }
}

#[tokio::test]
async fn mcp_list_shows_each_server_s_state_and_tools() {
    let demo = Server::new(echo_tools());
    let hung = Server::new(McpScript {
        never_initialize: true,
        ..McpScript::default()
    });
    let sb = Sandbox::new().config(&format!(
        "{}{}[mcp_servers.off]\ncommand = 'true'\nenabled = false\n",
        demo.table("demo", ""),
        hung.table("hung", "startup_timeout_secs = 1")
    ));
    let run = sb.exec_raw(&["mcp", "list", "--json"], &[]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let listed: Value = serde_json::from_str(&run.stdout).unwrap();
    let servers = listed["servers"].as_array().unwrap();
    assert_eq!(servers[0]["name"], "demo");
    assert_eq!(servers[0]["state"], "ready");
    assert_eq!(
        servers[0]["tools"],
        json!(["mcp__demo__die", "mcp__demo__echo", "mcp__demo__peek"])
    );
    assert_eq!(servers[1]["name"], "hung");
    assert_eq!(servers[1]["state"], "timed_out");
    assert_eq!(listed["disabled"], json!(["off"]));
    let text = sb.exec_raw(&["mcp", "list"], &[]).await;
    assert!(
        text.stdout.contains("demo (stdio): ready, 3 tools"),
        "{text:?}"
    );
    assert!(text.stdout.contains("hung (stdio): timed out"), "{text:?}");
    for pid in demo.pids().into_iter().chain(hung.pids()) {
        assert!(!alive(pid), "server process {pid} survived");
    }
}
