//! A replay (and a resume) shows what happened from the log alone: the mode the session
//! started in and each switch, and the lines `/undo` and `/redo` wrote.

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::Instant;

use super::{draw, options, screen_text};
use crate::agent::history;
use crate::bus::Mode;
use crate::bus::{AgentEvent, Restore, RestorePlan, SessionId};
use crate::session_log::{Record, ToldState};
use crate::tool_output::FileChange;
use crate::tui::app::App;

fn change(path: &str, diff: &str, created: bool) -> FileChange {
    FileChange {
        path: path.into(),
        created,
        diff: diff.into(),
        added: 1,
        removed: 1,
        first_line: 1,
        last_line: 1,
        replacements: 1,
    }
}

/// A session that started in auto, switched to plan, undid a turn and redid it.
fn records() -> Vec<Record> {
    let undone = RestorePlan {
        files: vec![
            change(
                "src/app.py",
                "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-new\n+old\n",
                false,
            ),
            change("build/marker", "--- a/build/marker\n+++ /dev/null\n", false),
        ],
        conflicts: Vec::new(),
        note: None,
    };
    let redone = RestorePlan {
        files: vec![change("build/marker", "", true)],
        conflicts: Vec::new(),
        note: None,
    };
    vec![
        Record::System {
            prompt: "system".into(),
            told: ToldState {
                mode: Mode::Auto,
                git_branch: None,
            },
        },
        Record::user("fix the app"),
        Record::Assistant {
            text: "fixed".into(),
            reasoning: Default::default(),
            tool_calls: Vec::new(),
        },
        Record::Mode { mode: Mode::Plan },
        Record::Restored {
            what: Restore::Undo,
            done: undone,
        },
        Record::Restored {
            what: Restore::Redo,
            done: redone,
        },
    ]
}

fn replayed() -> App {
    let records = records();
    let mut opts = options();
    opts.read_only = true;
    let mode = history::start_mode(&records).unwrap();
    opts.mode = mode;
    let mut app = App::new(&opts, Instant::now());
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::SessionStarted {
            session: SessionId("s1".into()),
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode,
            context_window: 0,
            resumed: true,
        },
    ));
    for event in history::rebuild_all(&records).events {
        app.apply(&event);
    }
    app.apply(&AgentEvent::Conversation(ConversationEvent::Idle));
    app
}

#[test]
fn a_replay_shows_the_undo_and_redo_lines_and_the_modes_the_session_ran_in() {
    let app = replayed();
    let screen = screen_text(&app, 160, 30);
    assert!(
        screen.contains("undid the last turn: restored src/app.py, removed build/marker"),
        "{screen}"
    );
    assert!(
        screen.contains("redid the undone turn: recreated build/marker"),
        "{screen}"
    );
    assert!(screen.contains("mode → plan"), "the switch: {screen}");
    assert!(
        !screen.contains("mode → auto"),
        "it started in auto: no switch line for that: {screen}"
    );
    assert!(screen.contains("│ plan "), "the mode it ended in: {screen}");
    insta::assert_snapshot!("replay_undo_redo_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("replay_undo_redo_160x30", draw(&app, 160, 30));
}
