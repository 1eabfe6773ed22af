//! The rule on an injected clock: bursts are text, lone keys act, the dead time's edges.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// A prompt shown at `t0`.
fn shown(t0: Instant) -> StandAlone {
    let mut rule = StandAlone::default();
    rule.prompt_seen(Some(1), t0);
    rule
}

/// Feeds `text` as keys `gap` apart from `start` the way the input layer does (a waiting key
/// is decided by the next key), with every key that would act. Returns what acted and what
/// went to the input as text, in order.
fn feed(rule: &mut StandAlone, text: &str, start: Instant, gap: Duration) -> (String, String) {
    feed_as(rule, text, start, gap, KeyKind::Answers)
}

/// `feed`, with keys that are `kind` where they would act.
fn feed_as(
    rule: &mut StandAlone,
    text: &str,
    start: Instant,
    gap: Duration,
    kind: KeyKind,
) -> (String, String) {
    let (mut acted, mut typed) = (String::new(), String::new());
    let mut at = start;
    for c in text.chars() {
        // The frame loop releases a key whose window passed before the next key came.
        if let Some(due) = rule.due().filter(|due| *due <= at) {
            let released = rule.release(due);
            settle(rule, released, due, &mut acted, &mut typed);
        }
        let interrupted = rule.interrupt(at, Some(&key(c)));
        settle(rule, interrupted, at, &mut acted, &mut typed);
        match rule.judge(key(c), at, kind) {
            KeyVerdict::Text => {
                rule.typed(at);
                typed.push(c);
            }
            KeyVerdict::Act => acted.push(c),
            KeyVerdict::Wait => {}
        }
        at += gap;
    }
    let end = at + rule.after();
    let released = rule.release(end);
    settle(rule, released, end, &mut acted, &mut typed);
    (acted, typed)
}

/// What the input layer does with a key the rule decided.
fn settle(
    rule: &mut StandAlone,
    outcome: Option<(KeyEvent, Fate)>,
    at: Instant,
    acted: &mut String,
    typed: &mut String,
) {
    if let Some((
        KeyEvent {
            code: KeyCode::Char(c),
            ..
        },
        fate,
    )) = outcome
    {
        match fate {
            Fate::Act => acted.push(c),
            Fate::Text => {
                rule.typed(at);
                typed.push(c);
            }
        }
    }
}

#[test]
fn a_burst_written_at_once_is_text_at_every_offset_after_a_prompt() {
    let t0 = Instant::now();
    for offset in (0..=1500).step_by(50) {
        let mut rule = shown(t0);
        let (acted, typed) = feed(&mut rule, "any news?", t0 + ms(offset), Duration::ZERO);
        assert_eq!(acted, "", "offset {offset} ms");
        assert_eq!(typed, "any news?", "offset {offset} ms");
    }
}

#[test]
fn typing_at_a_persons_pace_through_a_prompt_is_text() {
    let t0 = Instant::now();
    // Began before the prompt, or in its dead time: every later key follows a text key.
    for (start, gap) in [(0, 150), (100, 60), (300, 250), (450, 450)] {
        let mut rule = shown(t0);
        let (acted, typed) = feed(&mut rule, "yes any", t0 + ms(start), ms(gap));
        assert_eq!(acted, "", "start {start} gap {gap}");
        assert_eq!(typed, "yes any");
    }
}

#[test]
fn a_lone_key_after_the_dead_time_acts_once_its_window_passed() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    assert_eq!(
        rule.judge(key('y'), t0 + DEAD_TIME, KeyKind::Answers),
        KeyVerdict::Wait
    );
    assert_eq!(rule.due(), Some(t0 + DEAD_TIME + AFTER));
    assert_eq!(rule.release(t0 + DEAD_TIME + AFTER - ms(1)), None);
    assert_eq!(
        rule.release(t0 + DEAD_TIME + AFTER),
        Some((key('y'), Fate::Act))
    );
    assert_eq!(rule.due(), None);
}

#[test]
fn the_dead_time_edge() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    assert!(rule.holding(t0 + DEAD_TIME - ms(1)));
    assert_eq!(
        rule.judge(key('y'), t0 + DEAD_TIME - ms(1), KeyKind::Answers),
        KeyVerdict::Text
    );
    let mut rule = shown(t0);
    assert!(!rule.holding(t0 + DEAD_TIME));
    assert_eq!(
        rule.judge(key('y'), t0 + DEAD_TIME, KeyKind::Answers),
        KeyVerdict::Wait
    );
}

