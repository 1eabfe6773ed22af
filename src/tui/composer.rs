//! The input box: multi-line text with a cursor, history on Up/Down, and paste kept whole.
//! Enter sends; Alt+Enter, Shift+Enter or Ctrl+J insert a newline. The app decides what a sent
//! message becomes (a slash command, a submit, or a queued message). Images attached to the
//! message (Ctrl+V, a pasted image path) wait above the text as chips, one a row; Backspace at
//! the start of the text removes the last one. A large paste shows as a placeholder
//! (`[pasted 600 lines #1]`) that becomes the pasted text again when the message is sent (or
//! taken whole: Ctrl+G, Ctrl+C, a queued message); the placeholder deleted, the paste is gone.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};
use unicode_width::UnicodeWidthChar;

use crate::paste::PendingImage;
use crate::tui::theme;

/// Rows of text the box grows to before it scrolls.
const MAX_ROWS: usize = 8;
/// Image chips shown at most; more are summed up on the last chip row.
const MAX_CHIP_ROWS: usize = 3;
/// A paste of more lines than this (or more characters than `COLLAPSE_CHARS`) is shown as a
/// placeholder: the box stays readable, and the text is sent whole.
const COLLAPSE_LINES: usize = 12;
const COLLAPSE_CHARS: usize = 2_000;

#[derive(Debug, Default)]
pub struct Composer {
    text: String,
    /// Byte offset of the cursor in `text`.
    cursor: usize,
    history: Vec<String>,
    /// Position in `history` while browsing it; `None` when editing the draft.
    browsing: Option<usize>,
    draft: String,
    /// Images attached to the message being written, in the order attached.
    images: Vec<PendingImage>,
    /// Large pastes shown as placeholders: (placeholder, pasted text).
    pastes: Vec<(String, String)>,
}

/// What a key did to the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    Ignored,
    Edited,
    Submit(String),
}

impl Composer {
    /// A composer whose Up brings back `history` (oldest first) before this session's.
    pub fn with_history(history: Vec<String>) -> Self {
        Self {
            history,
            ..Self::default()
        }
    }

    /// The text as shown (a large paste as its placeholder).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as it will be sent: every placeholder still in it is its pasted text again.
    pub fn full_text(&self) -> String {
        let mut text = self.text.clone();
        for (placeholder, pasted) in &self.pastes {
            if let Some(at) = text.find(placeholder.as_str()) {
                text.replace_range(at..at + placeholder.len(), pasted);
            }
        }
        text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Attaches an image to the message being written (a chip above the text).
    pub fn attach(&mut self, image: PendingImage) {
        self.images.push(image);
    }

    pub fn images(&self) -> &[PendingImage] {
        &self.images
    }

    /// The images of the message being sent; the composer has none after.
    pub fn take_images(&mut self) -> Vec<PendingImage> {
        std::mem::take(&mut self.images)
    }

    /// Byte offset of the cursor in the text.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Puts `with` in place of `range` (a chosen `@` file) and the cursor after it.
    pub fn replace_range(&mut self, range: std::ops::Range<usize>, with: &str) {
        if range.end > self.text.len() || !self.text.is_char_boundary(range.start) {
            return;
        }
        self.text.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
        self.browsing = None;
    }

    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.browsing = None;
        self.pastes.clear();
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = key
            .modifiers
            .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if newline => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('u') if ctrl => {
                let start = self.line_start();
                self.text.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Char('w') if ctrl => self.delete_word(),
            KeyCode::Char(_) if ctrl || key.modifiers.contains(KeyModifiers::ALT) => {
                return ComposerAction::Ignored;
            }
            KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            // At the start of the text there is nothing to delete but the chip above it.
            KeyCode::Backspace if self.cursor == 0 && !self.images.is_empty() => {
                self.images.pop();
            }
            KeyCode::Backspace => {
                if let Some(prev) = self.prev_boundary() {
                    self.text.drain(prev..self.cursor);
                    self.cursor = prev;
                }
            }
            KeyCode::Delete => {
                if let Some(next) = self.next_boundary() {
                    self.text.drain(self.cursor..next);
                }
            }
            KeyCode::Left => self.cursor = self.prev_boundary().unwrap_or(self.cursor),
            KeyCode::Right => self.cursor = self.next_boundary().unwrap_or(self.cursor),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up if self.text[..self.cursor].contains('\n') => self.move_vertically(-1),
            KeyCode::Down if self.text[self.cursor..].contains('\n') => self.move_vertically(1),
            KeyCode::Up => return self.history_prev(),
            KeyCode::Down => return self.history_next(),
            _ => return ComposerAction::Ignored,
        }
        ComposerAction::Edited
    }

