//! A hook's one-line card (issue 33): a denial, a changed input and a failure, each one line
//! with its verb, the hook's name (and event when the name does not say it), why and its
//! command, cut to the width; at 80 and 160 columns.

#![allow(clippy::unwrap_used)]

use std::time::Instant;

use super::{app, draw, screen_text};
use crate::bus::{AgentEvent, HookAct, HookNote};

fn note(event: &str, hook: &str, command: &str, act: HookAct, why: &str) -> AgentEvent {
    AgentEvent::Hook(HookNote {
        event: event.into(),
        hook: hook.into(),
        command: command.into(),
        act,
        why: why.into(),
    })
}

#[test]
fn a_hook_that_denies_changes_input_or_fails_is_one_line_each() {
    let mut app = app(Instant::now());
    for event in [
        note(
            "pre_tool",
            "pre_tool #1",
            "sh ~/.config/cairn/hooks/deny-push.sh",
            HookAct::Denied,
            "pushing is not allowed from an agent",
        ),
        note(
            "pre_tool",
            "pre_tool #2 (.cairn/config.toml)",
            "python3 tools/rewrite.py",
            HookAct::ChangedInput,
            "{\"command\":\"rm -rf build\"}",
        ),
        note(
            "pre_tool",
            "PreToolUse #1 (.claude/settings.json)",
            "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh",
            HookAct::FailedDenies,
            "it did not answer within 1 s (killed)",
        ),
        note(
            "post_tool",
            "post_tool #1",
            "cargo fmt",
            HookAct::Failed,
            "it exited with code 1: error: could not find Cargo.toml\nmore",
        ),
    ] {
        app.apply(&event);
    }
    // At 160 columns the transcript is 86 wide: the verb, the name and the reason stay.
    let wide = screen_text(&app, 160, 24);
    for expected in [
        "⚑ hook pre_tool #1 denied: pushing is not allowed from an agent  $ sh ~/.config/cairn…",
        "⚑ hook pre_tool #2 (.cairn/config.toml) changed the call's input: {\"command\":\"rm -rf …",
        "⚑ hook PreToolUse #1 (.claude/settings.json) (pre_tool) failed, so it denies: it did …",
        "⚑ hook post_tool #1 failed: it exited with code 1: error: could not find Cargo.toml ……",
    ] {
        assert!(wide.contains(expected), "{expected} missing:\n{wide}");
    }
    let narrow = screen_text(&app, 80, 24);
    assert_eq!(narrow.matches('⚑').count(), 4, "one line each:\n{narrow}");
    assert!(
        narrow.contains(
            "⚑ hook pre_tool #1 denied: pushing is not allowed from an agent  $ sh ~/.conf…"
        ),
        "{narrow}"
    );
    insta::assert_snapshot!("hook_cards_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("hook_cards_160x24", draw(&app, 160, 24));
}
