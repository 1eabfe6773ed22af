//! The `@` finder in the input: typing goes on while the index is built, the popup lists the
//! workspace's files (this crate's own, the tests' working directory), Enter picks the choice
//! (and sends nothing), Tab completes it without a space so a `#L` range can follow.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::{app, key, screen_text, type_text};

#[test]
fn typed_characters_all_arrive_while_the_index_builds_and_enter_picks_the_chosen_file() {
    let mut app = app(Instant::now());
    // Each key is handled at once: the walk runs on its own thread.
    type_text(&mut app, "look at @src/lib.rs");
    assert_eq!(app.composer.text(), "look at @src/lib.rs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !app.mention_finder.is_open() {
        assert!(Instant::now() < deadline, "the finder never listed a file");
        std::thread::yield_now();
        app.mention_finder
            .update(app.composer.text(), app.composer.cursor());
    }
    assert!(screen_text(&app, 100, 30).contains("@ files"));
    app.handle_input(&key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "look at @src/lib.rs ");
    assert!(
        app.take_commands().is_empty(),
        "Enter picked, it did not send"
    );
    assert!(!app.mention_finder.is_open());
    // Esc closes the popup without touching the text.
    type_text(&mut app, "@Cargo.to");
    while !app.mention_finder.is_open() {
        assert!(Instant::now() < deadline, "the finder never listed a file");
        app.mention_finder
            .update(app.composer.text(), app.composer.cursor());
    }
    app.handle_input(&key(KeyCode::Esc));
    assert!(!app.mention_finder.is_open());
    assert_eq!(app.composer.text(), "look at @src/lib.rs @Cargo.to");
    // Tab completes without a space: a line range follows the path.
    app.composer.clear();
    type_text(&mut app, "@src/lib.r");
    while !app.mention_finder.is_open() {
        assert!(Instant::now() < deadline, "the finder never listed a file");
        app.mention_finder
            .update(app.composer.text(), app.composer.cursor());
    }
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.composer.text(), "@src/lib.rs");
    type_text(&mut app, "#L10-20");
    assert_eq!(app.composer.text(), "@src/lib.rs#L10-20");
}

#[test]
fn the_popup_shows_the_files_of_a_walk_that_ends_without_another_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "").unwrap();
    let index = crate::finder::FileIndex::start(dir.path());
    let mut app = app(Instant::now());
    app.mention_finder = crate::tui::modals::mention_finder::MentionFinder::over(index.clone());
    type_text(&mut app, "@widg");
    let deadline = Instant::now() + Duration::from_secs(30);
    let settle = |app: &mut super::App| {
        while app.mention_finder.waiting_for_index() {
            assert!(Instant::now() < deadline, "the walk never ended");
            assert!(
                app.next_tick().is_some(),
                "the loop comes back while it runs"
            );
            std::thread::yield_now();
            app.expire();
        }
    };
    settle(&mut app);
    assert!(!screen_text(&app, 100, 30).contains("widget.rs"));
    // A file appears and the index is walked again: no key is pressed after this, only the
    // ticks the main loop runs bring it into the popup.
    std::fs::write(dir.path().join("widget.rs"), "").unwrap();
    index.refresh();
    while !screen_text(&app, 100, 30).contains("widget.rs") {
        assert!(
            Instant::now() < deadline,
            "the popup never showed the new walk's file"
        );
        std::thread::yield_now();
        app.expire();
    }
    assert!(app.mention_finder.is_open());
    assert_eq!(app.composer.text(), "@widg");
    settle(&mut app);
}
