//! Subagents in the real binary (SPEC §11.5): a child's approval is asked in the parent's
//! screen, labelled with the agent and its description, and the user's answer reaches the
//! child (approved: its command runs; denied: it is told); the child's tokens count in the
//! status line; a child's session is listed under its parent by `cairn sessions` and opened
//! read-only by `cairn replay`, which names the parent.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use serde_json::{Value, json};

use super::harness::{DEADLINE, Tui};
use crate::subagents::{delegate, first_user_text};
use crate::support::cairn_cmd::Sandbox;
use cairn::bus::Usage;
use cairn::testing::{MockLlm, Script};

fn usage(prompt: u64, completion: u64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: 0,
    }
}

/// The label the parent's prompt carries for the child's call.
const LABEL: &str = "agent general (tidy the workspace) asks:";

/// The parent delegates; the child runs `command`, then says `child_answer`; the parent ends
/// with `parent_answer`. Requests: 0 parent, 1 and 2 the child's, 3 the parent's again.
fn scripts(command: &str, child_answer: &str, parent_answer: &str) -> Vec<Script> {
    vec![
        Script::tool_calls([delegate(
            "s1",
            "tidy the workspace",
            "TIDY-TASK: tidy the workspace",
            None,
        )])
        .with_usage(usage(100, 10)),
        Script::tool_call("c1", "bash", json!({ "command": command })).with_usage(usage(20, 2)),
        Script::text(child_answer).with_usage(usage(30, 3)),
        Script::text(parent_answer).with_usage(usage(200, 20)),
    ]
}

/// Submits the task and waits for the child's approval in the parent's screen.
async fn child_asks(tui: &mut Tui, command: &str) -> String {
    tui.submit("tidy up").await;
    // The keys are the prompt's last line: once they are on screen, the whole prompt is.
    let prompt = tui
        .wait_for("the child's approval prompt", |s| {
            s.contains("deny with a message") && s.contains(command)
        })
        .await;
    assert!(prompt.contains(LABEL), "{prompt}");
    assert!(prompt.contains("Allow bash?"), "{prompt}");
    // The child's live card says what it waits for.
    assert!(prompt.contains("waiting for your approval"), "{prompt}");
    prompt
}

