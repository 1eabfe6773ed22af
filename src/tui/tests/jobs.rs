//! Background jobs in the TUI: the status line's count, the `/jobs` view (list, output, kill
//! after a confirmation, refresh while open), the card of a command that went on as a job, and
//! the warning a quit gives while jobs run.

#![allow(clippy::unwrap_used)]

use crate::bus::{ConversationEvent, JobListEvent};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use super::{app, draw, key, press, screen_text, tool, type_text};
use crate::bus::{
    AgentEvent, CallId, JobEnd, JobEvent, JobKiller, JobLine, ToolEvent, ToolResult, UserCommand,
};
use crate::tool_output::{CommandRun, ToolOutput};
use crate::tui::app::App;

fn line(id: &str, command: &str, secs: u64, end: Option<JobEnd>) -> JobLine {
    JobLine {
        id: id.into(),
        command: command.into(),
        elapsed_ms: secs * 1000,
        end,
    }
}

fn started(id: &str, command: &str) -> AgentEvent {
    AgentEvent::Job(JobEvent::Started {
        job: line(id, command, 0, None),
    })
}

fn ended(id: &str, command: &str, end: JobEnd) -> AgentEvent {
    AgentEvent::Job(JobEvent::Ended {
        job: line(id, command, 12, Some(end)),
    })
}

fn three_jobs() -> AgentEvent {
    AgentEvent::JobList(JobListEvent::Jobs {
        jobs: vec![
            line("job-1", "npm run dev -- --port 5173", 754, None),
            line(
                "job-2",
                "cargo test --workspace",
                61,
                Some(JobEnd::Exited {
                    exit_code: Some(101),
                    signal: None,
                }),
            ),
            line(
                "job-3",
                "python -m http.server 8000",
                4,
                Some(JobEnd::Killed {
                    by: JobKiller::User,
                }),
            ),
        ],
    })
}

fn submit(app: &mut App, text: &str) {
    type_text(app, text);
    app.handle_input(&key(KeyCode::Enter));
}

fn ctrl_c() -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))
}

#[test]
fn the_jobs_view_at_80_and_160_columns() {
    let t0 = Instant::now();
    let mut app = app(t0);
    app.apply(&started("job-1", "npm run dev -- --port 5173"));
    submit(&mut app, "/jobs");
    assert!(
        matches!(app.take_commands().as_slice(), [UserCommand::ListJobs]),
        "opening asks for the list"
    );
    app.apply(&three_jobs());
    insta::assert_snapshot!("jobs_view_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("jobs_view_160x30", draw(&app, 160, 30));
    // The output view of the chosen job.
    press(&mut app, KeyCode::Enter);
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::ShowJobOutput { job }] if job == "job-1"),
        "{sent:?}"
    );
    app.apply(&AgentEvent::JobList(JobListEvent::JobOutput {
        job: line("job-1", "npm run dev -- --port 5173", 755, None),
        stdout: "  VITE v5.0.0  ready in 312 ms\n\n  ➜  Local:   http://localhost:5173/\n".into(),
        stderr: "(!) Some chunks are larger than 500 kB\n".into(),
    }));
    insta::assert_snapshot!("jobs_output_80x24", draw(&app, 80, 24));
    insta::assert_snapshot!("jobs_output_160x30", draw(&app, 160, 30));
}

#[test]
fn an_empty_jobs_view_says_how_jobs_start() {
    let mut app = app(Instant::now());
    submit(&mut app, "/jobs");
    app.apply(&AgentEvent::JobList(JobListEvent::Jobs {
        jobs: Vec::new(),
    }));
    let screen = screen_text(&app, 120, 24);
    assert!(screen.contains("No background jobs"), "{screen}");
    press(&mut app, KeyCode::Esc);
    assert!(app.layers.is_empty(), "Esc closes it");
}

