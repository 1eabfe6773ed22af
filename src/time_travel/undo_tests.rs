//! The undo/redo bookkeeping (which turn an undo or a redo takes, when the redo slot is
//! cleared, what a rewind undoes) and moves that leave conflicts alone.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::*;

fn user() -> Record {
    Record::user("u")
}

fn cp(commit: &str, kind: CheckpointKind) -> Record {
    Record::Checkpoint {
        commit: CheckpointId(commit.into()),
        kind,
    }
}

fn id(s: &str) -> CheckpointId {
    CheckpointId(s.into())
}

use CheckpointKind::{After, Before, Redone, Undone};

/// Three user messages: the first changes a → b, the second reads only (b → b), the third
/// changes b → c.
fn three_turns() -> Vec<Record> {
    vec![
        user(),
        cp("a", Before),
        cp("b", After),
        user(),
        cp("b", Before),
        cp("b", After),
        user(),
        cp("b", Before),
        cp("c", After),
    ]
}

#[test]
fn undo_takes_the_last_changing_turn_and_then_the_one_before() {
    let mut records = three_turns();
    let ledger = Ledger::of(&records);
    let turn = ledger.to_undo().unwrap();
    assert_eq!(
        (turn.user, &turn.before, &turn.after),
        (2, &id("b"), &id("c"))
    );
    assert_eq!(ledger.to_redo(), None, "nothing undone, nothing to redo");
    records.push(cp("b", Undone));
    let ledger = Ledger::of(&records);
    // The turn that only read is skipped.
    assert_eq!(ledger.to_undo().unwrap().user, 0);
    assert_eq!(ledger.to_redo().unwrap().user, 2);
    assert_eq!(ledger.last(), Some(&id("b")));
}

#[test]
fn redo_puts_back_the_undos_in_reverse_order_and_undo_again_works() {
    let mut records = three_turns();
    records.push(cp("b", Undone));
    records.push(cp("a", Undone));
    let ledger = Ledger::of(&records);
    assert_eq!(ledger.to_undo(), None);
    assert_eq!(ledger.to_redo().unwrap().user, 0, "the last undo first");
    records.push(cp("a", Redone));
    let ledger = Ledger::of(&records);
    assert_eq!(ledger.to_redo().unwrap().user, 2);
    assert_eq!(
        ledger.to_undo().unwrap().user,
        0,
        "a redone turn can be undone"
    );
    assert_eq!(ledger.last(), Some(&id("b")), "the redone turn's after");
    records.push(cp("b", Redone));
    let ledger = Ledger::of(&records);
    assert_eq!(ledger.to_redo(), None);
    assert_eq!(ledger.to_undo().unwrap().user, 2);
    assert_eq!(ledger.last(), Some(&id("c")));
}

#[test]
fn a_new_change_clears_the_redo_slot_but_a_batch_that_changed_nothing_does_not() {
    let mut records = three_turns();
    records.push(cp("b", Undone));
    records.extend([user(), cp("b", Before), cp("b", After)]);
    assert_eq!(Ledger::of(&records).to_redo().unwrap().user, 2);
    records.extend([user(), cp("b", Before), cp("d", After)]);
    let ledger = Ledger::of(&records);
    assert_eq!(ledger.to_redo(), None, "a later change clears the slot");
    assert_eq!(ledger.to_undo().unwrap().user, 4);
}

#[test]
fn a_revert_from_the_diff_pane_clears_the_redo_slot_and_is_what_cairn_last_left() {
    let mut records = three_turns();
    records.push(cp("b", Undone));
    records.push(Record::Revert {
        id: "r1".into(),
        target: crate::bus::RevertTarget {
            source: crate::bus::ChangeSource::Call(crate::bus::CallId::new("c1")),
            file: Some(0),
            hunk: None,
            shown: None,
        },
        what: "a.txt".into(),
        changes: Vec::new(),
        before: Some(id("b")),
        after: Some(id("e")),
    });
    let ledger = Ledger::of(&records);
    assert_eq!(ledger.to_redo(), None);
    assert_eq!(ledger.last(), Some(&id("e")));
}

fn revert(before: &str, after: &str) -> Record {
    Record::Revert {
        id: "r".into(),
        target: crate::bus::RevertTarget {
            source: crate::bus::ChangeSource::Call(crate::bus::CallId::new("c1")),
            file: Some(0),
            hunk: Some(0),
            shown: None,
        },
        what: "hunk 1".into(),
        changes: Vec::new(),
        before: Some(id(before)),
        after: Some(id(after)),
    }
}

#[test]
fn reverts_since_a_turn_are_cairns_own_and_a_redo_puts_them_back_too() {
    let mut records = three_turns();
    records.push(revert("c", "d"));
    let ledger = Ledger::of(&records);
    let turn = ledger.to_undo().unwrap();
    assert_eq!((turn.user, &turn.after), (2, &id("c")));
    assert_eq!(turn.hops, [(id("c"), id("d"))]);
    records.push(cp("b", Undone));
    let ledger = Ledger::of(&records);
    // The revert came after the earlier turn too (a file the undone turn changed between is
    // still judged by the gap before the revert).
    assert_eq!(ledger.to_undo().unwrap().hops.len(), 1);
    let redo = ledger.to_redo().unwrap();
    assert_eq!(redo.after, id("d"), "what cairn left when it was undone");
    records.push(cp("b", Redone));
    assert_eq!(Ledger::of(&records).last(), Some(&id("d")));
}

