//! Language servers in whole `cairn exec` sessions against the scripted server (`mock-lsp`):
//! a write's result carries the error it introduced; a command that changed an open file
//! sends it to the server; diagnostics that come after a result went out reach the next
//! request as an appended note, every earlier byte unchanged; a project's server runs only
//! once trusted; no server outlives cairn.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::{Value, json};

use crate::lsp::MOCK;
use crate::support::cairn_cmd::{Sandbox, alive};
use cairn::testing::mock_lsp::MockLspScript;
use cairn::testing::{MockLlm, Script};

/// The user's config with the scripted server for `.mk` files (the sandbox off: these tests
/// are about the session, `lsp::a_server_is_refused_...` about the sandbox).
fn config(script: &MockLspScript, dir: &Path, wait_ms: u64) -> String {
    let script_path = dir.join("script.json");
    std::fs::write(&script_path, serde_json::to_string(script).unwrap()).unwrap();
    format!(
        "[sandbox]\nenabled = false\n[lsp]\nwait_ms = {wait_ms}\n[lsp.mock]\ncommand = '{MOCK}'\nargs = ['{}']\nlanguages = ['mk']\n",
        script_path.display()
    )
}

/// Each request begins with the one before it, byte for byte (messages and tools).
fn assert_append_only(requests: &[Value]) {
    for pair in requests.windows(2) {
        let before = pair[0]["messages"].as_array().unwrap();
        let after = pair[1]["messages"].as_array().unwrap();
        assert!(after.len() > before.len());
        assert_eq!(
            serde_json::to_string(&after[..before.len()]).unwrap(),
            serde_json::to_string(before).unwrap(),
            "the earlier messages changed"
        );
        assert_eq!(pair[0]["tools"], pair[1]["tools"], "the tools changed");
    }
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}
/// `cairn exec` end to end: the `lsp` tool is offered, a write's result carries the error it
/// introduced, the request after it begins with the one before byte for byte, the server's
/// state is published for the status line, and the server is gone when cairn exits.
#[tokio::test]
async fn exec_appends_diagnostics_to_a_write_and_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let pids_file = dir.path().join("pids");
    let script = MockLspScript {
        pids_file: Some(pids_file.clone()),
        ..MockLspScript::default()
    };
    let sb = Sandbox::new().config(&config(&script, dir.path(), 10_000));
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "write_file",
            json!({"path": "a.mk", "content": "ok\n  ERROR: boom\n"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "--json", "go"])
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(tool_names(&requests[0]).contains(&"lsp".to_string()));
    // The status line's indicator: the server's state once it started.
    let states: Vec<Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "language_servers")
        .map(|e| e["indicator"].clone())
        .collect();
    assert_eq!(states, [json!("mock ready")], "{}", run.stdout);
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(result.contains("a.mk:2:3 error E1 boom"), "{result}");
    assert_append_only(&requests);
    let text = std::fs::read_to_string(&pids_file).unwrap();
    for pid in text.split_whitespace() {
        let pid: i32 = pid.parse().unwrap();
        assert!(!alive(pid), "process {pid} of the server survived cairn");
    }
}

