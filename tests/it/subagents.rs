//! Subagents against the scripted mock: a child's requests hold only its own system prompt
//! and its prompt; the parent reads its answer and figures; children of one reply overlap,
//! at most `max_parallel` at once; `explore` cannot write; a child's edit is undone with the
//! parent's turn; its approvals are asked in the parent's UI (denied at once headless); Esc
//! and a stall stop it and leave no process; its log is linked to the parent's.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::agent::TestAgent;
use cairn::agent::subagent::SubagentSettings;
use cairn::bus::{
    AgentEvent, ConversationEvent, Decision, Mode, ReportEvent, Restore, ToolEvent, Usage,
    UserCommand,
};
use cairn::testing::{MockCall, MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())
}

fn usage(prompt: u64, completion: u64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: 0,
    }
}

pub(crate) fn delegate(id: &str, description: &str, prompt: &str, agent: Option<&str>) -> MockCall {
    let mut args = json!({ "description": description, "prompt": prompt });
    if let Some(agent) = agent {
        args["agent"] = json!(agent);
    }
    MockCall::new(id, "subagent", args)
}

pub(crate) fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of a request's first user message (how the mock tells a child from its parent).
pub(crate) fn first_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

async fn agent_with(
    ws: &Path,
    sessions: &Path,
    llm: &MockLlm,
    mode: Mode,
    settings: SubagentSettings,
    interactive: bool,
) -> TestAgent {
    TestAgent::with_subagents(ws, sessions, &llm.url(), mode, settings, |s| {
        s.interactive = interactive
    })
    .await
}

/// A user's session with the default `[subagents]` settings, someone at the keys.
async fn interactive_parent(ws: &Path, sessions: &Path, llm: &MockLlm, mode: Mode) -> TestAgent {
    agent_with(ws, sessions, llm, mode, SubagentSettings::default(), true).await
}

/// Processes whose working directory is in `workspace`.
fn processes_in(workspace: &Path) -> Vec<String> {
    let workspace = std::fs::canonicalize(workspace).unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&workspace))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .collect()
}

