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
    let (mut acted, mut typed) = (String::new(), String::new());
    let mut at = start;
    for c in text.chars() {
        // The frame loop releases a key whose window passed before the next key came.
        if let Some(due) = rule.due().filter(|due| *due <= at) {
            let released = rule.release(due);
            settle(rule, released, due, &mut acted, &mut typed);
        }
        let interrupted = rule.interrupt(at);
        settle(rule, interrupted, at, &mut acted, &mut typed);
        if rule.judge(key(c), at) == KeyVerdict::Text {
            rule.typed(at);
            typed.push(c);
        }
        at += gap;
    }
    let end = at + AFTER;
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
    assert_eq!(rule.judge(key('y'), t0 + DEAD_TIME), KeyVerdict::Wait);
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
        rule.judge(key('y'), t0 + DEAD_TIME - ms(1)),
        KeyVerdict::Text
    );
    let mut rule = shown(t0);
    assert!(!rule.holding(t0 + DEAD_TIME));
    assert_eq!(rule.judge(key('y'), t0 + DEAD_TIME), KeyVerdict::Wait);
}

#[test]
fn a_key_followed_within_the_window_is_text_with_its_follower() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    let at = t0 + ms(2000);
    assert_eq!(rule.judge(key('a'), at), KeyVerdict::Wait);
    assert_eq!(
        rule.interrupt(at + AFTER - ms(1)),
        Some((key('a'), Fate::Text))
    );
    // A key after the window leaves the first one standing alone.
    let mut rule = shown(t0);
    assert_eq!(rule.judge(key('a'), at), KeyVerdict::Wait);
    assert_eq!(rule.interrupt(at + AFTER), Some((key('a'), Fate::Act)));
}

#[test]
fn a_key_soon_after_text_is_text_and_a_pause_ends_the_typing() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    rule.typed(t0 + ms(1000));
    assert!(rule.typing(t0 + ms(1000) + BEFORE - ms(1)));
    assert_eq!(
        rule.judge(key('y'), t0 + ms(1000) + BEFORE - ms(1)),
        KeyVerdict::Text
    );
    assert_eq!(
        rule.judge(key('y'), t0 + ms(1000) + BEFORE),
        KeyVerdict::Wait
    );
}

#[test]
fn a_key_whose_prompt_changed_while_it_waited_is_text() {
    let t0 = Instant::now();
    let mut rule = shown(t0);
    let at = t0 + ms(2000);
    assert_eq!(rule.judge(key('y'), at), KeyVerdict::Wait);
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
    assert_eq!(rule.judge(key('j'), t0 + ms(700)), KeyVerdict::Wait);
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
