//! The user's own command (`!cmd`) run as the TUI runs it: its output capped head and tail like
//! a `bash` result, known secrets redacted from everything the model, the log and the screen
//! get, and a stop (Esc) ending its whole process group, grandchildren included.
#![allow(clippy::unwrap_used)]

use cairn::process;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn::agent::user_shell;
use tokio_util::sync::CancellationToken;

use crate::tools_bash::{assert_all_dead, fixture};

#[tokio::test]
async fn a_users_command_is_capped_head_and_tail_and_its_secrets_redacted() {
    let fx = fixture();
    let secret = "sk-user-shell-0123456789abcdef";
    cairn::secrets::remember("USER_SHELL_TEST_KEY", secret);
    let streamed = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&streamed);
    let tail: process::TailSink = Arc::new(move |chunk: &str| {
        sink.lock()
            .unwrap()
            .push_str(&cairn::secrets::redact(chunk));
    });
    let command = format!("echo first {secret}; seq 1 200000; echo last {secret}");
    let run = user_shell::run(&command, &fx.cx.env, &CancellationToken::new(), Some(tail))
        .await
        .unwrap();
    let text = user_shell::context_text(&run);
    assert!(text.starts_with(user_shell::CONTEXT_PREAMBLE), "{text}");
    assert!(
        text.contains("first [redacted USER_SHELL_TEST_KEY]")
            && text.contains("last [redacted USER_SHELL_TEST_KEY]"),
        "head and tail are kept, the secret is not: {}",
        &text[..400.min(text.len())]
    );
    assert!(
        run.truncated && text.len() < 20 * 1024,
        "{} bytes",
        text.len()
    );
    assert!(
        !text.contains(secret) && !run.stdout.contains(secret) && !run.command.contains(secret)
    );
    assert!(!streamed.lock().unwrap().contains(secret));
}

#[tokio::test]
async fn a_users_command_runs_in_the_workspace_with_the_users_environment() {
    let fx = fixture();
    // SAFETY: the test binary sets this name only here, before the command reads it.
    unsafe { std::env::set_var("USER_SHELL_GITHUB_TOKEN", "ghp-visible-to-the-user") };
    let run = user_shell::run(
        "pwd; echo $USER_SHELL_GITHUB_TOKEN",
        &fx.cx.env,
        &CancellationToken::new(),
        None,
    )
    .await
    .unwrap();
    let workspace = fx.dir.path().canonicalize().unwrap();
    assert_eq!(
        run.stdout,
        format!("{}\nghp-visible-to-the-user\n", workspace.display()),
        "a variable the model's commands never see is the user's own"
    );
    assert!(!run.sandboxed);
}

#[tokio::test]
async fn stopping_a_users_command_ends_its_children_and_grandchildren() {
    let fx = fixture();
    let stop = CancellationToken::new();
    let command = "bash -c 'trap \"\" TERM; sleep 1000 & echo $! >> pids; echo $$ >> pids; wait' & \
                   echo $$ >> pids; wait";
    let env = Arc::clone(&fx.cx.env);
    let token = stop.clone();
    let running =
        tokio::spawn(async move { user_shell::run(command, &env, &token, None).await.unwrap() });
    let pids = fx.wait_for_pids("pids", 3).await;
    stop.cancel();
    let run = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .unwrap()
        .unwrap();
    assert!(run.cancelled, "{run:?}");
    assert_all_dead(&pids);
}
