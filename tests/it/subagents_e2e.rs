//! Subagents through the real `cairn exec` (SPEC §11.5), against the scripted mock: a child's
//! dangerous command in a headless run is denied at once and the parent still gets its report;
//! a child's calls pass the same hooks as the parent's; a child is offered the parent's MCP
//! tools, narrowed by its definition's `tools:`, and asks for its definition's `model:`;
//! `cairn undo` takes back what a child's command changed.
//! The mock tells a child's requests from the parent's by their first user message (a child
//! sees only its prompt).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::hooks::{Scripts, hook_config};
use crate::mcp::Server;
use crate::subagents::{delegate, first_user_text, tool_names};
use crate::support::cairn_cmd::{Sandbox, reverted, undo_json};
use cairn::testing::mock_mcp::{McpScript, tool};
use cairn::testing::{MockLlm, Script};

/// Whether the request already answers a tool call (the child's second request).
fn has_tool_result(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"))
}

/// The requests whose first user message holds `marker`, in order.
fn requests_of(llm: &MockLlm, marker: &str) -> Vec<Value> {
    llm.requests()
        .into_iter()
        .filter(|r| first_user_text(r).contains(marker))
        .collect()
}

/// The content of the tool message answering `call` in `request`.
fn result_in(request: &Value, call: &str) -> Option<String> {
    request["messages"]
        .as_array()?
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"].as_str() == Some(call))
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_a_childs_dangerous_command_is_denied_at_once_and_the_parent_gets_its_report() {
    let sb = Sandbox::new().file("build/out.o", "object");
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate(
            "s1",
            "clean the build",
            "CLEAN-TASK: remove the build directory",
            None,
        )]),
        Script::tool_call("c1", "bash", json!({"command": "rm -rf build"})),
        Script::text("CHILD-REPORT: nobody could approve removing build."),
        Script::text("The build directory is still there: removing it needs your approval."),
    ])
    .await;
    let started = Instant::now();
    let run = sb
        .exec(&llm.url(), &["--mode", "ask", "clean the build"])
        .await;
    let took = started.elapsed();
    // Denied at once: nothing waits for an answer that cannot come (the stall clock is 300 s).
    assert!(took < Duration::from_secs(20), "the run took {took:?}");
    // A denial inside a child does not end the parent's run as denied: the child reports it
    // and the parent's model answers.
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert_eq!(
        run.stdout.trim(),
        "The build directory is still there: removing it needs your approval."
    );
    assert!(run.stderr.contains("→ subagent"), "{}", run.stderr);
    // The user is told too, under the child's call: what it ran and that it was denied.
    assert!(
        run.stderr.contains("  ↳ bash rm -rf build")
            && run
                .stderr
                .contains("nobody can approve it in this headless run"),
        "{}",
        run.stderr
    );
    assert!(sb.path("build/out.o").exists(), "the command did not run");
    assert_eq!(llm.requests().len(), 4);
    // The child was told why, and not asked again.
    let denied = llm.tool_result(2, "c1").unwrap();
    assert!(
        denied.contains("nobody can approve it in this headless run") && denied.contains("rm -rf"),
        "{denied}"
    );
    assert!(first_user_text(&llm.request(2)).contains("CLEAN-TASK"));
    // The parent got the child's final text and its figures.
    let report = llm.tool_result(3, "s1").unwrap();
    assert!(
        report.starts_with("CHILD-REPORT: nobody could approve removing build.\n[subagent general: completed · 2 steps · "),
        "{report}"
    );
    assert!(!first_user_text(&llm.request(3)).contains("CLEAN-TASK"));
}

/// Denies any command that contains `git push`, with a reason on stderr.
const DENY_PUSH: &str = r#"input=$(cat)
case "$input" in
  *"git push"*) echo "pushing is not allowed from an agent" >&2; exit 2;;
