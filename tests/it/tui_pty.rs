//! End-to-end tests of the full-screen UI: the real `cairn` binary in a pseudo-terminal,
//! against the scripted mock LLM, with the screen read back through a terminal emulator
//! (`vt100`). What is asserted is what a user would see (and what the model was told).
#![allow(clippy::unwrap_used)]

mod approvals;
mod attachments;
mod harness;
mod jobs;
mod model_errors;
mod onboarding;
mod revert;
mod rewind;
mod shell;
mod skills;
mod stand_alone;
mod subagents;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use self::harness::{DEADLINE, Tui, process_alive, read_pid};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_prompt_gets_a_streamed_answer() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text(
        "Hello from **cairn**: the answer is 42.\n\n```rust\nlet answer = 42;\n```",
    )])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("what is the answer?").await;
    let screen = tui
        .wait_for("the answer and its code block", |s| {
            s.contains("the answer is 42") && s.contains("let answer = 42;")
        })
        .await;
    assert!(
        screen.contains("what is the answer?"),
        "the user message stays in the transcript"
    );
    let sent = llm.request(0).to_string();
    assert!(sent.contains("what is the answer?"));
    tui.wait_for_text("idle").await;
    tui.quit().await;
}

fn victim(sb: &Sandbox) -> PathBuf {
    let dir = sb.data_dir().parent().unwrap().join("victim");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "precious").unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_approving_a_dangerous_command_runs_it_and_shows_its_card() {
    let sb = Sandbox::new();
    let victim = victim(&sb);
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "rm -rf ../victim && echo removed-$((40 + 2))"}),
        ),
        Script::text("The directory is gone."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("delete the victim dir").await;
    // The keys are the prompt's last line: once they are on screen, the whole prompt is.
    let prompt = tui.wait_for_text("deny with a message").await;
    assert!(prompt.contains("rm -rf ../victim"), "{prompt}");
    assert!(prompt.contains("deny with a message"), "{prompt}");
    assert!(victim.exists(), "nothing runs before the approval");
    // The victim is outside the workspace: `y` would run it in the sandbox, `u` without.
    assert!(prompt.contains("run without sandbox"), "{prompt}");
    tui.press("u").await;
    // The output (not the command, which shows the unexpanded text) is on the card once the
    // command has finished: the live tail may show it before the exit status arrives.
    let screen = tui.wait_for_text("exit 0").await;
    assert!(screen.contains("removed-42"), "{screen}");
    tui.wait_for_text("The directory is gone.").await;
    assert!(!victim.exists());
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_denying_a_dangerous_command_tells_the_model() {
    let sb = Sandbox::new();
    let victim = victim(&sb);
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "rm -rf ../victim"})),
        Script::text("Understood, I left it alone."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("delete the victim dir").await;
    tui.wait_for_text("deny with a message").await;
    tui.press("n").await;
    tui.wait_for_text("denied by you").await;
    tui.wait_for_text("I left it alone").await;
    let told = llm.tool_result(1, "c1").unwrap();
    assert!(told.to_lowercase().contains("denied"), "{told}");
    assert!(victim.join("keep.txt").exists());
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_an_edit_shows_in_the_diff_pane_and_the_todo_pane_updates() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "notes.txt"})),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "world", "new_string": "cairn"}),
        ),
        Script::tool_call(
            "c3",
            "todo_write",
            json!({"todos": [
                {"content": "rename world", "status": "completed"},
                {"content": "tell the user", "status": "in_progress"}
            ]}),
        ),
        Script::text("Renamed."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 130, 40);
    tui.submit("rename world to cairn").await;
    // The diff pane (right column) lists the edit and shows its lines; the todo pane shows
    // the checklist with its state.
    let expected = [
        "Renamed.",
        "1 edit · 1 file",
        "- hello world",
        "+ hello cairn",
        "Todos 1/2",
        "☑ rename world",
        "▶ tell the user",
    ];
    let screen = tui
        .wait_for("the edit in the diff pane and the todos", |s| {
            expected.iter().all(|e| s.contains(e))
        })
        .await;
    assert_eq!(sb.read("notes.txt"), "hello cairn\n", "{screen}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_esc_during_a_long_command_ends_it_and_no_process_survives() {
    // Pid files in a subdirectory: sandboxed commands create no top-level entries.
    let sb = Sandbox::new().file("run/.keep", "");
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo $$ > run/shell.pid; sleep 300 & echo $! > run/sleep.pid; wait"}),
        ),
        Script::text("stopped"),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 100, 30);
    tui.submit("run the long thing").await;
    let start = Instant::now();
    let (shell, sleeper) = loop {
        if let (Some(a), Some(b)) = (
            read_pid(&sb.path("run/shell.pid")),
            read_pid(&sb.path("run/sleep.pid")),
        ) {
            break (a, b);
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the command never started:\n{}",
            tui.contents()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert!(process_alive(sleeper));
    tui.send("\x1b");
    tui.wait_for_text("interrupted").await;
    let start = Instant::now();
    while process_alive(shell) || process_alive(sleeper) {
        assert!(
            start.elapsed() < DEADLINE,
            "a process of the command survived Esc"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // The UI is still usable afterwards.
    tui.wait_for_text("idle").await;
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_resize_reflows_without_losing_lines() {
    let sb = Sandbox::new();
    let words: Vec<String> = (1..=60).map(|i| format!("w{i:02}")).collect();
    let answer = words.join(" ");
    let llm = MockLlm::start(vec![Script::text(&answer)]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 120, 30);
    tui.submit("words please").await;
    tui.wait_for("the whole answer, and the agent idle", |s| {
        s.contains("w60") && s.contains("idle")
    })
    .await;
    let every_word_once = |s: &str| words.iter().all(|w| s.matches(w.as_str()).count() == 1);
    let answer_rows = |s: &str| {
        s.lines()
            .filter(|l| words.iter().any(|w| l.contains(w.as_str())))
            .count()
    };
    let wide_rows = answer_rows(&tui.contents());
    for (cols, rows) in [(60, 30), (45, 30), (120, 30)] {
        tui.resize(cols, rows);
        // Narrower: the same words on more rows. Back at the first width: the first layout.
        let reflowed = |s: &str| {
            if cols == 120 {
                answer_rows(s) == wide_rows
            } else {
                answer_rows(s) > wide_rows
            }
        };
        tui.wait_for(
            &format!("every word exactly once, reflowed to {cols} columns"),
            |s| {
                every_word_once(s)
                    && s.lines().all(|l| l.chars().count() <= usize::from(cols))
                    && reflowed(s)
            },
        )
        .await;
    }
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_replay_opens_a_past_session_read_only() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![Script::text("An answer worth keeping.")]).await;
    let run = sb.exec(&llm.url(), &["a question from yesterday"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let id = sb.session_id();
    let mut tui = Tui::start_args(&sb, &["replay", &id], 80, 24);
    let screen = tui
        .wait_for("the replayed session", |s| {
            s.contains("a question from yesterday")
                && s.contains("An answer worth keeping.")
                && s.contains("replay")
        })
        .await;
    assert!(screen.contains("read only"), "{screen}");
    // Nothing can be sent: typed text goes nowhere and no request reaches the model.
    tui.send("hello\r");
    tui.send("\t");
    tui.wait_for("focus on the todo pane", |s| s.contains("No plan yet."))
        .await;
    assert_eq!(llm.requests().len(), 1);
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_ctrl_g_writes_the_message_in_the_editor() {
    let sb = Sandbox::new();
    let editor = sb.data_dir().parent().unwrap().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'written in the editor\\n' >> \"$1\"\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&editor).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&editor, perms).unwrap();
    let llm = MockLlm::start(vec![Script::text("Got it.")]).await;
    let url = llm.url();
    let args = ["--base-url", url.as_str(), "--mode", "auto-edit"];
    let editor_path = editor.to_string_lossy().into_owned();
    let mut tui = Tui::start_env(&sb, &args, &[("EDITOR", editor_path.as_str())], 100, 30);
    tui.wait_for_text("What should we work on?").await;
    tui.send("draft: ");
    tui.wait_for_text("draft:").await;
    tui.send("\x07");
    tui.wait_for_text("written in the editor").await;
    // Keys work again after the editor: the input stream was handed back.
    tui.send("\r");
    tui.wait_for_text("Got it.").await;
    let sent = llm.request(0).to_string();
    assert!(sent.contains("draft: written in the editor"), "{sent}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_message_typed_while_the_agent_works_is_queued_then_sent() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::text_tokens(3000).chunk_delay(Duration::from_millis(5)),
        Script::text("Second answer."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("first question").await;
    tui.wait_for_text("streaming").await;
    // Enter while the model works steers it: the message waits for the next step boundary
    // (here, the end of the answer being streamed), shown above the input.
    tui.send("second question\r");
    tui.wait_for_text("next step: second question").await;
    assert_eq!(
        llm.requests().len(),
        1,
        "nothing is sent to the model while it answers"
    );
    let screen = tui.wait_for_text("Second answer.").await;
    assert!(!screen.contains("next step:"), "{screen}");
    let sent = llm.request(1).to_string();
    assert!(sent.contains("second question"), "{sent}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_scrolled_up_view_holds_still_while_the_answer_streams() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::text_tokens(4000).chunk_delay(Duration::from_millis(5)),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.submit("stream a lot").await;
    // Wait until the answer fills the pane, then scroll up a page while it keeps coming.
    tui.wait_for("the pane full of the answer", |s| {
        s.matches("ridge").count() > 25
    })
    .await;
    tui.send("\x1b[5~");
    tui.wait_for("the scrolled hint", |s| {
        s.contains("End follows") || s.contains("new output below")
    })
    .await;
    let rows = |s: &str| {
        s.lines()
            .skip(1)
            .take(20)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let held = rows(&tui.contents());
    assert!(
        tui.contents().contains(" streaming"),
        "the answer is still coming"
    );
    // The rest of the answer arrives below; the rows on screen do not move.
    let screen = tui
        .wait_for("the answer to finish", |s| {
            s.contains(" idle") && s.contains("new output below")
        })
        .await;
    assert_eq!(
        rows(&screen),
        held,
        "the view moved while the answer streamed"
    );
    // End follows the answer again, to its last word.
    tui.send("\x1b[F");
    tui.wait_for("the end of the answer and the agent idle", |s| {
        s.contains(" idle") && !s.contains("End follows")
    })
    .await;
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_sigterm_restores_the_terminal() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![]).await;
    let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
    tui.wait_for_text("What should we work on?").await;
    assert!(tui.screen.lock().unwrap().screen().alternate_screen());
    let pid = tui.child.process_id().unwrap() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let start = Instant::now();
    while tui.child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < DEADLINE, "cairn did not exit on SIGTERM");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let start = Instant::now();
    while tui.screen.lock().unwrap().screen().alternate_screen() {
        assert!(
            start.elapsed() < DEADLINE,
            "the alternate screen was not left"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_resume_without_an_id_opens_the_picker_and_restores_the_session() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::text("Earlier answer."),
        Script::text("Continued."),
    ])
    .await;
    let run = sb.exec(&llm.url(), &["the earlier question"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let url = llm.url();
    let mut tui = Tui::start_args(&sb, &["--base-url", url.as_str(), "--resume"], 100, 30);
    tui.wait_for("the session picker", |s| {
        s.contains("Resume a session") && s.contains("the earlier question")
    })
    .await;
    tui.press("\r").await;
    let screen = tui
        .wait_for("the resumed transcript", |s| {
            s.contains("Earlier answer.") && !s.contains("Resume a session")
        })
        .await;
    assert!(screen.contains("the earlier question"), "{screen}");
    tui.send("and now?\r");
    tui.wait_for_text("Continued.").await;
    let sent = llm.request(1).to_string();
    assert!(
        sent.contains("Earlier answer.") && sent.contains("and now?"),
        "the history went with it: {sent}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_first_run_without_a_key_shows_the_setup_panel_and_exits_2() {
    // Nothing configured: no key in the environment (the harness removes them), an empty
    // config dir and home; the Ollama probe finds nothing on 127.0.0.1:11434.
    let sb = Sandbox::new();
    let mut tui = Tui::start_args(&sb, &[], 100, 30);
    let screen = tui.wait_for_text("DEEPSEEK_API_KEY").await;
    assert!(tui.screen.lock().unwrap().screen().alternate_screen());
    for text in [
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "ANTHROPIC_API_KEY",
        "--provider ollama",
        "--base-url URL",
        "CAIRN_API_KEY",
        "config.toml",
        "press any key to quit",
    ] {
        assert!(screen.contains(text), "`{text}` missing from:\n{screen}");
    }
    assert!(
        tui.child.try_wait().unwrap().is_none(),
        "it waits for a key"
    );
    tui.send("x");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = tui.child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < DEADLINE, "cairn did not exit on a key");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert_eq!(status.exit_code(), 2, "{status:?}");
    let screen = tui
        .wait_for("the error on the normal screen", |s| {
            s.contains("cairn: no API key for deepseek")
        })
        .await;
    assert!(
        !tui.screen.lock().unwrap().screen().alternate_screen(),
        "the alternate screen was left:\n{screen}"
    );
    assert!(screen.contains("DEEPSEEK_API_KEY"), "{screen}");
}
