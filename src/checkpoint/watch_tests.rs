//! How a snapshot learns what changed: file notifications, the scan where they are off or
//! were lost, and the store's size budget.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::Path;

use super::tests::write;
use super::*;

fn watched(data: &Path, ws: &Path) -> CheckpointStore {
    let options = StoreOptions {
        session_start: true,
        notifications: true,
    };
    let store = CheckpointStore::open_with(data, ws, options).unwrap();
    assert!(store.watching(), "inotify is unavailable here");
    store
}

fn paths(store: &CheckpointStore, a: &CheckpointId, b: &CheckpointId) -> Vec<String> {
    store
        .diff(a, b)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect()
}

/// Between two commands the user edits, creates, removes and renames files: the next
/// snapshot (the next command's "before") has all of it, so none of it is the command's.
fn a_users_changes_between_two_commands_are_in_the_next_before(store: &CheckpointStore) {
    let ws = store.workspace().to_path_buf();
    let first = store.snapshot().unwrap();
    assert_eq!(store.snapshot().unwrap().id, first.id, "nothing changed");
    write(&ws, "edited.txt", "the user's edit\n");
    write(&ws, "deep/new/made.txt", "new\n");
    std::fs::remove_file(ws.join("gone.txt")).unwrap();
    std::fs::rename(ws.join("dir"), ws.join("moved")).unwrap();
    let before = store.snapshot().unwrap();
    assert_eq!(
        paths(store, &first.id, &before.id),
        [
            "deep/new/made.txt",
            "dir/inner.txt",
            "edited.txt",
            "gone.txt",
            "moved/inner.txt"
        ]
    );
    // A change inside the renamed directory is still seen.
    write(&ws, "moved/inner.txt", "changed in the new place\n");
    write(&ws, "deep/new/again.txt", "again\n");
    let after = store.snapshot().unwrap();
    assert_eq!(
        paths(store, &before.id, &after.id),
        ["deep/new/again.txt", "moved/inner.txt"]
    );
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "edited.txt", "one\n");
    write(ws.path(), "gone.txt", "gone\n");
    write(ws.path(), "dir/inner.txt", "inner\n");
    ws
}

#[test]
fn with_notifications_a_users_change_is_in_the_next_before_without_a_scan() {
    let (data, ws) = (tempfile::tempdir().unwrap(), workspace());
    let store = watched(data.path(), ws.path());
    a_users_changes_between_two_commands_are_in_the_next_before(&store);
    assert_eq!(
        store.full_scans(),
        1,
        "only the first snapshot walked the tree"
    );
}

#[test]
fn with_the_scan_fallback_a_users_change_is_in_the_next_before() {
    let (data, ws) = (tempfile::tempdir().unwrap(), workspace());
    let store = CheckpointStore::open(data.path(), ws.path()).unwrap();
    assert!(!store.watching());
    a_users_changes_between_two_commands_are_in_the_next_before(&store);
}

#[test]
fn a_notification_overflow_falls_back_to_a_scan_that_misses_nothing() {
    let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(16_384);
    if limit > 100_000 {
        eprintln!("skipped: the inotify queue holds {limit} events, too many to overflow quickly");
        return;
    }
    let (data, ws) = (tempfile::tempdir().unwrap(), workspace());
    let dir = ws.path().join("many");
    std::fs::create_dir(&dir).unwrap();
    let store = watched(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    // More events than the queue holds, in a watched directory: the kernel drops the rest
    // and says so.
    for i in 0..limit + 100 {
        std::fs::write(dir.join(format!("f{i}")), "").unwrap();
    }
    write(ws.path(), "edited.txt", "after the flood\n");
    let scans = store.full_scans();
    let second = store.snapshot().unwrap();
    assert_eq!(store.full_scans(), scans + 1, "the overflow made it scan");
    let changed = paths(&store, &first.id, &second.id);
    assert_eq!(changed.len(), limit + 101);
    assert!(changed.contains(&"edited.txt".to_string()));
    // And notifications work again after it.
    write(ws.path(), "gone.txt", "changed\n");
    let third = store.snapshot().unwrap();
    assert_eq!(paths(&store, &second.id, &third.id), ["gone.txt"]);
    assert_eq!(store.full_scans(), scans + 1);
}

#[test]
fn a_gitignore_written_during_the_session_hides_nothing() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".gitignore", "*.log\n");
    write(ws.path(), "a.txt", "a\n");
    for store in [
        watched(data.path(), ws.path()),
        CheckpointStore::open(data.path(), ws.path()).unwrap(),
    ] {
        let first = store.snapshot().unwrap();
        write(ws.path(), ".gitignore", "*\n");
        write(ws.path(), "made/by/a/command.txt", "x\n");
        write(ws.path(), "noise.log", "still ignored\n");
        let second = store.snapshot().unwrap();
        assert_eq!(
            paths(&store, &first.id, &second.id),
            [".gitignore", "made/by/a/command.txt"]
        );
        let changed = paths(&store, &first.id, &second.id);
        let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
        store.restore(&first.id, &changed).unwrap();
        assert!(!ws.path().join("made").exists());
        assert_eq!(
            std::fs::read_to_string(ws.path().join(".gitignore")).unwrap(),
            "*.log\n"
        );
        std::fs::remove_file(ws.path().join("noise.log")).unwrap();
    }
}

