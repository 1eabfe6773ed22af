#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use super::*;

pub(super) fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

pub(super) fn store(data: &Path, ws: &Path) -> CheckpointStore {
    CheckpointStore::open(data, ws).unwrap()
}

#[test]
fn snapshots_diff_and_restore_created_changed_deleted_files_outside_git() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "keep.txt", "same\n");
    write(ws.path(), "edit.txt", "one\ntwo\n");
    write(ws.path(), "gone/old.txt", "old\n");
    let store = store(data.path(), ws.path());
    let before = store.snapshot().unwrap();
    assert_eq!(
        store.snapshot().unwrap().id,
        before.id,
        "nothing changed, same id"
    );

    write(ws.path(), "edit.txt", "one\nTWO\n");
    write(ws.path(), "new/made.txt", "made\n");
    std::fs::remove_file(ws.path().join("gone/old.txt")).unwrap();
    let after = store.snapshot().unwrap();
    let changes = store.diff(&before.id, &after.id).unwrap();
    let summary: Vec<(&str, ChangeKind)> =
        changes.iter().map(|c| (c.path.as_str(), c.kind)).collect();
    assert_eq!(
        summary,
        [
            ("edit.txt", ChangeKind::Changed),
            ("gone/old.txt", ChangeKind::Deleted),
            ("new/made.txt", ChangeKind::Created),
        ]
    );
    let (shown, note) = file_changes(&store, &changes).unwrap();
    assert_eq!(note, None);
    assert!(shown[0].diff.contains("-two\n+TWO"), "{}", shown[0].diff);
    assert!(shown[2].created);

    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    store.restore(&before.id, &paths).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("edit.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("gone/old.txt")).unwrap(),
        "old\n"
    );
    assert!(
        !ws.path().join("new").exists(),
        "the created file and its directory are gone"
    );
    let now = store.snapshot().unwrap();
    assert_eq!(store.diff(&before.id, &now.id).unwrap(), []);
}

#[test]
fn ignored_dependency_and_huge_files_are_left_out_and_named() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".gitignore", "*.log\n");
    write(ws.path(), "app.log", "noise\n");
    write(ws.path(), "node_modules/dep/index.js", "x\n");
    write(ws.path(), "src/main.rs", "fn main() {}\n");
    let big = vec![b'a'; (super::rules::MAX_FILE_BYTES + 1) as usize];
    std::fs::write(ws.path().join("big.bin"), big).unwrap();
    let store = store(data.path(), ws.path());
    let snap = store.snapshot().unwrap();
    let skipped: Vec<&str> = snap.skipped.iter().map(|s| s.path.as_str()).collect();
    assert!(skipped.contains(&"node_modules/"), "{skipped:?}");
    assert!(skipped.contains(&"big.bin"), "{skipped:?}");
    let empty = store.snapshot().unwrap();
    // Everything recorded shows up as created against an empty restore of nothing: list it.
    let out = Command::new("git")
        .env("GIT_DIR", store.git_dir())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["ls-tree", "-r", "--name-only", &empty.id.0])
        .output()
        .unwrap();
    let listed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(listed, ".gitignore\nsrc/main.rs\n");
}

