#![allow(clippy::unwrap_used)]

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;

fn screen(t: &Transcript, w: u16, h: u16, now: Instant) -> Vec<String> {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    t.render(area, &mut buf, now);
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn numbered(n: usize) -> Transcript {
    let mut t = Transcript::new();
    for i in 0..n {
        t.push_user(&format!("message {i}"), &[], &[]);
    }
    t
}

#[test]
fn pinned_view_follows_the_stream() {
    let now = Instant::now();
    let mut t = numbered(20);
    screen(&t, 40, 6, now);
    t.text_delta(StepId(1), "first words");
    assert!(
        screen(&t, 40, 6, now)
            .iter()
            .any(|l| l.contains("first words"))
    );
    t.text_delta(StepId(1), "\n\nmore words at the end");
    let s = screen(&t, 40, 6, now);
    assert!(
        s.iter().any(|l| l.contains("more words at the end")),
        "{s:#?}"
    );
}

#[test]
fn a_scrolled_up_view_holds_still_while_streaming_and_says_so() {
    let now = Instant::now();
    let mut t = numbered(30);
    screen(&t, 40, 6, now);
    t.scroll_up(10, now);
    let before = screen(&t, 40, 6, now);
    for i in 0..50 {
        t.text_delta(StepId(1), &format!("streamed line {i}\n\n"));
    }
    let after = screen(&t, 40, 6, now);
    assert_eq!(before[..5], after[..5], "the view must not jump");
    // The marker is for the pane's border: every row of the view is the transcript's own.
    assert!(!after[5].contains("below"), "{after:#?}");
    let marker = t.scroll_marker(6, now).unwrap_or_default();
    assert!(marker.contains("new output below"), "{marker}");
    t.follow();
    assert!(
        screen(&t, 40, 6, now)
            .iter()
            .any(|l| l.contains("streamed line 49"))
    );
}

#[test]
fn the_scroll_marker_says_how_much_is_below_and_goes_when_pinned() {
    let now = Instant::now();
    let mut t = numbered(30);
    screen(&t, 40, 6, now);
    assert_eq!(
        t.scroll_marker(6, now),
        None,
        "following the end: no marker"
    );
    t.scroll_to_start(now);
    let marker = t.scroll_marker(6, now).unwrap_or_default();
    let below: usize = marker
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!(
        marker.contains("more below · End follows") && below > 20 && below < 30,
        "{marker}"
    );
    t.follow();
    assert_eq!(t.scroll_marker(6, now), None);
}

#[test]
fn scrolling_back_down_to_the_end_pins_again() {
    let now = Instant::now();
    let mut t = numbered(30);
    screen(&t, 40, 6, now);
    t.scroll_up(4, now);
    assert_ne!(t.scroll(), Scroll::Pinned);
    t.scroll_down(100, now);
    assert_eq!(t.scroll(), Scroll::Pinned);
    t.scroll_up(1000, now);
    assert_eq!(screen(&t, 40, 6, now)[0], "› message 0");
}

#[test]
fn resize_reflows_without_losing_or_duplicating_lines() {
    let now = Instant::now();
    let mut t = Transcript::new();
    let words: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
    t.push_user(&words.join(" "), &[], &[]);
    let read = |t: &Transcript, w: u16| -> String { screen(t, w, 40, now).join(" ") };
    let wide = read(&t, 80);
    let narrow = read(&t, 30);
    let wide_again = read(&t, 80);
    for w in &words {
        let needle = format!(" {w} ");
        assert_eq!(
            format!(" {narrow} ").matches(&needle).count(),
            1,
            "{w} at 30 columns"
        );
    }
    assert_eq!(wide, wide_again);
}

#[test]
fn only_entries_on_screen_are_laid_out() {
    let now = Instant::now();
    let mut t = Transcript::new();
    for i in 0..10_000 {
        t.assistant_message(StepId(i), &format!("answer **{i}**"), "");
    }
    t.jump_to(5000, now);
    let s = screen(&t, 60, 10, now);
    assert!(s[0].contains("answer 5000"), "{s:#?}");
    let laid_out = t.entries.iter().filter(|e| e.is_laid_out()).count();
    assert!(laid_out < 40, "{laid_out} entries laid out for one screen");
}
