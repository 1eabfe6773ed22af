//! What a snapshot records, through everything a workspace can do to its files between two
//! checkpoints, and what packing, bulk adds and concurrent snapshots leave of it.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::store::HEAD_REF;
use super::tests::{store, write};
use super::*;

/// Every file and link under `root` (not `.git`, not `skip`): its path, and its mode and
/// content or its target.
fn listing(root: &Path, skip: &[&str]) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if entry.file_name() == ".git" || skip.contains(&rel.as_str()) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.push((rel, format!("link -> {}", target.display())));
            } else if meta.is_dir() {
                walk(root, &path, skip, out);
            } else {
                let exec = meta.permissions().mode() & 0o111 != 0;
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_string();
                out.push((rel, format!("exec={exec} {text:?}")));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, skip, &mut out);
    out.sort();
    out
}

fn kinds(store: &CheckpointStore, a: &CheckpointId, b: &CheckpointId) -> Vec<(String, ChangeKind)> {
    store
        .diff(a, b)
        .unwrap()
        .into_iter()
        .map(|c| (c.path, c.kind))
        .collect()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const NEWLINE_NAME: &str = "new\nline.txt";
const UNICODE_NAME: &str = "ünïcode ✓ name.txt";

#[test]
fn every_kind_of_change_is_recorded_and_restored_exactly() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    git(root, &["init", "-q"]);
    write(root, "plain.txt", "plain\n");
    write(root, "empty", "");
    write(root, "exec.sh", "#!/bin/sh\necho hi\n");
    chmod(&root.join("exec.sh"), 0o755);
    std::os::unix::fs::symlink("plain.txt", root.join("link")).unwrap();
    write(root, "dir/nested.txt", "nested\n");
    write(root, UNICODE_NAME, "unicode\n");
    write(root, NEWLINE_NAME, "newline\n");
    write(root, "sub/.gitignore", "*.tmp\n");
    write(root, "sub/keep.txt", "keep\n");
    write(root, "sub/scratch.tmp", "ignored\n");
    write(root, "becomes_dir", "a file\n");
    write(root, "becomes_file/inner.txt", "inner\n");
    // A repository of its own inside the workspace (a vendored checkout, a submodule).
    write(root, "vendor/lib/lib.rs", "lib\n");
    git(&root.join("vendor/lib"), &["init", "-q"]);
    git(&root.join("vendor/lib"), &["add", "-A"]);
    git(&root.join("vendor/lib"), &["commit", "-qm", "lib"]);
    let original = listing(root, &["vendor/lib"]);

    let store = store(data.path(), root);
    let first = store.snapshot().unwrap();
    let skipped: Vec<(&str, &str)> = first
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.why.as_str()))
        .collect();
    assert_eq!(skipped, [("vendor/lib/", "a repository of its own")]);

    write(root, "plain.txt", "plain, changed\n");
    write(root, "empty", "no longer\n");
    chmod(&root.join("exec.sh"), 0o644);
    std::fs::remove_file(root.join("link")).unwrap();
    std::os::unix::fs::symlink("dir/moved.txt", root.join("link")).unwrap();
    std::fs::rename(root.join("dir/nested.txt"), root.join("dir/moved.txt")).unwrap();
    std::fs::remove_file(root.join(UNICODE_NAME)).unwrap();
    write(root, NEWLINE_NAME, "newline, changed\n");
    write(root, "sub/scratch.tmp", "ignored, changed\n");
    std::fs::remove_file(root.join("becomes_dir")).unwrap();
    write(root, "becomes_dir/inside.txt", "inside\n");
    std::fs::remove_dir_all(root.join("becomes_file")).unwrap();
    write(root, "becomes_file", "now a file\n");
    write(root, "vendor/lib/lib.rs", "their change\n");
    write(root, "added.txt", "added\n");
    let second = store.snapshot().unwrap();

    use ChangeKind::{Changed, Created, Deleted};
    let expected: Vec<(String, ChangeKind)> = [
        ("added.txt", Created),
        ("becomes_dir", Deleted),
        ("becomes_dir/inside.txt", Created),
        ("becomes_file", Created),
        ("becomes_file/inner.txt", Deleted),
        ("dir/moved.txt", Created),
        ("dir/nested.txt", Deleted),
        ("empty", Changed),
        ("exec.sh", Changed),
        ("link", Changed),
        (NEWLINE_NAME, Changed),
        ("plain.txt", Changed),
        (UNICODE_NAME, Deleted),
    ]
    .into_iter()
    .map(|(p, k)| (p.to_string(), k))
    .collect();
    assert_eq!(kinds(&store, &first.id, &second.id), expected);
    let exec = store.diff(&first.id, &second.id).unwrap();
    let exec = exec.iter().find(|c| c.path == "exec.sh").unwrap();
    let modes = (
        exec.before.clone().unwrap().mode,
        exec.after.clone().unwrap().mode,
    );
    assert_eq!(modes, ("100755".to_string(), "100644".to_string()));

    let paths: Vec<&str> = expected.iter().map(|(p, _)| p.as_str()).collect();
    store.restore(&first.id, &paths).unwrap();
    let mut now = listing(root, &["vendor/lib"]);
    // The ignored file is not ours to put back.
    for (path, content) in now.iter_mut() {
        if path == "sub/scratch.tmp" {
            *content = format!("exec=false {:?}", "ignored\n");
        }
    }
    assert_eq!(now, original);
    assert_eq!(
        std::fs::read_to_string(root.join("vendor/lib/lib.rs")).unwrap(),
        "their change\n",
        "the nested repository is left alone"
    );
    let third = store.snapshot().unwrap();
    assert_eq!(kinds(&store, &first.id, &third.id), []);
}

