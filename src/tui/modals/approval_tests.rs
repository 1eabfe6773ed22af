//! The approval prompt's keys, its confirmation step and layout.
use super::*;

/// The dangers the gate finds in `command`, as the approval event carries them.
fn dangers(command: &str) -> Vec<String> {
    crate::permissions::answer::dangers_for_tests(command)
}

fn held(call: &str) -> Held {
    Held {
        call: CallId::new(call),
        name: "bash".into(),
        subject: "rm -rf ../build".into(),
        why: "deletes outside the workspace".into(),
        sandboxed: false,
        reach: None,
        prefix: "rm".into(),
        decisions: Vec::new(),
        dangers: dangers("rm -rf ../build"),
        diff: None,
    }
}

/// `held` with the answers the engine offers for it, as `AwaitingApproval` carries them.
fn offered(held: Held) -> Held {
    Held {
        decisions: crate::bus::DecisionKind::offered(
            &held.name,
            &held.prefix,
            !held.dangers.is_empty(),
            held.sandboxed,
        ),
        ..held
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
        dangers: Vec::new(),
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
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(held("c1")));
    prompt.hold(offered(mutating("c2")));
    prompt.hold(offered(held("c3")));
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
    assert_eq!(prompt.handle_key(key('a')), None, "a asks first");
    assert_eq!(
        prompt.handle_key(key('y')),
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
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(held("c1")));
    assert_eq!(prompt.handle_key(key('u')), None, "not sandboxed: no u");
    prompt.settle(&CallId::new("c1"));
    prompt.hold(offered(Held {
        sandboxed: true,
        ..held("c2")
    }));
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
    prompt.hold(offered(held("c1")));
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
        dangers: dangers(&command.join("\n")),
        subject: command.join("\n"),
        why: "deletes outside the workspace (/etc/cairn-demo)".into(),
        sandboxed: true,
        reach: None,
        prefix: "rm -rf /etc/cairn-demo".into(),
        decisions: Vec::new(),
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
    prompt.hold(offered(long_command()));
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
    prompt.hold(offered(long_command()));
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
    prompt.hold(offered(held("c1")));
    let keys = legend(&prompt);
    assert!(!keys.contains("allow `"), "{keys}");
    assert!(
        keys.contains("approve once") && keys.contains("deny"),
        "{keys}"
    );
    for c in ['a', 'A', 'p', 'P'] {
        assert_eq!(prompt.handle_key(key(c)), None, "{c} must not approve");
        assert!(!prompt.takes_char(c), "{c} is text");
    }
    assert!(prompt.is_open());
    // Not dangerous: the rule keys are offered (and a rule with no prefix never is).
    prompt.clear();
    prompt.hold(offered(mutating("c2")));
    assert!(legend(&prompt).contains("allow `touch` for this session"));
    prompt.clear();
    prompt.hold(offered(Held {
        prefix: String::new(),
        ..mutating("c3")
    }));
    assert_eq!(prompt.handle_key(key('a')), None);
}

#[test]
fn an_arithmetic_reason_is_stated_once() {
    let command = "x=$(cat f); echo $((x+1)) $((x+2))";
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(Held {
        subject: command.into(),
        why: "evaluates x as arithmetic, and its value holds code".into(),
        prefix: "cat f".into(),
        dangers: dangers(command),
        ..held("c1")
    }));
    let screen = draw(&prompt, 100, 20);
    assert_eq!(
        screen.matches("evaluates x as arithmetic").count(),
        1,
        "{screen}"
    );
}

#[test]
fn a_dangerous_reason_is_stated_once() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(held("c1")));
    let screen = draw(&prompt, 80, 20);
    assert_eq!(
        screen.matches("deletes outside the workspace").count(),
        1,
        "{screen}"
    );
    assert!(screen.contains("⚠ rm -rf ../build"), "{screen}");
}

#[test]
fn the_prompt_says_when_the_keys_go_to_the_input() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(mutating("c1")));
    prompt.show_typing(true);
    assert!(legend(&prompt).contains("you are typing"));
    prompt.show_typing(false);
    assert!(legend(&prompt).contains("approve once"));
}

#[test]
fn a_and_p_ask_for_a_confirmation_that_y_gives_and_n_takes_back() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(mutating("c1")));
    assert_eq!(prompt.handle_key(key('a')), None, "one key widens nothing");
    let asked = legend(&prompt);
    assert!(
        asked.contains("allow `touch` for the rest of this session") && asked.contains("yes"),
        "{asked}"
    );
    assert!(prompt.takes_char('y') && !prompt.takes_char('a'));
    assert_eq!(prompt.handle_key(key('n')), None);
    assert!(legend(&prompt).contains("approve once"), "back to the keys");
    assert_eq!(prompt.handle_key(key('p')), None);
    assert!(legend(&prompt).contains("always allow `touch` in this project"));
    let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(prompt.handle_key(esc), None);
    assert!(prompt.is_open() && !prompt.in_step());
    assert_eq!(prompt.handle_key(key('p')), None);
    assert_eq!(
        prompt.handle_key(key('y')),
        Some((
            CallId::new("c1"),
            Decision::ApproveForProject {
                prefix: "touch".into()
            }
        ))
    );
}