/// The result of the parent's `subagent` call `call`, as the agent published it.
fn subagent_result(agent: &TestAgent, call: &str) -> cairn::bus::ToolResult {
    agent
        .seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::Tool(ToolEvent::Finished {
                call: c, result, ..
            }) if c.0 == call => Some(result.clone()),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_sees_only_its_prompt_and_the_parent_gets_its_answer_figures_and_tokens() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate(
            "s1",
            "find the loader",
            "CHILD-TASK: where is the config loaded?",
            None,
        )])
        .with_usage(usage(100, 10)),
        Script::text("The loader is in src/config.rs:12.").with_usage(usage(50, 5)),
        Script::text("Done.").with_usage(usage(200, 20)),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = interactive_parent(ws.path(), &sessions, &llm, Mode::Ask).await;
    agent
        .submit("PARENT-HISTORY: find where config loads")
        .await;
    agent.wait_for(ended).await;

    let parent = llm.request(0);
    let child = llm.request(1);
    assert!(tool_names(&parent).contains(&"subagent".to_string()));
    // Depth 1: the child is offered the parent's tools but not `subagent`.
    let child_tools = tool_names(&child);
    assert!(
        !child_tools.contains(&"subagent".to_string()),
        "{child_tools:?}"
    );
    assert!(child_tools.contains(&"bash".to_string()));
    let messages = child["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .to_string()
            .contains("You are a subagent")
    );
    assert!(messages[1]["content"].to_string().contains("CHILD-TASK"));
    assert!(!child.to_string().contains("PARENT-HISTORY"));

    let result = llm.tool_result(2, "s1").unwrap();
    assert!(
        result.starts_with(
            "The loader is in src/config.rs:12.\n[subagent general: completed · 1 step · 55 tokens · 0 files changed · "
        ),
        "{result}"
    );
    // The child's tokens count in the parent's totals (the status line's figure).
    let totals = agent
        .seen
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::Report(ReportEvent::SessionUsage { totals, .. }) => Some(*totals),
            _ => None,
        })
        .unwrap();
    assert_eq!((totals.prompt_tokens, totals.completion_tokens), (350, 35));
    // The live card heard of the child.
    assert!(agent.seen.iter().any(|e| matches!(
        e,
        AgentEvent::Tool(ToolEvent::Subagent { call, status }) if call.0 == "s1" && status.agent == "general"
    )));

    // Two logs: the child's linked to the parent's, never the one `--continue` picks.
    let list = cairn::session_log::list_sessions(&sessions);
    assert_eq!(list.len(), 2, "{list:?}");
    let parent_id = list.iter().find(|s| s.parent.is_none()).unwrap().id.clone();
    let child_summary = list.iter().find(|s| s.parent.is_some()).unwrap();
    assert_eq!(child_summary.parent.as_ref(), Some(&parent_id));
    let here = std::fs::canonicalize(ws.path()).unwrap();
    let latest = cairn::session_log::latest_in(&sessions, &here).unwrap();
    assert!(latest.ends_with(format!("{parent_id}.jsonl")));
    let dirs = cairn::dirs::Dirs::for_sessions(&sessions);
    let text = cairn::subcommands::sessions_text(&dirs, false);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(&parent_id.0), "{text}");
    assert!(
        lines[1].starts_with(&format!("  └ {}", child_summary.id)),
        "{text}"
    );
    let json = cairn::subcommands::sessions_text(&dirs, true);
    let rows: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let parent_row = rows.iter().find(|r| r["parent"].is_null()).unwrap();
    let child_row = rows.iter().find(|r| !r["parent"].is_null()).unwrap();
    assert_eq!(child_row["parent"], json!(parent_id.0));
    assert_eq!(parent_row["prompt_tokens"], json!(350), "{parent_row}");
    // The child's log reads back as a session (what `cairn replay` opens).
    let child_log = sessions.join(format!("{}.jsonl", child_summary.id));
    let loaded = cairn::session_log::read_log(&child_log).unwrap();
    let rebuilt = cairn::agent::history::rebuild_all(&loaded.records);
    assert!(rebuilt.events.iter().any(|e| matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. }) if text.contains("src/config.rs:12")
    )));
    // Live, the child's own events reached the parent's UI under its call (its transcript).
    let child_answer = |e: &AgentEvent| {
        matches!(e, AgentEvent::Conversation(ConversationEvent::AssistantMessage { text, .. })
            if text.contains("src/config.rs:12"))
    };
    let live_child = |e: &AgentEvent| match e {
        AgentEvent::Tool(ToolEvent::ChildEvent { call, inner }) if call.0 == "s1" => {
            Some(inner.as_ref().clone())
        }
        _ => None,
    };
    let live: Vec<AgentEvent> = agent.seen.iter().filter_map(live_child).collect();
    assert!(live.iter().any(child_answer), "{live:?}");
    assert!(live.iter().any(|e| matches!(e,
        AgentEvent::Conversation(ConversationEvent::UserMessage { text, .. }) if text.contains("CHILD-TASK"))));
    // A replay of the parent opens the child's transcript from its log, under the same call;
    // a replay of the child names its parent.
    let parent_log = sessions.join(format!("{parent_id}.jsonl"));
    let replayed = cairn::agent::subagent::replayed::replay(&parent_log).unwrap();
    let from_log: Vec<AgentEvent> = replayed.events.iter().filter_map(live_child).collect();
    assert!(from_log.iter().any(child_answer), "{from_log:?}");
    let child_replay = cairn::agent::subagent::replayed::replay(&child_log).unwrap();
    assert_eq!(
        child_replay.parent.as_ref().map(|p| p.session.clone()),
        Some(parent_id.clone())
    );
    assert!(child_replay.events.iter().any(|e| matches!(e,
        AgentEvent::Report(ReportEvent::Warning { message }) if message.contains(&format!("cairn replay {parent_id}")))));
    agent.shutdown().await;
    // A resume of the parent shows the child's transcript under its card again.
    let mut resumed = TestAgent::spawn(
        ws.path(),
        &sessions,
        &llm.url(),
        Mode::Ask,
        cairn::agent::StartFrom::Resume(parent_log),
    )
    .await;
    resumed
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    let shown: Vec<AgentEvent> = resumed.seen.iter().filter_map(live_child).collect();
    assert!(shown.iter().any(child_answer), "{shown:?}");
    resumed.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_of_one_reply_overlap_and_a_third_waits_for_a_slot() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            delegate("a", "task a", "TASK-A", None),
            delegate("b", "task b", "TASK-B", None),
            delegate("c", "task c", "TASK-C", None),
        ]),
        Script::text("All three answered."),
    ])
    .await;
    let arrivals: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let seen = Arc::clone(&arrivals);
    llm.respond_with(move |body| {
        let first = first_user_text(body);
        let task = ["TASK-A", "TASK-B", "TASK-C"]
            .into_iter()
            .find(|t| first.contains(t))?;
        seen.lock()
            .unwrap()
            .push((task.to_string(), Instant::now()));
        // Each child streams for about 1.2 s.
        Some(
            Script::text("one two three four five six seven eight")
                .chunk_delay(Duration::from_millis(150)),
        )
    });
    let settings = SubagentSettings {
        max_parallel: 2,
        ..SubagentSettings::default()
    };
    let sessions = data.path().join("sessions");
    let mut agent = agent_with(ws.path(), &sessions, &llm, Mode::Ask, settings, true).await;
    let asked = Instant::now();
    agent.submit("do three things").await;
    agent.wait_for(ended).await;
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 3, "{arrivals:?}");
    let (first, second, third) = {
        let mut times: Vec<Instant> = arrivals.iter().map(|(_, t)| *t).collect();
        times.sort();
        (times[0], times[1], times[2])
    };
    // Both first requests came before either child could finish (each takes ~1.2 s)...
    assert!(
        second.duration_since(first) < Duration::from_millis(800),
        "{:?}",
        second.duration_since(first)
    );
    // ...and the third only once one of them had.
    assert!(
        third.duration_since(first) >= Duration::from_millis(1000),
        "{:?}",
        third.duration_since(first)
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "figure: first child request {:?} after the parent's request was sent",
            first.duration_since(asked)
        );
    }
    for call in ["a", "b", "c"] {
        let result = llm.tool_result(llm.requests().len() - 1, call).unwrap();
        assert!(result.contains("completed"), "{call}: {result}");
    }
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_cannot_write_and_its_commands_must_be_read_only() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate(
            "s1",
            "look around",
            "EXPLORE-TASK",
            Some("explore"),
        )]),
        Script::tool_calls([
            MockCall::new(
                "w1",
                "write_file",
                json!({"path": "x.txt", "content": "hi"}),
            ),
            MockCall::new("b1", "bash", json!({"command": "touch y.txt"})),
            MockCall::new("b2", "bash", json!({"command": "ls"})),
        ]),
        Script::text("I could only look."),
        Script::text("ok"),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = interactive_parent(ws.path(), &sessions, &llm, Mode::Never).await;
    agent.submit("explore").await;
    agent.wait_for(ended).await;
    let tools = tool_names(&llm.request(1));
    assert!(!tools.contains(&"write_file".to_string()), "{tools:?}");
    let write = llm.tool_result(2, "w1").unwrap();
    assert!(write.contains("unknown tool `write_file`"), "{write}");
    let touch = llm.tool_result(2, "b1").unwrap();
    assert!(
        touch.contains("agent explore is read-only") && touch.contains("not judged read-only"),
        "{touch}"
    );
    let ls = llm.tool_result(2, "b2").unwrap();
    assert!(!ls.contains("read-only"), "{ls}");
    assert!(!ws.path().join("x.txt").exists() && !ws.path().join("y.txt").exists());
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_of_the_parents_turn_takes_back_a_childs_edit() {
    let (ws, data) = dirs();
    std::fs::write(ws.path().join("keep.txt"), "before\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "write a file", "WRITE-TASK", None)]),
        Script::tool_call(
            "w1",
            "write_file",
            json!({"path": "made.txt", "content": "by the child\n"}),
        ),
        Script::text("Wrote made.txt."),
        Script::text("The child wrote it."),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = interactive_parent(ws.path(), &sessions, &llm, Mode::AutoEdit).await;
    agent.submit("make a file").await;
    agent.wait_for(ended).await;
    assert!(ws.path().join("made.txt").exists());
    let result = llm.tool_result(3, "s1").unwrap();
    assert!(result.contains("1 file changed"), "{result}");
    agent.restore(Restore::Undo).await;
    assert!(
        !ws.path().join("made.txt").exists(),
        "the child's edit is undone"
    );
    assert!(ws.path().join("keep.txt").exists());
    agent.shutdown().await;
}

/// A child alone in its reply: what its command changed is in its result (for the diff
/// pane) and reverts from there like a command's change, leaving the rest of the turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_childs_command_changes_revert_from_its_result() {
    let (ws, data) = dirs();
    std::fs::write(ws.path().join("keep.txt"), "before\n").unwrap();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "regenerate", "GEN-TASK", None)]),
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo generated > gen.txt && echo after > keep.txt"}),
        ),
        Script::text("Regenerated."),
        Script::text("The child regenerated."),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = interactive_parent(ws.path(), &sessions, &llm, Mode::Auto).await;
    agent.submit("regenerate").await;
    agent.wait_for(ended).await;
    let result = subagent_result(&agent, "s1");
    let Some(cairn::tool_output::ToolOutput::Subagent(run)) = &result.output else {
        panic!("{result:?}")
    };
    let mut paths: Vec<&str> = run.changes.iter().map(|c| c.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["gen.txt", "keep.txt"], "{}", result.text);
    let target = crate::revert::target(
        cairn::bus::ChangeSource::Call(cairn::bus::CallId::new("s1")),
        None,
        None,
    );
    let (what, _plan) = crate::revert::preview(&mut agent, &target).await;
    assert!(what.contains("the subagent general (regenerate)"), "{what}");
    crate::revert::revert(&mut agent, &target).await;
    assert!(!ws.path().join("gen.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("keep.txt")).unwrap(),
        "before\n"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_approval_is_asked_in_the_parents_ui_labelled_and_a_denial_reaches_it() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "clean the build", "CLEAN-TASK", None)]),
        Script::tool_call("c1", "bash", json!({"command": "rm -rf build"})),
        Script::text("The user said no."),
        Script::text("ok"),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = interactive_parent(ws.path(), &sessions, &llm, Mode::Ask).await;
    agent.submit("clean").await;
    let held = agent
        .wait_for(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
        .await;
    let AgentEvent::Tool(ToolEvent::AwaitingApproval { call, why, .. }) = held else {
        unreachable!()
    };
    assert_eq!(call.0, "s1~c1");
    assert!(
        why.starts_with("agent general (clean the build) asks: "),
        "{why}"
    );
    agent
        .send(UserCommand::Decide {
            call,
            decision: Decision::Deny { message: None },
        })
        .await;
    agent.wait_for(ended).await;
    let denied = llm.tool_result(2, "c1").unwrap();
    assert!(denied.contains("the user denied this call"), "{denied}");
    assert!(llm.tool_result(3, "s1").unwrap().contains("completed"));
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_a_childs_dangerous_command_is_denied_at_once() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "clean the build", "CLEAN-TASK", None)]),
        Script::tool_call("c1", "bash", json!({"command": "rm -rf build"})),
        Script::text("Nobody could approve it."),
        Script::text("ok"),
    ])
    .await;
    std::fs::create_dir(ws.path().join("build")).unwrap();
    let sessions = data.path().join("sessions");
    let mut agent = agent_with(
        ws.path(),
        &sessions,
        &llm,
        Mode::Ask,
        SubagentSettings::default(),
        false,
    )
    .await;
    let started = Instant::now();
    agent.submit("clean").await;
    let end = agent.wait_for(ended).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(
        end,
        AgentEvent::Conversation(ConversationEvent::RequestEnded {
            reason: cairn::bus::EndReason::Completed,
            ..
        })
    ));
    let denied = llm.tool_result(2, "c1").unwrap();
    assert!(denied.contains("nobody can approve it"), "{denied}");
    assert!(ws.path().join("build").exists());
    assert!(
        !agent
            .seen
            .iter()
            .any(|e| matches!(e, AgentEvent::Tool(ToolEvent::AwaitingApproval { .. })))
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_the_parent_stops_a_childs_command_and_reads_cancelled() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "wait a while", "SLEEP-TASK", None)]),
        Script::tool_call("c1", "bash", json!({"command": "sleep 100"})),
    ])
    .await;
    let sessions = data.path().join("sessions");
    let mut agent = interactive_parent(ws.path(), &sessions, &llm, Mode::Never).await;
    agent.submit("sleep").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_in(ws.path())
        .iter()
        .any(|c| c.starts_with("sleep\x00100"))
    {
        assert!(Instant::now() < deadline, "the child's sleep never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    agent.send(UserCommand::Interrupt).await;
    agent.wait_for(ended).await;
    let result = subagent_result(&agent, "s1");
    assert!(result.text.starts_with("[cancelled]"), "{}", result.text);
    let left = processes_in(ws.path());
    assert!(left.is_empty(), "still running: {left:?}");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_model_stops_answering_is_reported_stalled() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "ask a slow model", "STALL-TASK", None)]),
        Script::keep_alive_only(Duration::from_millis(100)),
        Script::text("The child stalled."),
    ])
    .await;
    let settings = SubagentSettings {
        stall: Duration::from_secs(1),
        ..SubagentSettings::default()
    };
    let sessions = data.path().join("sessions");
    let mut agent = agent_with(ws.path(), &sessions, &llm, Mode::Ask, settings, true).await;
    agent.submit("go").await;
    agent.wait_for(ended).await;
    let result = llm.tool_result(2, "s1").unwrap();
    assert!(
        result.starts_with("[subagent did not finish: stalled: no progress for 1 s"),
        "{result}"
    );
    assert!(processes_in(ws.path()).is_empty());
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_max_depth_2_a_child_may_delegate_once_more() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate("s1", "deeper", "DEPTH-TASK", None)]),
        Script::text("Child done."),
        Script::text("ok"),
    ])
    .await;
    let settings = SubagentSettings {
        max_depth: 2,
        ..SubagentSettings::default()
    };
    let sessions = data.path().join("sessions");
    let mut agent = agent_with(ws.path(), &sessions, &llm, Mode::Ask, settings, true).await;
    agent.submit("go").await;
    agent.wait_for(ended).await;
    assert!(tool_names(&llm.request(1)).contains(&"subagent".to_string()));
    agent.shutdown().await;
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The figures of the note: time from the parent's call to the child's first request, and
/// memory per running child (three children waiting on a model that sends only keep-alives;
/// run alone for a clean number: other tests share the process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn figures_child_start_time_and_memory() {
    let (ws, data) = dirs();
    let llm = MockLlm::start(vec![
        Script::tool_calls([
            delegate("a", "task a", "WAIT-A", None),
            delegate("b", "task b", "WAIT-B", None),
            delegate("c", "task c", "WAIT-C", None),
        ]),
        Script::text("done"),
    ])
    .await;
    // Every request's arrival: the parent's first, then its children's.
    let arrivals: Arc<Mutex<Vec<(bool, Instant)>>> = Arc::default();
    let seen = Arc::clone(&arrivals);
    llm.respond_with(move |body| {
        let child = first_user_text(body).contains("WAIT-");
        seen.lock().unwrap().push((child, Instant::now()));
        child.then(|| Script::keep_alive_only(Duration::from_millis(100)))
    });
    let settings = SubagentSettings {
        stall: Duration::from_secs(2),
        ..SubagentSettings::default()
    };
    let sessions = data.path().join("sessions");
    let mut agent = agent_with(ws.path(), &sessions, &llm, Mode::Ask, settings, true).await;
    let before = rss_kib();
    agent.submit("wait three times").await;
    llm.wait_for_requests(4, Duration::from_secs(10)).await;
    let during = rss_kib();
    agent.wait_for(ended).await;
    let arrivals = arrivals.lock().unwrap().clone();
    let parent = arrivals.iter().find(|(child, _)| !child).unwrap().1;
    let first_child = arrivals
        .iter()
        .filter(|(child, _)| *child)
        .map(|(_, t)| *t)
        .min()
        .unwrap();
    let per_child = during.saturating_sub(before) / 3;
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "figure: a child's first request {:?} after the parent's request arrived (the parent's whole reply included); {per_child} KiB resident per running child ({before} -> {during} KiB)",
            first_child.saturating_duration_since(parent)
        );
    }
    assert!(per_child < 64 * 1024, "{per_child} KiB per child");
    let result = llm.tool_result(4, "a").unwrap();
    assert!(result.contains("stalled"), "{result}");
    agent.shutdown().await;
}
