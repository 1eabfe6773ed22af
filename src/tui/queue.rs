//! What the user typed while the agent works, shown above the input until it is delivered:
//! messages sent to steer the running request at its next step boundary (Enter), messages held
//! here for after the turn (Ctrl+Q), and the user's own commands (`!cmd`) waiting for the step
//! boundary. Every entry stays separate; Alt+↑/↓ selects one, Enter pulls it back into the
//! input (withdrawn: it is not delivered), Delete withdraws it. After a turn that did not finish
//! (interrupted, failed, denied) the entries wait, paused, until the user sends them.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::paste::PendingImage;
use crate::tui::{theme, wrap};

/// Entries shown at most; the selection scrolls through the rest.
const ROWS: usize = 3;

/// Where an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waits {
    /// Sent (`Steer`): the agent delivers it at the next step boundary.
    NextStep,
    /// Sent (`Shell`): the user's command, run at the next step boundary (or after the
    /// user's command running now).
    Shell,
    /// Held here: sent when the agent is idle (one per idle), unless the queue is paused.
    AfterTurn,
}

/// A message or command waiting for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub id: String,
    /// As typed (a command with its `!` or `!!`).
    pub text: String,
    pub images: Vec<PendingImage>,
    pub waits: Waits,
}

impl Queued {
    /// Whether the agent has it (a withdrawal must ask the agent).
    pub fn sent(&self) -> bool {
        self.waits != Waits::AfterTurn
    }
}

#[derive(Debug)]
pub struct MessageQueue {
    items: VecDeque<Queued>,
    /// The entry Alt+↑/↓ selected.
    selected: Option<usize>,
    /// After a turn that did not finish, nothing is sent on idle until the user says so.
    paused: bool,
    /// Ids unique to this run of the TUI, so log records of resumed sessions stay apart.
    prefix: String,
    next_id: u64,
    /// Entries the user took back after they were sent to the agent, until it confirms
    /// (`Withdrawn`) or says it was too late (`Delivered`).
    withdrawing: Vec<String>,
}

impl Default for MessageQueue {
    fn default() -> Self {
        Self {
            items: VecDeque::new(),
            selected: None,
            paused: false,
            prefix: format!("q{:04x}", fastrand::u16(..)),
            next_id: 0,
            withdrawing: Vec::new(),
        }
    }
}

impl MessageQueue {
    /// The user took back `id`, which the agent already holds: wait for its answer.
    pub fn withdrawing(&mut self, id: &str) {
        self.withdrawing.push(id.to_string());
    }

    /// The agent answered for `id` (withdrawn, or delivered first): true when the user had
    /// taken it back.
    pub fn settle_withdrawal(&mut self, id: &str) -> bool {
        let before = self.withdrawing.len();
        self.withdrawing.retain(|w| w != id);
        self.withdrawing.len() != before
    }

