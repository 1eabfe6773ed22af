//! The TUI's speed and footprint, run by hand: `cargo bench --bench tui_frame`.
//! 1. Frame time on a long session: a transcript of 10,000 entries (messages, markdown answers
//!    with code, command and edit cards) scrolled to the middle, drawn into a 200x60 TestBackend.
//! 2. The real binary in a pseudo-terminal against the mock server: a 200,000-token answer
//!    streamed through the TUI versus the same answer through `cairn exec`, then the idle UI's
//!    CPU use and resident memory.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use std::time::{Duration, Instant};

use cairn::bus::Mode;
use cairn::bus::{AgentEvent, CallId, StepId, ToolEvent, ToolResult};
use cairn::tool_output::{CommandRun, FileChange, ToolOutput};
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
        0 => vec![AgentEvent::Conversation(ConversationEvent::UserMessage { text: format!("request {i}: please refactor the parser and run the tests"), images: vec![], files: vec![], typed: None })],
        1 => vec![AgentEvent::Conversation(ConversationEvent::AssistantMessage {
            step: StepId(i as u64),
            text: format!(
                "Step **{i}**: I changed `parse` so that it streams.\n\n```rust\nfn parse(input: &str) -> Vec<Token> {{\n    input.split_whitespace().map(Token::from).collect()\n}}\n```\n\n- keeps the API\n- faster on big inputs"
            ),
            reasoning: "thinking about the parser".into(),
        })],
        2 => vec![
            AgentEvent::Tool(ToolEvent::Requested { call: call.clone(), name: "bash".into(), args: json!({"command": "cargo test"}) }),
            AgentEvent::Tool(ToolEvent::Started { call: call.clone() }),
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
            AgentEvent::Tool(ToolEvent::Started { call: call.clone() }),
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
        sandbox_off: None,
        trust: None,
        welcome: None,
        command_sources: None,
        history: Vec::new(),
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
    stream_in_process();
    live::run();
}

/// A 200,000-token answer applied as deltas of ten tokens, with a 200x60 frame drawn every
/// 1,000 deltas (the loop's batching at 60 fps): the TUI's own share of streaming.
fn stream_in_process() {
    let t0 = Instant::now();
    let options = TuiOptions {
        provider: "p".into(),
        model: "m".into(),
        mode: Mode::AutoEdit,
        read_only: false,
        initial_prompt: None,
        sandbox_off: None,
        trust: None,
        welcome: None,
        command_sources: None,
        history: Vec::new(),
    };
    let mut app = App::new(&options, t0);
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let text = cairn::testing::token_text(200_000);
    let words: Vec<&str> = text.split_inclusive(char::is_whitespace).collect();
    let start = Instant::now();
    let mut frames = 0;
    let mut draw_time = Duration::ZERO;
    for (i, chunk) in words.chunks(10).enumerate() {
        app.apply(&AgentEvent::Conversation(ConversationEvent::TextDelta {
            step: StepId(1),
            text: chunk.concat(),
        }));
        if i % 1000 == 999 {
            let d = Instant::now();
            terminal.draw(|f| app.render(f)).unwrap();
            draw_time += d.elapsed();
            frames += 1;
        }
    }
    app.apply(&AgentEvent::Conversation(
        ConversationEvent::AssistantMessage {
            step: StepId(1),
            text: text.clone(),
            reasoning: String::new(),
        },
    ));
    let d = Instant::now();
    terminal.draw(|f| app.render(f)).unwrap();
    draw_time += d.elapsed();
    let total = start.elapsed();
    println!(
        "200k-token answer in-process: {:.1} ms total, {frames} frames taking {:.1} ms, {} bytes",
        total.as_secs_f64() * 1000.0,
        draw_time.as_secs_f64() * 1000.0,
        text.len()
    );
}

mod live {
    //! Part 2: the release binary in a pseudo-terminal.

