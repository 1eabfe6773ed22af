//! Reverting from the diff pane in the real binary: `{`/`}` select a hunk, `r` reverts it and
//! `R` the whole change, each after a confirmation showing the reverse diff; the files on disk
//! follow, the next request tells the model, a file the user changed since is a conflict that
//! changes nothing and says why, and the user's git repository stays byte-identical.
#![allow(clippy::unwrap_used)]

use crate::support::git_state::{files_under, git};

use serde_json::json;

use super::harness::Tui;
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// The model's version of `f.txt`: three changes far apart, so three hunks.
fn edited() -> String {
    numbered(40)
        .replace("line 3\n", "line three\n")
        .replace("line 20\n", "line twenty\n")
        .replace("line 37\n", "line thirty-seven\n")
}

fn write_session() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "read_file", json!({"path": "f.txt"})),
        Script::tool_call(
            "c2",
            "write_file",
            json!({"path": "f.txt", "content": edited()}),
        ),
        Script::text("Rewrote it."),
    ]
}

/// Runs the session's first request and waits until the agent is idle after `last`.
async fn run_turn(tui: &mut Tui, prompt: &str, last: &str) {
    tui.submit(prompt).await;
    tui.wait_for("the turn's end", |s| s.contains(last) && s.contains("idle"))
        .await;
}

/// Focuses the diff pane and selects its second hunk.
async fn select_second_hunk(tui: &mut Tui) {
    tui.send("/diffs\r");
    tui.wait_for_text(" Diffs").await;
    tui.press("}").await;
    tui.wait_for_text("hunk 1/3").await;
    tui.press("}").await;
    tui.wait_for_text("hunk 2/3").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_revert_one_hunk_of_a_multi_hunk_edit_and_the_model_is_told() {
    let sb = Sandbox::new().file("f.txt", &numbered(40));
    let mut script = write_session();
    script.push(Script::text("Understood."));
    let llm = MockLlm::start(script).await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 40);
    run_turn(&mut tui, "rewrite f.txt", "Rewrote it.").await;
    assert_eq!(sb.read("f.txt"), edited());

    select_second_hunk(&mut tui).await;
    tui.press("r").await;
    let confirm = tui
        .wait_for("the revert preview", |s| {
            s.contains("Revert?") && s.contains("y apply…")
        })
        .await;
    for expected in [
        "Revert hunk 2 of 3 of the rewrite of f.txt",
        "change f.txt +1 -1",
        "- line twenty",
        "+ line 20",
    ] {
        assert!(confirm.contains(expected), "{expected}:\n{confirm}");
    }
    assert_eq!(sb.read("f.txt"), edited(), "nothing is written before y");
    // Applying takes a second step: y asks once more, y there applies.
    tui.press("y").await;
    tui.wait_for_text("yes, revert").await;
    assert_eq!(
        sb.read("f.txt"),
        edited(),
        "nothing is written before the second y"
    );
    tui.press("y").await;
    tui.wait_for_text("reverted hunk 2 of 3 of the rewrite of f.txt")
        .await;
    assert_eq!(
        sb.read("f.txt"),
        edited().replace("line twenty\n", "line 20\n"),
        "only the middle hunk went back"
    );
    // The revert is a change of its own in the pane, counted as a revert, not an edit.
    tui.wait_for_text("1 edit · 1 revert · 1 file").await;

    // The next request tells the model what the user reverted, with the reverse diff.
    // Tab moves the focus from the diff pane back to the input.
    tui.send("\t");
    tui.send("go on");
    tui.wait_for_text("go on").await;
    tui.send("\r");
    tui.wait_for_text("Understood.").await;
    let sent = llm.request(3).to_string();
    assert!(
        sent.contains("The user reverted hunk 2 of 3 of the rewrite of f.txt"),
        "{sent}"
    );
    assert!(sent.contains("-line twenty\\n+line 20\\n"), "{sent}");
    tui.wait_for_text("idle").await;
    tui.quit().await;

    // `cairn replay` shows the revert, and its own change in the diff pane.
    let id = sb.session_id();
    let replay = Tui::start_args(&sb, &["replay", &id], 120, 40);
    replay
        .wait_for("the revert in the replay", |s| {
            s.contains("reverted hunk 2 of 3 of the rewrite of f.txt")
                && s.contains("1 edit · 1 revert · 1 file")
        })
        .await;
    replay.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_revert_a_commands_effects_puts_all_three_files_back_and_leaves_git_alone() {
    let sb = Sandbox::new()
        .file("keep.txt", "keep\n")
        .file("gone.txt", "delete me\n");
    let ws = sb.workspace();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "keep.txt"]);
    git(&ws, &["commit", "-qm", "first"]);
    std::fs::write(ws.join("keep.txt"), "stashed\n").unwrap();
    git(&ws, &["stash", "-q"]);
    git(&ws, &["add", "gone.txt"]);
    let git_before = files_under(&ws.join(".git"));
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo made > made.txt && echo changed > keep.txt && rm gone.txt"}),
        ),
        Script::text("Ran it."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 40);
    run_turn(&mut tui, "run the generator", "Ran it.").await;
    assert!(sb.path("made.txt").exists() && !sb.path("gone.txt").exists());

    tui.send("/diffs\r");
    tui.wait_for_text("3 edits · 3 files").await;
    tui.press("R").await;
    let confirm = tui
        .wait_for("the revert preview", |s| {
            s.contains("Revert?") && s.contains("y apply…")
        })
        .await;
    for expected in [
        "Revert everything the command `echo made > made.txt",
        "recreate gone.txt",
        "change keep.txt",
        "delete made.txt",
    ] {
        assert!(confirm.contains(expected), "{expected}:\n{confirm}");
    }
    tui.press("y").await;
    tui.wait_for_text("yes, revert").await;
    tui.press("y").await;
    tui.wait_for_text("reverted everything the command").await;
    assert_eq!(sb.read("keep.txt"), "keep\n");
    assert_eq!(sb.read("gone.txt"), "delete me\n");
    assert!(!sb.path("made.txt").exists());
    tui.quit().await;
    assert_eq!(
        files_under(&ws.join(".git")),
        git_before,
        "the user's .git changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_hunk_the_user_edited_since_is_a_conflict_that_changes_nothing() {
    let sb = Sandbox::new().file("f.txt", &numbered(40));
    let llm = MockLlm::start(write_session()).await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 40);
    run_turn(&mut tui, "rewrite f.txt", "Rewrote it.").await;
    // The user edits the model's line after the model did.
    let mine = edited().replace("line twenty\n", "line twenty, mine\n");
    std::fs::write(sb.path("f.txt"), &mine).unwrap();

    select_second_hunk(&mut tui).await;
    tui.press("r").await;
    let screen = tui
        .wait_for("the conflict", |s| {
            s.contains("Cannot revert") && s.contains("Esc close")
        })
        .await;
    for expected in [
        "Nothing was changed",
        "f.txt: hunk 2: the file changed since",
        "line 20: expected line twenty",
        "found    line twenty, mine",
    ] {
        assert!(screen.contains(expected), "{expected}:\n{screen}");
    }
    assert!(!screen.contains("y apply"), "a conflict can only be closed");
    // y is no key of a conflict: it is text; Esc closes.
    tui.press("y").await;
    tui.press("\x1b").await;
    tui.wait_for("the conflict closed", |s| !s.contains("Cannot revert"))
        .await;
    assert_eq!(sb.read("f.txt"), mine, "the file is untouched");
    tui.quit().await;
}
