//! A web card opens to the whole content the model got and folds again.

#![allow(clippy::unwrap_used)]

use std::time::Instant;

use crossterm::event::KeyCode;
use serde_json::json;

use super::{app, draw, key, screen_text, tool};
use crate::bus::{CallId, ToolEvent, ToolResult};
use crate::tool_output::{SearchHit, ToolOutput, WebPage, WebSearch};
use crate::tui::app::{App, Focus};

fn finished(app: &mut App, call: &str, name: &str, output: ToolOutput) {
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new(call),
        name: name.into(),
        args: json!({"url": "https://docs.example.org/guide"}),
    }));
    app.apply(&tool(ToolEvent::Started {
        call: CallId::new(call),
    }));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new(call),
        name: name.into(),
        result: ToolResult::ok(output),
    }));
}

fn select_last_card(app: &mut App) {
    app.handle_input(&key(KeyCode::Tab));
    assert_eq!(app.focus(), Focus::Transcript);
    draw(app, 100, 60);
    app.handle_input(&key(KeyCode::Up));
    assert!(app.transcript.selected_card().is_some());
}

#[test]
fn enter_on_a_fetched_page_shows_every_line_and_enter_again_folds_it() {
    let mut app = app(Instant::now());
    let content: String = (1..=12).map(|i| format!("PAGE-LINE-{i:02}\n")).collect();
    let page = WebPage {
        url: "https://docs.example.org/guide".into(),
        final_url: "https://docs.example.org/guide".into(),
        status: 200,
        content_type: Some("text/html".into()),
        bytes: 4096,
        format: "markdown".into(),
        total_chars: content.chars().count(),
        content,
        ..WebPage::default()
    };
    finished(&mut app, "w1", "web_fetch", ToolOutput::WebPage(page));
    let folded = screen_text(&app, 100, 60);
    assert!(folded.contains("PAGE-LINE-04"), "{folded}");
    assert!(!folded.contains("PAGE-LINE-12"), "{folded}");
    assert!(
        folded.contains("8 more lines · Enter shows all"),
        "{folded}"
    );

    select_last_card(&mut app);
    app.handle_input(&key(KeyCode::Enter));
    let opened = screen_text(&app, 100, 60);
    for i in 1..=12 {
        assert!(
            opened.contains(&format!("PAGE-LINE-{i:02}")),
            "{i}: {opened}"
        );
    }
    assert!(opened.contains("Enter folds this card"), "{opened}");
    assert!(
        app.take_commands().is_empty(),
        "Enter on the card sends nothing"
    );
    assert!(app.composer.is_empty(), "nor does it type into the input");

    app.handle_input(&key(KeyCode::Enter));
    assert!(!screen_text(&app, 100, 60).contains("PAGE-LINE-12"));
}

#[test]
fn enter_on_a_search_card_shows_every_result_with_its_snippet() {
    let mut app = app(Instant::now());
    let hits = (1..=12)
        .map(|i| SearchHit {
            title: format!("Result {i}"),
            url: format!("https://r{i}.example.org/"),
            snippet: format!("SNIPPET-{i:02}"),
        })
        .collect();
    let search = WebSearch {
        backend: "searxng".into(),
        hits,
        ..WebSearch::default()
    };
    finished(&mut app, "s1", "web_search", ToolOutput::WebSearch(search));
    let folded = screen_text(&app, 100, 60);
    assert!(
        !folded.contains("SNIPPET-01") && !folded.contains("Result 12"),
        "{folded}"
    );
    select_last_card(&mut app);
    app.handle_input(&key(KeyCode::Enter));
    let opened = screen_text(&app, 100, 60);
    assert!(
        opened.contains("Result 12") && opened.contains("SNIPPET-12"),
        "{opened}"
    );
}
