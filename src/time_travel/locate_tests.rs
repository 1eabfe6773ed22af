//! Tests of finding a change and its checkpoints in the session's records.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::bus::{CallId, ToolResult};
use crate::tool_output::{CommandRun, SubagentRun};

fn checkpoint(id: &str, kind: CheckpointKind) -> Record {
    Record::Checkpoint {
        commit: CheckpointId(id.into()),
        kind,
    }
}

fn edit(call: &str, path: &str) -> Record {
    Record::ToolResult {
        call: CallId::new(call),
        name: "edit_file".into(),
        result: ToolResult::ok(ToolOutput::FileChanged(FileChange {
            path: path.into(),
            diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n".into(),
            ..FileChange::default()
        })),
    }
}

fn command(call: &str) -> Record {
    Record::ToolResult {
        call: CallId::new(call),
        name: "bash".into(),
        result: ToolResult::ok(ToolOutput::Command(CommandRun {
            command: "make gen".into(),
            changes: vec![FileChange {
                path: "gen.rs".into(),
                ..FileChange::default()
            }],
            ..CommandRun::default()
        })),
    }
}

fn source(call: &str) -> RevertTarget {
    RevertTarget {
        source: ChangeSource::Call(CallId::new(call)),
        file: None,
        hunk: None,
        shown: None,
    }
}

#[test]
fn a_commands_checkpoints_are_the_ones_around_it_and_a_batchs_follow_its_results() {
    use CheckpointKind::{After, Before};
    let records = vec![
        checkpoint("b1", Before),
        edit("e1", "a.rs"),
        edit("e2", "a.rs"),
        edit("e3", "b.rs"),
        checkpoint("a1", After),
        checkpoint("b2", Before),
        checkpoint("a2", After),
        command("c1"),
    ];
    let found = locate(&records, &source("c1")).unwrap();
    assert_eq!(found.label, "the command `make gen`");
    assert_eq!(
        (found.before.unwrap().0, found.after.unwrap().0),
        ("b2".into(), "a2".into())
    );
    let found = locate(&records, &source("e3")).unwrap();
    assert_eq!(
        (found.before.unwrap().0, found.after.unwrap().0),
        ("b1".into(), "a1".into())
    );
    // a.rs changed twice in that batch: its checkpoint contents are not one edit's.
    assert!(found.shared.contains("a.rs") && !found.shared.contains("b.rs"));
    assert!(locate(&records, &source("nope")).is_err());
}

/// What a subagent alone in its reply changed reverts like a command's changes: between the
/// Before of its batch and the After taken as it ended.
#[test]
fn a_lone_subagents_changes_are_found_between_its_checkpoints() {
    use CheckpointKind::{After, Before};
    let subagent = Record::ToolResult {
        call: CallId::new("s1"),
        name: "subagent".into(),
        result: ToolResult::ok(ToolOutput::Subagent(SubagentRun {
            agent: "general".into(),
            description: "regenerate the parser".into(),
            changes: vec![
                FileChange {
                    path: "gen.rs".into(),
                    ..FileChange::default()
                },
                FileChange {
                    path: "gen_tests.rs".into(),
                    ..FileChange::default()
                },
            ],
            ..SubagentRun::default()
        })),
    };
    let records = vec![
        checkpoint("b1", Before),
        checkpoint("a1", After),
        subagent,
        checkpoint("a1", After),
    ];
    let found = locate(&records, &source("s1")).unwrap();
    assert_eq!(found.label, "the subagent general (regenerate the parser)");
    assert_eq!(found.changes.len(), 2);
    assert_eq!(
        (found.before.unwrap().0, found.after.unwrap().0),
        ("b1".into(), "a1".into())
    );
}

#[test]
fn a_batch_whose_checkpoint_failed_has_none_rather_than_the_previous_ones() {
    use CheckpointKind::{After, Before};
    let records = vec![
        checkpoint("b1", Before),
        edit("e1", "a.rs"),
        checkpoint("a1", After),
        // The next batch's Before failed: nothing brackets e2.
        edit("e2", "a.rs"),
    ];
    let found = locate(&records, &source("e2")).unwrap();
    assert!(found.before.is_none() && found.after.is_none());
}

#[test]
fn a_call_id_used_twice_in_a_session_is_told_apart_by_the_diff_shown() {
    let edit_of = |path: &str, diff: &str| Record::ToolResult {
        call: CallId::new("call_1"),
        name: "edit_file".into(),
        result: ToolResult::ok(ToolOutput::FileChanged(FileChange {
            path: path.into(),
            diff: diff.into(),
            ..FileChange::default()
        })),
    };
    let first = "--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-a\n+b\n";
    let second = "--- a/b.rs\n+++ b/b.rs\n@@ -1 +1 @@\n-x\n+y\n";
    // A resumed session numbers synthesised ids from 1 again.
    let records = vec![edit_of("a.rs", first), edit_of("b.rs", second)];
    let mut target = source("call_1");
    assert_eq!(locate(&records, &target).unwrap().changes[0].path, "b.rs");
    target.shown = Some((0, crate::bus::diff_fingerprint(first)));
    assert_eq!(locate(&records, &target).unwrap().changes[0].path, "a.rs");
    target.shown = Some((0, crate::bus::diff_fingerprint("something else")));
    assert!(locate(&records, &target).is_err());
}

#[test]
fn the_note_to_the_model_names_the_revert_and_carries_its_diff() {
    let change = FileChange {
        path: "f.txt".into(),
        diff: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-x\n+y\n".into(),
        ..FileChange::default()
    };
    let note = super::super::notes::note_for_model("hunk 1 of 1 in f.txt", &[change]);
    assert!(
        note.starts_with("[The user reverted hunk 1 of 1 in f.txt"),
        "{note}"
    );
    assert!(note.contains("read a file again before you edit it"));
    assert!(note.ends_with("-x\n+y\n"), "{note}");
}
