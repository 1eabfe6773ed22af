//! The bash tool and todo_write, driven as the model drives them: arguments in, canonical value
//! and model text out. Process tests prove by pid that nothing survives. The fixture is shared
//! with `tools_jobs`.
#![allow(clippy::unwrap_used)]

use cairn::process;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn::tool_output::{CommandRun, JobReport, ToolOutput};
use cairn::tools::bash::Bash;
use cairn::tools::todo_write::TodoWrite;
use cairn::tools::{Tool, ToolCx, ToolEnv};
use serde_json::{Value, json};
use tempfile::TempDir;

pub(crate) struct Fixture {
    pub(crate) dir: TempDir,
    pub(crate) cx: ToolCx,
}

pub(crate) fn fixture_with(settings: process::Settings) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let env = Arc::new(ToolEnv::new(
        workspace,
        &cairn::dirs::Dirs::from_env(),
        settings,
    ));
    Fixture {
        cx: ToolCx::new(env),
        dir,
    }
}

pub(crate) fn fixture() -> Fixture {
    fixture_with(process::Settings {
        kill_grace: Duration::from_millis(300),
        ..process::Settings::default()
    })
}

impl Fixture {
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) async fn bash(&self, args: Value) -> (CommandRun, String) {
        match Bash.run(args, &self.cx).await.unwrap() {
            ToolOutput::Command(run) => {
                let text = ToolOutput::Command(run.clone()).model_text();
                (run, text)
            }
            other => panic!("expected a command run, got {other:?}"),
        }
    }

    pub(crate) async fn job(&self, tool: &dyn Tool, args: Value) -> (JobReport, String) {
        match tool.run(args, &self.cx).await.unwrap() {
            ToolOutput::Job(report) => {
                let text = ToolOutput::Job(report.clone()).model_text();
                (report, text)
            }
            other => panic!("expected a job report, got {other:?}"),
        }
    }

    /// Pids the command wrote to `name`, one per complete line (a writer may be mid-line).
    pub(crate) fn pids(&self, name: &str) -> Vec<i32> {
        let text = std::fs::read_to_string(self.path(name)).unwrap_or_default();
        let complete = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
        complete
            .lines()
            .map(|pid| pid.trim().parse().unwrap())
            .collect()
    }

    /// Polls until the command has written `count` pids to `name`.
    pub(crate) async fn wait_for_pids(&self, name: &str, count: usize) -> Vec<i32> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let pids = self.pids(name);
            if pids.len() >= count {
                return pids;
            }
            assert!(
                Instant::now() < deadline,
                "{name} holds {pids:?}, expected {count} pids"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A process is alive when /proc has it and it is not a zombie (an orphan waiting for a reaper
/// has already ended).
pub(crate) fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 1..]
                .split_whitespace()
                .next()
                .unwrap();
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

pub(crate) fn assert_all_dead(pids: &[i32]) {
    assert!(!pids.is_empty());
    for pid in pids {
        assert!(!alive(*pid), "process {pid} survived");
    }
}

#[tokio::test]
async fn non_zero_exit_is_a_marker_after_stdout_and_stderr() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "echo out; echo err >&2; exit 3"}))
        .await;
    assert_eq!(run.exit_code, Some(3));
    assert_eq!(
        text,
        "$ echo out; echo err >&2; exit 3\nout\n[stderr]\nerr\n[exit code: 3]"
    );
}

#[tokio::test]
async fn runs_in_the_workspace_with_a_plain_terminal_environment() {
    let fx = fixture();
    let (run, _) = fx
        .bash(json!({"command": "pwd; echo $NO_COLOR $TERM $PAGER $GIT_PAGER"}))
        .await;
    let workspace = fx.dir.path().canonicalize().unwrap();
    assert_eq!(
        run.stdout,
        format!("{}\n1 dumb cat cat\n", workspace.display())
    );
    assert_eq!(run.exit_code, Some(0));
}