#[test]
fn shifted_letters_are_no_keys_of_the_prompt() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(mutating("c1")));
    for c in ['Y', 'A', 'P', 'N', 'M', 'U'] {
        assert!(!prompt.takes_char(c), "{c}");
    }
    for c in ['y', 'a', 'p', 'n', 'm'] {
        assert!(prompt.takes_char(c), "{c}");
    }
    assert!(!prompt.takes_char('u'), "not sandboxed");
}

#[test]
fn esc_denies_every_held_call_and_leaves_nothing_waiting() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(mutating("c1")));
    prompt.hold(offered(mutating("c2")));
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

/// A held command with characters that would not show.
fn hiding(subject: &str, prefix: &str) -> Held {
    Held {
        call: CallId::new("hidden"),
        name: "bash".into(),
        subject: subject.into(),
        why: "changes files".into(),
        sandboxed: true,
        reach: None,
        prefix: prefix.into(),
        decisions: Vec::new(),
        dangers: dangers(subject),
        diff: None,
    }
}

/// Draws the prompt and checks that nothing in it can move the terminal's cursor or stack
/// out of its cell: every cell holds at most one base character and a few marks, none that
/// would not show, and both borders stand on every row of the box.
fn draw_checked(prompt: &ApprovalPrompt, w: u16, h: u16) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h))
        .unwrap_or_else(|e| panic!("{e}"));
    terminal
        .draw(|f| prompt.render(f.area(), f.buffer_mut()))
        .unwrap_or_else(|e| panic!("{e}"));
    let buffer = terminal.backend().buffer().clone();
    let screen = terminal.backend().to_string();
    let mut top = None;
    for y in 0..h {
        for x in 0..w {
            let symbol = buffer[(x, y)].symbol();
            assert!(
                symbol
                    .chars()
                    .all(|c| crate::visible::always_hidden(c).is_none()),
                "cell ({x},{y}) holds {symbol:?}:\n{screen}"
            );
            assert!(
                symbol.chars().count() <= 4,
                "cell ({x},{y}) holds {symbol:?}"
            );
            if symbol == "┌" && top.is_none() {
                top = Some((x, y));
            }
        }
    }
    let (left, top) = top.unwrap_or_else(|| panic!("no box:\n{screen}"));
    let right = (left..w)
        .find(|&x| buffer[(x, top)].symbol() == "┐")
        .unwrap_or_else(|| panic!("no right corner:\n{screen}"));
    let bottom = (top..h)
        .find(|&y| buffer[(left, y)].symbol() == "└")
        .unwrap_or_else(|| panic!("no bottom:\n{screen}"));
    for y in top + 1..bottom {
        assert_eq!(
            buffer[(left, y)].symbol(),
            "│",
            "left border, row {y}:\n{screen}"
        );
        assert_eq!(
            buffer[(right, y)].symbol(),
            "│",
            "right border, row {y}:\n{screen}"
        );
    }
    assert_eq!(buffer[(right, bottom)].symbol(), "┘", "{screen}");
    screen
}

#[test]
fn characters_that_would_not_show_are_shown_and_named_and_keep_the_box_whole() {
    let zalgo = format!("touch e{}.txt", "\u{301}".repeat(50));
    let cases = [
        (
            "zero_width_space",
            "touch safe\u{200b}.txt",
            "<U+200B>",
            "U+200B zero-width",
        ),
        (
            "bidi_override",
            "cat notes\u{202e}txt.exe",
            "<U+202E>",
            "U+202E bidi control",
        ),
        (
            "zwj",
            "touch a\u{200d}b 👩\u{200d}💻",
            "<U+200D>",
            "U+200D zero-width",
        ),
        (
            "line_separator",
            "echo ok\u{2028}rm -rf build",
            "<U+2028>",
            "U+2028 line break",
        ),
        (
            "combining_marks",
            zalgo.as_str(),
            "<U+0301 ×50>",
            "U+0301 combining mark",
        ),
    ];
    for (name, command, marker, note) in cases {
        let mut prompt = ApprovalPrompt::default();
        let prefix = command.split(' ').take(2).collect::<Vec<_>>().join(" ");
        prompt.hold(offered(hiding(command, &prefix)));
        for (w, h) in [(80, 16), (44, 14), (36, 16)] {
            let screen = draw_checked(&prompt, w, h);
            assert!(
                screen.contains("invisible characters"),
                "{name} {w}x{h}:\n{screen}"
            );
        }
        let screen = draw_checked(&prompt, 80, 16);
        assert!(screen.contains(marker), "{name}: the command\n{screen}");
        assert!(screen.contains(note), "{name}: the note\n{screen}");
        // The rule offered shows it too.
        let keys = legend(&prompt);
        if prefix.contains(|c| crate::visible::always_hidden(c).is_some()) {
            assert!(keys.contains(marker), "{name}: the rule {keys}");
        }
        insta::assert_snapshot!(format!("hidden_{name}"), screen);
    }
}

