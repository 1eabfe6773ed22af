//! Word wrapping of styled text to a column width, with a prefix on the first line and
//! another on continuation lines (list markers, quote bars, gutters). Widths are display
//! columns (`unicode-width`), so wide characters and emoji never overflow a pane.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Text safe to put in terminal cells: a control character would move the real cursor and
/// tear the screen, so tabs become spaces, carriage returns go, and other control characters
/// (escape, bell, …) show as `�`. Newlines are kept for the caller to break on.
pub fn clean(s: &str) -> Cow<'_, str> {
    let is_control = |c: char| c.is_control() && c != '\n';
    if !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            '\r' => {}
            c if is_control(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Display width of a string in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

/// Appends `text` to `line`, merging into the last span when the style matches.
fn push(line: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = line.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    line.push(Span::styled(text.to_string(), style));
}

struct Wrapper<'p> {
    width: usize,
    cont_prefix: &'p [Span<'static>],
    out: Vec<Line<'static>>,
    line: Vec<Span<'static>>,
    used: usize,
    prefix_width: usize,
    has_content: bool,
}

impl<'p> Wrapper<'p> {
    fn new(width: usize, first: &[Span<'static>], cont: &'p [Span<'static>]) -> Self {
        Self {
            width: width.max(1),
            cont_prefix: cont,
            out: Vec::new(),
            line: first.to_vec(),
            used: spans_width(first),
            prefix_width: spans_width(first),
            has_content: false,
        }
    }

    fn break_line(&mut self) {
        let line = std::mem::replace(&mut self.line, self.cont_prefix.to_vec());
        self.out.push(Line::from(line));
        self.used = spans_width(self.cont_prefix);
        self.prefix_width = self.used;
        self.has_content = false;
    }

    fn room(&self) -> usize {
        self.width.saturating_sub(self.used)
    }

    fn space(&mut self, text: &str, style: Style) {
        // Spaces at the start of a wrapped line are dropped; a space that does not fit ends
        // the line instead of being carried over.
        if !self.has_content
            && self.used > 0
            && self.used == self.prefix_width
            && !self.out.is_empty()
        {
            return;
        }
        let w = width(text);
        if w <= self.room() {
            push(&mut self.line, text, style);
            self.used += w;
        } else {
            self.break_line();
        }
    }

    fn word(&mut self, text: &str, style: Style) {
        let w = width(text);
        if w <= self.room() {
            push(&mut self.line, text, style);
            self.used += w;
            self.has_content = true;
            return;
        }
        if self.has_content && w <= self.width.saturating_sub(spans_width(self.cont_prefix)) {
            self.break_line();
            self.word(text, style);
            return;
        }
        self.chars(text, style);
    }

    /// Hard-breaks `text` wherever the line is full (long words, code).
    fn chars(&mut self, text: &str, style: Style) {
        let mut start = 0;
        let mut run = 0;
        for (i, c) in text.char_indices() {
            let cw = c.width().unwrap_or(0);
            if cw > self.room().saturating_sub(run) && (self.has_content || run > 0) {
                push(&mut self.line, &text[start..i], style);
                self.used += run;
                self.break_line();
                start = i;
                run = 0;
            }
            run += cw;
            if cw > 0 {
                self.has_content = true;
            }
        }
        push(&mut self.line, &text[start..], style);
        self.used += run;
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        let line = std::mem::take(&mut self.line);
        self.out.push(Line::from(line));
        self.out
    }
}

/// Word-wraps `spans` to `width` columns. `\n` forces a break. Always returns at least one
/// line (the prefix alone for empty input).
pub fn wrap(
    spans: &[Span<'static>],
    width: usize,
    first_prefix: &[Span<'static>],
    cont_prefix: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut w = Wrapper::new(width, first_prefix, cont_prefix);
    for span in spans {
        let style = span.style;
        let text = clean(&span.content);
        let mut rest: &str = &text;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('\n') {
                w.break_line();
                rest = after;
                continue;
            }
            let is_space = rest.starts_with(' ') || rest.starts_with('\t');
            let end = rest
                .char_indices()
                .find(|&(_, c)| c == '\n' || ((c == ' ' || c == '\t') != is_space))
                .map_or(rest.len(), |(i, _)| i);
            let (token, after) = rest.split_at(end);
            if is_space {
                w.space(&token.replace('\t', "    "), style);
            } else {
                w.word(token, style);
            }
            rest = after;
        }
    }
    w.finish()
}

/// Breaks `spans` at exactly `width` columns with no word logic (code, diffs, command output).
pub fn hard_wrap(
    spans: &[Span<'static>],
    width: usize,
    first_prefix: &[Span<'static>],
    cont_prefix: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut w = Wrapper::new(width, first_prefix, cont_prefix);
    for span in spans {
        let text = clean(&span.content);
        w.chars(&text, span.style);
    }
    w.finish()
}

/// Cuts `s` to at most `max` columns, ending with `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    let s = clean(s);
    if width(&s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > max {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

/// The plain text of each line (tests compare layouts by it).
#[cfg(test)]
pub(crate) fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_at_the_width_and_continuation_lines_get_their_prefix() {
        let spans = vec![Span::raw("the quick brown fox jumps over")];
        let lines = wrap(&spans, 12, &[Span::raw("• ")], &[Span::raw("  ")]);
        assert_eq!(
            texts(&lines),
            ["• the quick ", "  brown fox ", "  jumps over"]
        );
        assert!(lines.iter().all(|l| l.width() <= 12));
    }

    #[test]
    fn a_word_longer_than_the_line_is_broken() {
        let lines = wrap(&[Span::raw("abcdefghij")], 4, &[], &[]);
        assert_eq!(texts(&lines), ["abcd", "efgh", "ij"]);
    }

    #[test]
    fn wide_characters_never_overflow() {
        let lines = wrap(&[Span::raw("日本語のテキスト")], 5, &[], &[]);
        assert!(lines.iter().all(|l| l.width() <= 5), "{:?}", texts(&lines));
        assert_eq!(texts(&lines).concat(), "日本語のテキスト");
    }

    #[test]
    fn newlines_force_breaks_and_styles_survive() {
        let spans = vec![Span::styled(
            "a\nb",
            Style::default().fg(ratatui::style::Color::Red),
        )];
        let lines = wrap(&spans, 10, &[], &[]);
        assert_eq!(texts(&lines), ["a", "b"]);
        assert_eq!(lines[1].spans[0].style.fg, Some(ratatui::style::Color::Red));
    }

    #[test]
    fn control_characters_never_reach_a_cell() {
        let lines = wrap(&[Span::raw("a\tb\x1b[2Jc\x07d\re")], 40, &[], &[]);
        assert_eq!(texts(&lines), ["a    b\u{FFFD}[2Jc\u{FFFD}de"]);
        assert_eq!(truncate("x\x1by", 10), "x\u{FFFD}y");
        let code = hard_wrap(&[Span::raw("\x1b[31mred")], 40, &[], &[]);
        assert_eq!(texts(&code), ["\u{FFFD}[31mred"]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hi", 6), "hi");
    }
}