#[test]
fn unchanged_or_only_touched_workspaces_give_the_same_checkpoint_back() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "a\n");
    write(ws.path(), "d/b.txt", "b\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    // Same content written again: a new mtime, nothing to record.
    write(ws.path(), "a.txt", "a\n");
    assert_eq!(store.snapshot().unwrap().id, first.id);
    write(ws.path(), "a.txt", "A\n");
    let second = store.snapshot().unwrap();
    assert_ne!(second.id, first.id);
    write(ws.path(), "a.txt", "a\n");
    let third = store.snapshot().unwrap();
    assert_eq!(kinds(&store, &first.id, &third.id), []);
    assert_eq!(store.snapshot().unwrap().id, third.id);
}

#[test]
fn a_directory_replaced_by_a_symlink_is_recorded() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(root, "d/x.txt", "x\n");
    let store = store(data.path(), root);
    let first = store.snapshot().unwrap();
    std::fs::remove_dir_all(root.join("d")).unwrap();
    write(root, "real/x.txt", "x\n");
    std::os::unix::fs::symlink("real", root.join("d")).unwrap();
    let second = store.snapshot().unwrap();
    use ChangeKind::{Created, Deleted};
    let expected = [
        ("d".to_string(), Created),
        ("d/x.txt".to_string(), Deleted),
        ("real/x.txt".to_string(), Created),
    ];
    assert_eq!(kinds(&store, &first.id, &second.id), expected);
}

#[test]
fn a_file_that_grows_past_the_limit_leaves_the_snapshot() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "grows.bin", "small\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    let big = vec![b'a'; (super::rules::MAX_FILE_BYTES + 1) as usize];
    std::fs::write(ws.path().join("grows.bin"), big).unwrap();
    let second = store.snapshot().unwrap();
    assert_eq!(second.skipped[0].path, "grows.bin");
    assert_eq!(
        kinds(&store, &first.id, &second.id),
        [("grows.bin".to_string(), ChangeKind::Deleted)]
    );
    // Still too big: nothing more to record, the note stays.
    let third = store.snapshot().unwrap();
    assert_eq!(third.id, second.id);
    assert_eq!(third.skipped, second.skipped);
}

#[test]
fn many_new_files_go_into_one_pack_and_read_back() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for i in 0..1200 {
        write(
            ws.path(),
            &format!("d{}/f{i}.txt", i % 12),
            &format!("file {i}\n"),
        );
    }
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    assert!(
        store.loose_objects() < 100,
        "{} loose objects",
        store.loose_objects()
    );
    write(ws.path(), "d3/f3.txt", "changed\n");
    let second = store.snapshot().unwrap();
    let changes = store.diff(&first.id, &second.id).unwrap();
    let before = changes[0].before.clone().unwrap();
    assert_eq!(store.blobs(&[&before.id]).unwrap(), [b"file 3\n".to_vec()]);
}

