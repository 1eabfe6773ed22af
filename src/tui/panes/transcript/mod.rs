//! The transcript pane: every message, answer, tool card and notice of the session, in order.
//! Virtualised: the view is anchored at an (entry, line) pair, so drawing a frame lays out only
//! the entries on screen, whatever the length of the session. Pinned to the bottom while
//! streaming unless the user scrolled up; then the view holds still and says more is below.

pub mod entry;
pub mod render;
mod selection;
pub mod stream;
pub mod table;

use std::cell::Cell;
use std::collections::HashMap;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use self::entry::{Entry, EntryKind, LayoutKey, NoticeLevel};
use self::stream::StreamText;
use crate::bus::{CallId, StepId};
use crate::tui::panes::cards::ToolCard;
use crate::tui::theme;

/// Columns taken by the gutter (entry marks, selection bar).
const GUTTER: u16 = 2;

/// Where the view is: following the end, or its top line held at an entry's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    Pinned,
    At { entry: usize, line: usize },
}

#[derive(Debug)]
pub struct Transcript {
    entries: Vec<Entry>,
    cards: HashMap<CallId, usize>,
    /// Cards still running (they need animation frames).
    running: usize,
    scroll: Scroll,
    selected: Option<usize>,
    expand_reasoning: bool,
    /// Something changed below the view while the user was scrolled up.
    unseen_below: bool,
    /// Size of the text area at the last frame (scrolling works in those units).
    view: Cell<(u16, u16)>,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::new()
    }
}

impl Transcript {
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            cards: HashMap::new(),
            running: 0,
            scroll: Scroll::Pinned,
            selected: None,
            expand_reasoning: false,
            unseen_below: false,
            view: Cell::new((80, 20)),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// True once anything but a notice is in it: a message, an answer, a card.
    pub fn has_messages(&self) -> bool {
        self.entries
            .iter()
            .any(|entry| !matches!(entry.kind, EntryKind::Notice { .. }))
    }

    pub fn scroll(&self) -> Scroll {
        self.scroll
    }

    pub fn clear(&mut self) {
        *self = Self {
            view: self.view.clone(),
            ..Self::new()
        };
    }

    fn push(&mut self, kind: EntryKind) -> usize {
        self.entries.push(Entry::new(kind));
        self.changed_below();
        self.entries.len() - 1
    }

    fn changed_below(&mut self) {
        if self.scroll != Scroll::Pinned {
            self.unseen_below = true;
        }
    }

    /// A user message, with a chip for each image and each file sent with it.
    pub fn push_user(&mut self, text: &str, images: &[crate::bus::ImageChip], files: &[String]) {
        self.push(EntryKind::User {
            text: text.to_string(),
            images: images
                .iter()
                .map(|i| crate::content::image_label(&i.name, i.bytes, i.width, i.height))
                .collect(),
            files: files.to_vec(),
        });
    }

    /// A notice that takes the place of the last entry when that is a notice starting with
    /// `prefix` too: a run of the same kind of change (mode switches) is one line, the last.
    pub fn replace_notice(&mut self, prefix: &str, text: &str, level: NoticeLevel) {
        let same = self.entries.last().is_some_and(
            |last| matches!(&last.kind, EntryKind::Notice { text, .. } if text.starts_with(prefix)),
        );
        if same {
            self.entries.pop();
        }
        self.push_notice(text, level);
    }

    /// A hook's one-line card (it denied, changed a call's input or failed).
    pub fn push_hook(&mut self, note: &crate::bus::HookNote) {
        self.push(EntryKind::Hook(note.clone()));
    }

    pub fn push_notice(&mut self, text: &str, level: NoticeLevel) {
        self.push(EntryKind::Notice {
            text: text.to_string(),
            level,
        });
    }

    /// The assistant entry still streaming for `step`, if it is the last entry.
    fn streaming(&mut self, step: StepId) -> Option<&mut Entry> {
        let index = self.streaming_index()?;
        let entry = &mut self.entries[index];
        match &entry.kind {
            EntryKind::Assistant { step: t, .. } if *t == step => Some(entry),
            _ => None,
        }
    }

    /// The answer still streaming: the last entry, or the last before the notices that came
    /// in while it streamed (a warning must not split an answer in two).
    fn streaming_index(&self) -> Option<usize> {
        let index = self
            .entries
            .iter()
            .rposition(|entry| !entry.kind.is_notice())?;
        matches!(
            self.entries[index].kind,
            EntryKind::Assistant {
                streaming: true,
                ..
            }
        )
        .then_some(index)
    }

    fn streaming_or_new(&mut self, step: StepId) -> &mut Entry {
        let index = match self.streaming(step).is_some() {
            true => self.streaming_index(),
            false => None,
        };
        let index = match index {
            Some(index) => index,
            None => self.push(EntryKind::Assistant {
                step,
                text: StreamText::default(),
                reasoning: String::new(),
                streaming: true,
            }),
        };
        self.changed_below();
        &mut self.entries[index]
    }