#[test]
fn a_key_followed_within_the_window_is_text_with_its_follower() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    let at = t0 + ms(2000);
    assert_eq!(rule.judge(key('a'), at, KeyKind::Answers), KeyVerdict::Wait);
    assert_eq!(
        rule.interrupt(at + AFTER - ms(1), Some(&key('n'))),
        Some((key('a'), Fate::Text))
    );
    // A key after the window leaves the first one standing alone.
    let mut rule = shown(t0);
    assert_eq!(rule.judge(key('a'), at, KeyKind::Answers), KeyVerdict::Wait);
    assert_eq!(
        rule.interrupt(at + AFTER, Some(&key('n'))),
        Some((key('a'), Fate::Act))
    );
}

#[test]
fn a_key_soon_after_text_is_text_and_a_pause_ends_the_typing() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    rule.typed(t0 + ms(1000));
    assert!(rule.typing(t0 + ms(1000) + BEFORE - ms(1)));
    assert_eq!(
        rule.judge(key('y'), t0 + ms(1000) + BEFORE - ms(1), KeyKind::Answers),
        KeyVerdict::Text
    );
    assert_eq!(
        rule.judge(key('y'), t0 + ms(1000) + BEFORE, KeyKind::Answers),
        KeyVerdict::Wait
    );
}

#[test]
fn a_key_whose_prompt_changed_while_it_waited_is_text() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    let at = t0 + ms(2000);
    assert_eq!(rule.judge(key('y'), at, KeyKind::Answers), KeyVerdict::Wait);
    // The next call's prompt replaced the first one within the window.
    rule.prompt_seen(Some(2), at + ms(10));
    assert_eq!(rule.release(at + AFTER), Some((key('y'), Fate::Text)));
    // And the new prompt has its own dead time.
    assert!(rule.dead(at + ms(10) + DEAD_TIME - ms(1)));
}

#[test]
fn the_same_prompt_seen_again_keeps_its_dead_time_and_none_has_none() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    rule.prompt_seen(Some(1), t0 + ms(400));
    assert!(!rule.dead(t0 + DEAD_TIME));
    rule.prompt_seen(None, t0 + ms(600));
    assert!(!rule.dead(t0 + ms(600)));
    assert!(!rule.holding(t0 + ms(600)));
    // No prompt: a pane's key still waits for its window, and typing still makes it text.
    assert_eq!(
        rule.judge(key('j'), t0 + ms(700), KeyKind::Moves),
        KeyVerdict::Wait
    );
}

#[test]
fn only_characters_without_ctrl_or_alt_are_printable() {
    assert!(is_printable(&key('y')));
    assert!(is_printable(&KeyEvent::new(
        KeyCode::Char('A'),
        KeyModifiers::SHIFT
    )));
    assert!(!is_printable(&KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL
    )));
    assert!(!is_printable(&KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE
    )));
}

/// The person typed `text` into the input at `gap` a key (no prompt: every key is text).
fn learn(rule: &mut StandAlone, text: &str, start: Instant, gap: Duration) -> Instant {
    let mut at = start;
    for _ in text.chars() {
        rule.typed(at);
        at += gap;
    }
    at
}

#[test]
fn a_slow_typists_first_letter_after_the_dead_time_is_text_once_their_pace_is_known() {
    let t0 = Instant::now();
    // Unknown pace: the 80 ms window is too short for 150 ms a key (the gap this closes):
    // every key stands alone (the prompt here never changes), the first would answer.
    let mut rule = shown(t0);
    let (acted, _) = feed(&mut rule, "yes any", t0 + ms(700), ms(150));
    assert_eq!(acted, "yes any");
    // The person's first message, typed at their pace, tells the window how long to wait.
    for gap in [120, 150, 190] {
        let mut rule = StandAlone::default();
        let end = learn(&mut rule, "fix the failing test", t0, ms(gap));
        assert!(rule.after() > ms(gap), "gap {gap}: {:?}", rule.after());
        let shown_at = end + ms(2000);
        for start in [500, 650, 900, 1400] {
            let mut rule = rule.clone();
            rule.prompt_seen(Some(1), shown_at);
            let (acted, typed) = feed(&mut rule, "yes any", shown_at + ms(start), ms(gap));
            assert_eq!(acted, "", "gap {gap}, start {start}");
            assert_eq!(typed, "yes any");
        }
    }
}

