//! The `@` finder in the input: typing goes on while the index is built, the popup lists the
//! workspace's files (this crate's own, the tests' working directory), Tab inserts the choice.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::{app, key, screen_text, type_text};

#[test]
fn typed_characters_all_arrive_while_the_index_builds_and_tab_inserts_the_chosen_file() {
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
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.composer.text(), "look at @src/lib.rs ");
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
}