#[test]
fn k_kills_the_chosen_job_after_a_confirmation_and_n_keeps_it() {
    let mut app = app(Instant::now());
    submit(&mut app, "/jobs");
    app.apply(&three_jobs());
    app.take_commands();
    // An ended job cannot be killed: k does nothing there.
    app.handle_input(&key(KeyCode::Down));
    press(&mut app, KeyCode::Char('k'));
    assert!(!screen_text(&app, 100, 24).contains("Kill this job?"));
    app.handle_input(&key(KeyCode::Up));
    press(&mut app, KeyCode::Char('k'));
    let screen = screen_text(&app, 100, 24);
    assert!(screen.contains("Kill this job?"), "{screen}");
    assert!(
        app.take_commands().is_empty(),
        "nothing before the confirmation"
    );
    press(&mut app, KeyCode::Char('n'));
    assert!(app.take_commands().is_empty(), "n keeps it");
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('y'));
    let sent = app.take_commands();
    assert!(
        matches!(sent.as_slice(), [UserCommand::KillJob { job }] if job == "job-1"),
        "{sent:?}"
    );
    // The agent's word: the list, the status line and the transcript follow.
    app.apply(&ended(
        "job-1",
        "npm run dev -- --port 5173",
        JobEnd::Killed {
            by: JobKiller::User,
        },
    ));
    let screen = screen_text(&app, 120, 30);
    assert!(screen.contains("killed by you"), "{screen}");
    press(&mut app, KeyCode::Esc);
    let screen = screen_text(&app, 120, 30);
    assert!(
        screen.contains("killed job-1 `npm run dev -- --port 5173`; the model is told"),
        "{screen}"
    );
    assert!(!screen.contains("⚙"), "no job runs now: {screen}");
}

#[test]
fn the_open_view_asks_again_every_second_and_stops_when_closed() {
    let t0 = Instant::now();
    let mut app = app(t0);
    submit(&mut app, "/jobs");
    app.apply(&three_jobs());
    app.take_commands();
    assert_eq!(app.next_tick(), Some(t0 + Duration::from_secs(1)));
    app.set_now(t0 + Duration::from_millis(500));
    app.expire();
    assert!(app.take_commands().is_empty(), "not due yet");
    app.set_now(t0 + Duration::from_secs(1));
    app.expire();
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::ListJobs]
    ));
    app.handle_input(&key(KeyCode::Enter));
    app.take_commands();
    app.set_now(t0 + Duration::from_secs(2));
    app.expire();
    let sent = app.take_commands();
    assert!(
        matches!(
            sent.as_slice(),
            [UserCommand::ListJobs, UserCommand::ShowJobOutput { job }] if job == "job-1"
        ),
        "the output follows too: {sent:?}"
    );
    // Esc goes back to the list, a second Esc closes; nothing is asked after.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    assert!(app.layers.is_empty());
    app.set_now(t0 + Duration::from_secs(5));
    app.expire();
    assert!(app.take_commands().is_empty());
    assert_eq!(app.next_tick(), None);
}

fn promoted_card(app: &mut App) {
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("c1"),
        name: "bash".into(),
        args: json!({"command": "make watch", "timeout_ms": 5000}),
    }));
    app.apply(&tool(ToolEvent::Started {
        call: CallId::new("c1"),
    }));
    app.apply(&started("job-1", "make watch"));
    let run = CommandRun {
        command: "make watch".into(),
        stdout: "watching src/ for changes\n".into(),
        timed_out_after_ms: Some(5000),
        job_id: Some("job-1".into()),
        duration_ms: 5000,
        ..CommandRun::default()
    };
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("c1"),
        name: "bash".into(),
        result: ToolResult::ok(ToolOutput::Command(run)),
    }));
}

#[test]
fn a_command_past_its_timeout_runs_as_a_job_on_its_card_and_the_card_follows_its_end() {
    let mut app = app(Instant::now());
    promoted_card(&mut app);
    let screen = screen_text(&app, 100, 20);
    assert!(
        screen.contains("⚙ bash  make watch  running as job-1"),
        "{screen}"
    );
    assert!(screen.contains("moved to the background"), "{screen}");
    assert!(
        !screen.contains('✗') && !screen.contains("timed out"),
        "{screen}"
    );
    assert!(
        screen.contains("⚙ 1 job"),
        "the status line counts it: {screen}"
    );
    app.apply(&ended(
        "job-1",
        "make watch",
        JobEnd::Exited {
            exit_code: Some(2),
            signal: None,
        },
    ));
    let screen = screen_text(&app, 100, 20);
    assert!(
        screen.contains("✗ bash  make watch  job-1 · exit code 2"),
        "{screen}"
    );
    assert!(!screen.contains("⚙ 1 job"), "{screen}");
}