#[tokio::test]
async fn timeout_kills_child_and_grandchild_even_when_they_ignore_sigterm() {
    let fx = fixture();
    let command = "bash -c 'trap \"\" TERM; sleep 1000 & echo $! >> pids; echo $$ >> pids; wait' & \
                   echo $$ >> pids; wait";
    let started = Instant::now();
    let (run, text) = fx
        .bash(json!({"command": command, "timeout_ms": 700, "on_timeout": "kill"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        fx.pids("pids").len(),
        3,
        "main shell, child shell and grandchild sleep"
    );
    assert_all_dead(&fx.pids("pids"));
    assert_eq!(run.timed_out_after_ms, Some(700));
    assert_eq!(run.job_id, None, "on_timeout: kill makes no job");
    assert!(text.contains("[timed out after 700ms]"), "{text}");
    assert!(fx.cx.env.jobs.is_empty());
}

#[tokio::test]
async fn a_command_ignoring_sigterm_is_killed_with_sigkill() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "trap '' TERM; echo $$ > pids; sleep 1000", "timeout_ms": 300, "on_timeout": "kill"}))
        .await;
    assert_eq!(run.signal.as_deref(), Some("SIGKILL"));
    assert!(
        text.ends_with("[killed by signal: SIGKILL]\n[timed out after 300ms]"),
        "{text}"
    );
    assert_all_dead(&fx.pids("pids"));
}

#[tokio::test]
async fn background_leftovers_die_when_the_command_exits() {
    let fx = fixture();
    let started = Instant::now();
    let (run, text) = fx
        .bash(json!({"command": "sleep 1000 & echo $! > pids; echo done"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(text, "$ sleep 1000 & echo $! > pids; echo done\ndone\n");
    assert_all_dead(&fx.pids("pids"));
}

#[tokio::test]
async fn leftovers_in_groups_of_their_own_die_too() {
    // With job control on (`set -m`), each background job gets its own process group.
    let fx = fixture();
    let (run, _) = fx
        .bash(json!({"command": "set -m; sleep 1000 & echo $! > pids; echo done"}))
        .await;
    assert_eq!(run.stdout, "done\n");
    assert_all_dead(&fx.pids("pids"));
}

#[tokio::test]
async fn a_leftover_in_a_session_of_its_own_dies_while_it_holds_the_output() {
    let fx = fixture();
    let started = Instant::now();
    // The escapee writes its pid only once it is in its own session; the command waits for it.
    let command = "setsid bash -c 'echo $$ > pids; exec sleep 1000' & \
                   while [ ! -s pids ]; do sleep 0.01; done; echo done";
    let (run, _) = fx.bash(json!({ "command": command })).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(run.stdout, "done\n");
    assert_all_dead(&fx.pids("pids"));
}

#[tokio::test]
async fn cancel_mid_run_kills_everything() {
    let fx = Arc::new(fixture());
    let runner = {
        let fx = fx.clone();
        tokio::spawn(async move {
            fx.bash(
                json!({"command": "(sleep 1000 & echo $! >> pids; wait) & echo $$ >> pids; wait"}),
            )
            .await
        })
    };
    fx.wait_for_pids("pids", 2).await;
    fx.cx.cancel.cancel();
    let (run, text) = tokio::time::timeout(Duration::from_secs(10), runner)
        .await
        .unwrap()
        .unwrap();
    assert!(run.cancelled);
    assert!(text.contains("[cancelled]"), "{text}");
    assert_all_dead(&fx.pids("pids"));
}

#[tokio::test]
async fn fifty_megabytes_of_output_keep_head_and_tail_and_spill_the_rest() {
    let fx = fixture();
    let (run, text) = fx.bash(json!({"command": "seq 1 6500000"})).await;
    assert!(run.stdout_bytes > 50_000_000, "{}", run.stdout_bytes);
    assert!(
        text.len() <= 16 * 1024,
        "model text is {} bytes",
        text.len()
    );
    assert!(
        text.starts_with("$ seq 1 6500000\n1\n2\n3\n4\n"),
        "{}",
        &text[..60]
    );
    assert!(
        text.ends_with("6499999\n6500000\n"),
        "{}",
        &text[text.len() - 60..]
    );
    assert!(run.truncated);
    let spill = run.spill_path.clone().unwrap();
    assert_eq!(std::fs::metadata(&spill).unwrap().len(), run.stdout_bytes);
    let marker = format!(
        "[output truncated: {} bytes total; showing first ",
        run.stdout_bytes
    );
    assert!(text.contains(&marker), "{text}");
    assert!(text.contains(&format!("full output in {}]", spill.display())));
    // Both cuts fall on line boundaries: every line shown is a whole number, in sequence.
    let (head, rest) = text.split_once("[output truncated").unwrap();
    for (i, line) in head.lines().skip(1).enumerate() {
        assert_eq!(line, (i + 1).to_string());
    }
    let tail: Vec<&str> = rest.lines().skip(1).collect();
    let first: usize = tail[0].parse().unwrap();
    for (k, line) in tail.iter().enumerate() {
        assert_eq!(*line, (first + k).to_string());
    }
    assert_eq!(tail.last(), Some(&"6500000"));
    assert!(
        !spill.starts_with(fx.dir.path()),
        "spill files stay out of the repository"
    );
    drop(fx); // the session ends: its spill files go with it
    assert!(!spill.exists(), "the spill file outlived the session");
}

#[tokio::test]
async fn both_streams_huge_still_fit_in_sixteen_kilobytes() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "seq 1 1000000; seq 1 1000000 >&2; exit 2"}))
        .await;
    assert!(
        text.len() <= 16 * 1024,
        "model text is {} bytes",
        text.len()
    );
    assert_eq!(
        text.matches("[output truncated: 6888896 bytes total")
            .count(),
        2
    );
    let (stdout, stderr) = text.split_once("\n[stderr]\n").unwrap();
    assert!(stdout.ends_with("999999\n1000000"), "{stdout}");
    assert!(
        stderr.ends_with("999999\n1000000\n[exit code: 2]"),
        "{stderr}"
    );
    assert!(run.spill_path.is_some());
}