#[test]
fn the_window_follows_the_pace_within_its_bounds_and_bursts_do_not_count() {
    let t0 = Instant::now();
    let mut rule = StandAlone::default();
    assert_eq!(rule.after(), AFTER);
    // Written at once (a paste the terminal did not bracket, a burst): no pace.
    learn(
        &mut rule,
        "a whole line written at once",
        t0,
        Duration::ZERO,
    );
    assert_eq!(rule.after(), AFTER);
    // Too few gaps are no pace yet.
    let mut rule = StandAlone::default();
    learn(&mut rule, "abc", t0, ms(150));
    assert_eq!(rule.after(), AFTER);
    // A fast typist keeps the shortest window.
    let mut rule = StandAlone::default();
    learn(&mut rule, "the quick brown fox", t0, ms(40));
    assert_eq!(rule.after(), AFTER);
    // 150 ms a key: 187 ms.
    let mut rule = StandAlone::default();
    learn(&mut rule, "the quick brown fox", t0, ms(150));
    assert_eq!(rule.after(), ms(187) + Duration::from_micros(500));
    // Pauses between words (over BEFORE) are not gaps of a word; a very slow pace is capped.
    let mut rule = StandAlone::default();
    learn(&mut rule, "the quick brown fox", t0, ms(450));
    assert_eq!(rule.after(), AFTER_MAX);
    let mut rule = StandAlone::default();
    learn(&mut rule, "the quick brown fox", t0, ms(600));
    assert_eq!(rule.after(), AFTER);
    // A lone key of a known slow typist acts once their window passed.
    let mut rule = StandAlone::default();
    let end = learn(&mut rule, "the quick brown fox", t0, ms(150));
    rule.prompt_seen(Some(1), end + ms(1000));
    let at = end + ms(1000) + DEAD_TIME;
    assert_eq!(rule.judge(key('y'), at, KeyKind::Answers), KeyVerdict::Wait);
    assert_eq!(rule.release(at + AFTER), None);
    assert_eq!(rule.release(at + rule.after()), Some((key('y'), Fate::Act)));
}

#[test]
fn a_moving_key_held_down_acts_every_time_and_an_answer_never_repeats() {
    let t0 = Instant::now();
    // No prompt (a focused pane): j alone, then the terminal's repeats after 500 ms, 33 ms
    // apart.
    let mut rule = StandAlone::default();
    let at = t0 + ms(1000);
    assert_eq!(rule.judge(key('j'), at, KeyKind::Moves), KeyVerdict::Wait);
    assert_eq!(rule.release(at + AFTER), Some((key('j'), Fate::Act)));
    let mut repeat = at + ms(500);
    for _ in 0..20 {
        assert_eq!(
            rule.judge(key('j'), repeat, KeyKind::Moves),
            KeyVerdict::Act
        );
        repeat += ms(33);
    }
    // After the key is let go, a different key is judged as ever.
    assert_eq!(
        rule.judge(key('k'), repeat + ms(10), KeyKind::Moves),
        KeyVerdict::Wait
    );
    // A repeat faster than the window (a 200 ms repeat delay): the first j acts too.
    let mut rule = StandAlone::default();
    let (acted, typed) = feed_as(&mut rule, "jjjj", at, ms(60), KeyKind::Moves);
    assert_eq!((acted.as_str(), typed.as_str()), ("jjjj", ""));
    // Long after, the same key waits again.
    assert_eq!(
        rule.judge(key('j'), at + ms(5000), KeyKind::Moves),
        KeyVerdict::Wait
    );
    // An answer pressed twice: the second waits for its own window (and a prompt's next
    // step has its dead time anyway).
    let mut rule = shown(t0);
    assert_eq!(rule.judge(key('y'), at, KeyKind::Answers), KeyVerdict::Wait);
    assert_eq!(rule.release(at + AFTER), Some((key('y'), Fate::Act)));
    assert_eq!(
        rule.judge(key('y'), at + ms(200), KeyKind::Answers),
        KeyVerdict::Wait
    );
    // Text still wins: a moving key pressed while typing is text, held or not.
    let mut rule = StandAlone::default();
    rule.typed(at);
    let (acted, typed) = feed_as(&mut rule, "jjj", at + ms(100), ms(33), KeyKind::Moves);
    assert_eq!((acted.as_str(), typed.as_str()), ("", "jjj"));
}
