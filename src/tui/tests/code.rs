//! Code in the transcript and the diff pane is highlighted with bat's syntaxes: languages
//! syntect's defaults lack (TypeScript, TOML, …) come out in colour. Plain snapshots do not show
//! colours, so the tests also read the colours of the drawn cells.

#![allow(clippy::unwrap_used)]

use crate::bus::ConversationEvent;
use std::time::Instant;

use ratatui::backend::TestBackend;
use ratatui::style::Color;

use super::{app, draw};
use crate::bus::{AgentEvent, StepId};
use crate::tui::highlight;

const ANSWER: &str = "Typed config:\n\n```ts\ninterface Config {\n  name: string;\n}\nconst config: Config = { name: \"cairn\" };\n```\n\nand its file:\n\n```toml\n[package]\nname = \"cairn\"\nedition = 2024\n```\n";

fn answered() -> crate::tui::app::App {
    let mut app = app(Instant::now());
    let step = StepId(1);
    app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "Show me the config in TypeScript and TOML".into(),
        images: vec![],
        files: vec![],
        typed: None,
    }));
    app.apply(&AgentEvent::Conversation(ConversationEvent::StepStarted {
        step,
    }));
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step,
            text: ANSWER.into(),
            reasoning: String::new(),
        },
    ));
    app
}

/// The foreground colour of the first cell of `needle` on the first row that contains it.
fn colour_of(backend: &TestBackend, needle: &str) -> Option<Color> {
    let buf = backend.buffer();
    for y in 0..buf.area.height {
        let row: Vec<&str> = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        let text = row.concat();
        if let Some(byte) = text.find(needle) {
            // Cells are one symbol each; count the symbols before the match.
            let x = text[..byte].chars().count() as u16;
            return Some(buf[(x, y)].fg);
        }
    }
    None
}

#[test]
fn typescript_and_toml_blocks_are_highlighted_in_the_transcript() {
    let app = answered();
    let backend = draw(&app, 80, 30);
    insta::assert_snapshot!(backend);

    let keyword = colour_of(&backend, "interface").unwrap();
    let name = colour_of(&backend, "Config {").unwrap();
    let string = colour_of(&backend, "\"cairn\" }").unwrap();
    assert!(matches!(keyword, Color::Rgb(..)), "{keyword:?}");
    assert_ne!(
        keyword, string,
        "TypeScript keyword and string share a colour"
    );
    assert_ne!(
        keyword, name,
        "TypeScript keyword and type name share a colour"
    );

    let table = colour_of(&backend, "[package]").unwrap();
    let key = colour_of(&backend, "edition").unwrap();
    let number = colour_of(&backend, "2024").unwrap();
    assert!(matches!(key, Color::Rgb(..)), "{key:?}");
    assert_ne!(key, number, "TOML key and number share a colour");
    assert_ne!(table, number, "TOML table and number share a colour");
}

#[test]
fn the_languages_syntect_lacks_get_more_than_one_colour() {
    let samples = [
        ("ts", "const x: number = 1;"),
        ("tsx", "const App = () => <div className=\"a\">hi</div>;"),
        ("toml", "[a]\nb = 1"),
        ("dockerfile", "FROM rust:1\nRUN cargo build"),
        ("kotlin", "fun main() { val x = \"a\" }"),
        ("swift", "let x: Int = 1"),
        ("zig", "const std = @import(\"std\");"),
        (
            "terraform",
            "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}",
        ),
    ];
    for (lang, code) in samples {
        let lines = highlight::highlight(code, lang);
        let colours: std::collections::HashSet<_> = lines
            .iter()
            .flatten()
            .filter(|s| !s.content.trim().is_empty())
            .filter_map(|s| s.style.fg)
            .collect();
        assert!(colours.len() > 1, "{lang}: {lines:?}");
    }
}

#[test]
fn paths_pick_the_syntax_by_extension_or_file_name() {
    for (path, code) in [
        ("web/app.tsx", "const a = <b/>;"),
        ("Cargo.toml", "[a]\nb = 1"),
        ("docker/Dockerfile", "FROM rust:1"),
        ("infra/main.tf", "resource \"a\" \"b\" {}"),
        ("build.zig", "const std = @import(\"std\");"),
        ("App.kt", "fun main() {}"),
        ("Main.swift", "let x = 1"),
    ] {
        let lang = highlight::token_for_path(path);
        let lines = highlight::highlight(code, lang);
        let colours: std::collections::HashSet<_> =
            lines.iter().flatten().filter_map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "{path} ({lang}): {lines:?}");
    }
}
