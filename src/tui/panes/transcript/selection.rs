//! What is selected in the transcript (↑ ↓ in its pane), what Enter opens of it, and the
//! text `y` copies.

use std::time::Instant;

use super::Transcript;
use super::entry::{Entry, EntryKind};
use crate::tui::panes::cards::ToolCard;

impl Transcript {
    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    pub fn select_prev(&mut self, now: Instant) {
        let Some(last) = self.entries.len().checked_sub(1) else {
            return;
        };
        let index = self.selected.map_or(last, |s| s.saturating_sub(1));
        self.select(index, now);
    }

    pub fn select_next(&mut self, now: Instant) {
        let Some(last) = self.entries.len().checked_sub(1) else {
            return;
        };
        let index = self.selected.map_or(last, |s| (s + 1).min(last));
        self.select(index, now);
    }

    fn select(&mut self, index: usize, now: Instant) {
        self.selected = Some(index);
        let (top, line) = self.top(now);
        let (_, h) = self.view.get();
        let mut rows = self.height(top, now).saturating_sub(line);
        let mut last_full = top;
        let mut i = top + 1;
        while i < self.entries.len() && rows + self.height(i, now) <= usize::from(h) {
            rows += self.height(i, now);
            last_full = i;
            i += 1;
        }
        if index < top || (index == top && line > 0) || index > last_full {
            self.set_top((index, 0), now);
        }
    }

    /// The card of the selected entry, when it is one.
    pub fn selected_card(&self) -> Option<&ToolCard> {
        match &self.entries.get(self.selected?)?.kind {
            EntryKind::Tool(card) => Some(card),
            _ => None,
        }
    }

    /// Gives the last entry more to open with Enter (see `entry::Details`).
    pub fn set_details(&mut self, label: &'static str, text: String) {
        if let Some(entry) = self.entries.last_mut() {
            entry.set_details(label, text);
        }
    }

    /// Opens or folds the selected web card or entry details; false when the selection has
    /// nothing to open.
    pub fn toggle_selected_card(&mut self) -> bool {
        let Some(entry) = self.selected.and_then(|i| self.entries.get_mut(i)) else {
            return false;
        };
        if entry.toggle_details() {
            return true;
        }
        if !matches!(&entry.kind, EntryKind::Tool(card) if card.is_expandable()) {
            return false;
        }
        if let EntryKind::Tool(card) = entry.kind_mut() {
            card.expanded = !card.expanded;
        }
        true
    }

    pub fn clear_selection(&mut self) {
        self.selected = None;
    }

    /// Text of the selected entry, else of the last assistant answer.
    pub fn copy_text(&self) -> Option<String> {
        if let Some(entry) = self.selected.and_then(|i| self.entries.get(i)) {
            return Some(entry.copy_text());
        }
        self.entries
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EntryKind::Assistant { .. }))
            .map(Entry::copy_text)
    }
}
