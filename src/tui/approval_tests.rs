//! The approval prompt's keys, hold-back and layout.
use super::*;

fn held(call: &str) -> Held {
    Held {
        call: CallId::new(call),
        name: "bash".into(),
        subject: "rm -rf ../build".into(),
        why: "deletes outside the workspace".into(),
        sandboxed: false,
        prefix: "rm".into(),
        diff: None,
    }
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// A held call whose command is not dangerous: it offers the "always" keys.
fn mutating(call: &str) -> Held {
    Held {
        subject: "touch build/a".into(),
        why: "changes files".into(),
        prefix: "touch".into(),
        ..held(call)
    }
}

fn legend(prompt: &ApprovalPrompt) -> String {
    let entry = prompt.held.front().expect("held");
    prompt
        .key_lines(entry, 200)
        .iter()
        .flat_map(|line| line.spans.iter().map(|s| s.content.to_string()))
        .collect()
}

#[test]
fn single_keys_decide_and_other_keys_do_nothing() {
    let now = Instant::now();
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(held("c1"), now);
    prompt.hold(mutating("c2"), now);
    prompt.hold(held("c3"), now);
    for c in ['x', 'q', ' ', 'j'] {
        assert_eq!(prompt.handle_key(key(c)), None);
    }
    assert_eq!(
        prompt.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        None
    );
    assert_eq!(
        prompt.handle_key(key('y')),
        Some((CallId::new("c1"), Decision::Approve))
    );
    assert_eq!(
        prompt.handle_key(key('a')),
        Some((
            CallId::new("c2"),
            Decision::ApproveForSession {
                prefix: "touch".into()
            }
        ))
    );
    assert_eq!(
        prompt.handle_key(key('n')),
        Some((CallId::new("c3"), Decision::Deny { message: None }))
    );
    assert!(!prompt.is_open());
}

#[test]
fn u_runs_a_sandboxed_command_without_the_sandbox_and_nothing_else() {
    let now = Instant::now();
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(held("c1"), now);
    assert_eq!(prompt.handle_key(key('u')), None, "not sandboxed: no u");
    prompt.settle(&CallId::new("c1"), now);
    prompt.hold(
        Held {
            sandboxed: true,
            ..held("c2")
        },
        now,
    );
    let legend = legend(&prompt);
    assert!(legend.contains("run without sandbox"), "{legend}");
    assert_eq!(
        prompt.handle_key(key('u')),
        Some((CallId::new("c2"), Decision::ApproveUnsandboxed))
    );
}

#[test]
fn m_types_a_message_sent_with_the_denial() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(held("c1"), Instant::now());
    assert_eq!(prompt.handle_key(key('m')), None);
    for c in "use trash".chars() {
        assert_eq!(prompt.handle_key(key(c)), None, "y and n are text now");
    }
    let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        prompt.handle_key(enter),
        Some((
            CallId::new("c1"),
            Decision::Deny {
                message: Some("use trash".into())
            }
        ))
    );
}

fn long_command() -> Held {
    let mut command: Vec<String> = (1..200).map(|i| format!("echo step {i}")).collect();
    command.push("rm -rf /etc/cairn-demo".into());
    Held {
        call: CallId::new("long"),
        name: "bash".into(),
        subject: command.join("\n"),
        why: "deletes outside the workspace (/etc/cairn-demo)".into(),
        sandboxed: true,
        prefix: "rm -rf /etc/cairn-demo".into(),
        diff: None,
    }
}

fn draw(prompt: &ApprovalPrompt, w: u16, h: u16) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h))
        .unwrap_or_else(|e| {
            panic!("{e}");
        });
    terminal
        .draw(|f| prompt.render(f.area(), f.buffer_mut()))
        .unwrap_or_else(|e| panic!("{e}"));
    terminal.backend().to_string()
}

#[test]
fn a_long_command_keeps_its_end_its_reason_its_danger_and_the_keys_at_any_height() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(long_command(), Instant::now());
    for height in [24, 16, 12, 10] {
        let screen = draw(&prompt, 80, height);
        for expected in [
            "rm -rf /etc/cairn-demo",
            "why:",
            "⚠ rm -rf /etc/cairn-demo",
            " y ",
            " n ",
            "lines hidden",
        ] {
            assert!(
                screen.contains(expected),
                "{expected:?} missing at 80x{height}:\n{screen}"
            );
        }
    }
    let full = draw(&prompt, 80, 24);
    assert!(full.contains("echo step 199") && full.contains("echo step 1 "));
    insta::assert_snapshot!("long_command_80x24", full);
    insta::assert_snapshot!("long_command_80x12", draw(&prompt, 80, 12));
}

