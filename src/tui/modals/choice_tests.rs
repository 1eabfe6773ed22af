//! The mode and model pickers on their own: rows, keys, the typed name.

#![allow(clippy::unwrap_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typed(picker: &mut ChoicePicker, text: &str) {
    for c in text.chars() {
        assert_eq!(picker.handle_key(key(KeyCode::Char(c))), LayerOutcome::Open);
    }
}

fn screen(picker: &ChoicePicker, w: u16, h: u16) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    picker.render(area, &mut buf);
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn models(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_string()).collect()
}

#[test]
fn the_mode_picker_lists_every_mode_on_the_current_one() {
    let mut picker = ChoicePicker::modes(Mode::Auto);
    let text = screen(&picker, 80, 12);
    for mode in MODES {
        assert!(text.contains(&mode.to_string()), "{mode}: {text}");
    }
    assert!(
        text.contains("● auto "),
        "the current one is marked: {text}"
    );
    assert!(text.contains("only dangerous commands ask"), "{text}");
    // The selection starts on the current mode: one down is plan.
    picker.handle_key(key(KeyCode::Down));
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Mode(Mode::Plan))
    );
    picker.handle_key(key(KeyCode::Down));
    picker.handle_key(key(KeyCode::Down));
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Mode(Mode::Never)),
        "the selection stops at the last"
    );
    // Letters choose nothing in the mode picker.
    typed(&mut picker, "ask");
    assert_eq!(picker.handle_key(key(KeyCode::Esc)), LayerOutcome::Closed);
}

#[test]
fn the_model_picker_asks_then_lists_the_configured_model_first() {
    let mut picker = ChoicePicker::models("deepseek-chat");
    let asking = screen(&picker, 80, 12);
    assert!(asking.contains("asking the provider"), "{asking}");
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Model("deepseek-chat".into())),
        "the current model is a choice while the list is awaited"
    );
    picker.models_listed(
        &models(&["deepseek-reasoner", "deepseek-chat", "deepseek-coder"]),
        "deepseek-reasoner",
        None,
    );
    let listed = screen(&picker, 80, 12);
    assert!(!listed.contains("asking"), "{listed}");
    let first = listed.find("deepseek-reasoner").unwrap();
    let chat = listed.find("deepseek-chat").unwrap();
    assert!(first < chat, "the configured model first: {listed}");
    assert!(listed.contains("● deepseek-chat"), "{listed}");
    assert!(listed.contains("configured"), "{listed}");
    // The selection is on the current model; one down is the coder.
    picker.handle_key(key(KeyCode::Down));
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Model("deepseek-coder".into()))
    );
}

#[test]
fn typing_filters_the_models_and_a_name_not_listed_is_a_choice() {
    let mut picker = ChoicePicker::models("a-1");
    picker.models_listed(
        &models(&["a-1", "gpt-4o", "gpt-4o-mini", "o3"]),
        "a-1",
        None,
    );
    typed(&mut picker, "GPT-4");
    let text = screen(&picker, 80, 12);
    assert!(
        text.contains("gpt-4o-mini") && !text.contains("o3 "),
        "{text}"
    );
    assert!(text.contains("use this name"), "not a listed name: {text}");
    for _ in 0..5 {
        picker.handle_key(key(KeyCode::Backspace));
    }
    typed(&mut picker, "gpt-4o");
    let text = screen(&picker, 80, 12);
    assert!(!text.contains("use this name"), "an exact match: {text}");
    picker.handle_key(key(KeyCode::Down));
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Model("gpt-4o-mini".into()))
    );
    let mut picker = ChoicePicker::models("a-1");
    picker.models_listed(&models(&["a-1", "gpt-4o"]), "a-1", None);
    typed(&mut picker, "my-local-model");
    let text = screen(&picker, 80, 12);
    assert!(text.contains("use this name"), "{text}");
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Model("my-local-model".into()))
    );
    // Backspace takes the typed name back; a paste joins it, its first line only.
    for _ in 0.."my-local-model".len() {
        picker.handle_key(key(KeyCode::Backspace));
    }
    picker.paste("qwen3:8b\nrm -rf /");
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Model("qwen3:8b".into()))
    );
}

#[test]
fn an_unavailable_list_says_why_and_takes_a_typed_name() {
    let mut picker = ChoicePicker::models("m");
    picker.models_listed(
        &models(&["m"]),
        "m",
        Some("http://127.0.0.1:9/v1/models answered 404"),
    );
    let text = screen(&picker, 80, 12);
    assert!(text.contains("unavailable"), "{text}");
    assert!(text.contains("answered 404"), "{text}");
    assert!(text.contains("Type a model name"), "{text}");
    typed(&mut picker, "other");
    assert_eq!(
        picker.handle_key(key(KeyCode::Enter)),
        LayerOutcome::Chosen(Pick::Model("other".into()))
    );
}

#[test]
fn a_hostile_model_name_shows_its_hidden_characters() {
    let mut picker = ChoicePicker::models("m");
    picker.models_listed(&models(&["m", "evil\u{1b}]52;c;aGk=\u{7}"]), "m", None);
    let text = screen(&picker, 80, 12);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("<U+"), "{text}");
}