    pub fn new_id(&mut self) -> String {
        self.next_id += 1;
        format!("{}-{}", self.prefix, self.next_id)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.items.iter()
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn push(&mut self, item: Queued) {
        self.items.push_back(item);
    }

    /// The entry left the queue (delivered, started); it is returned when it was there.
    pub fn remove(&mut self, id: &str) -> Option<Queued> {
        let at = self.items.iter().position(|item| item.id == id)?;
        self.selected = match self.selected {
            Some(s) if s == at => None,
            Some(s) if s > at => Some(s - 1),
            other => other,
        };
        self.items.remove(at)
    }

    /// The agent gave these back undelivered: they wait here, paused, for the user.
    pub fn returned(&mut self, ids: &[String]) {
        for item in self.items.iter_mut().filter(|item| ids.contains(&item.id)) {
            item.waits = Waits::AfterTurn;
        }
        self.paused = true;
    }

    /// The turn did not finish: nothing more is sent behind the user's back.
    pub fn pause(&mut self) {
        if !self.items.is_empty() {
            self.paused = true;
        }
    }

    /// The next entry to send on idle: the first held here, unless paused.
    pub fn next_on_idle(&mut self) -> Option<Queued> {
        if self.paused {
            return None;
        }
        self.take_first_held()
    }

    /// The user asks for the next held entry now (Ctrl+Q on an empty input): the queue goes on.
    pub fn resume(&mut self) -> Option<Queued> {
        self.paused = false;
        self.take_first_held()
    }

    /// Un-pauses without sending: the next idle sends the next held entry.
    pub fn resume_later(&mut self) {
        self.paused = false;
    }

    fn take_first_held(&mut self) -> Option<Queued> {
        let at = self.items.iter().position(|item| !item.sent())?;
        let id = self.items.get(at)?.id.clone();
        self.remove(&id)
    }

    pub fn selected(&self) -> Option<&Queued> {
        self.selected.and_then(|at| self.items.get(at))
    }

    /// Alt+↑: the entry before the selected one (from none: the newest).
    pub fn select_prev(&mut self) {
        if self.items.is_empty() {
            return;
        }
        self.selected = Some(match self.selected {
            None => self.items.len() - 1,
            Some(at) => at.saturating_sub(1),
        });
    }

    /// Alt+↓: the entry after it; past the newest, none.
    pub fn select_next(&mut self) {
        self.selected = match self.selected {
            Some(at) if at + 1 < self.items.len() => Some(at + 1),
            _ => None,
        };
    }

    pub fn unselect(&mut self) {
        self.selected = None;
    }

    /// Takes the selected entry out (it is withdrawn).
    pub fn take_selected(&mut self) -> Option<Queued> {
        let id = self.selected()?.id.clone();
        self.remove(&id)
    }

    /// Rows the queue takes above the input: its entries (at most `ROWS`) and, when an entry
    /// is selected or the queue is paused, a line saying what the keys do.
    pub fn height(&self) -> u16 {
        if self.items.is_empty() {
            return 0;
        }
        let legend = self.selected.is_some() || self.paused;
        (self.items.len().min(ROWS) + usize::from(legend)) as u16
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = usize::from(area.width.saturating_sub(1));
        let legend = if self.selected.is_some() {
            Some("Enter: back into the input to edit · Delete: withdraw · Esc: keep it queued")
        } else if self.paused {
            Some("paused, the turn did not finish: Ctrl+Q sends the next · Alt+↑ edits one")
        } else {
            None
        };
        let rows = usize::from(area.height).saturating_sub(usize::from(legend.is_some()));
        // The window follows the selection; without one it shows the oldest entries.
        let first = match self.selected {
            Some(at) if at >= rows => at + 1 - rows,
            _ => 0,
        };
        let mut y = area.y;
        for (at, item) in self.items.iter().enumerate().skip(first).take(rows) {
            let more = if at + 1 == first + rows && self.items.len() > at + 1 {
                format!(" (+{} more)", self.items.len() - at - 1)
            } else {
                String::new()
            };
            let images = match item.images.len() {
                0 => String::new(),
                1 => " [+1 image]".to_string(),
                n => format!(" [+{n} images]"),
            };
            let label = match item.waits {
                Waits::NextStep => "↳ next step",
                Waits::Shell => "↳ runs next",
                Waits::AfterTurn if self.paused => "⏸ queued",
                Waits::AfterTurn => "⏳ after the turn",
            };
            let text = format!("{label}: {}{images}{more}", item.text.replace('\n', " ⏎ "));
            let style = if self.selected == Some(at) {
                theme::selected()
            } else {
                theme::queued()
            };
            let line = Line::styled(wrap::truncate(&text, width), style);
            buf.set_line(area.x + 1, y, &line, area.width.saturating_sub(1));
            y += 1;
        }
        if let Some(legend) = legend {
            let line = Line::styled(wrap::truncate(legend, width), theme::dim());
            buf.set_line(area.x + 1, y, &line, area.width.saturating_sub(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(queue: &mut MessageQueue, text: &str, waits: Waits) -> String {
        let id = queue.new_id();
        queue.push(Queued {
            id: id.clone(),
            text: text.into(),
            images: Vec::new(),
            waits,
        });
        id
    }

    fn texts(queue: &MessageQueue) -> Vec<&str> {
        queue.iter().map(|q| q.text.as_str()).collect()
    }

    #[test]
    fn selection_walks_the_entries_and_taking_one_withdraws_only_it() {
        let mut queue = MessageQueue::default();
        entry(&mut queue, "a", Waits::NextStep);
        entry(&mut queue, "b", Waits::AfterTurn);
        entry(&mut queue, "c", Waits::AfterTurn);
        queue.select_prev();
        assert_eq!(queue.selected().map(|q| q.text.as_str()), Some("c"));
        queue.select_prev();
        queue.select_prev();
        queue.select_prev();
        assert_eq!(queue.selected().map(|q| q.text.as_str()), Some("a"));
        queue.select_next();
        let taken = queue.take_selected().expect("b is selected");
        assert_eq!((taken.text.as_str(), taken.sent()), ("b", false));
        assert_eq!(texts(&queue), ["a", "c"]);
        assert!(queue.selected().is_none());
        queue.select_next();
        assert!(queue.selected().is_none(), "nothing selected stays so");
    }

    #[test]
    fn removing_an_entry_keeps_the_selection_on_the_same_entry() {
        let mut queue = MessageQueue::default();
        let a = entry(&mut queue, "a", Waits::NextStep);
        entry(&mut queue, "b", Waits::AfterTurn);
        queue.select_prev();
        queue.remove(&a);
        assert_eq!(queue.selected().map(|q| q.text.as_str()), Some("b"));
    }

    #[test]
    fn held_entries_go_one_per_idle_in_order_and_a_pause_holds_them_all() {
        let mut queue = MessageQueue::default();
        entry(&mut queue, "steer", Waits::NextStep);
        entry(&mut queue, "one", Waits::AfterTurn);
        entry(&mut queue, "two", Waits::AfterTurn);
        assert_eq!(queue.next_on_idle().map(|q| q.text), Some("one".into()));
        queue.pause();
        assert!(queue.next_on_idle().is_none(), "paused");
        assert_eq!(
            texts(&queue),
            ["steer", "two"],
            "nothing merged, nothing lost"
        );
        assert_eq!(queue.resume().map(|q| q.text), Some("two".into()));
        assert!(!queue.is_paused());
        assert!(
            queue.next_on_idle().is_none(),
            "a sent entry is the agent's to deliver"
        );
    }

    #[test]
    fn returned_entries_become_held_and_pause_the_queue() {
        let mut queue = MessageQueue::default();
        let a = entry(&mut queue, "a", Waits::NextStep);
        entry(&mut queue, "b", Waits::NextStep);
        queue.returned(std::slice::from_ref(&a));
        assert!(queue.is_paused());
        let waits: Vec<Waits> = queue.iter().map(|q| q.waits).collect();
        assert_eq!(waits, [Waits::AfterTurn, Waits::NextStep]);
        assert_eq!(queue.resume().map(|q| q.id), Some(a));
    }

    #[test]
    fn ids_are_unique() {
        let mut queue = MessageQueue::default();
        let first = queue.new_id();
        assert_ne!(first, queue.new_id());
    }
}
