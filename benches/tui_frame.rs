//! Frame time of the TUI on a long session: a transcript of 10,000 entries (messages,
//! markdown answers with code, command and edit cards) scrolled to the middle, drawn into a
//! 200x60 TestBackend. Prints cold and warm frame times and the process's resident memory.
//! Run by hand: `cargo bench --bench tui_frame`.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::bus::{AgentEvent, CallId, ToolEvent, ToolResult, TurnId};
use cairn::permissions::Mode;
use cairn::tools::{CommandRun, FileChange, ToolOutput};
use cairn::tui::TuiOptions;
use cairn::tui::app::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const ENTRIES: usize = 10_000;

fn rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn events(i: usize) -> Vec<AgentEvent> {
    let call = CallId::new(format!("c{i}"));
    match i % 4 {
        0 => vec![AgentEvent::UserMessage { text: format!("request {i}: please refactor the parser and run the tests") }],
        1 => vec![AgentEvent::AssistantMessage {
            turn: TurnId(i as u64),
            text: format!(
                "Step **{i}**: I changed `parse` so that it streams.\n\n```rust\nfn parse(input: &str) -> Vec<Token> {{\n    input.split_whitespace().map(Token::from).collect()\n}}\n```\n\n- keeps the API\n- faster on big inputs"
            ),
            reasoning: "thinking about the parser".into(),
        }],
        2 => vec![
            AgentEvent::Tool(ToolEvent::Requested { call: call.clone(), name: "bash".into(), args: json!({"command": "cargo test"}) }),
            AgentEvent::Tool(ToolEvent::Finished {
                call,
                name: "bash".into(),
                result: ToolResult::ok(ToolOutput::Command(CommandRun {
                    command: "cargo test".into(),
                    stdout: "running 12 tests\ntest a ... ok\ntest b ... ok\ntest result: ok. 12 passed".into(),
                    exit_code: Some(0),
                    duration_ms: 1234,
                    ..CommandRun::default()
                })),
            }),
        ],
        _ => vec![
            AgentEvent::Tool(ToolEvent::Requested { call: call.clone(), name: "edit_file".into(), args: json!({"path": "src/parser.rs"}) }),
            AgentEvent::Tool(ToolEvent::Finished {
                call,
                name: "edit_file".into(),
                result: ToolResult::ok(ToolOutput::FileChanged(FileChange {
                    path: "src/parser.rs".into(),
                    diff: "@@ -1,3 +1,3 @@\n fn parse(input: &str) {\n-    old(input)\n+    new(input)\n }\n".into(),
                    added: 1,
                    removed: 1,
                    ..FileChange::default()
                })),
            }),
        ],
    }
}

fn main() {
    let rss_start = rss_mib();
    let t0 = Instant::now();
    let options = TuiOptions {
        provider: "deepseek".into(),
        model: "deepseek-chat".into(),
        mode: Mode::AutoEdit,
        read_only: false,
        initial_prompt: None,
    };
    let mut app = App::new(&options, t0);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    terminal.draw(|f| app.render(f)).unwrap();
    let rss_idle = rss_mib();

    let build = Instant::now();
    for i in 0..ENTRIES {
        for event in events(i) {
            app.apply(&event);
        }
    }
    let build = build.elapsed();
    app.transcript_mut().jump_to(ENTRIES / 2, t0);

    let cold = Instant::now();
    terminal.draw(|f| app.render(f)).unwrap();
    let cold = cold.elapsed();

    // Warm frames that each show something new: scroll one line between frames.
    let mut times: Vec<Duration> = Vec::new();
    for n in 0..400 {
        if n % 2 == 0 {
            app.transcript_mut().scroll_down(1, t0);
        } else {
            app.transcript_mut().scroll_up(1, t0);
        }
        let start = Instant::now();
        terminal.draw(|f| app.render(f)).unwrap();
        times.push(start.elapsed());
    }
    // A page jump lays out a screen of entries not seen before.
    let mut page_times: Vec<Duration> = Vec::new();
    for _ in 0..50 {
        app.transcript_mut().scroll_up(60, t0);
        let start = Instant::now();
        terminal.draw(|f| app.render(f)).unwrap();
        page_times.push(start.elapsed());
    }
    times.sort();
    page_times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let pct = |v: &[Duration], p: f64| v[((v.len() as f64 - 1.0) * p) as usize];
    println!("transcript entries: {}", app.transcript().len());
    println!("applying the events: {:.1} ms", ms(build));
    println!(
        "first frame scrolled to the middle (cold caches): {:.3} ms",
        ms(cold)
    );
    println!(
        "frame, scrolled by a line (warm): median {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(pct(&times, 0.5)),
        ms(pct(&times, 0.99)),
        ms(pct(&times, 1.0))
    );
    println!(
        "frame after a page up onto unseen entries: median {:.3} ms, max {:.3} ms",
        ms(pct(&page_times, 0.5)),
        ms(pct(&page_times, 1.0))
    );
    if let (Some(start), Some(idle), Some(end)) = (rss_start, rss_idle, rss_mib()) {
        println!(
            "RSS: at start {start:.1} MiB, idle UI (empty session) {idle:.1} MiB, with {ENTRIES} entries {end:.1} MiB"
        );
    }
}