#[test]
fn the_rule_offered_shows_what_it_would_match() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(hiding(
        "touch safe\u{200b}.txt",
        "touch safe\u{200b}.txt",
    )));
    let keys = legend(&prompt);
    assert!(
        keys.contains("allow `touch safe<U+200B>.txt` for this session"),
        "{keys}"
    );
    // The confirmation shows it visibly too; what it approves is the rule itself.
    assert_eq!(prompt.handle_key(key('a')), None);
    let asked = legend(&prompt);
    assert!(
        asked.contains("allow `touch safe<U+200B>.txt` for the rest"),
        "{asked}"
    );
    assert_eq!(
        prompt.handle_key(key('y')),
        Some((
            CallId::new("hidden"),
            Decision::ApproveForSession {
                prefix: "touch safe\u{200b}.txt".into()
            }
        ))
    );
}

#[test]
fn plain_commands_carry_no_note() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(hiding("touch café.txt 日本", "touch")));
    let screen = draw_checked(&prompt, 80, 16);
    assert!(!screen.contains("invisible"), "{screen}");
    assert!(screen.contains("café.txt"), "{screen}");
}

#[test]
fn a_held_write_shows_its_path_in_its_visible_form() {
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(Held {
        name: "write_file".into(),
        subject: "notes\u{202e}txt.exe".into(),
        prefix: String::new(),
        ..hiding("", "")
    }));
    let screen = draw_checked(&prompt, 80, 16);
    assert!(screen.contains("notes<U+202E>txt.exe"), "{screen}");
    assert!(screen.contains("U+202E bidi control"), "{screen}");
}

#[test]
fn the_sandboxed_line_says_when_a_command_gets_unix_sockets() {
    let mut prompt = ApprovalPrompt::default();
    let reach =
        "connect to the Unix sockets `[sandbox] allow_unix_sockets` lists: /run/docker.sock";
    prompt.hold(offered(Held {
        reach: Some(reach.into()),
        ..hiding("docker ps", "docker ps")
    }));
    let screen = draw_checked(&prompt, 80, 16);
    let sandbox_row = screen
        .lines()
        .find(|l| l.contains("sandboxed:"))
        .unwrap_or_default();
    assert!(sandbox_row.contains("it may connect to"), "{screen}");
    assert!(screen.contains("/run/docker.sock"), "{screen}");
    let why_row = screen
        .lines()
        .find(|l| l.contains("why:"))
        .unwrap_or_default();
    assert!(!why_row.contains("sandbox"), "said once: {screen}");
    insta::assert_snapshot!("sandboxed_with_sockets", screen);
    // Without the note the line is as before.
    prompt.clear();
    prompt.hold(offered(hiding("touch a", "touch")));
    let screen = draw_checked(&prompt, 80, 16);
    assert!(!screen.contains("it may"), "{screen}");
}

#[test]
fn at_80_columns_the_keys_wrap_at_spaces_and_no_word_is_cut() {
    let command = "python3 -m unittest discover --start-directory tests --pattern 'test_*.py'";
    let mut prompt = ApprovalPrompt::default();
    prompt.hold(offered(Held {
        subject: command.into(),
        why: "runs a program".into(),
        prefix: "python3 -m unittest discover --start-directory tests".into(),
        dangers: Vec::new(),
        ..held("c1")
    }));
    for (w, h) in [(80, 16), (160, 16)] {
        let screen = draw(&prompt, w, h);
        // Whole words, wrapped at a space when the line is full (`in this` / `project`).
        for words in ["for this session", "always allow", "in this", "project"] {
            assert!(screen.contains(words), "{w}: {words}\n{screen}");
        }
        assert!(
            !screen.contains("proj\n") && !screen.contains("projec "),
            "{w}:\n{screen}"
        );
        insta::assert_snapshot!(format!("long_rule_keys_{w}"), screen);
    }
}
