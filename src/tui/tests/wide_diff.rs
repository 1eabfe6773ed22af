//! The wider diff view: the full-width mode and its keys, tinted added and removed lines
//! (syntax colours on top), side by side only where no code is cut, and the split at 160.

#![allow(clippy::unwrap_used)]

use std::time::Instant;

use crossterm::event::KeyCode;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

use super::{app, draw, key, press, screen_text, scripted_session, type_text};
use crate::tool_output::FileChange;
use crate::tui::app::{App, Focus};
use crate::tui::colours::ColourDepth;
use crate::tui::theme::{self, Change};

/// A change whose longest line is 60 columns: side by side fits at 160 columns of full width
/// (halves of 78), not in 80 (halves of 38).
fn wide_change() -> FileChange {
    let diff = "@@ -1,4 +1,4 @@\n fn main() {\n-    let total = add(1, 2);\n+    let total = checked_add(first_operand, second_operand).unwrap();\n     println!(\"{total}\");\n }\n";
    FileChange {
        path: "src/main.rs".into(),
        diff: diff.into(),
        added: 1,
        removed: 1,
        ..FileChange::default()
    }
}

fn session_with_wide_change() -> App {
    let mut app = scripted_session(Instant::now());
    app.diffs.push(wide_change());
    app
}

/// Focus the diff pane, choose side by side, then the full-width view.
fn open_full_width_side_by_side(app: &mut App) {
    app.set_focus(Focus::Diffs);
    press(app, KeyCode::Char('v'));
    press(app, KeyCode::Char('f'));
    assert!(app.diffs.is_full_width());
}

fn row_text(backend: &TestBackend, y: u16) -> String {
    let buf = backend.buffer();
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

/// The first row whose text contains `needle`.
fn row_of(backend: &TestBackend, needle: &str) -> u16 {
    (0..backend.buffer().area.height)
        .find(|y| row_text(backend, *y).contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} is not on screen:\n{backend}"))
}

#[test]
fn full_width_diff_at_160_columns_is_side_by_side_and_hides_the_transcript() {
    let mut app = session_with_wide_change();
    open_full_width_side_by_side(&mut app);
    let screen = draw(&app, 160, 30);
    insta::assert_snapshot!("full_width_diff_160x30", screen);
    let text = screen.to_string();
    assert!(
        text.contains("Diffs · side by side · full width: f or Esc goes back"),
        "{text}"
    );
    assert!(
        !text.contains("Add a greet function"),
        "the transcript is hidden"
    );
    assert!(!text.contains("Todos"), "the todo pane is hidden");
    // Both halves show their line whole.
    let row = row_of(&screen, "checked_add");
    let line = row_text(&screen, row);
    assert!(line.contains("let total = add(1, 2);"), "{line}");
    assert!(
        line.contains("let total = checked_add(first_operand, second_operand).unwrap();"),
        "{line}"
    );
    assert_eq!(app.areas.get().diffs.width, 160, "the pane takes the width");
}

#[test]
fn full_width_diff_at_80_columns_falls_back_to_unified_and_says_why() {
    let mut app = session_with_wide_change();
    open_full_width_side_by_side(&mut app);
    let screen = draw(&app, 80, 24);
    insta::assert_snapshot!("full_width_diff_80x24", screen);
    let text = screen.to_string();
    assert!(
        text.contains("Diffs · unified: too narrow for side by side"),
        "{text}"
    );
    assert!(
        !text.contains("Transcript │"),
        "no tab row in the full view"
    );
    // Unified: the new line has a row of its own and nothing of it is lost (it wraps).
    let row = row_of(&screen, "checked_add");
    assert!(!row_text(&screen, row).contains("add(1, 2)"));
    assert!(row_text(&screen, row).contains("second_operand).unwrap("));
    assert!(
        row_text(&screen, row + 1).contains("│            );"),
        "{text}"
    );
}

#[test]
fn the_full_width_view_goes_back_with_its_key_with_esc_and_when_another_pane_is_focused() {
    let mut app = session_with_wide_change();
    open_full_width_side_by_side(&mut app);
    press(&mut app, KeyCode::Char('f'));
    assert!(!app.diffs.is_full_width(), "f again goes back");
    assert!(screen_text(&app, 160, 30).contains("┌ cairn "));

    press(&mut app, KeyCode::Char('z'));
    assert!(app.diffs.is_full_width(), "z is the other spelling");
    app.busy = true;
    app.handle_input(&key(KeyCode::Esc));
    assert!(!app.diffs.is_full_width(), "Esc goes back");
    assert!(
        app.take_commands().is_empty(),
        "the Esc that leaves the view does not interrupt the model"
    );
    app.handle_input(&key(KeyCode::Esc));
    assert!(
        matches!(
            app.take_commands().as_slice(),
            [crate::bus::UserCommand::Interrupt]
        ),
        "a second Esc interrupts as usual"
    );
    app.busy = false;

    app.set_focus(Focus::Diffs);
    press(&mut app, KeyCode::Char('f'));
    app.set_focus(Focus::Input);
    type_text(&mut app, "fine");
    assert!(
        app.diffs.is_full_width(),
        "typing beneath the diff keeps it"
    );
    assert!(screen_text(&app, 160, 30).contains("fine"));
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Transcript);
    assert!(
        !app.diffs.is_full_width(),
        "focusing the transcript shows it"
    );
}

