#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
    Ran {
        exit: Some(code),
        stdout: stdout.into(),
        stderr: stderr.into(),
        ..Ran::default()
    }
}

fn cairn(event: Event, ran: &Ran) -> Interpreted {
    interpret(HookFormat::Cairn, event, ran)
}

#[test]
fn exit_codes_mean_no_opinion_deny_or_failure() {
    let quiet = cairn(Event::PreTool, &exited(0, "\n", ""));
    assert_eq!((quiet.decision, &quiet.failure), (None, &None));
    let denied = cairn(Event::PreTool, &exited(2, "", "no pushes to main\n"));
    assert_eq!(denied.decision, Some(HookDecision::Deny));
    assert_eq!(denied.reason.as_deref(), Some("no pushes to main"));
    assert_eq!(denied.stderr, "no pushes to main\n");
    let one = cairn(Event::PreTool, &exited(1, "", "boom"));
    assert_eq!(
        one.failure,
        Some(Failure::Exit {
            code: 1,
            stderr: "boom".into()
        })
    );
    assert_eq!(
        one.failure.unwrap().to_string(),
        "it exited with code 1: boom"
    );
    let missing = cairn(
        Event::PreTool,
        &exited(127, "", "sh: 1: no-such-python: not found"),
    );
    assert!(
        matches!(&missing.failure, Some(Failure::CannotStart(why)) if why.contains("not found")),
        "{missing:?}"
    );
}

#[test]
fn timeouts_signals_and_spawn_errors_fail_in_both_formats() {
    for format in [HookFormat::Cairn, HookFormat::Claude] {
        let timed_out = Ran {
            timed_out: Some(Duration::from_secs(1)),
            ..Ran::default()
        };
        assert_eq!(
            interpret(format, Event::PreTool, &timed_out).failure,
            Some(Failure::TimedOut(Duration::from_secs(1)))
        );
        let killed = Ran {
            signal: Some("SIGSEGV".into()),
            ..Ran::default()
        };
        assert_eq!(
            interpret(format, Event::PreTool, &killed).failure,
            Some(Failure::Signal("SIGSEGV".into()))
        );
        let unstartable = Ran {
            spawn_error: Some("no such file".into()),
            ..Ran::default()
        };
        assert!(
            interpret(format, Event::PreTool, &unstartable)
                .failure
                .is_some()
        );
    }
}

#[test]
fn claude_hooks_keep_their_exit_code_meanings() {
    let one = interpret(
        HookFormat::Claude,
        Event::PreTool,
        &exited(1, "", "lint failed"),
    );
    assert_eq!((one.decision, &one.failure), (None, &None));
    assert!(one.warning.unwrap().contains("lint failed"));
    let two = interpret(
        HookFormat::Claude,
        Event::PreTool,
        &exited(2, "", "blocked"),
    );
    assert_eq!(two.decision, Some(HookDecision::Deny));
    let plain = interpret(
        HookFormat::Claude,
        Event::PreTool,
        &exited(0, "checked\n", ""),
    );
    assert_eq!(plain, Interpreted::default());
    let cut = interpret(
        HookFormat::Claude,
        Event::PreTool,
        &exited(0, "{\"decision\": ", ""),
    );
    assert!(matches!(cut.failure, Some(Failure::BadJson(_))));
}

#[test]
fn json_answers_in_either_spelling() {
    let ours = cairn(
        Event::PreTool,
        &exited(
            0,
            &json!({"decision": "ask", "reason": "a push", "additional_context": "ctx"})
                .to_string(),
            "",
        ),
    );
    assert_eq!(ours.decision, Some(HookDecision::Ask));
    assert_eq!(ours.reason.as_deref(), Some("a push"));
    assert_eq!(ours.additional_context.as_deref(), Some("ctx"));
    let theirs = cairn(
        Event::PreTool,
        &exited(
            0,
            &json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "not on main",
                "updatedInput": {"command": "ls"}
            }})
            .to_string(),
            "",
        ),
    );
    assert_eq!(theirs.decision, Some(HookDecision::Deny));
    assert_eq!(theirs.reason.as_deref(), Some("not on main"));
    assert_eq!(theirs.updated_input, Some(json!({"command": "ls"})));
    let stop = cairn(
        Event::Stop,
        &exited(0, r#"{"decision": "block", "reason": "tests fail"}"#, ""),
    );
    assert_eq!(stop.decision, Some(HookDecision::Deny));
    let halt = cairn(
        Event::PostTool,
        &exited(0, r#"{"continue": false, "stopReason": "enough"}"#, ""),
    );
    assert_eq!(
        (halt.decision, halt.reason.as_deref()),
        (Some(HookDecision::Deny), Some("enough"))
    );
    let told = cairn(
        Event::PostTool,
        &exited(0, r#"{"systemMessage": "3 files formatted"}"#, ""),
    );
    assert_eq!(told.warning.as_deref(), Some("3 files formatted"));
}

#[test]
fn answers_that_do_not_parse_are_failures() {
    for stdout in [
        "{\"decision\": ",
        "[1]",
        r#"{"decision": "maybe"}"#,
        r#"{"updated_input": "rm -rf /"}"#,
        "ok",
    ] {
        let read = cairn(Event::PreTool, &exited(0, stdout, ""));
        assert!(
            matches!(read.failure, Some(Failure::BadJson(_))),
            "{stdout}: {read:?}"
        );
    }
    // Plain text is context where the event takes it.
    let context = cairn(Event::PostTool, &exited(0, "formatted 2 files\n", ""));
    assert_eq!(
        context.additional_context.as_deref(),
        Some("formatted 2 files")
    );
}
