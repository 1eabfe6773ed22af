//! `cairn undo`: a scripted session edits a file and runs a command that creates, changes and
//! deletes files; undo takes all of it back, `--redo` puts it back, both leave the user's git
//! repository byte-identical, and undo leaves alone (and names) a file the user changed after
//! the turn. (`/undo`, `/redo` and `/rewind` in the TUI: tests/it/tui_pty/rewind.rs.)
#![allow(clippy::unwrap_used)]

use crate::support::git_state::{files_under, git};

use serde_json::json;

use crate::support::cairn_cmd::{Sandbox, reverted, undo_json};
use cairn::testing::{MockLlm, Script};

fn session() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "read_file", json!({"path": "a.txt"})),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"}),
        ),
        Script::tool_call(
            "c3",
            "bash",
            json!({"command": "cd src && echo made > made.txt && echo changed > b.txt && rm c.txt"}),
        ),
        Script::text("done"),
    ]
}

fn sandbox() -> Sandbox {
    Sandbox::new()
        .file("a.txt", "one\ntwo\nthree\n")
        .file("src/b.txt", "keep\n")
        .file("src/c.txt", "delete me\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_takes_back_edits_and_command_effects_and_leaves_git_alone() {
    let sb = sandbox();
    let ws = sb.workspace();
    // The user's repository with a commit, a stash and a staged change.
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "a.txt", "src/b.txt"]);
    git(&ws, &["commit", "-qm", "first"]);
    std::fs::write(ws.join("src/b.txt"), "stashed\n").unwrap();
    git(&ws, &["stash", "-q"]);
    git(&ws, &["add", "src/c.txt"]);
    // Hooks that leave a mark if any git cairn runs takes them.
    let marks = tempfile::tempdir().unwrap();
    let marker = marks.path().join("a hook ran");
    for hook in ["post-index-change", "reference-transaction", "pre-auto-gc"] {
        let path = ws.join(".git/hooks").join(hook);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho {hook} >> '{}'\n", marker.display()),
        )
        .unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&path, mode).unwrap();
    }
    let git_before = files_under(&ws.join(".git"));

    let llm = MockLlm::start(session()).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "change things"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(sb.read("a.txt"), "one\nTWO\nthree\n");
    assert!(!sb.path("src/c.txt").exists(), "{:#?}", sb.log_records());

    // What the command changed is its result's change, like an edit, and the model is told.
    let records = sb.log_records();
    let bash = records
        .iter()
        .find(|r| r["type"] == "tool_result" && r["name"] == "bash")
        .unwrap();
    let changed: Vec<&str> = bash["result"]["output"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(changed, ["src/b.txt", "src/c.txt", "src/made.txt"]);
    let told = llm.tool_result(3, "c3").unwrap();
    assert!(
        told.contains("src/made.txt (created)") && told.contains("src/c.txt (deleted)"),
        "{told}"
    );

    let (code, report) = undo_json(&sb);
    assert_eq!(code, 0, "{report}");
    let reverted = reverted(&report);
    assert_eq!(
        reverted,
        [
            ("a.txt".into(), "restored".into()),
            ("src/b.txt".into(), "restored".into()),
            ("src/c.txt".into(), "recreated".into()),
            ("src/made.txt".into(), "removed".into()),
        ]
    );
    assert_eq!(sb.read("a.txt"), "one\ntwo\nthree\n");
    assert_eq!(sb.read("src/b.txt"), "keep\n");
    assert_eq!(sb.read("src/c.txt"), "delete me\n");
    assert!(!sb.path("src/made.txt").exists());
    assert_eq!(
        files_under(&ws.join(".git")),
        git_before,
        "the user's .git changed"
    );
    assert!(!marker.exists(), "{:?}", std::fs::read_to_string(&marker));

    // The turn is undone: there is nothing more to take back.
    let (code, report) = undo_json(&sb);
    assert_eq!(code, 1);
    assert!(report["checkpoint"].is_null(), "{report}");

    // --redo puts it all back, once; then undo takes it back again.
    let run = sb.exec_raw_sync(&["undo", "--redo", "--yes"]);
    assert_eq!(run.0, 0, "{run:?}");
    assert!(run.1.contains("redid the last undone turn"), "{}", run.1);
    assert_eq!(sb.read("a.txt"), "one\nTWO\nthree\n");
    assert_eq!(sb.read("src/b.txt"), "changed\n");
    assert_eq!(sb.read("src/made.txt"), "made\n");
    assert!(!sb.path("src/c.txt").exists());
    let run = sb.exec_raw_sync(&["undo", "--redo", "--yes"]);
    assert_eq!(run.0, 1, "{run:?}");
    assert!(run.1.contains("nothing to redo"), "{}", run.1);
    let (code, _) = undo_json(&sb);
    assert_eq!(code, 0);
    assert_eq!(sb.read("a.txt"), "one\ntwo\nthree\n");
    assert!(!sb.path("src/made.txt").exists());
    assert_eq!(
        files_under(&ws.join(".git")),
        git_before,
        "the user's .git changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_after_the_turn_is_left_alone_and_named() {
    let sb = sandbox();
    let llm = MockLlm::start(session()).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "change things"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(sb.path("src/made.txt").exists() && !sb.path("src/c.txt").exists());
    // The user edits the model's edit.
    std::fs::write(sb.path("a.txt"), "mine now\n").unwrap();

    let run = sb.exec_raw_sync(&["undo", "--yes"]);
    assert_eq!(run.0, 1, "{run:?}");
    assert!(
        run.1.contains("conflict  a.txt: changed since the turn"),
        "{}",
        run.1
    );
    assert_eq!(sb.read("a.txt"), "mine now\n", "the user's edit is kept");
    assert_eq!(sb.read("src/b.txt"), "keep\n");
    assert_eq!(sb.read("src/c.txt"), "delete me\n");
    assert!(!sb.path("src/made.txt").exists());
}

/// Files and the session log, to show nothing moved.
fn state(sb: &Sandbox) -> (Vec<(String, Vec<u8>)>, String) {
    let mut files: Vec<(String, Vec<u8>)> = files_under(&sb.workspace());
    files.sort();
    (files, std::fs::read_to_string(sb.log_path()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_without_a_terminal_shows_what_it_would_do_refuses_and_yes_does_it() {
    let sb = sandbox();
    let llm = MockLlm::start(session()).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "change things"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let before = state(&sb);

    for args in [&["undo"][..], &["undo", "--json"], &["undo", "--redo"]] {
        let (code, stdout, stderr) = sb.exec_raw_sync(args);
        if args.contains(&"--redo") {
            // Nothing undone yet: nothing to redo, nothing asked.
            assert_eq!(code, 1, "{stdout} / {stderr}");
            assert!(stdout.contains("nothing to redo"), "{stdout}");
            continue;
        }
        assert_eq!(code, 2, "a usage error: {stdout} / {stderr}");
        assert!(stdout.is_empty(), "no report: {stdout}");
        // What it would do, per file, for the turn and its checkpoint.
        for line in [
            "cairn undo will take back the last turn of session",
            "(\"change things\")",
            "to checkpoint ",
            "restore   a.txt",
            "restore   src/b.txt",
            "recreate  src/c.txt",
            "remove    src/made.txt",
            "standard input is not a terminal",
            "nothing was changed",
            "--yes",
        ] {
            assert!(stderr.contains(line), "{line:?} in {stderr}");
        }
        assert_eq!(state(&sb), before, "{args:?} changed something");
    }

    let (code, stdout, stderr) = sb.exec_raw_sync(&["undo", "-y"]);
    assert_eq!(code, 0, "{stdout} / {stderr}");
    assert!(
        stdout.contains("undid the last turn") && stderr.is_empty(),
        "{stdout} / {stderr}"
    );
    assert_eq!(sb.read("a.txt"), "one\ntwo\nthree\n");
    assert!(!sb.path("src/made.txt").exists());

    // The redo asks the same way.
    let (code, _, stderr) = sb.exec_raw_sync(&["undo", "--redo"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("put back the last undone turn") && stderr.contains("--redo --yes"));
    assert!(!sb.path("src/made.txt").exists(), "nothing redone");
    let (code, _, _) = sb.exec_raw_sync(&["undo", "--redo", "--yes"]);
    assert_eq!(code, 0);
    assert_eq!(sb.read("src/made.txt"), "made\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_names_what_it_would_leave_alone() {
    let sb = sandbox();
    let llm = MockLlm::start(session()).await;
    let run = sb
        .exec(&llm.url(), &["--mode", "auto", "change things"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    std::fs::write(sb.path("a.txt"), "mine now\n").unwrap();
    let (code, _, stderr) = sb.exec_raw_sync(&["undo"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("leave     a.txt: changed since the turn"),
        "{stderr}"
    );
    assert_eq!(sb.read("a.txt"), "mine now\n");
    assert!(sb.path("src/made.txt").exists(), "nothing undone");
}