#[test]
fn a_job_that_ended_before_its_call_finished_shows_its_end_at_once() {
    let mut app = app(Instant::now());
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("c1"),
        name: "bash".into(),
        args: json!({"command": "echo hi", "background": true}),
    }));
    app.apply(&started("job-1", "echo hi"));
    app.apply(&ended(
        "job-1",
        "echo hi",
        JobEnd::Exited {
            exit_code: Some(0),
            signal: None,
        },
    ));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("c1"),
        name: "bash".into(),
        result: ToolResult::ok(ToolOutput::Command(CommandRun {
            command: "echo hi".into(),
            job_id: Some("job-1".into()),
            background: true,
            ..CommandRun::default()
        })),
    }));
    let screen = screen_text(&app, 100, 20);
    assert!(
        screen.contains("✓ bash  echo hi  job-1 · exit 0"),
        "{screen}"
    );
}

#[test]
fn quitting_with_jobs_running_warns_once_then_quits() {
    let mut app = app(Instant::now());
    app.apply(&started("job-1", "sleep 100"));
    app.apply(&started("job-2", "sleep 200"));
    assert!(screen_text(&app, 100, 20).contains("⚙ 2 jobs"));
    app.handle_input(&ctrl_c());
    let screen = screen_text(&app, 100, 20);
    assert!(
        screen.contains("2 jobs still running: they will be stopped; Ctrl+C again to quit"),
        "{screen}"
    );
    assert!(!app.should_quit());
    app.handle_input(&ctrl_c());
    assert!(app.should_quit());

    let mut app = self::app(Instant::now());
    app.apply(&started("job-1", "sleep 100"));
    submit(&mut app, "/quit");
    assert!(!app.should_quit(), "the first /quit warns");
    let screen = screen_text(&app, 100, 20);
    assert!(
        screen.contains("1 job still running: it will be stopped; /quit again to quit"),
        "{screen}"
    );
    submit(&mut app, "/quit");
    assert!(app.should_quit());
    assert!(matches!(
        app.take_commands().as_slice(),
        [UserCommand::Shutdown]
    ));

    // Without jobs nothing changes: one /quit quits.
    let mut app = self::app(Instant::now());
    submit(&mut app, "/quit");
    assert!(app.should_quit());
}

#[test]
fn a_new_conversation_forgets_the_old_jobs() {
    let mut app = app(Instant::now());
    app.apply(&started("job-1", "sleep 100"));
    app.apply(&AgentEvent::Conversation(ConversationEvent::Reset));
    assert!(!screen_text(&app, 100, 20).contains("⚙"));
    // A resumed session's jobs that a restart ended arrive as ended: no count, shown in /jobs.
    app.apply(&ended("job-1", "sleep 100", JobEnd::Gone));
    submit(&mut app, "/jobs");
    let screen = screen_text(&app, 120, 24);
    assert!(
        screen.contains("no longer runs (cairn restarted)"),
        "{screen}"
    );
    assert!(!screen.contains("⚙ 1 job"), "{screen}");
}

#[test]
fn a_replay_shows_how_a_job_ended_from_the_models_report_or_that_it_no_longer_runs() {
    let mut options = super::options();
    options.read_only = true;
    let mut app = App::new(&options, Instant::now());
    // A replay has the calls and their results, no job events.
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("c1"),
        name: "bash".into(),
        args: json!({"command": "make watch", "timeout_ms": 5000}),
    }));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("c1"),
        name: "bash".into(),
        result: ToolResult::ok(ToolOutput::Command(CommandRun {
            command: "make watch".into(),
            timed_out_after_ms: Some(5000),
            job_id: Some("job-1".into()),
            ..CommandRun::default()
        })),
    }));
    let screen = screen_text(&app, 100, 20);
    assert!(!screen.contains("⚙"), "{screen}");
    assert!(
        screen.contains("⊘ bash  make watch  job-1 · no longer runs"),
        "{screen}"
    );
    // A second job the model read to its end.
    app.apply(&tool(ToolEvent::Requested {
        call: CallId::new("c2"),
        name: "bash".into(),
        args: json!({"command": "cargo test", "background": true}),
    }));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("c2"),
        name: "bash".into(),
        result: ToolResult::ok(ToolOutput::Command(CommandRun {
            command: "cargo test".into(),
            job_id: Some("job-2".into()),
            background: true,
            ..CommandRun::default()
        })),
    }));
    app.apply(&tool(ToolEvent::Finished {
        call: CallId::new("c3"),
        name: "job_output".into(),
        result: ToolResult::ok(ToolOutput::Job(crate::tool_output::JobReport {
            job_id: "job-2".into(),
            command: "cargo test".into(),
            exit_code: Some(101),
            ..Default::default()
        })),
    }));
    let screen = screen_text(&app, 100, 20);
    assert!(
        screen.contains("✗ bash  cargo test  job-2 · exit code 101"),
        "{screen}"
    );
}
