//! The `/resume` picker: the saved sessions from `ReportEvent::Sessions`, this directory's
//! first, newest first; a session of another directory is marked with it (resuming it here is
//! refused with the command that resumes it there). Up/Down choose, Enter resumes, Esc closes.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::{SessionSummary, UserCommand};
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::modal::{self, LayerOutcome};
use crate::tui::{theme, wrap};

#[derive(Debug)]
pub struct SessionPicker {
    sessions: Vec<SessionSummary>,
    selected: usize,
    /// The directory this session works in.
    here: String,
}

impl SessionPicker {
    pub fn new(sessions: Vec<SessionSummary>, here: String) -> Self {
        Self {
            sessions,
            selected: 0,
            here,
        }
    }

    /// Whether `c` is one of the picker's keys (other characters are text for the input).
    pub fn takes_char(&self, c: char) -> bool {
        matches!(c, 'j' | 'k' | 'q')
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> LayerOutcome {
        match keymap::action(Scope::Picker, &key) {
            Some(Action::Close) => LayerOutcome::Closed,
            Some(action @ (Action::SelectPrev | Action::SelectNext)) => {
                modal::move_selection(&mut self.selected, self.sessions.len(), action);
                LayerOutcome::Open
            }
            Some(Action::Choose) => match self.sessions.get(self.selected) {
                Some(s) => LayerOutcome::Send {
                    command: UserCommand::Resume {
                        session: s.id.clone(),
                    },
                    close: true,
                },
                None => LayerOutcome::Closed,
            },
            _ => LayerOutcome::Open,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).min(100);
        let height = (self.sessions.len() as u16 + 2)
            .clamp(3, area.height.saturating_sub(2).max(3))
            .min(area.height);
        let inner = modal::modal_frame(
            area,
            width,
            height,
            Span::styled(" Resume a session ", theme::bold()),
            Line::styled(" ↑↓ choose · Enter resume · Esc close ", theme::dim()),
            theme::border_focused(),
            buf,
        );
        if self.sessions.is_empty() {
            buf.set_line(
                inner.x,
                inner.y,
                &Line::styled("No saved sessions.", theme::dim()),
                inner.width,
            );
            return;
        }
        let rows = usize::from(inner.height);
        let first = (self.selected + 1).saturating_sub(rows);
        for (i, s) in self.sessions.iter().enumerate().skip(first).take(rows) {
            let started: String = s
                .started
                .chars()
                .take(16)
                .collect::<String>()
                .replace('T', " ");
            let prompt = s.first_prompt.replace('\n', " ");
            let elsewhere = !self.here.is_empty() && s.cwd != self.here;
            let text = if elsewhere {
                format!("{started}  elsewhere: {}  {prompt}", s.cwd)
            } else {
                format!("{started}  {prompt}")
            };
            let style = match (i == self.selected, elsewhere) {
                (true, _) => theme::selected(),
                (false, true) => theme::dim(),
                (false, false) => theme::base(),
            };
            let line = Line::styled(wrap::truncate(&text, usize::from(inner.width)), style);
            buf.set_line(inner.x, inner.y + (i - first) as u16, &line, inner.width);
        }
    }
}