#[test]
fn the_key_of_the_full_width_view_is_in_the_pane_title_and_the_help() {
    let app = session_with_wide_change();
    let mut app = app;
    app.set_focus(Focus::Diffs);
    assert!(screen_text(&app, 80, 24).contains("Diffs · f full width"));
    press(&mut app, KeyCode::Char('?'));
    assert!(screen_text(&app, 120, 100).contains("full-width diff"));
}

#[test]
fn added_and_removed_rows_are_tinted_to_the_edge_with_syntax_colours_on_top() {
    let mut app = session_with_wide_change();
    app.set_focus(Focus::Diffs);
    press(&mut app, KeyCode::Char('f'));
    let screen = draw(&app, 120, 24);
    let buf = screen.buffer();
    let added_bg = theme::added_line().bg;
    let removed_bg = theme::removed_line().bg;
    assert!(added_bg.is_some() && removed_bg.is_some() && added_bg != removed_bg);

    let added = row_of(&screen, "checked_add");
    let text = row_text(&screen, added);
    let code_start = text.find("let total").unwrap() as u16;
    // From the sign to the pane's right border, every cell carries the tint.
    let sign = text.find('+').unwrap() as u16;
    for x in sign..119 {
        assert_eq!(buf[(x, added)].bg, added_bg.unwrap(), "column {x}: {text}");
    }
    assert_ne!(
        buf[(2, added)].bg,
        added_bg.unwrap(),
        "line numbers stay untinted"
    );
    // The keyword keeps the syntax theme's colour on the tint.
    assert!(
        matches!(buf[(code_start, added)].fg, Color::Rgb(..)),
        "{:?}",
        buf[(code_start, added)]
    );

    let removed = row_of(&screen, "add(1, 2)");
    for x in (text.find('+').unwrap() as u16)..119 {
        assert_eq!(buf[(x, removed)].bg, removed_bg.unwrap(), "column {x}");
    }
    let context = row_of(&screen, "println!");
    assert!(
        (0..120).all(|x| buf[(x, context)].bg != added_bg.unwrap()
            && buf[(x, context)].bg != removed_bg.unwrap()),
        "context rows have no tint"
    );
}

#[test]
fn side_by_side_halves_are_tinted_too() {
    let mut app = session_with_wide_change();
    open_full_width_side_by_side(&mut app);
    let screen = draw(&app, 160, 30);
    let buf = screen.buffer();
    let row = row_of(&screen, "checked_add");
    let text = row_text(&screen, row);
    let left = text.find("let total = add").unwrap() as u16;
    let right = text.find("let total = checked").unwrap() as u16;
    assert_eq!(Some(buf[(left, row)].bg), theme::removed_line().bg);
    assert_eq!(Some(buf[(right, row)].bg), theme::added_line().bg);
    // The tint of the left half reaches the divider.
    let divider = (left..right)
        .find(|x| buf[(*x, row)].symbol() == "│")
        .unwrap();
    assert_eq!(Some(buf[(divider - 1, row)].bg), theme::removed_line().bg);
}

#[test]
fn the_tints_read_at_every_colour_depth() {
    for depth in [
        ColourDepth::TrueColour,
        ColourDepth::Ansi256,
        ColourDepth::Ansi16,
    ] {
        let added = theme::line_tint(depth, Change::Added);
        let removed = theme::line_tint(depth, Change::Removed);
        assert!(added.bg.is_some() && removed.bg.is_some(), "{depth:?}");
        assert_ne!(added.bg, removed.bg, "{depth:?}");
        match depth {
            ColourDepth::TrueColour => assert!(matches!(added.bg, Some(Color::Rgb(..)))),
            // Indexed colours the 256-colour palette has, never 24-bit escapes.
            ColourDepth::Ansi256 => assert!(matches!(
                (added.bg, removed.bg),
                (Some(Color::Indexed(22)), Some(Color::Indexed(52)))
            )),
            // No dark tint exists in 16 colours: the text takes a colour that reads on it.
            ColourDepth::Ansi16 => {
                assert_eq!(added.fg, Some(Color::Black));
                assert_eq!(removed.fg, Some(Color::White));
            }
        }
    }
}

#[test]
fn at_160_columns_the_diff_pane_beside_the_transcript_is_wide_enough_for_code() {
    let app = session_with_wide_change();
    draw(&app, 160, 40);
    let areas = app.areas.get();
    assert!(areas.diffs.width >= 70, "{:?}", areas.diffs);
    assert!(areas.transcript.width >= 80, "{:?}", areas.transcript);
    for width in [100u16, 120, 140, 160, 200, 300] {
        let app = self::app(Instant::now());
        draw(&app, width, 30);
        let areas = app.areas.get();
        assert!(
            areas.transcript.width >= 60 && areas.diffs.width >= 36,
            "{width}: {areas:?}"
        );
    }
}