#[test]
fn arrows_scroll_the_elided_middle_and_decide_nothing() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(long_command(), Instant::now());
    let before = draw(&prompt, 80, 24);
    assert!(before.contains("echo step 1 ") || before.contains("echo step 1\u{20}"));
    let down = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
    for _ in 0..5 {
        assert_eq!(prompt.handle_key(down), None);
    }
    let after = draw(&prompt, 80, 24);
    assert!(after.contains("5 above"), "{after}");
    assert!(after.contains("echo step 6"), "{after}");
    assert!(after.contains("rm -rf /etc/cairn-demo"), "{after}");
    // Far past the end it stops where the window meets the tail.
    for _ in 0..500 {
        prompt.handle_key(down);
    }
    let bottom = draw(&prompt, 80, 24);
    assert!(!bottom.contains("lines hidden · 0") || bottom.contains("above"));
    let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
    for _ in 0..1000 {
        prompt.handle_key(up);
    }
    assert_eq!(draw(&prompt, 80, 24), before);
    assert!(prompt.is_open());
}

#[test]
fn a_dangerous_command_offers_no_always_keys_and_refuses_them() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(held("c1"), Instant::now());
    let keys = legend(&prompt);
    assert!(!keys.contains("allow `"), "{keys}");
    assert!(
        keys.contains("approve once") && keys.contains("deny"),
        "{keys}"
    );
    for c in ['a', 'A', 'p', 'P'] {
        assert_eq!(prompt.handle_key(key(c)), None, "{c} must not approve");
    }
    assert!(prompt.is_open());
    // Not dangerous: the rule keys are offered (and a rule with no prefix never is).
    prompt.clear();
    prompt.hold(mutating("c2"), Instant::now());
    assert!(legend(&prompt).contains("allow `touch` for this session"));
    prompt.clear();
    prompt.hold(
        Held {
            prefix: String::new(),
            ..mutating("c3")
        },
        Instant::now(),
    );
    assert_eq!(prompt.handle_key(key('a')), None);
}

#[test]
fn a_dangerous_reason_is_stated_once() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(held("c1"), Instant::now());
    let screen = draw(&prompt, 80, 20);
    assert_eq!(
        screen.matches("deletes outside the workspace").count(),
        1,
        "{screen}"
    );
    assert!(screen.contains("⚠ rm -rf ../build"), "{screen}");
}

#[test]
fn a_prompt_opening_while_typing_takes_no_key_until_a_pause() {
    let start = Instant::now();
    let ms = |n: u64| start + Duration::from_millis(n);
    let mut prompt = ApprovalPrompt::default();
    prompt.note_key(ms(0));
    prompt.hold(mutating("c1"), ms(100));
    assert!(prompt.held_back(ms(100)));
    assert!(legend(&prompt).contains("you are typing"));
    // A burst of any length keeps it held back: every key pushes the pause further.
    let mut at = 100;
    while at < 5_000 {
        assert!(prompt.held_back(ms(at)), "held back at {at} ms");
        prompt.note_key(ms(at));
        at += 150;
    }
    let last = at - 150;
    assert!(prompt.held_back(ms(last + 400)));
    assert!(!prompt.held_back(ms(last + 500)), "a pause releases it");
    assert!(prompt.expire(ms(last + 500)));
    assert!(legend(&prompt).contains("approve once"));
    assert!(prompt.is_open(), "nothing was decided");
}

#[test]
fn a_prompt_opening_after_a_pause_takes_keys_at_once_and_a_double_press_answers_one() {
    let start = Instant::now();
    let ms = |n: u64| start + Duration::from_millis(n);
    let mut prompt = ApprovalPrompt::default();
    prompt.note_key(ms(0));
    prompt.hold(mutating("c1"), ms(2_000));
    prompt.hold(mutating("c2"), ms(2_000));
    assert!(!prompt.held_back(ms(2_000)));
    prompt.note_key(ms(2_100));
    assert!(prompt.handle_key(key('y')).is_some());
    // The second `y` of a double press comes too soon for the next call.
    assert!(prompt.held_back(ms(2_150)));
    assert!(!prompt.held_back(ms(2_100 + 500)));
}

#[test]
fn esc_denies_every_held_call_and_leaves_nothing_waiting() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(mutating("c1"), Instant::now());
    prompt.hold(mutating("c2"), Instant::now());
    let decisions = prompt.dismiss();
    let calls: Vec<&str> = decisions.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(calls, ["c1", "c2"]);
    assert!(
        decisions
            .iter()
            .all(|(_, d)| matches!(d, Decision::Deny { message: Some(_) }))
    );
    assert!(!prompt.is_open());
}
