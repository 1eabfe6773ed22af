//! The diff pane's speed on a large change, run by hand: `cargo bench --bench diff_view`.
//! A 4,000-line Rust file with every fourth line edited (1,000 hunks' worth of tinted,
//! highlighted rows), drawn into a 200x60 TestBackend in the full-width view: the first frame
//! (parse, highlight, tint, the side-by-side fit check) and warm frames scrolled by a line,
//! unified and side by side. The syntaxes' one-time load is measured first, apart.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn::tool_output::FileChange;
use cairn::tui::panes::diffs::DiffPane;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const LINES: usize = 4_000;

fn change() -> FileChange {
    let before: String = (0..LINES)
        .map(|i| format!("    let value_{i} = compute(input, {i}).unwrap_or_default();\n"))
        .collect();
    let after: String = before
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i % 4 == 0 {
                format!(
                    "{}.max(1);\n",
                    line.trim_end_matches(';')
                        .trim_end_matches(".unwrap_or_default()")
                )
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let diff = cairn::fs::diff::diff_files(before.as_bytes(), after.as_bytes(), "big.rs", false);
    FileChange {
        path: "src/big.rs".into(),
        diff: diff.text,
        added: diff.added,
        removed: diff.removed,
        ..FileChange::default()
    }
}

fn main() {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    // The syntax set and theme load on first use: measured apart from the diff's own cost.
    let load = Instant::now();
    cairn::tui::highlight::highlight("let x = 1;\n", "rs");
    println!(
        "loading the syntaxes (first highlight): {:.1} ms",
        ms(load.elapsed())
    );
    for side_by_side in [false, true] {
        let mut pane = DiffPane::new();
        pane.push(change());
        pane.set_full_width(true);
        if side_by_side {
            pane.toggle_view();
        }
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let cold = Instant::now();
        terminal
            .draw(|f| pane.render(f.area(), f.buffer_mut(), true))
            .unwrap();
        let cold = cold.elapsed();
        let mut times = Vec::new();
        for _ in 0..200 {
            pane.scroll_by(1);
            let start = Instant::now();
            terminal
                .draw(|f| pane.render(f.area(), f.buffer_mut(), true))
                .unwrap();
            times.push(start.elapsed());
        }
        times.sort();
        let view = if side_by_side {
            "side by side"
        } else {
            "unified"
        };
        println!(
            "full-width diff, {LINES}-line file, every 4th line changed, {view}: first frame {:.1} ms; scrolled by a line: median {:.3} ms, max {:.3} ms",
            ms(cold),
            ms(times[times.len() / 2]),
            ms(times[times.len() - 1])
        );
    }
}