fn hashes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir(dir) {
        out.push((
            entry.strip_prefix(dir).unwrap().display().to_string(),
            std::fs::read(&entry).unwrap(),
        ));
    }
    out.sort();
    out
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_users_git_repository_is_left_byte_identical() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(ws.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    };
    git(&["init", "-q"]);
    write(ws.path(), "a.txt", "a\n");
    write(ws.path(), "b.txt", "b\n");
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "one"]);
    write(ws.path(), "a.txt", "a2\n");
    git(&["stash", "-q"]);
    write(ws.path(), "a.txt", "a3\n");
    git(&["add", "a.txt"]);
    // Hooks that leave a mark if any git we run takes them (in .git/hooks and through the
    // user's core.hooksPath), and settings that would change what a snapshot records.
    let hooks = tempfile::tempdir().unwrap();
    let marker = hooks.path().join("a hook ran");
    for dir in [ws.path().join(".git/hooks"), hooks.path().to_path_buf()] {
        std::fs::create_dir_all(&dir).unwrap();
        for hook in [
            "post-index-change",
            "reference-transaction",
            "pre-commit",
            "post-commit",
            "pre-auto-gc",
        ] {
            let script = format!("#!/bin/sh\necho {hook} >> '{}'\n", marker.display());
            std::fs::write(dir.join(hook), script).unwrap();
            let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
            std::fs::set_permissions(dir.join(hook), mode).unwrap();
        }
    }
    git(&[
        "config",
        "core.hooksPath",
        &hooks.path().display().to_string(),
    ]);
    git(&["config", "core.excludesFile", "/dev/null"]);
    git(&["config", "status.showUntrackedFiles", "no"]);
    git(&["config", "index.version", "2"]);
    let before = hashes(&ws.path().join(".git"));

    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    write(ws.path(), "b.txt", "b2\n");
    write(ws.path(), "c.txt", "c\n");
    let second = store.snapshot().unwrap();
    let changes = store.diff(&first.id, &second.id).unwrap();
    let paths: Vec<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["b.txt", "c.txt"], "the user's .git is not recorded");
    store.restore(&first.id, &paths).unwrap();
    // Enough checkpoints that the store gets packed.
    for i in 0..crate::checkpoint::maintain::PACK_LIMIT + 5 {
        write(ws.path(), "b.txt", &format!("b{i}\n"));
        store.snapshot().unwrap();
    }
    assert!(store.maintain().unwrap());
    assert_eq!(hashes(&ws.path().join(".git")), before);
    assert!(!marker.exists(), "{:?}", std::fs::read_to_string(&marker));
}

#[test]
fn restore_refuses_to_write_through_a_planted_symlink() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(ws.path(), "dir/file.txt", "mine\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    std::fs::remove_dir_all(ws.path().join("dir")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("dir")).unwrap();
    let err = store.restore(&first.id, &["dir/file.txt"]).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert!(!outside.path().join("file.txt").exists());
}

/// A swapper racing the restore: `dir` (beneath the workspace) keeps being moved aside and
/// replaced by a link to `outside`, then put back.
fn swap_in_a_loop(
    ws: std::path::PathBuf,
    dirs: &'static [&'static str],
    outside: std::path::PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            for dir in dirs {
                let at = ws.join(dir);
                let aside = ws.join(format!("{dir}.aside"));
                if std::fs::rename(&at, &aside).is_ok() {
                    if std::os::unix::fs::symlink(&outside, &at).is_ok() {
                        swaps += 1;
                        std::thread::yield_now();
                        let _ = std::fs::remove_file(&at);
                    }
                    if std::fs::symlink_metadata(&at).is_ok() {
                        let _ = std::fs::remove_dir_all(&at);
                    }
                    let _ = std::fs::rename(&aside, &at);
                }
                // Some time in the real state too, so restores get through as well.
                for _ in 0..20 {
                    std::thread::yield_now();
                }
            }
        }
        swaps
    })
}

#[test]
fn a_directory_swapped_for_a_link_while_restoring_never_gets_a_file_written_outside() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(ws.path(), "src/d/f.txt", "before\n");
    write(ws.path(), "src/top.txt", "top\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    write(ws.path(), "src/d/f.txt", "after\n");
    write(ws.path(), "src/d/made.txt", "made\n");
    let second = store.snapshot().unwrap();
    // Bait: what a restore following the link would overwrite or remove.
    write(outside.path(), "made.txt", "the user's\n");
    write(outside.path(), "f.txt", "the user's\n");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = swap_in_a_loop(
        ws.path().to_path_buf(),
        &["src/d", "src"],
        outside.path().to_path_buf(),
        std::sync::Arc::clone(&stop),
    );
    let mut restored = 0;
    let mut round = 0;
    // Hundreds of rounds, and on until some restores got through between the swaps.
    while round < 300 || (restored == 0 && round < 5000) {
        round += 1;
        let (to, paths): (&CheckpointId, &[&str]) = if round % 2 == 0 {
            (&first.id, &["src/d/f.txt", "src/d/made.txt", "src/top.txt"])
        } else {
            (&second.id, &["src/d/f.txt", "src/d/made.txt"])
        };
        if store.restore(to, paths).is_ok() {
            restored += 1;
        }
        let mut outside_now = hashes(outside.path());
        outside_now.sort();
        assert_eq!(
            outside_now,
            [
                ("f.txt".to_string(), b"the user's\n".to_vec()),
                ("made.txt".to_string(), b"the user's\n".to_vec())
            ],
            "round {round}: a restore reached outside the workspace"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0, "the swapper never swapped");
    assert!(restored > 0, "no restore got through between the swaps");
}