#[test]
fn an_undo_takes_back_a_file_cairn_reverted_since_but_not_one_the_user_edited() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "one\n");
    write(ws.path(), "b.txt", "one\n");
    let store = CheckpointStore::open(data.path(), ws.path()).unwrap();
    let before = store.snapshot().unwrap().id;
    write(ws.path(), "a.txt", "two\nthree\n");
    write(ws.path(), "b.txt", "two\nthree\n");
    let after = store.snapshot().unwrap().id;
    // cairn reverts part of a and of b; then the user edits b by hand.
    write(ws.path(), "a.txt", "two\n");
    write(ws.path(), "b.txt", "two\n");
    let reverted = store.snapshot().unwrap().id;
    write(ws.path(), "b.txt", "mine\n");
    let hops = [(after.clone(), reverted)];
    let (done, conflicts) = undo_turn(&store, &before, &after, &hops).unwrap();
    let paths: Vec<&str> = done.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].path, "b.txt");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).unwrap(),
        "mine\n"
    );
}

#[test]
fn rewinding_the_files_to_a_message_undoes_every_later_changing_turn() {
    let records = three_turns();
    let ledger = Ledger::of(&records);
    let (target, undone) = ledger.rewind_to(0).unwrap();
    assert_eq!(target, id("a"));
    assert_eq!(undone, [id("b"), id("a")], "newest first");
    assert_eq!(ledger.changes_from(1), 1);
    let (target, undone) = ledger.rewind_to(1).unwrap();
    assert_eq!((target, undone), (id("b"), vec![id("b")]));
    // Nothing changed after the last message's turn... but the turn itself did.
    assert_eq!(ledger.rewind_to(2).unwrap().0, id("b"));
    let mut records = records;
    records.push(user());
    assert_eq!(Ledger::of(&records).rewind_to(3), None, "no change since");
    // After the rewind is logged, undo goes on before the message, and redo starts with it.
    records.extend([cp("b", Undone), cp("a", Undone)]);
    let ledger = Ledger::of(&records);
    assert_eq!(ledger.to_undo(), None);
    assert_eq!(ledger.to_redo().unwrap().user, 0);
    assert_eq!(ledger.rewind_to(0), None, "already undone");
}

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

#[test]
fn a_move_leaves_a_file_changed_since_alone_and_names_why() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "one\n");
    write(ws.path(), "b.txt", "one\n");
    let store = CheckpointStore::open(data.path(), ws.path()).unwrap();
    let before = store.snapshot().unwrap().id;
    write(ws.path(), "a.txt", "two\n");
    write(ws.path(), "b.txt", "two\n");
    write(ws.path(), "new.txt", "new\n");
    let after = store.snapshot().unwrap().id;
    // The user edits b after the turn, and deletes new.txt.
    write(ws.path(), "b.txt", "mine\n");
    std::fs::remove_file(ws.path().join("new.txt")).unwrap();
    let (reverted, conflicts) = undo_turn(&store, &before, &after, &[]).unwrap();
    assert_eq!(
        reverted,
        [Reverted {
            path: "a.txt".into(),
            action: "restored"
        }]
    );
    // new.txt is already what the undo wants (absent): neither moved nor a conflict.
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].path, "b.txt");
    assert!(conflicts[0].why.contains("changed since the turn"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).unwrap(),
        "mine\n"
    );

    // Redo puts back a and new.txt (absent, as the undo left it); b is left alone again.
    let (reverted, conflicts) = redo_turn(&store, &before, &after, None).unwrap();
    let paths: Vec<&str> = reverted.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["a.txt", "new.txt"]);
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert!(conflicts[0].path == "b.txt" && conflicts[0].why.contains("since the undo"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).unwrap(),
        "mine\n"
    );
}

/// A session killed after logging a command's After and before that checkpoint was written
/// (the write runs in the background): `cairn undo` takes the batch as one never closed and
/// puts the workspace back to its Before.
#[test]
fn an_after_logged_but_never_written_is_undone_from_the_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("keep.txt"), "original\n").unwrap();
    let workspace = ws.path().canonicalize().unwrap();
    let (before, after) = {
        let store = CheckpointStore::open(data.path(), &workspace).unwrap();
        let before = store.snapshot().unwrap().id;
        std::fs::write(workspace.join("keep.txt"), "changed\n").unwrap();
        std::fs::write(workspace.join("made.txt"), "new\n").unwrap();
        let after = store.snapshot_deferred(&[]).unwrap().id;
        assert!(store.has(&after), "readable in the process that took it");
        // Dropped unflushed: the process died before the background write.
        (before, after)
    };
    let reopened = CheckpointStore::open(data.path(), &workspace).unwrap();
    assert!(!reopened.has(&after), "nothing of it reached the disk");
    assert!(reopened.has(&before));

    let sessions = data.path().join("sessions");
    let mut log = SessionLog::create(&sessions, &crate::bus::SessionId("s".into())).unwrap();
    for record in [
        Record::Meta {
            id: crate::bus::SessionId("s".into()),
            cwd: workspace.display().to_string(),
            provider: "p".into(),
            model: "m".into(),
            version: "0".into(),
            started: "2026-01-01T00:00:00Z".into(),
            parent: None,
        },
        user(),
        Record::Checkpoint {
            commit: before,
            kind: Before,
        },
        Record::Checkpoint {
            commit: after,
            kind: After,
        },
    ] {
        log.append(&record).unwrap();
    }
    let report = undo_session(log.path(), data.path(), false).unwrap();
    let mut reverted: Vec<(String, String)> = report
        .reverted
        .iter()
        .map(|r| (r.path.clone(), r.action.to_string()))
        .collect();
    reverted.sort();
    assert_eq!(
        reverted,
        [
            ("keep.txt".to_string(), "restored".to_string()),
            ("made.txt".to_string(), "removed".to_string())
        ]
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("keep.txt")).unwrap(),
        "original\n"
    );
    assert!(!workspace.join("made.txt").exists());
}
