//! The todo pane: the checklist from the latest `todo_write` result. The item in progress is
//! highlighted, finished items are checked and dimmed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::tool_output::{TodoItem, TodoStatus};
use crate::tui::{theme, wrap};

#[derive(Debug, Default)]
pub struct TodoPane {
    items: Vec<TodoItem>,
    scroll: usize,
    /// A `todo_write` shown before its result (calls run after every approval of their
    /// step): its call, and the list it replaced, back if the call fails.
    proposed: Option<(crate::bus::CallId, Vec<TodoItem>)>,
}

impl TodoPane {
    pub fn set(&mut self, items: Vec<TodoItem>) {
        self.items = items;
        self.proposed = None;
    }

    /// A `todo_write` call was made: its list shows now, not once the step's other calls
    /// were approved and run (the pane lagged behind an approval prompt). A list the tool
    /// would refuse (none, or an empty item) is not shown.
    pub fn propose(&mut self, call: &crate::bus::CallId, args: &serde_json::Value) {
        let Ok(mut items) = serde_json::from_value::<Vec<TodoItem>>(args["todos"].clone()) else {
            return;
        };
        for item in &mut items {
            item.content = item.content.trim().to_string();
        }
        if items.is_empty() || items.iter().any(|item| item.content.is_empty()) {
            return;
        }
        let before = std::mem::replace(&mut self.items, items);
        self.proposed = Some((call.clone(), before));
    }

    /// `call` finished without setting the list (`set` came first when it did): a list it
    /// proposed gives way to the one before.
    pub fn settle(&mut self, call: &crate::bus::CallId) {
        if self.proposed.as_ref().is_some_and(|(id, _)| id == call)
            && let Some((_, before)) = self.proposed.take()
        {
            self.items = before;
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Items done, items in all, and the one in progress: what the narrow layout's tab bar
    /// shows, so the plan is seen without opening its tab.
    pub fn progress(&self) -> (usize, usize, Option<&str>) {
        let done = self
            .items
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        let current = self
            .items
            .iter()
            .find(|t| t.status == TodoStatus::InProgress)
            .map(|t| t.content.as_str());
        (done, self.items.len(), current)
    }

    pub fn scroll_by(&mut self, delta: isize) {
        self.scroll = self
            .scroll
            .saturating_add_signed(delta)
            .min(self.items.len().saturating_sub(1));
    }

    /// Rows the pane wants for its content (borders included), for the layout.
    pub fn wanted_height(&self) -> u16 {
        (self.items.len().max(1) + 2).min(u16::MAX as usize) as u16
    }

    pub fn copy_text(&self) -> String {
        self.items
            .iter()
            .map(|t| {
                let mark = match t.status {
                    TodoStatus::Pending => "[ ]",
                    TodoStatus::InProgress => "[~]",
                    TodoStatus::Completed => "[x]",
                };
                format!("- {mark} {}\n", t.content)
            })
            .collect()
    }

    fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for item in &self.items {
            let (mark, mark_style, text_style) = match item.status {
                TodoStatus::Pending => ("☐ ", theme::dim(), theme::base()),
                TodoStatus::InProgress => {
                    ("▶ ", theme::todo_in_progress(), theme::todo_in_progress())
                }
                TodoStatus::Completed => ("☑ ", theme::ok(), theme::todo_done()),
            };
            let first = [Span::styled(mark, mark_style)];
            let cont = [Span::raw("  ")];
            out.extend(wrap::wrap(
                &[Span::styled(item.content.clone(), text_style)],
                width,
                &first,
                &cont,
            ));
        }
        out
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, focused: bool) {
        let done = self
            .items
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        let title = if self.items.is_empty() {
            " Todos ".to_string()
        } else {
            format!(" Todos {done}/{} ", self.items.len())
        };
        let border = if focused {
            theme::border_focused()
        } else {
            theme::border()
        };
        let block = Block::bordered()
            .border_style(border)
            .title(Span::styled(title, theme::bold()));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            return;
        }
        if self.items.is_empty() {
            buf.set_line(
                inner.x,
                inner.y,
                &Line::styled("No plan yet.", theme::dim()),
                inner.width,
            );
            return;
        }
        let lines = self.lines(usize::from(inner.width));
        // Keep the item in progress in view when the list is taller than the pane.
        let height = usize::from(inner.height);
        let active = self
            .items
            .iter()
            .position(|t| t.status == TodoStatus::InProgress)
            .unwrap_or(0);
        let auto = active
            .saturating_sub(height / 2)
            .min(lines.len().saturating_sub(height));
        let start = if self.scroll > 0 {
            self.scroll.min(lines.len().saturating_sub(1))
        } else {
            auto
        };
        for (i, line) in lines.iter().skip(start).take(height).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }
}