#[test]
fn maintain_packs_a_session_into_less_room_and_keeps_every_checkpoint() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let text = |v: usize| -> String {
        (0..200)
            .map(|l| {
                format!(
                    "line {l} of a file that is edited one line at a time {}\n",
                    l == v
                )
            })
            .collect()
    };
    write(ws.path(), "f.txt", &text(0));
    let store = store(data.path(), ws.path());
    let mut ids = vec![store.snapshot().unwrap().id];
    assert!(!store.maintain().unwrap(), "nothing to pack yet");
    for v in 1..60 {
        write(ws.path(), &format!("dir/sub/f{}.txt", v % 3), &text(v));
        ids.push(store.snapshot().unwrap().id);
    }
    let before = store.disk_usage();
    // Each snapshot's few objects are a small pack of their own.
    assert!(store.loose_objects() < LOOSE_LIMIT);
    assert!(store.packs() >= maintain::PACK_LIMIT, "{}", store.packs());
    assert!(store.maintain().unwrap());
    assert_eq!(store.loose_objects(), 0);
    assert!(
        store.packs() < maintain::PACK_LIMIT / 2,
        "{}",
        store.packs()
    );
    let after = store.disk_usage();
    assert!(
        after * 3 < before * 2,
        "{before} bytes before packing, {after} after"
    );
    let changes = store.diff(&ids[0], &ids[59]).unwrap();
    assert_eq!(changes.len(), 3);
    let first = changes[0].after.clone().unwrap();
    assert!(!store.blobs(&[&first.id]).unwrap()[0].is_empty());
}

#[test]
fn an_interrupted_snapshot_leaves_the_last_checkpoint_and_the_next_completes() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "a\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    // A cairn killed mid-snapshot: an object half written under its temp name, the head's
    // lock file left behind.
    let objects = store.git_dir().join("objects/ab");
    std::fs::create_dir_all(&objects).unwrap();
    std::fs::write(objects.join("tmp_obj_0123456789abcdef"), "half").unwrap();
    std::fs::write(store.git_dir().join("refs/cairn/head.lock"), "0000").unwrap();
    write(ws.path(), "b.txt", "b\n");
    let again = super::tests::store(data.path(), ws.path());
    let second = again.snapshot().unwrap();
    assert_eq!(
        kinds(&again, &first.id, &second.id),
        [("b.txt".to_string(), ChangeKind::Created)]
    );
}

#[test]
fn snapshots_from_two_threads_at_once_both_succeed() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "a\n");
    let store = store(data.path(), ws.path());
    store.snapshot().unwrap();
    for round in 0..5 {
        write(ws.path(), "a.txt", &format!("round {round}\n"));
        let other = store.clone();
        let thread = std::thread::spawn(move || other.snapshot());
        let here = store.snapshot().unwrap();
        let there = thread.join().unwrap().unwrap();
        assert_eq!(here.id, there.id, "round {round}");
    }
}

#[test]
fn a_git_file_is_never_recorded_and_a_killed_git_does_not_stop_snapshots() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // A linked worktree or a submodule's checkout has a `.git` file naming its repository.
    write(
        ws.path(),
        ".git",
        "gitdir: ../elsewhere/.git/worktrees/ws\n",
    );
    write(ws.path(), "a.txt", "a\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    // A snapshot killed while it held the head's lock.
    std::fs::write(store.git_dir().join("refs/cairn/head.lock"), "").unwrap();
    write(ws.path(), "a.txt", "A\n");
    write(ws.path(), "sub/.git", "gitdir: nowhere\n");
    write(ws.path(), "sub/b.txt", "b\n");
    let second = store.snapshot().unwrap();
    assert_eq!(
        kinds(&store, &first.id, &second.id),
        [
            ("a.txt".to_string(), ChangeKind::Changed),
            ("sub/b.txt".to_string(), ChangeKind::Created),
        ]
    );
}

#[test]
fn without_notifications_new_files_are_still_found_by_the_scan() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "a\n");
    // What a network or FUSE file system gets: no notifications, a scan each time.
    let store = store(data.path(), ws.path());
    assert!(!store.watching());
    let first = store.snapshot().unwrap();
    write(ws.path(), "d/new.txt", "new\n");
    let second = store.snapshot().unwrap();
    assert_eq!(
        kinds(&store, &first.id, &second.id),
        [("d/new.txt".to_string(), ChangeKind::Created)]
    );
    assert_eq!(store.snapshot().unwrap().id, second.id);
}