    pub fn text_delta(&mut self, step: StepId, delta: &str) {
        if let EntryKind::Assistant { text, .. } = self.streaming_or_new(step).kind_mut() {
            text.push(delta);
        }
    }

    pub fn reasoning_delta(&mut self, step: StepId, delta: &str) {
        if let EntryKind::Assistant { reasoning, .. } = self.streaming_or_new(step).kind_mut() {
            reasoning.push_str(delta);
        }
    }

    /// The complete assistant message: closes the streaming entry (taking the final text as
    /// the truth), or adds the message when it was not streamed (resume, replay).
    pub fn assistant_message(&mut self, step: StepId, full_text: &str, full_reasoning: &str) {
        if let Some(entry) = self.streaming(step) {
            if let EntryKind::Assistant {
                text,
                reasoning,
                streaming,
                ..
            } = entry.kind_mut()
            {
                if text.text() != full_text {
                    *text = StreamText::new(full_text);
                }
                if !full_reasoning.is_empty() {
                    *reasoning = full_reasoning.to_string();
                }
                *streaming = false;
            }
            return;
        }
        if full_text.trim().is_empty() && full_reasoning.trim().is_empty() {
            return;
        }
        self.push(EntryKind::Assistant {
            step,
            text: StreamText::new(full_text),
            reasoning: full_reasoning.to_string(),
            streaming: false,
        });
    }

    /// Drops the answer still streaming: the request is being retried and the reply starts
    /// again from its first word (the retry's notice says why).
    pub fn discard_streaming(&mut self) {
        let Some(index) = self.streaming_index() else {
            return;
        };
        // Only notices follow it, never cards: the card indices stay right.
        self.entries.remove(index);
        match self.selected {
            Some(selected) if selected == index => self.selected = None,
            Some(selected) if selected > index => self.selected = Some(selected - 1),
            _ => {}
        }
        if matches!(self.scroll, Scroll::At { entry, .. } if entry >= index) {
            self.scroll = Scroll::Pinned;
        }
    }

    /// Marks every streaming entry finished (turn ended, interrupted).
    pub fn end_streaming(&mut self) {
        if let Some(index) = self.streaming_index()
            && let EntryKind::Assistant { streaming, .. } = self.entries[index].kind_mut()
        {
            *streaming = false;
        }
    }

    pub fn push_card(&mut self, card: ToolCard) {
        let call = card.call.clone();
        self.running += usize::from(card.is_running());
        let index = self.push(EntryKind::Tool(Box::new(card)));
        self.cards.insert(call, index);
    }

    /// Changes the card of `call`, if there is one.
    pub fn update_card(&mut self, call: &CallId, f: impl FnOnce(&mut ToolCard)) {
        let Some(&index) = self.cards.get(call) else {
            return;
        };
        if let Some(entry) = self.entries.get_mut(index)
            && let EntryKind::Tool(card) = entry.kind_mut()
        {
            let was_running = card.is_running();
            f(card);
            match (was_running, card.is_running()) {
                (true, false) => self.running -= 1,
                (false, true) => self.running += 1,
                _ => {}
            }
        }
        if self.scroll != Scroll::Pinned && !self.is_above_view(index) {
            self.unseen_below = true;
        }
    }

    pub fn card(&self, call: &CallId) -> Option<&ToolCard> {
        let index = *self.cards.get(call)?;
        match &self.entries.get(index)?.kind {
            EntryKind::Tool(card) => Some(card),
            _ => None,
        }
    }

    /// True while any card is running (the spinner needs frames).
    pub fn is_animating(&self) -> bool {
        self.running > 0
    }

    pub fn toggle_reasoning(&mut self) {
        self.expand_reasoning = !self.expand_reasoning;
    }

    // ----- layout -----

    fn key(&self) -> LayoutKey {
        let (width, _) = self.view.get();
        LayoutKey {
            width: usize::from(width.saturating_sub(GUTTER)).max(1),
            expand_reasoning: self.expand_reasoning,
        }
    }

    fn height(&self, index: usize, now: Instant) -> usize {
        self.entries[index].height(self.key(), now)
    }

    /// The top line of the view when it follows the end.
    fn bottom_anchor(&self, now: Instant) -> (usize, usize) {
        let mut remaining = usize::from(self.view.get().1);
        for index in (0..self.entries.len()).rev() {
            let h = self.height(index, now);
            if h >= remaining {
                return (index, h - remaining);
            }
            remaining -= h;
        }
        (0, 0)
    }

    /// The current top line of the view.
    fn top(&self, now: Instant) -> (usize, usize) {
        match self.scroll {
            Scroll::Pinned => self.bottom_anchor(now),
            Scroll::At { entry, line } => {
                let bottom = self.bottom_anchor(now);
                if (entry, line) >= bottom {
                    bottom
                } else {
                    (entry, line)
                }
            }
        }
    }