/// With the transcript focused, selects the entry before the last (the `subagent` card under
/// the parent's answer) and opens it: the child's transcript, under its banner.
async fn open_second_to_last_card(tui: &mut Tui, agent: &str) -> String {
    tui.press("\x1b[A").await;
    tui.press("\x1b[A").await;
    tui.press("\r").await;
    let banner = format!("subagent {agent} · read-only · Esc: back");
    tui.wait_for("the child's transcript", |s| s.contains(&banner))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_childs_approval_is_asked_in_the_parents_screen_and_y_runs_it() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(scripts(
        "touch made-by-child",
        "CHILD: made it.",
        "The child made the file.",
    ))
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "ask", 160, 40);
    child_asks(&mut tui, "touch made-by-child").await;
    assert!(
        !sb.path("made-by-child").exists(),
        "nothing runs before the approval"
    );
    assert_eq!(llm.requests().len(), 2, "the child waits for the answer");
    tui.press("y").await;
    let screen = tui
        .wait_for("the parent's answer and the agent idle", |s| {
            s.contains("The child made the file.") && s.contains("idle")
        })
        .await;
    assert!(sb.path("made-by-child").exists(), "{screen}");
    assert!(!screen.contains(LABEL), "the prompt closed:\n{screen}");
    // The child's card: how it ended and its figures.
    assert!(
        screen.contains("agent general: completed · 2 steps · 55 tokens"),
        "{screen}"
    );
    // The status line counts the child's tokens with the parent's.
    assert!(screen.contains("↑350 ↓35"), "{screen}");
    let ran = llm.tool_result(2, "c1").unwrap();
    assert!(!ran.contains("denied"), "{ran}");
    assert!(first_user_text(&llm.request(2)).contains("TIDY-TASK"));
    let report = llm.tool_result(3, "s1").unwrap();
    assert!(
        report.starts_with(
            "CHILD: made it.\n[files the subagent changed: made-by-child (created)]\n[subagent general: completed"
        ) && report.contains(" · 1 file changed · "),
        "{report}"
    );
    // `/cost` counts them too: its total row has the child's 50 in and 5 out.
    tui.send("/cost");
    tui.wait_for_text("/cost").await;
    tui.send("\r");
    let total = |s: &str| {
        s.lines()
            .find(|l| l.contains(" total "))
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
    };
    let screen = tui
        .wait_for("the /cost table", |s| total(s).is_some())
        .await;
    let row = total(&screen).unwrap();
    assert!(
        row.windows(4)
            .any(|w| w[0] == "total" && w[1] == "350" && w[2] == "0" && w[3] == "35"),
        "{row:?}\n{screen}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_childs_approval_denied_with_n_tells_the_child_and_the_parent_goes_on() {
    let sb = Sandbox::new().file("scratch.txt", "keep me\n");
    let llm = MockLlm::start(scripts(
        "rm scratch.txt",
        "CHILD: the user said no.",
        "scratch.txt stays: you declined.",
    ))
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "ask", 160, 40);
    child_asks(&mut tui, "rm scratch.txt").await;
    tui.press("n").await;
    let screen = tui
        .wait_for("the parent's answer and the agent idle", |s| {
            s.contains("scratch.txt stays: you declined.") && s.contains("idle")
        })
        .await;
    assert_eq!(sb.read("scratch.txt"), "keep me\n", "{screen}");
    assert!(!screen.contains(LABEL), "the prompt closed:\n{screen}");
    assert!(
        !screen.contains("interrupted"),
        "a denial does not stop the turn:\n{screen}"
    );
    assert!(screen.contains("agent general: completed"), "{screen}");
    let told = llm.tool_result(2, "c1").unwrap();
    assert!(told.contains("the user denied this call"), "{told}");
    assert!(first_user_text(&llm.request(2)).contains("TIDY-TASK"));
    let report = llm.tool_result(3, "s1").unwrap();
    assert!(
        report.starts_with("CHILD: the user said no.\n[subagent general: completed"),
        "{report}"
    );
    // Enter on the child's card opens its own transcript, read-only; Esc comes back.
    tui.press("\t").await;
    let child = open_second_to_last_card(&mut tui, "general (tidy the workspace)").await;
    assert!(child.contains("TIDY-TASK"), "its prompt:\n{child}");
    assert!(child.contains("CHILD: the user said no."), "{child}");
    assert!(
        child.contains("rm scratch.txt"),
        "its denied call:\n{child}"
    );
    assert!(
        !child.contains("scratch.txt stays: you declined."),
        "the parent's answer is not the child's:\n{child}"
    );
    tui.press("\x1b").await;
    tui.wait_for("the parent's transcript again", |s| {
        !s.contains("read-only · Esc: back") && s.contains("scratch.txt stays: you declined.")
    })
    .await;
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_sessions_lists_a_child_under_its_parent_and_replay_opens_it() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_calls([delegate(
            "s1",
            "multiply",
            "CHILD-TASK: what is six times seven?",
            None,
        )])
        .with_usage(usage(100, 10)),
        Script::text("CHILD-ANSWER: forty-two").with_usage(usage(50, 5)),
        Script::text("PARENT-ANSWER: the child says 42.").with_usage(usage(200, 20)),
    ])
    .await;
    let run = sb
        .exec(&llm.url(), &["--mode", "never", "ask a helper"])
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "PARENT-ANSWER: the child says 42.");

    // `--json`: a row per session, the child's naming its parent; the parent's tokens hold
    // the child's.
    let (code, json, stderr) = sb.exec_raw_sync(&["sessions", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{json}");
    let parent = rows.iter().find(|r| r["parent"].is_null()).unwrap();
    let child = rows.iter().find(|r| !r["parent"].is_null()).unwrap();
    let parent_id = parent["id"].as_str().unwrap().to_string();
    let child_id = child["id"].as_str().unwrap().to_string();
    assert_eq!(child["parent"], json!(parent_id), "{json}");
    assert_eq!(parent["prompt_tokens"], json!(350), "{parent}");
    assert_eq!(parent["completion_tokens"], json!(35), "{parent}");
    // The list: the child indented right under its parent.
    let (code, text, stderr) = sb.exec_raw_sync(&["sessions"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(&parent_id), "{text}");
    assert!(lines[0].contains("ask a helper"), "{text}");
    assert!(lines[1].starts_with(&format!("  └ {child_id}")), "{text}");
    assert!(lines[1].contains("CHILD-TASK"), "{text}");

    // The child's transcript, read-only, with the line naming its parent.
    let mut tui = Tui::start_args(&sb, &["replay", &child_id], 160, 40);
    let screen = tui
        .wait_for("the child's replayed session", |s| {
            s.contains("CHILD-TASK: what is six times seven?")
                && s.contains("CHILD-ANSWER: forty-two")
                && s.contains("replay")
        })
        .await;
    assert!(
        screen.contains(&format!(
            "subagent general (multiply) of session {parent_id} (call s1)"
        )),
        "{screen}"
    );
    // The rest of that line (how to open the parent) may wrap: its parts are there.
    assert!(
        screen.contains("`cairn replay")
            && screen.contains("shows the parent")
            && screen.matches(parent_id.as_str()).count() == 2,
        "{screen}"
    );
    assert!(
        !screen.contains("PARENT-ANSWER"),
        "only the child's transcript:\n{screen}"
    );
    assert!(screen.contains("read only"), "{screen}");
    assert_eq!(llm.requests().len(), 3, "a replay sends nothing");
    // `q` quits a replay and gives the terminal back.
    tui.send("q");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = tui.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "q did not quit the replay:\n{}",
            tui.contents()
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    assert!(status.success(), "{status:?}");
    let start = Instant::now();
    while tui.screen.lock().unwrap().screen().alternate_screen() {
        assert!(
            start.elapsed() < DEADLINE,
            "the alternate screen was not left"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    // The parent's replay opens the child's transcript from its card, as it did live.
    let mut tui = Tui::start_args(&sb, &["replay", &parent_id], 160, 40);
    tui.wait_for("the parent's replayed session", |s| {
        s.contains("PARENT-ANSWER: the child says 42.")
    })
    .await;
    let child = open_second_to_last_card(&mut tui, "general (multiply)").await;
    assert!(child.contains("CHILD-ANSWER: forty-two"), "{child}");
    assert!(!child.contains("PARENT-ANSWER"), "{child}");
    tui.press("\x1b").await;
    tui.wait_for("the parent's replay again", |s| {
        s.contains("PARENT-ANSWER") && !s.contains("read-only · Esc: back")
    })
    .await;
    assert_eq!(llm.requests().len(), 3, "a replay sends nothing");
    tui.quit().await;
}