    use std::io::{Read, Write};
    use std::num::NonZeroU16;
    use std::path::Path;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use cairn::testing::{MockLlm, Script};
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};

    const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
    const TOKENS: usize = 200_000;
    const RUNS: usize = 5;

    fn env_for(root: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
        vec![
            ("CAIRN_API_KEY", "test".into()),
            ("CAIRN_DATA_DIR", root.join("data").into()),
            ("CAIRN_CONFIG_DIR", root.join("config").into()),
            ("HOME", root.into()),
            ("XDG_DATA_HOME", root.join("xdg").into()),
            ("XDG_CONFIG_HOME", root.join("xdg").into()),
            ("XDG_STATE_HOME", root.join("xdg").into()),
            ("TERM", "xterm-256color".into()),
        ]
    }

    /// utime + stime of a process, in clock ticks.
    fn cpu_ticks(pid: u32) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    }

    fn rss_mib(pid: u32) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
    }

    fn wait_until(what: &str, screen: &Mutex<vt100::Parser>, check: impl Fn(&str) -> bool) {
        let start = Instant::now();
        while !check(&screen.lock().unwrap().screen().contents()) {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn run() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let llm = runtime.block_on(MockLlm::start(
            (0..2 * RUNS).map(|_| Script::text_tokens(TOKENS)),
        ));
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        // The 200,000-token answers are larger than the default reply cap a real model never hits.
        std::fs::create_dir_all(root.path().join("config")).unwrap();
        std::fs::write(
            root.path().join("config/config.toml"),
            "max_reply_bytes = 8388608\n",
        )
        .unwrap();
        let url = llm.url();

        let mut exec_times = Vec::new();
        for _ in 0..RUNS {
            let start = Instant::now();
            let mut exec = std::process::Command::new(CAIRN);
            exec.current_dir(&ws)
                .args(["exec", "--base-url", &url, "--mode", "auto-edit", "go"]);
            exec.envs(env_for(root.path()));
            let output = exec.output().unwrap();
            exec_times.push(start.elapsed());
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }

        let (rows, cols) = (60, 200);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(CAIRN);
        cmd.cwd(&ws);
        cmd.args(["--base-url", &url, "--mode", "auto-edit"]);
        for (k, v) in env_for(root.path()) {
            cmd.env(k, v);
        }
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let pid = child.process_id().unwrap();
        let nz = |n| NonZeroU16::new(n).unwrap();
        let screen = Arc::new(Mutex::new(vt100::Parser::new(nz(rows), nz(cols), 0)));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let sink = Arc::clone(&screen);
        let bytes = Arc::new(Mutex::new(0usize));
        let counted = Arc::clone(&bytes);
        std::thread::spawn(move || {
            let mut buf = [0u8; 64 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                *counted.lock().unwrap() += n;
                sink.lock().unwrap().process(&buf[..n]);
            }
        });
        let mut writer = pair.master.take_writer().unwrap();
        wait_until("the UI", &screen, |s| s.contains("What should we work on?"));
        std::thread::sleep(Duration::from_millis(500));
        let idle_empty_rss = rss_mib(pid);
        let before = *bytes.lock().unwrap();
        let mut tui_times = Vec::new();
        for run in 0..RUNS {
            if run > 0 {
                // A fresh session each time, as each `cairn exec` run is.
                writer.write_all(b"/new\r").unwrap();
                writer.flush().unwrap();
                wait_until("a new session", &screen, |s| {
                    s.contains("What should we work on?")
                });
            }
            writer.write_all(b"go").unwrap();
            writer.flush().unwrap();
            wait_until("the prompt in the input box", &screen, |s| {
                !s.contains("Ask cairn")
            });
            let start = Instant::now();
            writer.write_all(b"\r").unwrap();
            writer.flush().unwrap();
            wait_until("the agent to start", &screen, |s| !s.contains(" idle"));
            wait_until("the agent to finish", &screen, |s| s.contains(" idle"));
            tui_times.push(start.elapsed());
        }
        let written = (*bytes.lock().unwrap() - before) / RUNS;
        exec_times.sort();
        tui_times.sort();
        let (exec_time, tui_time) = (exec_times[RUNS / 2], tui_times[RUNS / 2]);

        std::thread::sleep(Duration::from_millis(500));
        let window = Duration::from_secs(3);
        let ticks_before = cpu_ticks(pid);
        std::thread::sleep(window);
        let ticks_after = cpu_ticks(pid);
        let ticks_per_sec = clock_ticks_per_second();
        let idle_rss = rss_mib(pid);
        writer.write_all(b"\x03\x03").unwrap();
        writer.flush().unwrap();
        let _ = child.wait();

        let secs = |d: Duration| d.as_secs_f64();
        println!("--- {TOKENS}-token answer, release binary, 200x60 pseudo-terminal ---");
        println!("cairn exec: median of {RUNS} runs {:.3} s", secs(exec_time));
        println!(
            "TUI: median of {RUNS} answers {:.3} s ({:.2}x exec), {:.1} KiB written to the terminal per answer",
            secs(tui_time),
            secs(tui_time) / secs(exec_time),
            written as f64 / 1024.0
        );
        if let (Some(a), Some(b)) = (ticks_before, ticks_after) {
            let cpu = (b - a) as f64 / ticks_per_sec / secs(window) * 100.0;
            println!(
                "idle CPU after the answer: {cpu:.2} % over {:.0} s",
                secs(window)
            );
        }
        if let (Some(empty), Some(after)) = (idle_empty_rss, idle_rss) {
            println!(
                "idle RSS: {empty:.1} MiB before any prompt, {after:.1} MiB holding the 200k-token answer"
            );
        }
    }

    /// Clock ticks per second for /proc CPU times (USER_HZ, 100 on Linux).
    fn clock_ticks_per_second() -> f64 {
        100.0
    }
}
