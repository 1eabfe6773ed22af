//! The status line (item 9 of issue 20): no cost before there is one and never a negative
//! amount, `$?` for a model without prices, counters that a rewind does not take back, the
//! sandbox badge, the jobs count, and the transcript's scroll marker on the pane's border (it
//! never covers the last line), at 60, 80 and 160 columns.

#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, ReportEvent};
use std::time::Instant;

use crossterm::event::KeyCode;

use super::{app, draw, key, screen_text};
use crate::bus::{AgentEvent, JobEvent, JobLine, Usage};
use crate::tui::app::App;

fn usage(prompt: u64, cached: u64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: 420,
        cached_tokens: cached,
    }
}

fn the_last_row(app: &App, w: u16, h: u16) -> String {
    screen_text(app, w, h)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// A session two requests in, with prices known, a job running.
fn working(cost: Option<f64>) -> App {
    let mut app = app(Instant::now());
    app.apply(&AgentEvent::Report(ReportEvent::Usage(usage(12_000, 0))));
    app.apply(&AgentEvent::Report(ReportEvent::Usage(usage(
        14_500, 11_000,
    ))));
    app.apply(&AgentEvent::Report(ReportEvent::Context {
        used: 15_100,
        window: 128_000,
        cost_usd: cost,
    }));
    app.apply(&AgentEvent::Report(ReportEvent::SessionUsage {
        totals: Usage {
            prompt_tokens: 26_500,
            completion_tokens: 840,
            cached_tokens: 11_000,
        },
        requests: 2,
    }));
    app.apply(&AgentEvent::Job(JobEvent::Started {
        job: JobLine {
            id: "job-1".into(),
            command: "npm run dev".into(),
            elapsed_ms: 0,
            end: None,
        },
    }));
    app
}

#[test]
fn at_start_there_is_no_cost_and_the_sandbox_is_said_to_be_on() {
    let mut app = app(Instant::now());
    // What the agent sends at the start of a session: an empty window, no cost.
    app.apply(&AgentEvent::Report(ReportEvent::Context {
        used: 900,
        window: 128_000,
        cost_usd: None,
    }));
    app.apply(&AgentEvent::Report(ReportEvent::SessionUsage {
        totals: Usage::default(),
        requests: 0,
    }));
    for (w, h) in [(60, 16), (80, 20), (160, 24)] {
        let row = the_last_row(&app, w, h);
        assert!(!row.contains('$') && !row.contains("-0"), "{w}: {row}");
        assert!(row.contains("sandbox"), "{w}: {row}");
    }
    insta::assert_snapshot!("status_start_60", the_last_row(&app, 60, 16));
    insta::assert_snapshot!("status_start_80", the_last_row(&app, 80, 20));
    insta::assert_snapshot!("status_start_160", the_last_row(&app, 160, 24));
}

#[test]
fn while_working_at_60_80_and_160_columns() {
    let app = working(Some(0.0123));
    insta::assert_snapshot!("status_working_60", the_last_row(&app, 60, 16));
    insta::assert_snapshot!("status_working_80", the_last_row(&app, 80, 20));
    insta::assert_snapshot!("status_working_160", the_last_row(&app, 160, 24));
    for (w, h) in [(60, 16), (80, 20), (160, 24)] {
        let row = the_last_row(&app, w, h);
        assert!(
            row.contains("$0.0123") && row.contains("⚙ 1 job") && row.contains("auto-edit"),
            "{w}: {row}"
        );
    }
}

#[test]
fn a_model_without_prices_shows_dollar_question_and_cost_says_why() {
    let mut app = working(None);
    for (w, h) in [(60, 16), (80, 20), (160, 24)] {
        let row = the_last_row(&app, w, h);
        assert!(row.contains("│ $?"), "{w}: {row}");
    }
    app.apply(&AgentEvent::Report(ReportEvent::CostReport {
        rows: vec![crate::bus::CostRow {
            step: 1,
            usage: usage(12_000, 0),
            cost_usd: None,
        }],
    }));
    let screen = screen_text(&app, 160, 40);
    assert!(
        screen.contains("no price is known for deepseek-chat"),
        "{screen}"
    );
}

#[test]
fn a_rewind_does_not_take_the_counters_back() {
    let mut app = working(Some(0.0123));
    // The rewind: the transcript is rebuilt from the kept branch (one request), then the
    // agent's count of the session follows.
    app.apply(&AgentEvent::Conversation(ConversationEvent::Reset));
    app.apply(&AgentEvent::Report(ReportEvent::Usage(usage(12_000, 0))));
    app.apply(&AgentEvent::Report(ReportEvent::SessionUsage {
        totals: Usage {
            prompt_tokens: 26_500,
            completion_tokens: 840,
            cached_tokens: 11_000,
        },
        requests: 2,
    }));
    let row = the_last_row(&app, 160, 24);
    assert!(row.contains("↑26.5k ↓840"), "{row}");
}

#[test]
fn a_sandbox_that_is_off_says_so_and_why() {
    let mut options = super::options();
    options.sandbox_off = Some("no sandbox: this kernel has no Landlock support".into());
    let app = App::new(&options, Instant::now());
    let wide = the_last_row(&app, 160, 24);
    assert!(
        wide.contains("⚠ no sandbox: this kernel has no Landlock support"),
        "{wide}"
    );
    let narrow = the_last_row(&app, 60, 16);
    assert!(narrow.contains("⚠ no sandbox"), "{narrow}");
}

#[test]
fn the_scroll_marker_sits_on_the_border_and_never_covers_the_last_line() {
    let mut app = app(Instant::now());
    for i in 0..40 {
        app.apply(&AgentEvent::Conversation(ConversationEvent::UserMessage {
            text: format!("message number {i}"),
            images: Vec::new(),
            files: vec![],
            typed: None,
        }));
    }
    // Focus the transcript and scroll up a page.
    app.handle_input(&key(KeyCode::Tab));
    draw(&app, 60, 16);
    app.handle_input(&key(KeyCode::PageUp));
    let screen = draw(&app, 60, 16);
    insta::assert_snapshot!("scrolled_60x16", screen);
    let text = screen_text(&app, 60, 16);
    let rows: Vec<&str> = text.lines().collect();
    let marker_row = rows
        .iter()
        .position(|r| r.contains("more below · End follows"))
        .unwrap_or_else(|| panic!("no marker: {text}"));
    // The row with the marker is the pane's bottom border; the one above is a message.
    assert!(rows[marker_row].contains('└'), "{text}");
    assert!(rows[marker_row - 1].contains("message number"), "{text}");
}