    /// Inserts pasted text whole (line endings normalised), however long.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.lines().count();
        if lines <= COLLAPSE_LINES && text.chars().count() <= COLLAPSE_CHARS {
            return self.insert(&text);
        }
        let size = if lines > 1 {
            format!("{lines} lines")
        } else {
            format!("{} characters", text.chars().count())
        };
        let placeholder = format!("[pasted {size} #{}]", self.pastes.len() + 1);
        self.insert(&placeholder);
        self.pastes.push((placeholder, text));
    }

    fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.browsing = None;
    }

    /// Sends the text; an image alone is a message too (its text is empty). The app takes
    /// the images with `take_images` (a `/command` leaves them for the next message).
    fn submit(&mut self) -> ComposerAction {
        if self.text.trim().is_empty() && self.images.is_empty() {
            return ComposerAction::Ignored;
        }
        let text = self.full_text();
        self.text.clear();
        self.pastes.clear();
        self.cursor = 0;
        self.browsing = None;
        if self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        ComposerAction::Submit(text)
    }

    /// Keeps `text` in the history (Up brings it back) without sending it.
    pub fn remember(&mut self, text: &str) {
        if self.history.last().map(String::as_str) != Some(text) {
            self.history.push(text.to_string());
        }
    }

    fn history_prev(&mut self) -> ComposerAction {
        let index = match self.browsing {
            None if self.history.is_empty() => return ComposerAction::Ignored,
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
            Some(i) => i.saturating_sub(1),
        };
        self.show_history(Some(index));
        ComposerAction::Edited
    }

    fn history_next(&mut self) -> ComposerAction {
        let Some(i) = self.browsing else {
            return ComposerAction::Ignored;
        };
        if i + 1 < self.history.len() {
            self.show_history(Some(i + 1));
        } else {
            let draft = std::mem::take(&mut self.draft);
            self.show_history(None);
            self.text = draft;
            self.cursor = self.text.len();
        }
        ComposerAction::Edited
    }

    fn show_history(&mut self, index: Option<usize>) {
        if let Some(text) = index.and_then(|i| self.history.get(i)) {
            self.text = text.clone();
            self.cursor = self.text.len();
        }
        self.browsing = index;
    }

    fn prev_boundary(&self) -> Option<usize> {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map(|(i, _)| i)
    }

    fn next_boundary(&self) -> Option<usize> {
        self.text[self.cursor..]
            .chars()
            .next()
            .map(|c| self.cursor + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        self.text.drain(start..self.cursor);
        self.cursor = start;
    }

    fn move_vertically(&mut self, delta: isize) {
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let target_start = if delta < 0 {
            let start = self.line_start();
            self.text[..start.saturating_sub(1)]
                .rfind('\n')
                .map_or(0, |i| i + 1)
        } else {
            self.line_end() + 1
        };
        let line_end = self.text[target_start..]
            .find('\n')
            .map_or(self.text.len(), |i| target_start + i);
        let line = &self.text[target_start..line_end];
        self.cursor = target_start
            + line
                .char_indices()
                .nth(column)
                .map_or(line.len(), |(i, _)| i);
    }

    /// The text broken into rows of at most `width` columns, and the cursor's (row, column).
    fn rows(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(1);
        let mut rows = vec![String::new()];
        let mut col = 0;
        let mut cursor = (0, 0);
        for (i, c) in self.text.char_indices() {
            if i == self.cursor {
                cursor = (rows.len() - 1, col);
            }
            if c == '\n' {
                rows.push(String::new());
                col = 0;
                continue;
            }
            // Control characters are kept in the message but shown as one visible cell each,
            // so they cannot move the terminal's cursor.
            let c = match c {
                '\t' => ' ',
                c if c.is_control() => '\u{FFFD}',
                c => c,
            };
            let cw = c.width().unwrap_or(0);
            if col + cw > width {
                rows.push(String::new());
                col = 0;
                if i == self.cursor {
                    cursor = (rows.len() - 1, 0);
                }
            }
            if let Some(row) = rows.last_mut() {
                row.push(c);
            }
            col += cw;
        }
        if self.cursor >= self.text.len() {
            if col >= width {
                rows.push(String::new());
                col = 0;
            }
            cursor = (rows.len() - 1, col);
        }
        (rows, cursor)
    }

    /// Rows the box needs at `width` (borders included).
    pub fn wanted_height(&self, width: u16) -> u16 {
        let (rows, _) = self.rows(usize::from(width.saturating_sub(2)));
        (rows.len().clamp(1, MAX_ROWS) + self.chip_rows()) as u16 + 2
    }

    fn chip_rows(&self) -> usize {
        self.images.len().min(MAX_CHIP_ROWS)
    }

    /// The chips, one a row: `[image] shot.png (1.2 MB, 800×600)`; the last row says how to
    /// remove one (and how many more there are when they do not all fit).
    fn chip_lines(&self) -> Vec<Line<'static>> {
        let shown = self.chip_rows();
        let mut lines: Vec<Line<'static>> = self
            .images
            .iter()
            .take(shown)
            .map(|image| {
                Line::from(vec![
                    Span::styled("[image]", theme::bold()),
                    Span::raw(format!(" {}", image.label())),
                ])
            })
            .collect();
        if let Some(last) = lines.last_mut() {
            let more = self.images.len() - shown;
            let hint = if more > 0 {
                format!("  +{more} more · Backspace at the start removes the last")
            } else {
                "  · Backspace at the start removes it".to_string()
            };
            last.push_span(Span::styled(hint, theme::dim()));
        }
        lines
    }

    /// Draws the box; returns where the terminal cursor goes when it has focus.
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        focused: bool,
        title: &str,
        read_only: Option<&str>,
    ) -> Option<Position> {
        let border = if focused {
            theme::border_focused()
        } else {
            theme::border()
        };
        let block = Block::bordered()
            .border_style(border)
            .title(Span::styled(title.to_string(), theme::bold()));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return None;
        }
        if let Some(hint) = read_only {
            let line = Line::styled(hint.to_string(), theme::dim());
            buf.set_line(inner.x, inner.y, &line, inner.width);
            return None;
        }
        let chips = self.chip_lines();
        // The text keeps at least one row; chips take what is left above it.
        let chip_rows = chips.len().min(usize::from(inner.height.saturating_sub(1)));
        for (i, line) in chips.iter().take(chip_rows).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
        let inner = Rect {
            y: inner.y + chip_rows as u16,
            height: inner.height - chip_rows as u16,
            ..inner
        };
        if self.text.is_empty() {
            let hint = "Ask cairn… Enter send · Alt+Enter newline · /help · ? keys";
            buf.set_line(
                inner.x,
                inner.y,
                &Line::styled(hint, theme::dim()),
                inner.width,
            );
            return focused.then_some(Position::new(inner.x, inner.y));
        }
        let (rows, (crow, ccol)) = self.rows(usize::from(inner.width));
        let visible = usize::from(inner.height);
        let first = (crow + 1).saturating_sub(visible);
        for (i, row) in rows.iter().skip(first).take(visible).enumerate() {
            buf.set_line(
                inner.x,
                inner.y + i as u16,
                &Line::raw(row.as_str()),
                inner.width,
            );
        }
        let x = inner.x + (ccol as u16).min(inner.width.saturating_sub(1));
        let y = inner.y + (crow - first) as u16;
        focused.then_some(Position::new(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(c: &mut Composer, code: KeyCode, modifiers: KeyModifiers) -> ComposerAction {
        c.handle_key(KeyEvent::new(code, modifiers))
    }

    fn typed(c: &mut Composer, s: &str) {
        for ch in s.chars() {
            press(c, KeyCode::Char(ch), KeyModifiers::NONE);
        }
    }

    #[test]
    fn enter_sends_and_alt_or_shift_enter_breaks_the_line() {
        let mut c = Composer::default();
        typed(&mut c, "one");
        press(&mut c, KeyCode::Enter, KeyModifiers::ALT);
        typed(&mut c, "two");
        press(&mut c, KeyCode::Enter, KeyModifiers::SHIFT);
        typed(&mut c, "three");
        assert_eq!(
            press(&mut c, KeyCode::Enter, KeyModifiers::NONE),
            ComposerAction::Submit("one\ntwo\nthree".into())
        );
        assert!(c.is_empty());
        assert_eq!(
            press(&mut c, KeyCode::Enter, KeyModifiers::NONE),
            ComposerAction::Ignored,
            "nothing to send"
        );
    }

    #[test]
    fn up_and_down_walk_the_history_and_restore_the_draft() {
        let mut c = Composer::default();
        for m in ["first", "second"] {
            typed(&mut c, m);
            press(&mut c, KeyCode::Enter, KeyModifiers::NONE);
        }
        typed(&mut c, "dra");
        press(&mut c, KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(c.text(), "second");
        press(&mut c, KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(c.text(), "first");
        press(&mut c, KeyCode::Down, KeyModifiers::NONE);
        press(&mut c, KeyCode::Down, KeyModifiers::NONE);
        assert_eq!(c.text(), "dra");
    }

    #[test]
    fn a_huge_paste_is_kept_whole_behind_a_placeholder() {
        let mut c = Composer::default();
        let big: String = (0..20_000).map(|i| format!("line {i}\r\n")).collect();
        c.paste(&big);
        assert_eq!(c.text(), "[pasted 20000 lines #1]");
        assert_eq!(c.full_text(), big.replace("\r\n", "\n"));
        assert_eq!(c.wanted_height(40), 3, "one row: the box stays small");
        assert_eq!(
            c.handle_key(KeyEvent::from(KeyCode::Enter)),
            ComposerAction::Submit(big.replace("\r\n", "\n"))
        );
        // Deleting the placeholder deletes the paste.
        c.paste(&big);
        c.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(c.full_text(), "");
    }

    #[test]
    fn pasted_control_characters_are_kept_but_shown_harmlessly() {
        let mut c = Composer::default();
        c.paste("a\x1b[2Jb\tc");
        assert_eq!(c.text(), "a\x1b[2Jb\tc");
        let (rows, cursor) = c.rows(40);
        assert_eq!(rows, ["a\u{FFFD}[2Jb c"]);
        assert_eq!(cursor, (0, 8));
    }

    #[test]
    fn editing_keys_move_by_characters_not_bytes() {
        let mut c = Composer::default();
        typed(&mut c, "héllo wörld");
        press(&mut c, KeyCode::Left, KeyModifiers::NONE);
        press(&mut c, KeyCode::Backspace, KeyModifiers::NONE);
        assert_eq!(c.text(), "héllo wörd");
        press(&mut c, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(c.text(), "héllo d");
    }
}
