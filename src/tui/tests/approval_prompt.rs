//! The approval prompt as drawn: the dangers judged in the workspace, a dangerous command,
//! a held write with its diff.

#![allow(clippy::unwrap_used)]

use super::*;

/// The prompt lists the dangers the gate found in the workspace, not in the directory cairn
/// runs in: a deletion in the process's directory is outside the workspace (dangerous, no
/// "always" key), and one inside the workspace is not, wherever the process runs.
#[test]
fn the_prompt_shows_the_dangers_judged_in_the_workspace_not_the_process_directory() {
    let workspace = tempfile::tempdir().unwrap();
    let workspace = workspace.path().canonicalize().unwrap();
    let cwd = std::env::current_dir().unwrap();
    assert!(!cwd.starts_with(&workspace), "the process runs elsewhere");
    let outside = format!("rm {}", cwd.join("cairn-demo.txt").display());
    let mut app = app(Instant::now());
    app.apply(&held_by_gate(&workspace, "c1", &outside));
    let screen = screen_text(&app, 200, 24);
    assert!(screen.contains("⚠ rm /"), "{screen}");
    assert!(!screen.contains("for this session"), "{screen}");
    press(&mut app, KeyCode::Char('n'));
    // A pause after the last key, so the next prompt takes keys at once.
    app.set_now(app.now + Duration::from_secs(1));
    let inside = format!("rm {}", workspace.join("notes.txt").display());
    app.apply(&held_by_gate(&workspace, "c2", &inside));
    let screen = screen_text(&app, 200, 24);
    assert!(screen.contains("Allow bash?"), "{screen}");
    assert!(!screen.contains("⚠"), "{screen}");
    assert!(screen.contains("for this session"), "{screen}");
}

#[test]
fn approval_prompt_for_a_dangerous_command() {
    let mut app = app(Instant::now());
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("d1"),
        name: "bash".into(),
        args: json!({ "command": DANGEROUS }),
    }));
    app.apply(&held_rm());
    insta::assert_snapshot!(draw(&app, 80, 24));
}

#[test]
fn approval_prompt_for_a_held_write_shows_its_diff() {
    let mut app = app(Instant::now());
    app.apply(&tool(ToolEvent::AwaitingApproval {
        call: CallId::new("w1"),
        name: "edit_file".into(),
        subject: "src/lib.rs".into(),
        why: "ask mode: every edit asks".into(),
        sandboxed: false,
        reach: None,
        prefix: "edit_file".into(),
        decisions: crate::bus::DecisionKind::offered("edit_file", "edit_file", false, false),
        dangers: Vec::new(),
        diff: Some(lib_change()),
    }));
    insta::assert_snapshot!(draw(&app, 90, 26));
}
