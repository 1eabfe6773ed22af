//! The markdown writer fed the worst a model (or a page the model echoes) can send: a whole
//! reply (`max_reply_bytes`, 1 MiB) of nesting, delimiters or one long code line. Each case must
//! come back bounded: every line within the width and at most one line per two bytes of input,
//! in time linear in the input (the figures are printed with --nocapture).

use std::time::Instant;

use super::markdown;

const REPLY: usize = 1 << 20;

fn worst_cases() -> Vec<(&'static str, String)> {
    let half = REPLY / 2;
    vec![
        (
            "quotes 512 Ki deep",
            format!("{} {}", ">".repeat(half), "word ".repeat(half / 5)),
        ),
        (
            "quote per line, deepening",
            (1..=1400)
                .map(|d| format!("{} x\n", ">".repeat(d / 2)))
                .collect(),
        ),
        (
            "lists 512 Ki deep on one line",
            format!("{}x", "- ".repeat(half / 2)),
        ),
        (
            "lists by indent",
            (0..700)
                .map(|d| format!("{}- x\n", "  ".repeat(d)))
                .collect(),
        ),
        (
            "emphasis delimiters",
            format!("{}x{}", "*".repeat(half), "*".repeat(half)),
        ),
        ("open brackets", "[".repeat(REPLY)),
        ("links in links", "[a](".repeat(REPLY / 4)),
        (
            "table 20,000 columns",
            format!(
                "{}|\n{}|\n{}|\n",
                "|a".repeat(20_000),
                "|-".repeat(20_000),
                "|b".repeat(20_000)
            ),
        ),
        (
            "one 1 MiB line of rust",
            format!(
                "```rust\n{}\n```\n",
                "let x = \"a\" + 'b' /* c */;".repeat(REPLY / 27)
            ),
        ),
        (
            "one 1 MiB line of js",
            format!(
                "```js\n{}\n```\n",
                "a=[{b:\"c\"},/d/g,`e${f}`];".repeat(REPLY / 26)
            ),
        ),
        ("html tags", "<div>".repeat(REPLY / 5)),
        (
            "plain article",
            "A sentence of an ordinary reply, with **bold** and `code`.\n\n".repeat(REPLY / 61),
        ),
    ]
}

#[test]
#[allow(clippy::print_stderr)] // the figures, shown with --nocapture
fn a_whole_reply_of_the_worst_markdown_renders_bounded() {
    for (name, input) in worst_cases() {
        let start = Instant::now();
        let lines = markdown(&input, 80);
        let elapsed = start.elapsed();
        let out_bytes: usize = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .map(|s| s.content.len())
            .sum();
        eprintln!(
            "FIGURES markdown {name}: {} KiB -> {} lines, {} KiB in {elapsed:.2?}",
            input.len() >> 10,
            lines.len(),
            out_bytes >> 10
        );
        for line in &lines {
            assert!(
                line.width() <= 80,
                "{name}: a line of {} columns",
                line.width()
            );
        }
        assert!(
            lines.len() <= input.len() / 2 + 1024,
            "{name}: {} lines out of {} bytes in",
            lines.len(),
            input.len()
        );
    }
}