#[tokio::test]
async fn terminal_colours_are_stripped() {
    let fx = fixture();
    let (run, _) = fx
        .bash(json!({"command": "printf '\\033[1;31mred\\033[0m plain\\n'; printf '\\033[32mwarn\\033[m\\n' >&2"}))
        .await;
    assert_eq!(run.stdout, "red plain\n");
    assert_eq!(run.stderr, "warn\n");
}

#[tokio::test]
async fn binary_output_becomes_a_marker_with_its_size() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "printf 'ELF\\0\\1\\2'; head -c 2000 /dev/zero"}))
        .await;
    assert!(
        text.contains("[binary output: 2006 bytes; saved in "),
        "{text}"
    );
    assert!(!text.contains('\u{fffd}'));
    let saved = run.spill_path.unwrap();
    assert_eq!(std::fs::metadata(&saved).unwrap().len(), 2006);
    drop(fx);
    assert!(!saved.exists());
}

#[tokio::test]
async fn text_with_a_few_stray_bytes_is_shown_with_them_escaped() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "printf 'ok\\000\\001\\377end'"}))
        .await;
    assert_eq!(run.stdout, "ok\\x00\\x01\\xffend");
    assert!(!text.contains("[binary output"), "{text}");
    // A Latin-1 word in a longer log, on stderr: still text, the odd byte escaped.
    let (run, _) = fx
        .bash(json!({"command": "for i in 1 2 3 4 5; do echo line $i; done; printf 'caf\\351\\n' >&2"}))
        .await;
    assert_eq!(run.stdout, "line 1\nline 2\nline 3\nline 4\nline 5\n");
    assert_eq!(run.stderr, "caf\\xe9\n");
}

#[tokio::test]
async fn the_live_tail_escapes_stray_bytes_too() {
    let mut fx = fixture();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = seen.clone();
    fx.cx.tail = Some(Arc::new(move |chunk: &str| {
        sink.lock().unwrap().push_str(chunk);
    }));
    fx.bash(json!({"command": "printf 'ok\\000\\001\\377end\\n'"}))
        .await;
    assert_eq!(*seen.lock().unwrap(), "ok\\x00\\x01\\xffend\n");
}

#[tokio::test]
async fn a_command_reading_stdin_gets_end_of_file_at_once() {
    let fx = fixture();
    let started = Instant::now();
    let (run, _) = fx
        .bash(json!({"command": "cat; read line; echo \"read=$?\"", "timeout_ms": 20000}))
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(run.stdout, "read=1\n");
}

#[tokio::test]
async fn unicode_output_arrives_intact() {
    let fx = fixture();
    let (run, _) = fx.bash(json!({"command": "echo 'héllo 世界 🎉'"})).await;
    assert_eq!(run.stdout, "héllo 世界 🎉\n");
}

