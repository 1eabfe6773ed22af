//! The shell parser path at its worst (issue 32): huge and deeply nested command lines are
//! judged in bounded time and stack. Every case runs on a thread with a quarter of a tokio
//! worker's stack; the figures are printed (`--nocapture`), and the bound asserted is loose
//! enough for a loaded debug build but far below what a quadratic walk or a recursion
//! through the nesting would take.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::time::{Duration, Instant};

use super::tests::Fixture;
use super::{Class, MAX_SOURCE};

/// Judges `command` on a thread with a 512 KiB stack; its class, reason and time.
fn judged(command: String) -> (Class, String, Duration) {
    std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let ws = Fixture::new();
            let started = Instant::now();
            let got = ws.classify(&command);
            (got.class, got.reason, started.elapsed())
        })
        .unwrap()
        .join()
        .expect("the classifier overflowed its stack or panicked")
}

fn repeat(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len())
}

fn nested(open: &str, middle: &str, close: &str, levels: usize) -> String {
    format!("{}{middle}{}", open.repeat(levels), close.repeat(levels))
}

/// Each case: (what, command, the class it must get or None for any).
fn cases() -> Vec<(&'static str, String, Option<Class>)> {
    let just_under = MAX_SOURCE - 64;
    vec![
        (
            "over the cap",
            repeat("echo a; ", MAX_SOURCE + 8),
            Some(Class::Dangerous),
        ),
        ("many commands", repeat("echo a; ", just_under), None),
        ("many assignments", repeat("i=$((i+1)); ", just_under), None),
        (
            "many names",
            (0..20_000).map(|i| format!("v{i}=1; ")).collect::<String>(),
            None,
        ),
        (
            "a long pipeline",
            format!("cat f{}", repeat(" | cat", just_under - 8)),
            None,
        ),
        (
            "a long && chain",
            format!("true{}", repeat(" && true", just_under - 8)),
            None,
        ),
        (
            "a long word",
            format!("echo {}", "a".repeat(just_under)),
            None,
        ),
        (
            "a long heredoc",
            format!(
                "cat > f <<'EOF'\n{}\nEOF",
                repeat("line of text\n", just_under - 40)
            ),
            None,
        ),
        (
            "nested $(",
            nested("$(", "id", ")", 40_000),
            Some(Class::Dangerous),
        ),
        (
            "nested backquotes",
            nested("echo \"$(", "id", ")\"", 20_000),
            Some(Class::Dangerous),
        ),
        (
            "nested subshells",
            nested("(", "id", ")", 100_000),
            Some(Class::Dangerous),
        ),
        (
            "nested groups",
            nested("{ ", "id; ", "}; ", 40_000),
            Some(Class::Dangerous),
        ),
        (
            "nested arithmetic",
            format!("echo $(({}))", nested("(", "1", ")", 100_000)),
            Some(Class::Dangerous),
        ),
        (
            "nested expansions",
            format!("echo {}", nested("${a:-", "x", "}", 40_000)),
            Some(Class::Dangerous),
        ),
        (
            "nested ifs",
            nested("if true; then ", "id; ", "fi; ", 10_000),
            Some(Class::Dangerous),
        ),
        (
            "nested test",
            format!("[[ {} ]]", nested("( ", "-f x", " )", 40_000)),
            Some(Class::Dangerous),
        ),
        (
            "nested bash -c",
            nested("bash -c \"", "id", "\"", 2_000),
            None,
        ),
        (
            "many short names",
            (0..40_000).map(|i| format!("a{i}=1;")).collect::<String>(),
            None,
        ),
        (
            "nested process substitution",
            nested("cat <(", "id", ")", 30_000),
            Some(Class::Dangerous),
        ),
        ("many brace ranges", repeat("{1..9}", just_under), None),
        (
            "unbalanced opens",
            "$(".repeat(100_000),
            Some(Class::Dangerous),
        ),
        (
            "unbalanced quotes",
            "\"'".repeat(100_000),
            Some(Class::Dangerous),
        ),
    ]
}

#[test]
fn huge_and_deeply_nested_command_lines_are_judged_in_bounded_time_and_stack() {
    let mut slowest = Duration::ZERO;
    let mut total = Duration::ZERO;
    for (what, command, expected) in cases() {
        let bytes = command.len();
        let (class, reason, took) = judged(command);
        let shown: String = reason.chars().take(80).collect();
        eprintln!(
            "{what}: {} KiB, {class:?} in {took:?} ({shown})",
            bytes / 1024
        );
        if let Some(expected) = expected {
            assert_eq!(class, expected, "{what}: {reason}");
        }
        slowest = slowest.max(took);
        total += took;
    }
    eprintln!("slowest {slowest:?}, all {total:?}");
    assert!(
        slowest < Duration::from_secs(20),
        "slowest case took {slowest:?}"
    );
}

#[test]
fn the_cap_and_the_depth_are_said() {
    let (_, reason, _) = judged(repeat("echo a; ", MAX_SOURCE + 8));
    assert!(reason.contains("too long to examine"), "{reason}");
    let (_, reason, _) = judged(nested("(", "id", ")", 5_000));
    assert!(
        reason.contains("nests too deeply") || reason.contains("could not parse"),
        "{reason}"
    );
    // Nesting a person writes stays judged as usual.
    let (class, _, _) = judged(nested("echo \"$(", "echo a", ")\"", 20));
    assert_eq!(class, Class::ReadOnly);
}
