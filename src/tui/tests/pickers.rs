//! `/mode` and `/model` with no argument open pickers; every switch is a line in the
//! transcript; ↑/↓ choose inside the `/` palette.

#![allow(clippy::unwrap_used)]

use crate::bus::ReportEvent;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::{app, draw, key, press, screen_text, type_text};
use crate::bus::Mode;
use crate::bus::{AgentEvent, UserCommand};

fn slash(app: &mut crate::tui::app::App, line: &str) {
    app.composer.set_text(line);
    app.handle_input(&key(KeyCode::Enter));
}

#[test]
fn the_mode_picker_at_80_and_160_columns_switches_with_a_line() {
    let mut app = app(Instant::now());
    slash(&mut app, "/mode");
    insta::assert_snapshot!("mode_picker_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("mode_picker_160x30", draw(&app, 160, 30));
    // On auto-edit now: two down is plan.
    app.handle_input(&key(KeyCode::Down));
    app.handle_input(&key(KeyCode::Down));
    press(&mut app, KeyCode::Enter);
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::SetMode { mode: Mode::Plan }]),
        "{sent:?}"
    );
    let screen = screen_text(&app, 100, 30);
    assert!(!screen.contains("Permission mode"), "closed: {screen}");
    assert!(screen.contains("mode → plan"), "{screen}");
    assert!(screen.contains("│ plan "), "{screen}");
    // Choosing the mode in use changes nothing and sends nothing.
    slash(&mut app, "/mode");
    press(&mut app, KeyCode::Enter);
    assert!(app.take_commands().is_empty());
    // Esc closes without a switch.
    slash(&mut app, "/mode");
    app.handle_input(&key(KeyCode::Up));
    press(&mut app, KeyCode::Esc);
    assert!(app.take_commands().is_empty());
    assert!(!screen_text(&app, 100, 30).contains("Permission mode"));
}

#[test]
fn the_model_picker_lists_the_providers_models_and_each_switch_is_a_line() {
    let mut app = app(Instant::now());
    slash(&mut app, "/model");
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::ListModels]),
        "{sent:?}"
    );
    assert!(screen_text(&app, 80, 24).contains("asking the provider"));
    app.apply(&AgentEvent::Report(ReportEvent::Models {
        models: vec![
            "deepseek-chat".into(),
            "deepseek-reasoner".into(),
            "deepseek-coder".into(),
        ],
        configured: "deepseek-chat".into(),
        unavailable: None,
    }));
    insta::assert_snapshot!("model_picker_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("model_picker_160x30", draw(&app, 160, 30));
    app.handle_input(&key(KeyCode::Down));
    press(&mut app, KeyCode::Enter);
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::SetModel { model }] if model == "deepseek-reasoner"),
        "{sent:?}"
    );
    // The agent's confirmation is the line (also what a replay shows from the log).
    app.apply(&AgentEvent::Report(ReportEvent::ModelChanged {
        model: "deepseek-reasoner".into(),
    }));
    let screen = screen_text(&app, 100, 30);
    assert!(screen.contains("model → deepseek-reasoner"), "{screen}");
    assert!(
        screen.contains("deepseek-reasoner"),
        "status line: {screen}"
    );
    app.apply(&AgentEvent::Report(ReportEvent::ModelChanged {
        model: "deepseek-reasoner".into(),
    }));
    let lines = screen_text(&app, 100, 30)
        .matches("model → deepseek-reasoner")
        .count();
    assert_eq!(lines, 1, "a repeat of the same model is no new line");
    // A listing that comes after the picker closed opens nothing.
    app.apply(&AgentEvent::Report(ReportEvent::Models {
        models: vec!["x".into()],
        configured: String::new(),
        unavailable: None,
    }));
    assert!(!screen_text(&app, 100, 30).contains(" Model "));
}

#[test]
fn without_a_list_the_model_picker_says_why_and_takes_a_typed_name() {
    let mut app = app(Instant::now());
    slash(&mut app, "/model");
    app.take_commands();
    app.apply(&AgentEvent::Report(ReportEvent::Models {
        models: vec!["deepseek-chat".into()],
        configured: "deepseek-chat".into(),
        unavailable: Some("http://127.0.0.1:8080/v1/models answered 404".into()),
    }));
    type_text(&mut app, "qwen3-coder");
    insta::assert_snapshot!("model_picker_unavailable_80x24", draw(&app, 80, 24));
    press(&mut app, KeyCode::Enter);
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::SetModel { model }] if model == "qwen3-coder"),
        "{sent:?}"
    );
}

#[test]
fn arrows_choose_inside_the_slash_palette_and_enter_runs_the_choice() {
    let mut app = app(Instant::now());
    type_text(&mut app, "/re");
    app.handle_input(&key(KeyCode::Down));
    insta::assert_snapshot!("palette_second_row_80x24", draw(&app, 80, 24));
    let chosen = crate::tui::modals::palette::matches(app.palette.entries(), "/re")[1]
        .name
        .clone();
    app.handle_input(&key(KeyCode::Tab));
    assert!(
        app.composer.text().starts_with(&chosen),
        "{}",
        app.composer.text()
    );
    // Enter on a partial name runs the best match: `/mod` opens the mode picker.
    app.composer.set_text("");
    type_text(&mut app, "/mod");
    press(&mut app, KeyCode::Enter);
    assert!(screen_text(&app, 100, 30).contains("Permission mode"));
    assert_eq!(app.composer.text(), "");
    // Up and Down outside the palette still go through earlier messages (no panic, no pick).
    press(&mut app, KeyCode::Esc);
    app.handle_input(&key(KeyCode::Up));
}