/// A deferred checkpoint: its id and contents are there at once in this process (the diff a
/// command's result shows), nothing of it on disk until `flush`; then git reads it, and the
/// head names it. A snapshot after it writes it first.
#[test]
fn a_deferred_checkpoint_is_readable_at_once_and_on_disk_after_its_flush() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "one\n");
    let s = store(data.path(), ws.path());
    let before = s.snapshot().unwrap().id;
    write(ws.path(), "a.txt", "two\n");
    write(ws.path(), "dir/b.txt", "new\n");
    let after = s.snapshot_deferred(&[]).unwrap().id;
    assert_ne!(after, before);
    assert_eq!(
        kinds(&s, &before, &after),
        [
            ("a.txt".to_string(), ChangeKind::Changed),
            ("dir/b.txt".to_string(), ChangeKind::Created)
        ]
    );
    let changes = s.diff(&before, &after).unwrap();
    let blob = changes[1].after.as_ref().unwrap().id.clone();
    assert_eq!(s.blobs(&[&blob]).unwrap(), [b"new\n".to_vec()]);
    let other = store(data.path(), ws.path());
    assert!(!other.has(&after), "another process does not see it yet");

    s.flush().unwrap();
    assert!(other.has(&after));
    git(s.git_dir(), &["cat-file", "-e", &after.0]);
    git(s.git_dir(), &["cat-file", "-e", &blob]);
    let head = std::fs::read_to_string(s.git_dir().join(HEAD_REF)).unwrap();
    assert_eq!(head.trim(), after.0);

    // Deferred again, then a plain snapshot: the deferred one is written on the way.
    write(ws.path(), "a.txt", "three\n");
    let third = s.snapshot_deferred(&[]).unwrap().id;
    write(ws.path(), "a.txt", "four\n");
    let fourth = s.snapshot().unwrap().id;
    let reopened = store(data.path(), ws.path());
    assert!(reopened.has(&third) && reopened.has(&fourth));
    assert_eq!(
        kinds(&reopened, &third, &fourth),
        [("a.txt".to_string(), ChangeKind::Changed)]
    );
}

#[test]
fn deferred_checkpoints_are_written_as_a_pack_each_and_maintenance_merges_them() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "zero\n");
    let s = store(data.path(), ws.path());
    let mut ids = vec![s.snapshot().unwrap().id];
    let (loose, packs) = (s.loose_objects(), s.packs());
    for i in 1..=maintain::PACK_LIMIT {
        let path = format!("dir/sub/f{}.txt", i % 3);
        write(ws.path(), &path, &format!("{i}\n"));
        // As a file tool's checkpoint: the path it wrote, no scan.
        ids.push(s.snapshot_deferred(&[&ws.path().join(&path)]).unwrap().id);
        s.flush().unwrap();
        assert_eq!(s.packs(), packs + i, "one pack per deferred checkpoint");
    }
    assert_eq!(s.loose_objects(), loose, "nothing written loose");
    let other = store(data.path(), ws.path());
    for id in &ids {
        git(s.git_dir(), &["cat-file", "-e", &id.0]);
        assert!(other.has(id));
    }
    let changes = other.diff(&ids[0], &ids[ids.len() - 1]).unwrap();
    assert_eq!(changes.len(), 3);

    assert!(s.maintain().unwrap(), "{} packs are merged", s.packs());
    assert!(s.packs() < maintain::PACK_LIMIT / 2, "{} packs", s.packs());
    let reopened = store(data.path(), ws.path());
    assert_eq!(
        reopened.diff(&ids[0], &ids[ids.len() - 1]).unwrap(),
        changes
    );
    let blob = changes[0].after.clone().unwrap();
    assert!(!reopened.blobs(&[&blob.id]).unwrap()[0].is_empty());
}

#[test]
fn a_deferred_checkpoint_of_bytes_already_stored_leaves_a_store_git_walks_whole() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "zero\n");
    let s = store(data.path(), ws.path());
    let first = s.snapshot().unwrap().id;
    // Written by a snapshot taken at once (a small pack of its own).
    write(ws.path(), "b.txt", "shared\n");
    let loose = s.snapshot_paths(&[&ws.path().join("b.txt")]).unwrap().id;
    // The same bytes again, in a deferred checkpoint: it asks only the packs already read
    // whether the blob is there, so where they do not know it, it is packed a second time.
    write(ws.path(), "c.txt", "shared\n");
    let deferred = s.snapshot_deferred(&[&ws.path().join("c.txt")]).unwrap().id;
    s.flush().unwrap();
    // git walks every checkpoint and finds each object whole, in whichever copy.
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(s.git_dir())
        .args(["rev-list", "--objects", "--all"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    // Three commits, their three trees, and two blobs: the shared one is listed once.
    assert_eq!(listed.lines().count(), 8, "{listed}");
    for name in ["a.txt", "b.txt"] {
        assert!(listed.contains(name), "{listed}");
    }
    for id in [&first, &loose, &deferred] {
        git(s.git_dir(), &["cat-file", "-e", &id.0]);
    }
    let other = store(data.path(), ws.path());
    assert_eq!(
        kinds(&other, &first, &loose),
        [("b.txt".to_string(), ChangeKind::Created)]
    );
    assert_eq!(
        kinds(&other, &loose, &deferred),
        [("c.txt".to_string(), ChangeKind::Created)]
    );
    assert_eq!(
        kinds(&store(data.path(), ws.path()), &first, &deferred).len(),
        2
    );
}