#[test]
fn the_store_stays_within_its_budget_over_a_churn_of_large_files() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "small.txt", "small\n");
    let budget = 6 * 1024 * 1024;
    let store = CheckpointStore::open(data.path(), ws.path())
        .unwrap()
        .with_budget(budget);
    let first = store.snapshot().unwrap();
    let mut dropped = 0;
    for turn in 0..3 {
        // Incompressible files just under 1 MiB: nothing packs them away.
        for i in 0..5 {
            let mut bytes = vec![0u8; 1_000_000];
            fastrand::fill(&mut bytes);
            std::fs::write(ws.path().join(format!("big{i}.bin")), bytes).unwrap();
        }
        store.snapshot().unwrap();
        for i in 0..5 {
            std::fs::remove_file(ws.path().join(format!("big{i}.bin"))).unwrap();
        }
        write(ws.path(), "small.txt", &format!("turn {turn}\n"));
        let last = store.snapshot().unwrap();
        store.maintain().unwrap();
        if let Some(pruned) = store.keep_to_budget().unwrap() {
            dropped += pruned.dropped;
            assert!(pruned.bytes_after <= budget, "{pruned:?}");
        }
        assert!(
            store.disk_usage() <= budget,
            "turn {turn}: {} bytes over a {budget}-byte budget",
            store.disk_usage()
        );
        // The newest checkpoint is whole: nothing changed since, and its file reads back.
        assert_eq!(store.snapshot().unwrap().id, last.id);
        let entries = store.entries(&last.id, &["small.txt"]).unwrap();
        let content = store.blobs(&[&entries["small.txt"].id]).unwrap();
        assert_eq!(content, [format!("turn {turn}\n").into_bytes()]);
    }
    assert!(dropped > 0, "the churn should have needed pruning");
    // A dropped checkpoint says so when asked for.
    let err = store
        .diff(&first.id, &store.snapshot().unwrap().id)
        .unwrap_err();
    assert!(err.to_string().contains("size budget"), "{err}");
}

#[test]
fn a_dependency_directory_made_during_the_session_is_named_by_the_next_snapshot() {
    let (data, ws) = (tempfile::tempdir().unwrap(), workspace());
    let store = watched(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    assert!(first.skipped.is_empty(), "{:?}", first.skipped);
    // As `npm install` would, after the session's first walk: no scan follows, yet the
    // snapshot still says what it leaves out, and records the rest.
    write(
        ws.path(),
        "node_modules/pkg/index.js",
        "module.exports = 1;\n",
    );
    write(ws.path(), "edited.txt", "two\n");
    let next = store.snapshot().unwrap();
    let left_out: Vec<&str> = next.skipped.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(left_out, ["node_modules/"]);
    assert_eq!(paths(&store, &first.id, &next.id), ["edited.txt"]);
    assert_eq!(store.full_scans(), 1);
    // Gone again: no longer named.
    std::fs::remove_dir_all(ws.path().join("node_modules")).unwrap();
    write(ws.path(), "edited.txt", "three\n");
    assert!(store.snapshot().unwrap().skipped.is_empty());
}

#[test]
fn unchanged_answers_only_when_nothing_can_have_changed_and_loses_nothing_it_read() {
    let (data, ws) = (tempfile::tempdir().unwrap(), workspace());
    let store = watched(data.path(), ws.path());
    assert!(store.unchanged().is_none(), "no checkpoint yet");
    let first = store.snapshot().unwrap();
    assert_eq!(store.unchanged().unwrap().id, first.id);
    // A change: not unchanged, and what the queue said is not lost to the next snapshot
    // (it reads the queue afresh, which is empty now).
    write(ws.path(), "edited.txt", "two\n");
    write(ws.path(), "dir/new.txt", "new\n");
    assert!(store.unchanged().is_none());
    assert!(store.unchanged().is_none(), "still owed to a snapshot");
    let next = store.snapshot().unwrap();
    assert_eq!(
        paths(&store, &first.id, &next.id),
        ["dir/new.txt", "edited.txt"]
    );
    assert_eq!(store.unchanged().unwrap().id, next.id);
    // A deferred checkpoint not on disk yet: only a snapshot (which writes it first) says.
    write(ws.path(), "edited.txt", "three\n");
    let deferred = store
        .snapshot_deferred(&[&ws.path().join("edited.txt")])
        .unwrap();
    assert!(store.unchanged().is_none());
    store.flush().unwrap();
    assert_eq!(store.unchanged().unwrap().id, deferred.id);
    // Another process moved the head (`cairn undo` restoring): not unchanged.
    let other = CheckpointStore::open(data.path(), ws.path()).unwrap();
    write(ws.path(), "edited.txt", "four\n");
    other.snapshot().unwrap();
    let _ = store.snapshot();
    let now = store.snapshot().unwrap();
    assert_eq!(store.unchanged().unwrap().id, now.id);
    std::fs::write(ws.path().join("edited.txt"), "five\n").unwrap();
    let moved = other.snapshot().unwrap();
    assert_ne!(moved.id, now.id);
    // The notification of "five" was read by nobody in `store` yet; even without it, the
    // head on disk differs from the one `store` knows.
    assert!(store.unchanged().is_none());
}

#[test]
fn without_notifications_nothing_is_taken_for_unchanged() {
    let (data, ws) = (tempfile::tempdir().unwrap(), workspace());
    let store = CheckpointStore::open(data.path(), ws.path()).unwrap();
    assert!(!store.watching());
    store.snapshot().unwrap();
    assert!(store.unchanged().is_none());
}