    fn is_above_view(&self, index: usize) -> bool {
        match self.scroll {
            Scroll::Pinned => false,
            Scroll::At { entry, .. } => index < entry,
        }
    }

    fn set_top(&mut self, top: (usize, usize), now: Instant) {
        if top >= self.bottom_anchor(now) {
            self.scroll = Scroll::Pinned;
            self.unseen_below = false;
        } else {
            self.scroll = Scroll::At {
                entry: top.0,
                line: top.1,
            };
        }
    }

    pub fn scroll_up(&mut self, lines: usize, now: Instant) {
        let (mut entry, mut line) = self.top(now);
        for _ in 0..lines {
            if line > 0 {
                line -= 1;
            } else if entry > 0 {
                entry -= 1;
                line = self.height(entry, now).saturating_sub(1);
            } else {
                break;
            }
        }
        if !self.entries.is_empty() {
            self.set_top((entry, line), now);
        }
    }

    pub fn scroll_down(&mut self, lines: usize, now: Instant) {
        let Scroll::At {
            mut entry,
            mut line,
        } = self.scroll
        else {
            return;
        };
        for _ in 0..lines {
            if line + 1 < self.height(entry, now) {
                line += 1;
            } else if entry + 1 < self.entries.len() {
                entry += 1;
                line = 0;
            } else {
                break;
            }
        }
        self.set_top((entry, line), now);
    }

    pub fn page(&self) -> usize {
        usize::from(self.view.get().1).saturating_sub(2).max(1)
    }

    pub fn scroll_to_start(&mut self, now: Instant) {
        if !self.entries.is_empty() {
            self.set_top((0, 0), now);
        }
    }

    pub fn follow(&mut self) {
        self.scroll = Scroll::Pinned;
        self.unseen_below = false;
    }

    /// Shows entry `index` from its first line.
    pub fn jump_to(&mut self, index: usize, now: Instant) {
        if index < self.entries.len() {
            self.set_top((index, 0), now);
        }
    }

    // ----- drawing -----

    /// Draws the visible slice into `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant) {
        if area.width <= GUTTER || area.height == 0 {
            return;
        }
        self.view.set((area.width, area.height));
        let height = usize::from(area.height);
        let mut y = area.y;
        for (index, lines, first) in self.visible(height, now) {
            let entry = &self.entries[index];
            let selected = self.selected == Some(index);
            for (n, line) in lines.iter().enumerate() {
                let gutter = if selected {
                    Span::styled("▌ ", theme::selection_bar())
                } else if first && n == 0 {
                    entry.mark()
                } else {
                    Span::raw("  ")
                };
                buf.set_span(area.x, y, &gutter, GUTTER);
                buf.set_line(area.x + GUTTER, y, line, area.width - GUTTER);
                y += 1;
            }
        }
    }

    /// The lines on screen, top to bottom, per entry: (entry, lines, starts at its first line).
    /// Following the end, entries are laid out from the bottom up and only as far as the
    /// screen reaches.
    fn visible(&self, height: usize, now: Instant) -> Vec<(usize, Vec<Line<'static>>, bool)> {
        let key = self.key();
        let mut parts = Vec::new();
        let from_bottom = match self.scroll {
            Scroll::Pinned => true,
            Scroll::At { entry, line } => (entry, line) >= self.bottom_anchor(now),
        };
        if from_bottom {
            let mut remaining = height;
            for index in (0..self.entries.len()).rev() {
                if remaining == 0 {
                    break;
                }
                let (lines, complete) = self.entries[index].last_lines(key, now, remaining);
                remaining -= lines.len();
                parts.push((index, lines, complete));
            }
            parts.reverse();
            return parts;
        }
        let Scroll::At {
            entry: mut index,
            line: mut skip,
        } = self.scroll
        else {
            return parts;
        };
        let mut remaining = height;
        while index < self.entries.len() && remaining > 0 {
            let mut lines = Vec::new();
            self.entries[index].collect(key, now, skip, remaining, &mut lines);
            remaining -= lines.len();
            parts.push((index, lines, skip == 0));
            index += 1;
            skip = 0;
        }
        parts
    }

    /// While the view is scrolled away from the end: how much is below and how to get back,
    /// for the pane's bottom border, so it never covers a line of the transcript. `height`
    /// is the rows the transcript is drawn in.
    pub fn scroll_marker(&self, height: u16, now: Instant) -> Option<String> {
        if self.scroll == Scroll::Pinned || self.entries.is_empty() {
            return None;
        }
        if self.unseen_below {
            return Some(" ↓ new output below · End follows ".into());
        }
        let shown = self.visible(usize::from(height), now);
        let below = shown
            .last()
            .map_or(0, |(index, ..)| self.entries.len() - 1 - index);
        Some(match below {
            0 => " ↓ more below · End follows ".into(),
            n => format!(" ↓ {n} more below · End follows "),
        })
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