esac
exit 0
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_a_childs_command_goes_through_the_parents_pre_tool_hook() {
    let scripts = Scripts::new();
    let command = scripts.script("deny-push.sh", DENY_PUSH);
    let sb = Sandbox::new().config(&hook_config("pre_tool", &command, "matcher = 'bash'"));
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "publish the branch", "PUSH-TASK", None)]),
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "touch pushed && git push origin main"}),
        ),
        Script::tool_call("c2", "bash", json!({"command": "touch allowed"})),
        Script::text("CHILD-REPORT: the hook blocked the push."),
        Script::text("A hook does not allow pushing."),
    ])
    .await;
    // `never`: nothing asks, so only the hook can keep the command from running.
    let run = sb.exec(&llm.url(), &["--mode", "never", "push it"]).await;
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert_eq!(run.stdout.trim(), "A hook does not allow pushing.");
    assert!(!sb.path("pushed").exists(), "the blocked command ran");
    assert!(
        sb.path("allowed").exists(),
        "the hook let the other command run"
    );
    let blocked = llm.tool_result(2, "c1").unwrap();
    assert!(
        blocked.contains("blocked by hook pre_tool #1")
            && blocked.contains("pushing is not allowed from an agent"),
        "{blocked}"
    );
    assert!(first_user_text(&llm.request(2)).contains("PUSH-TASK"));
    let report = llm.tool_result(4, "s1").unwrap();
    assert!(
        report.starts_with(
            "CHILD-REPORT: the hook blocked the push.\n[files the subagent changed: allowed (created)]\n[subagent general: completed · 3 steps"
        ),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_a_child_is_offered_the_parents_mcp_tools_narrowed_by_its_definition_and_its_model() {
    let server = Server::new(McpScript {
        tools: vec![
            tool("echo", "Echoes what it is sent."),
            json!({
                "name": "peek",
                "description": "Reads something.",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true}
            }),
        ],
        ..McpScript::default()
    });
    let sb = Sandbox::new().config(&server.table("demo", ""));
    // A user agent definition (the config directory's `agents/`).
    let agents = sb
        .data_dir()
        .parent()
        .unwrap()
        .join("config")
        .join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("narrow.md"),
        "---\nname: narrow\ndescription: reads and echoes\ntools: read_file, mcp__demo__echo\nmodel: small-model\n---\nYou are NARROW-PROMPT, a focused helper.\n",
    )
    .unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            delegate(
                "s1",
                "echo through the server",
                "NARROW-TASK",
                Some("narrow"),
            ),
            delegate("s2", "look around", "GENERAL-TASK", None),
        ]),
        Script::text("Both children answered."),
    ])
    .await;
    // The two children run at once: each is answered by what it asks, not by arrival order.
    llm.respond_with(|body| {
        let first = first_user_text(body);
        if first.contains("NARROW-TASK") {
            Some(if has_tool_result(body) {
                Script::text("NARROW-DONE")
            } else {
                Script::tool_call("e1", "mcp__demo__echo", json!({"text": "from the child"}))
            })
        } else if first.contains("GENERAL-TASK") {
            Some(Script::text("GENERAL-DONE"))
        } else {
            None
        }
    });
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "use two helpers"])
        .await;
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert_eq!(run.stdout.trim(), "Both children answered.");

    let parent = llm.request(0);
    let parent_tools = tool_names(&parent);
    assert!(
        parent_tools.contains(&"mcp__demo__echo".to_string())
            && parent_tools.contains(&"mcp__demo__peek".to_string()),
        "{parent_tools:?}"
    );
    // The general child: the parent's tools, MCP ones included, less `subagent`.
    let general = requests_of(&llm, "GENERAL-TASK");
    assert_eq!(general.len(), 1);
    let general_tools = tool_names(&general[0]);
    for name in ["bash", "mcp__demo__echo", "mcp__demo__peek"] {
        assert!(
            general_tools.contains(&name.to_string()),
            "{name}: {general_tools:?}"
        );
    }
    assert!(
        !general_tools.contains(&"subagent".to_string()),
        "{general_tools:?}"
    );
    // The narrow child: only what its definition names, its own system prompt, its model.
    let narrow = requests_of(&llm, "NARROW-TASK");
    assert_eq!(narrow.len(), 2, "a call and the answer after it");
    let mut narrow_tools = tool_names(&narrow[0]);
    narrow_tools.sort();
    assert_eq!(narrow_tools, ["mcp__demo__echo", "read_file"]);
    assert!(
        narrow[0]["messages"][0]["content"]
            .to_string()
            .contains("NARROW-PROMPT"),
        "{}",
        narrow[0]["messages"][0]
    );
    for request in &narrow {
        assert_eq!(request["model"], "small-model", "{}", request["model"]);
    }
    assert_ne!(parent["model"], "small-model");
    assert_ne!(general[0]["model"], "small-model");
    // The child's MCP call reached the parent's server and its answer came back.
    let calls = server.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["params"]["name"], "echo");
    assert_eq!(calls[0]["params"]["arguments"]["text"], "from the child");
    let echoed = result_in(&narrow[1], "e1").unwrap();
    assert!(echoed.contains("from the child"), "{echoed}");
    // The parent read both answers.
    let last = llm.requests().len() - 1;
    let first = llm.tool_result(last, "s1").unwrap();
    assert!(
        first.starts_with("NARROW-DONE\n[subagent narrow: completed"),
        "{first}"
    );
    let second = llm.tool_result(last, "s2").unwrap();
    assert!(
        second.starts_with("GENERAL-DONE\n[subagent general: completed"),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_a_childs_command_changes_are_counted_and_undo_takes_them_back() {
    let sb = Sandbox::new().file("keep.txt", "original\n");
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "change two files", "CHANGE-TASK", None)]),
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo made > made.txt && echo changed > keep.txt"}),
        ),
        Script::text("CHILD-REPORT: changed them."),
        Script::text("The child changed two files."),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "never", "change things"])
        .await;
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert_eq!(sb.read("keep.txt"), "changed\n");
    assert!(sb.path("made.txt").exists());
    // What the child's command changed is counted and named in what the parent reads.
    let report = llm.tool_result(3, "s1").unwrap();
    assert!(
        report.contains("[files the subagent changed: keep.txt, made.txt (created)]")
            && report.contains(" · 2 files changed · "),
        "{report}"
    );
    // The child's changes belong to the parent's turn: `cairn undo` takes them back.
    let (code, report) = undo_json(&sb);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        reverted(&report),
        [
            ("keep.txt".into(), "restored".into()),
            ("made.txt".into(), "removed".into())
        ]
    );
    assert_eq!(sb.read("keep.txt"), "original\n");
    assert!(!sb.path("made.txt").exists());
}