/// A command that rewrote an open file (a formatter, a generator): the session sends the new
/// content to the server as the document's next version (`didChange`), with no edit by the
/// model and no `lsp` call in between; a command that changed nothing sends nothing.
#[tokio::test]
async fn a_command_that_changed_an_open_file_sends_it_to_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let messages = dir.path().join("messages");
    let script = MockLspScript {
        messages_file: Some(messages.clone()),
        ..MockLspScript::default()
    };
    let sb = Sandbox::new().config(&config(&script, dir.path(), 10_000));
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "write_file",
            json!({"path": "a.mk", "content": "ok\n"}),
        ),
        Script::tool_call("c2", "bash", json!({"command": "true"})),
        Script::tool_call(
            "c3",
            "bash",
            json!({"command": "printf 'ok\\nERROR: formatted\\n' > a.mk"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sb.read("a.mk"), "ok\nERROR: formatted\n");
    let log = std::fs::read_to_string(&messages).unwrap();
    let sent: Vec<&str> = log.lines().filter(|l| l.starts_with("did")).collect();
    assert_eq!(
        sent,
        [
            "didOpen 1 \"ok\\n\"",
            "didChange 2 \"ok\\nERROR: formatted\\n\""
        ],
        "{log}"
    );
}

/// A server slower than `wait_ms`: the write's result says "diagnostics pending"; what the
/// server reports later reaches the model as a note appended at a following step (never by
/// rewriting the result already sent), and every request begins with the one before it byte
/// for byte.
#[tokio::test]
async fn late_diagnostics_reach_the_next_request_as_an_appended_note() {
    let dir = tempfile::tempdir().unwrap();
    let messages = dir.path().join("messages");
    let script = MockLspScript {
        delays_ms: vec![1500],
        messages_file: Some(messages.clone()),
        ..MockLspScript::default()
    };
    let sb = Sandbox::new().config(&config(&script, dir.path(), 200));
    // The second step's command ends once the server has published (the mock logs it).
    let wait = format!(
        "until grep -q published '{}'; do sleep 0.05; done",
        messages.display()
    );
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "write_file",
            json!({"path": "a.mk", "content": "ok\nERROR: late one\n"}),
        ),
        Script::tool_call("c2", "bash", json!({"command": wait})),
        Script::tool_call("c3", "bash", json!({"command": "true"})),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let requests = llm.requests();
    assert_eq!(requests.len(), 4);
    let result = llm.tool_result(1, "c1").unwrap();
    assert!(result.contains("[diagnostics pending"), "{result}");
    assert!(!result.contains("late one"), "{result}");
    assert_append_only(&requests);
    // The note comes once, after the pending result, in the request after the server
    // published (the third, or the fourth if the report was still on its way).
    let notes: Vec<(usize, String)> = requests
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            let before = if i == 0 {
                0
            } else {
                requests[i - 1]["messages"].as_array().unwrap().len()
            };
            r["messages"].as_array().unwrap()[before..]
                .iter()
                .filter_map(|m| m["content"].as_str())
                .filter(|c| c.contains("pending for your edit of a.mk"))
                .map(move |c| (i, c.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let (at, note) = &notes[0];
    assert!(*at == 2 || *at == 3, "the note came in request {at}");
    assert!(note.contains("a.mk:2:1 error E1 late one"), "{note}");
}

/// A language server from the project's `.cairn/config.toml` follows the trust rule (SPEC
/// §11.3): a headless run leaves it out (it never starts: no diagnostics) until it is
/// trusted (here with `--trust-project`).
#[tokio::test]
async fn a_projects_server_runs_only_once_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("script.json");
    std::fs::write(
        &script_path,
        serde_json::to_string(&MockLspScript::default()).unwrap(),
    )
    .unwrap();
    let project = format!(
        "[lsp.proj]\ncommand = '{MOCK}'\nargs = ['{}']\nlanguages = ['mk']\n",
        script_path.display()
    );
    for trusted in [false, true] {
        let sb = Sandbox::new()
            .config("[sandbox]\nenabled = false\n[lsp]\nwait_ms = 10000\n")
            .file(".cairn/config.toml", &project);
        let llm = MockLlm::start(vec![
            Script::tool_call(
                "c1",
                "write_file",
                json!({"path": "a.mk", "content": "ERROR: boom\n"}),
            ),
            Script::text("done"),
        ])
        .await;
        let mut args = vec!["--mode", "auto"];
        if trusted {
            args.push("--trust-project");
        }
        args.push("go");
        let run = sb.exec(&llm.url(), &args).await;
        assert_eq!(run.code, 0, "{}", run.stderr);
        let result = llm.tool_result(1, "c1").unwrap();
        // (Untrusted, the tool may still be offered for a built-in server on this PATH.)
        if trusted {
            assert!(tool_names(&llm.request(0)).contains(&"lsp".to_string()));
        }
        assert_eq!(
            result.contains("[proj, version"),
            trusted,
            "trusted {trusted}: {result}"
        );
        assert_eq!(
            result.contains("a.mk:1:1 error E1 boom"),
            trusted,
            "trusted {trusted}: {result}"
        );
    }
}
