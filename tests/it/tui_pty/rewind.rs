//! `/undo`, `/redo` and `/rewind` in the real binary: the confirmation shows what will change,
//! the files on disk follow, a file the user changed is left alone and named, the model is
//! told, a rewound conversation is what the next request (and a resume) sends, and the
//! user's git repository is left byte-identical.
#![allow(clippy::unwrap_used)]

use crate::support::git_state::{files_under, git};
use std::path::Path;

use serde_json::{Value, json};

use super::harness::Tui;
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// A user repository with a commit, a stash and a staged change: its `.git` must not move.
fn user_repo(ws: &Path) -> Vec<(String, Vec<u8>)> {
    git(ws, &["init", "-q"]);
    git(ws, &["add", "a.txt"]);
    git(ws, &["commit", "-qm", "first"]);
    std::fs::write(ws.join("a.txt"), "stashed\n").unwrap();
    git(ws, &["stash", "-q"]);
    git(ws, &["add", "src/b.txt"]);
    files_under(&ws.join(".git"))
}

/// The messages of a request, as the model got them.
fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_undo_takes_back_an_edit_and_a_commands_effects_then_redo_puts_them_back() {
    let sb = Sandbox::new()
        .file("a.txt", "one\ntwo\nthree\n")
        .file("src/b.txt", "keep\n")
        .file("src/c.txt", "delete me\n")
        .file("notes.md", "draft\n");
    let ws = sb.workspace();
    let git_before = user_repo(&ws);
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"}),
        ),
        Script::tool_call(
            "c3",
            "bash",
            json!({"command": "cd src && echo made > made.txt && echo changed > b.txt && rm c.txt && cd .. && echo model > notes.md"}),
        ),
        Script::text("All changed."),
        Script::text("Noted: back to where we were."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 40);
    tui.submit("change things").await;
    tui.wait_for("the turn's end", |s| {
        s.contains("All changed.") && s.contains("idle")
    })
    .await;
    assert_eq!(sb.read("a.txt"), "one\nTWO\nthree\n");
    assert!(sb.path("src/made.txt").exists() && !sb.path("src/c.txt").exists());
    // The user edits a file the command changed: undo must leave it alone and say why.
    std::fs::write(sb.path("notes.md"), "the user's notes\n").unwrap();

    tui.send("/undo\r");
    let confirm = tui
        .wait_for("the undo confirmation", |s| {
            s.contains("Undo the last turn") && s.contains("y apply")
        })
        .await;
    for expected in [
        "restore  a.txt",
        "+two",
        "-TWO",
        "remove   src/made.txt",
        "recreate src/c.txt",
        "restore  src/b.txt",
        "notes.md: changed since the turn",
    ] {
        assert!(confirm.contains(expected), "{expected}:\n{confirm}");
    }
    // Nothing changes before the user says yes.
    assert_eq!(sb.read("a.txt"), "one\nTWO\nthree\n");
    tui.press("y").await;
    tui.wait_for_text("undid the last turn").await;
    assert_eq!(sb.read("a.txt"), "one\ntwo\nthree\n");
    assert_eq!(sb.read("src/b.txt"), "keep\n");
    assert_eq!(sb.read("src/c.txt"), "delete me\n");
    assert!(!sb.path("src/made.txt").exists());
    assert_eq!(
        sb.read("notes.md"),
        "the user's notes\n",
        "the user's edit is kept"
    );

    tui.send("/redo\r");
    let confirm = tui
        .wait_for("the redo confirmation", |s| {
            s.contains("Redo what the last undo took back") && s.contains("y apply")
        })
        .await;
    assert!(confirm.contains("restore  a.txt"), "{confirm}");
    tui.press("y").await;
    tui.wait_for_text("redid the undone turn").await;
    assert_eq!(sb.read("a.txt"), "one\nTWO\nthree\n");
    assert_eq!(sb.read("src/b.txt"), "changed\n");
    assert_eq!(sb.read("src/made.txt"), "made\n");
    assert!(!sb.path("src/c.txt").exists());
    assert_eq!(sb.read("notes.md"), "the user's notes\n");

    // A second redo has nothing to put back.
    tui.send("/redo\r");
    tui.wait_for_text("nothing to redo").await;

    // The model reads what happened in its next request.
    tui.send("what now?\r");
    tui.wait_for_text("Noted: back to where we were.").await;
    let sent = llm.request(4).to_string();
    assert!(
        sent.contains("The user undid the workspace changes of your last turn")
            && sent.contains("The user redid"),
        "{sent}"
    );
    tui.wait_for_text("idle").await;
    tui.quit().await;

    // Both are logged as `cairn undo` reads them: undoing now takes the redone turn back.
    let run = sb.exec_raw_sync(&["undo", "--yes"]);
    assert_eq!(run.0, 1, "notes.md is a conflict: {run:?}");
    assert_eq!(sb.read("a.txt"), "one\ntwo\nthree\n", "{run:?}");
    assert_eq!(
        files_under(&ws.join(".git")),
        git_before,
        "the user's .git changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_rewind_to_the_first_message_restores_files_and_forks_the_conversation() {
    let sb = Sandbox::new()
        .file("a.txt", "base\n")
        .file("src/b.txt", "b\n")
        // Sandboxed commands create no top-level entries: f is made in a directory.
        .file("out/.keep", "");
    let ws = sb.workspace();
    let git_before = user_repo(&ws);
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "echo v1 > out/f.txt"})),
        Script::text("Made f."),
        Script::tool_call(
            "c2",
            "bash",
            json!({"command": "echo v2 > out/f.txt && rm src/b.txt"}),
        ),
        Script::text("Changed f."),
        Script::text("A fresh start."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 40);
    tui.submit("make file f").await;
    tui.wait_for("the first turn's end", |s| {
        s.contains("Made f.") && s.contains("idle")
    })
    .await;
    tui.send("now change it\r");
    tui.wait_for("the second turn's end", |s| {
        s.contains("Changed f.") && s.contains("idle")
    })
    .await;
    assert_eq!(sb.read("out/f.txt"), "v2\n");
    assert!(!sb.path("src/b.txt").exists());

    tui.send("/rewind\r");
    let picker = tui.wait_for_text("Rewind to before a message").await;
    // Newest first (in the picker's rows, below its title).
    let rows = &picker[picker.find("Rewind to before a message").unwrap()..];
    let (newer, older) = (
        rows.find("now change it").unwrap(),
        rows.find("make file f").unwrap(),
    );
    assert!(newer < older, "{picker}");
    tui.press("\x1b[B\r").await;
    tui.wait_for_text("what to restore?").await;
    tui.press("b").await;
    let confirm = tui
        .wait_for("the rewind confirmation", |s| {
            s.contains("Rewind files and conversation") && s.contains("y apply")
        })
        .await;
    assert!(
        confirm.contains("remove   out/f.txt") && confirm.contains("recreate src/b.txt"),
        "{confirm}"
    );
    tui.press("y").await;
    tui.wait_for_text("rewound the files and the conversation")
        .await;
    assert!(!sb.path("out/f.txt").exists());
    assert_eq!(sb.read("src/b.txt"), "b\n");
    // The transcript is the conversation before the first message (nothing), and the
    // message is back in the input to edit.
    let screen = tui
        .wait_for("the message back in the input", |s| {
            s.contains("make file f") && !s.contains("Made f.") && !s.contains("now change it")
        })
        .await;
    assert!(!screen.contains("Changed f."), "{screen}");
    // Ctrl+U clears the line; the edited message goes out.
    tui.send("\x15make file g instead\r");
    tui.wait_for_text("A fresh start.").await;
    let sent = messages(&llm.request(4));
    assert_eq!(sent.len(), 2, "system + the new message only: {sent:#?}");
    assert_eq!(sent[1]["role"], "user");
    assert_eq!(sent[1]["content"], "make file g instead");
    // Before the fork every request extends the one before it byte for byte; the fork starts
    // a new prefix, as a compaction does.
    for i in 0..3 {
        let (a, b) = (messages(&llm.request(i)), messages(&llm.request(i + 1)));
        assert_eq!(
            b[..a.len()],
            a[..],
            "request {} does not extend request {i}",
            i + 1
        );
    }
    tui.wait_for_text("idle").await;
    tui.quit().await;

    // The log holds both branches and the fork.
    let records = sb.log_records();
    let users: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "user")
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        users,
        ["make file f", "now change it", "make file g instead"]
    );
    assert!(
        records.iter().any(|r| r["type"] == "fork" && r["at"] == 0),
        "{records:#?}"
    );

    // A resume continues the new branch: what it sends starts with exactly what was sent.
    let resumed = MockLlm::start(vec![Script::text("continuing")]).await;
    let run = sb
        .exec(
            &resumed.url(),
            &["--resume", &sb.session_id(), "--mode", "never", "go on"],
        )
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let again = messages(&resumed.request(0));
    assert_eq!(again[..2], sent[..], "the resumed prefix is byte-identical");
    let text = serde_json::to_string(&again).unwrap();
    assert!(
        !text.contains("now change it") && !text.contains("Changed f."),
        "{text}"
    );
    assert!(
        text.contains("A fresh start.") && text.contains("go on"),
        "{text}"
    );
    assert_eq!(
        files_under(&ws.join(".git")),
        git_before,
        "the user's .git changed"
    );

    // `cairn replay` shows the branch left too, marked, then the new one.
    let replay = Tui::start_args(&sb, &["replay", &sb.session_id()], 120, 40);
    let screen = replay
        .wait_for("both branches and the mark between them", |s| {
            s.contains("Changed f.")
                && s.contains("the branch above was left")
                && s.contains("A fresh start.")
        })
        .await;
    let (left, mark, new) = (
        screen.find("Changed f.").unwrap(),
        screen.find("the branch above was left").unwrap(),
        screen.find("A fresh start.").unwrap(),
    );
    assert!(left < mark && mark < new, "{screen}");
    replay.quit().await;
}

