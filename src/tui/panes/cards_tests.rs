//! The tool cards: what they show of commands, writes and their output.
use super::*;

#[test]
fn a_progress_bar_shows_its_last_state() {
    assert_eq!(last_redraw("10%\r50%\r100%\r"), "100%");
    assert_eq!(last_redraw("plain"), "plain");
}

#[test]
fn cards_show_commands_and_paths_in_their_visible_form() {
    let now = Instant::now();
    let card = |name: &str, args| ToolCard::new(CallId::new("c"), name.into(), &args, now);
    let bash = card(
        "bash",
        serde_json::json!({"command": "touch safe\u{200b}.txt\necho \u{1b}]52;c;eA==\u{7}"}),
    );
    assert_eq!(
        bash.summary,
        "touch safe<U+200B>.txt ⏎ echo <U+001B>]52;c;eA==<U+0007>"
    );
    let write = card(
        "write_file",
        serde_json::json!({"path": "notes\u{202e}txt.exe", "content": ""}),
    );
    assert_eq!(write.summary, "notes<U+202E>txt.exe");
    let change = FileChange {
        path: "a\u{2028}b".into(),
        ..FileChange::default()
    };
    assert_eq!(
        output_summary(&ToolOutput::FileChanged(change)),
        "a<U+2028>b +0 -0"
    );
}

fn text_of(lines: &[Line<'static>]) -> String {
    lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_write_that_runs_later_and_a_commands_such_writes_are_flagged_on_the_card() {
    let now = Instant::now();
    let mut write = ToolCard::new(
        CallId::new("w"),
        "write_file".into(),
        &serde_json::json!({"path": ".envrc", "content": ""}),
        now,
    );
    write.warnings.push(
        "ran without asking: changes .envrc (.envrc), which your tools run or obey later".into(),
    );
    let shown = text_of(&write.lines(80, now));
    assert!(
        shown.contains("⚠ ran without asking: changes .envrc"),
        "{shown}"
    );

    let mut bash = ToolCard::new(
        CallId::new("b"),
        "bash".into(),
        &serde_json::json!({"command": "echo > .envrc"}),
        now,
    );
    let run = CommandRun {
        command: "echo > .envrc".into(),
        exit_code: Some(0),
        runs_later: crate::tool_output::RareList::new(vec![
            ".envrc".into(),
            ".vscode/tasks\u{202e}.json".into(),
        ]),
        ..CommandRun::default()
    };
    bash.finish(ToolResult::ok(ToolOutput::Command(run)), now);
    let shown = text_of(&bash.lines(120, now));
    assert!(
        shown.contains("⚠ changed files your tools run later: .envrc, .vscode/tasks<U+202E>.json"),
        "{shown}"
    );
}

#[test]
fn the_live_tail_keeps_the_end_and_strips_escapes() {
    let now = Instant::now();
    let mut card = ToolCard::new(
        CallId::new("c"),
        "bash".into(),
        &serde_json::json!({"command": "x"}),
        now,
    );
    card.push_tail("\x1b[31mred\x1b[0m\n");
    assert_eq!(card.tail, "red\n");
    card.push_tail(&"é".repeat(TAIL_BYTES));
    assert!(card.tail.len() <= TAIL_BYTES);
    assert!(card.tail.ends_with('é'));
}