/// Two children in one reply, one of them running a command that writes a file: one
/// checkpoint around both cannot tell whose change it is, so the figures say what they count
/// rather than a wrong number; `cairn undo` still takes the change back with the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_children_side_by_side_say_their_commands_changes_are_not_counted() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            delegate("s1", "generate", "CMD-TASK", None),
            delegate("s2", "look", "TEXT-TASK", None),
        ]),
        Script::text("Both done."),
    ])
    .await;
    llm.respond_with(|body| {
        let first = first_user_text(body);
        if first.contains("CMD-TASK") {
            Some(if has_tool_result(body) {
                Script::text("CMD-DONE")
            } else {
                Script::tool_call("c1", "bash", json!({"command": "echo made > made.txt"}))
            })
        } else if first.contains("TEXT-TASK") {
            Some(Script::text("TEXT-DONE"))
        } else {
            None
        }
    });
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "use two helpers"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(sb.path("made.txt").exists());
    let requests = llm.requests();
    let last = requests.len() - 1;
    let with_command = llm.tool_result(last, "s1").unwrap();
    assert!(
        with_command
            .contains("· 0 files written by its file tools (changes by its commands or subagents not counted) ·"),
        "{with_command}"
    );
    let without = llm.tool_result(last, "s2").unwrap();
    assert!(without.contains("· 0 files changed ·"), "{without}");
    let (code, report) = undo_json(&sb);
    assert_eq!(code, 0, "{report}");
    assert!(!sb.path("made.txt").exists(), "{report}");
}