/// `cairn undo` on a terminal: it shows what it would change and asks; `n` (or Enter)
/// changes nothing, `y` undoes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_cairn_undo_on_a_terminal_shows_the_files_and_asks() {
    let sb = Sandbox::new().file("a.txt", "one\n");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo two > a.txt && echo new > b.txt"}),
        ),
        Script::text("done"),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["--mode", "auto", "change"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let log_before = std::fs::read_to_string(sb.log_path()).unwrap();

    for answer in ["n\r", "\r"] {
        let mut undo = Tui::start_args(&sb, &["undo"], 100, 20);
        let screen = undo.wait_for_text("Undo? [y/N]").await;
        assert!(
            screen.contains("restore   a.txt") && screen.contains("remove    b.txt"),
            "{screen}"
        );
        undo.send(answer);
        undo.wait_for_text("undo cancelled: nothing was changed")
            .await;
        assert_eq!(sb.read("a.txt"), "two\n");
        assert!(sb.path("b.txt").exists());
        assert_eq!(std::fs::read_to_string(sb.log_path()).unwrap(), log_before);
    }

    let mut undo = Tui::start_args(&sb, &["undo"], 100, 20);
    undo.wait_for_text("Undo? [y/N]").await;
    undo.send("y\r");
    undo.wait_for_text("undid the last turn").await;
    assert_eq!(sb.read("a.txt"), "one\n");
    assert!(!sb.path("b.txt").exists());
}