#[tokio::test]
async fn secrets_are_removed_from_the_environment() {
    // SAFETY: these names are used by no other test and the value is only read by children.
    unsafe {
        std::env::set_var("CAIRN_IT_API_KEY", "sk-leak");
        std::env::set_var("CAIRN_IT_SESSION_TOKEN", "tok-leak");
        std::env::set_var("CAIRN_IT_ALLOWED_TOKEN", "visible");
        std::env::set_var("CAIRN_IT_PROVIDER_KEY", "provider-leak");
    }
    let fx = fixture_with(process::Settings {
        hidden_env: vec!["CAIRN_IT_PROVIDER_KEY".into()],
        allowed_env: vec!["CAIRN_IT_ALLOWED_TOKEN".into()],
        ..process::Settings::default()
    });
    let (run, _) = fx
        .bash(json!({"command": "env | grep CAIRN_IT_ | sort; echo end"}))
        .await;
    assert_eq!(run.stdout, "CAIRN_IT_ALLOWED_TOKEN=visible\nend\n");
}

#[tokio::test]
async fn live_output_reaches_the_tail_while_the_command_runs() {
    let mut fx = fixture();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink_seen = seen.clone();
    fx.cx.tail = Some(Arc::new(move |chunk: &str| {
        sink_seen.lock().unwrap().push_str(chunk)
    }));
    let fx = Arc::new(fx);
    let runner = {
        let fx = fx.clone();
        tokio::spawn(async move {
            fx.bash(json!({"command": "printf '\\033[32mfirst\\033[0m\\n'; while [ ! -f go ]; do sleep 0.01; done; echo second"}))
                .await
        })
    };
    // The command waits for `go`, so "first" can only have come through the live tail.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.lock().unwrap().contains("first") {
        assert!(Instant::now() < deadline, "no live output");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!runner.is_finished());
    std::fs::write(fx.path("go"), "").unwrap();
    let (run, _) = runner.await.unwrap();
    assert_eq!(run.stdout, "first\nsecond\n");
    // Cleaned like the model's text: no escape sequence reaches the UI's terminal.
    assert_eq!(*seen.lock().unwrap(), "first\nsecond\n");
}

#[tokio::test]
async fn a_timeout_above_the_maximum_is_clamped_and_said() {
    let fx = fixture();
    let (run, text) = fx
        .bash(json!({"command": "echo hi", "timeout_ms": 3_600_000}))
        .await;
    assert!(run.timeout_clamped);
    assert_eq!(
        text,
        "$ echo hi\nhi\n[timeout_ms is above the maximum; clamped to 600000ms]"
    );
}

#[tokio::test]
async fn dropping_a_running_call_kills_its_process_group() {
    let fx = fixture();
    let call = fx.bash(json!({"command": "sleep 1000 & echo $! >> pids; echo $$ >> pids; wait"}));
    // The call is dropped once both processes exist (a fixed wait raced a slow start under load).
    let pids = tokio::select! {
        _ = call => panic!("the command cannot finish"),
        pids = fx.wait_for_pids("pids", 2) => pids,
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "the group outlived the dropped call"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn invalid_arguments_are_correctable_errors() {
    let fx = fixture();
    for args in [
        json!({}),
        json!({"command": ""}),
        json!({"command": "ls", "timeout_ms": 0}),
    ] {
        let err = Bash.run(args.clone(), &fx.cx).await.unwrap_err();
        assert!(
            err.to_string().starts_with("invalid arguments"),
            "{args}: {err}"
        );
    }
}

#[tokio::test]
async fn todo_write_returns_the_list_and_renders_checkboxes() {
    let fx = fixture();
    let args = json!({"todos": [
        {"content": "read the parser", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "add a regression test", "status": "pending"}
    ]});
    let output = TodoWrite.run(args, &fx.cx).await.unwrap();
    let text = output.model_text();
    assert!(
        text.ends_with("- [x] read the parser\n- [~] fix the bug\n- [ ] add a regression test\n"),
        "{text}"
    );
    let err = TodoWrite
        .run(
            json!({"todos": [{"content": "", "status": "pending"}]}),
            &fx.cx,
        )
        .await;
    assert!(err.is_err());
}
