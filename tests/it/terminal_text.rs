//! What cairn prints outside the full-screen UI cannot drive the user's terminal: a file name
//! holding an OSC 52 clipboard write and a newline, made by a scripted model, prints from
//! `cairn undo` escaped on one line; the model's answer with OSC 52 and CSI 2J prints from
//! `cairn exec` with no escape byte, while `--json` keeps it exact.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// Bytes a terminal acts on: ESC, BEL, CR and the 8-bit controls.
fn drives_a_terminal(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c, '\u{1b}' | '\u{7}' | '\r') || ('\u{80}'..='\u{9f}').contains(&c))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_name_with_an_osc_52_write_and_a_newline_prints_harmlessly_from_undo() {
    let sb = Sandbox::new().file("keep.txt", "keep\n");
    // The name: `evil` ESC ] 52 ; c ; base64 BEL, a newline, then text made to look like a
    // line of the report.
    let command = r#"printf x > "$(printf 'evil\033]52;c;ZXZpbA==\007\n  removed   forged.txt')""#;
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({ "command": command })),
        Script::text("done \u{1b}]0;owned\u{7}"),
    ])
    .await;
    // `never` asks nothing: the command runs (in its sandbox) and makes the file.
    let run = sb
        .exec(&llm.url(), &["--mode", "never", "make a file"])
        .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let made: Vec<String> = std::fs::read_dir(sb.workspace())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("evil"))
        .collect();
    assert_eq!(made.len(), 1, "the command made its file");
    assert!(!drives_a_terminal(&run.stdout) && !drives_a_terminal(&run.stderr));

    let (code, stdout, stderr) = sb.exec_raw_sync(&["undo", "--yes"]);
    assert_eq!(code, 0, "{stdout} / {stderr}");
    assert!(!drives_a_terminal(&stdout), "{stdout:?}");
    assert!(!drives_a_terminal(&stderr), "{stderr:?}");
    assert!(
        stdout.contains("evil<U+001B>]52;c;ZXZpbA==<U+0007><U+000A>  removed   forged.txt"),
        "{stdout}"
    );
    // One line per file: the newline in the name made no line of its own.
    let file_lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("removed"))
        .collect();
    assert_eq!(file_lines.len(), 1, "{stdout}");
    assert!(!sb.path(&made[0]).exists(), "undone");
    assert_eq!(sb.read("keep.txt"), "keep\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_answer_with_control_sequences_prints_no_escape_and_json_keeps_it_exact() {
    let answer = "copied \u{1b}]52;c;cm0gLXJmIH4=\u{7}cleared \u{1b}[2J\u{1b}[Hreset \u{1b}c\
                  8bit \u{9b}2J title \u{1b}]2;pwned\u{1b}\\ cr safe\rEVIL bidi \u{202e}gnp.exe";
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text(answer)]).await;
    let run = sb.exec(&llm.url(), &["hello"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(!drives_a_terminal(&run.stdout), "{:?}", run.stdout);
    for kept in [
        "copied ",
        "cleared ",
        "reset ",
        "8bit ",
        " title ",
        "safe<U+000D>EVIL",
        "<U+202E>gnp.exe",
    ] {
        assert!(run.stdout.contains(kept), "{kept:?} in {:?}", run.stdout);
    }
    assert!(!run.stdout.contains("52;c;") && !run.stdout.contains("pwned"));

    let llm = MockLlm::start(vec![Script::text(answer)]).await;
    let run = sb.exec(&llm.url(), &["--json", "hello"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let message = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "assistant_message")
        .unwrap();
    assert_eq!(message["text"], answer, "--json keeps the answer exact");
    assert!(!run.stdout.contains('\u{1b}'), "JSON escapes ESC itself");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_run_text_and_errors_print_no_escape() {
    let sb = Sandbox::new().file("notes.txt", "a \u{1b}]52;c;eA==\u{7} b\n");
    let (code, stdout, _) =
        sb.exec_raw_sync(&["tool", "run", "read_file", r#"{"path": "notes.txt"}"#]);
    assert_eq!(code, 0, "{stdout}");
    assert!(!drives_a_terminal(&stdout), "{stdout:?}");
    let (code, _, stderr) = sb.exec_raw_sync(&["undo", "--yes", "no-such-\u{1b}[2J-session"]);
    assert_ne!(code, 0);
    assert!(!drives_a_terminal(&stderr), "{stderr:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_with_escapes_and_newlines_lists_as_one_harmless_line_in_sessions() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("ok")]).await;
    let prompt = "hi \u{1b}]52;c;eA==\u{7}\nabc  2020-01-01  /forged  line";
    let run = sb.exec(&llm.url(), &[prompt]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (code, stdout, _) = sb.exec_raw_sync(&["sessions"]);
    assert_eq!(code, 0);
    assert!(!drives_a_terminal(&stdout), "{stdout:?}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    // The listing shows the prompt's first line, its escape made visible.
    assert!(stdout.contains("hi <U+001B>]52;c;eA==<U+0007>"), "{stdout}");
    assert!(!stdout.contains("/forged"), "{stdout}");
}