/// `p` on a held command saves a project rule; `/undo` then takes back the command's file but
/// keeps `.cairn/config.toml` with the rule, and so does a rewind of the files after a redo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_undo_after_p_keeps_the_project_rule() {
    let sb = Sandbox::new().file("a.txt", "one\n");
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch made.txt"})),
        Script::text("Made it."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 120, 40);
    tui.submit("make it").await;
    // The legend shows once the prompt takes keys (not while it holds back after typing).
    tui.wait_for("the approval", |s| {
        s.contains("Allow bash?") && s.contains("approve once") && s.contains("in this project")
    })
    .await;
    // An "always" answer takes a second step.
    tui.press("p").await;
    tui.wait_for_text("in this project, now and in later sessions")
        .await;
    assert!(!sb.path("made.txt").exists(), "p alone allows nothing");
    tui.press("y").await;
    tui.wait_for("the answer", |s| {
        s.contains("Made it.") && s.contains("idle")
    })
    .await;
    assert!(sb.path("made.txt").exists());
    let saved = sb.read(".cairn/config.toml");
    assert!(saved.contains("touch"), "{saved}");

    tui.send("/undo\r");
    let confirm = tui
        .wait_for("the undo confirmation", |s| {
            s.contains("Undo the last turn") && s.contains("y apply")
        })
        .await;
    assert!(
        confirm.contains("This changes 1 file:") && confirm.contains("  made.txt"),
        "only the model's file: {confirm}"
    );
    tui.press("y").await;
    tui.wait_for_text("undid the last turn").await;
    assert!(
        !sb.path("made.txt").exists(),
        "the model's change is undone"
    );
    assert_eq!(
        sb.read(".cairn/config.toml"),
        saved,
        "the user's rule stays"
    );

    tui.send("/redo\r");
    tui.wait_for_text("Redo what the last undo took back").await;
    tui.press("y").await;
    tui.wait_for_text("redid the undone turn").await;
    assert!(sb.path("made.txt").exists());
    tui.send("/rewind\r");
    tui.wait_for_text("Rewind to before a message").await;
    tui.press("\r").await;
    tui.wait_for_text("what to restore?").await;
    tui.press("f").await;
    tui.wait_for("the rewind confirmation", |s| s.contains("y apply"))
        .await;
    tui.press("y").await;
    tui.wait_for_text("rewound the files").await;
    assert!(!sb.path("made.txt").exists());
    assert_eq!(
        sb.read(".cairn/config.toml"),
        saved,
        "a rewind keeps it too"
    );
    tui.quit().await;
}
