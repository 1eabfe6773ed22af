//! The first screen: the workspace facts and tips until the first message, notices below
//! them, and the session quitting names for a resume.

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::{app, draw, key, options, screen_text, type_text};
use crate::bus::Mode;
use crate::bus::{AgentEvent, SessionId, UserCommand};
use crate::tui::app::App;
use crate::tui::panes::transcript::entry::NoticeLevel;
use crate::tui::panes::welcome::{Sandbox, Welcome};

/// Made-up facts, so the snapshots are the same wherever the checkout lives.
fn welcome() -> Welcome {
    Welcome {
        workspace: "~/src/greeter".into(),
        branch: Some("feature/welcome".into()),
        sandbox: Sandbox::On("Landlock (ABI 6) + seccomp socket filter, network off".into()),
        agents_md: Some(("~/src/greeter/AGENTS.md".into(), 2150)),
    }
}

fn welcomed(welcome: Welcome) -> App {
    let mut options = options();
    options.welcome = Some(welcome);
    let mut app = App::new(&options, Instant::now());
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::SessionStarted {
            session: SessionId("s-welcome".into()),
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode: Mode::AutoEdit,
            context_window: 64_000,
            resumed: false,
        },
    ));
    app
}

#[test]
fn the_welcome_screen_at_80_and_160_columns() {
    let app = welcomed(welcome());
    insta::assert_snapshot!("welcome_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("welcome_160x30", draw(&app, 160, 30));
    for (w, h) in [(80, 24), (160, 30)] {
        let screen = screen_text(&app, w, h);
        for fact in [
            "What should we work on?",
            "~/src/greeter",
            "feature/welcome",
            "on: Landlock (ABI 6)",
            "loaded from ~/src/greeter/AGENTS.md (2.1 KB)",
            "/init",
            "@src/main.rs",
            "!cargo test",
            "Shift+Tab",
        ] {
            assert!(
                screen.contains(fact),
                "{w}x{h}: {fact:?} missing:\n{screen}"
            );
        }
    }
}

#[test]
fn the_welcome_says_what_is_missing() {
    let app = welcomed(Welcome {
        workspace: "/srv/app".into(),
        branch: None,
        sandbox: Sandbox::Off(
            "Landlock is not supported by this kernel; every command not known to be read-only asks first"
                .into(),
        ),
        agents_md: None,
    });
    let screen = screen_text(&app, 160, 30);
    for fact in [
        "/srv/app",
        "not a git repository",
        "off: Landlock is not supported by this kernel",
        "none here: /init has the model draft one",
    ] {
        assert!(screen.contains(fact), "{fact:?} missing:\n{screen}");
    }
}

#[test]
fn notices_before_the_first_message_show_below_the_welcome_and_a_message_replaces_it() {
    let mut app = welcomed(welcome());
    app.notice(
        "no sandbox: Landlock is disabled for this test run",
        NoticeLevel::Warning,
    );
    let screen = screen_text(&app, 80, 24);
    assert!(screen.contains("feature/welcome"), "{screen}");
    assert!(
        screen.contains("no sandbox: Landlock is disabled"),
        "{screen}"
    );
    assert!(
        app.resumable_session().is_none(),
        "a session with no message is not worth resuming"
    );

    type_text(&mut app, "hello");
    app.handle_input(&key(KeyCode::Enter));
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Submit { text, .. }] if text == "hello"
    ));
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "hello".into(),
        images: vec![],
        files: vec![],
        typed: None,
    }));
    let screen = screen_text(&app, 80, 24);
    assert!(!screen.contains("feature/welcome"), "{screen}");
    assert!(!screen.contains("What should we work on?"), "{screen}");
    assert!(
        screen.contains("no sandbox: Landlock is disabled"),
        "{screen}"
    );
    assert_eq!(
        app.resumable_session(),
        Some(&SessionId("s-welcome".into()))
    );

    // A new session starts empty again: nothing to resume, the welcome is back.
    app.apply(&AgentEvent::Conversation(ConversationEvent::Reset));
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::SessionStarted {
            session: SessionId("s-next".into()),
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode: Mode::AutoEdit,
            context_window: 64_000,
            resumed: false,
        },
    ));
    assert!(app.resumable_session().is_none());
    assert!(screen_text(&app, 80, 24).contains("feature/welcome"));
}

#[test]
fn a_replay_and_a_run_without_facts_keep_the_plain_first_line() {
    let app = app(Instant::now());
    let screen = screen_text(&app, 80, 24);
    assert!(screen.contains("What should we work on?"), "{screen}");
    let mut options = options();
    options.read_only = true;
    options.welcome = Some(welcome());
    let replay = App::new(&options, Instant::now());
    let screen = screen_text(&replay, 80, 24);
    assert!(screen.contains("This session has no messages."), "{screen}");
    assert!(!screen.contains("feature/welcome"), "{screen}");
    assert!(replay.resumable_session().is_none());
}

#[test]
fn slash_init_sends_the_command_for_the_agent_to_expand_and_the_palette_offers_it() {
    let mut app = welcomed(welcome());
    type_text(&mut app, "/in");
    let screen = screen_text(&app, 120, 30);
    assert!(
        screen.contains("/init") && screen.contains("draft AGENTS.md"),
        "{screen}"
    );
    type_text(&mut app, "it mention the benches");
    app.handle_input(&key(KeyCode::Enter));
    let sent = app.take_commands();
    assert!(
        matches!(
            sent.as_slice(),
            [UserCommand::Submit { text, .. }] if text == "/init mention the benches"
        ),
        "{sent:?}"
    );
}
