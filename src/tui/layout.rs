//! Where each pane goes: the transcript as the main pane, todos and diffs beside it from
//! `WIDE` columns (tabs below that) or the diff pane alone in its full-width view, queued
//! messages, the input box and the status line at the bottom, modals on top. Draws from
//! `&App` only.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::tui::app::{App, Areas, Focus, MIN_HEIGHT, MIN_WIDTH, Tab, WIDE};
use crate::tui::modals::layers::Layer;
use crate::tui::{modals::help, theme, wrap};

impl App {
    pub fn render(&self, frame: &mut Frame) {
        let area = frame.area();
        // A subagent's transcript open: over the whole screen, under the parent's prompts.
        if area.width >= MIN_WIDTH && area.height >= MIN_HEIGHT && self.render_child(frame) {
            let main = Rect {
                y: area.y + 1,
                height: area.height - 1,
                ..area
            };
            self.render_layers(area, main, frame.buffer_mut());
            return;
        }
        self.render_in(frame, area);
    }

    /// The whole UI in `area` (the screen, or below the banner of a parent showing this
    /// child's transcript).
    pub(crate) fn render_in(&self, frame: &mut Frame, area: Rect) {
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            render_too_small(area, frame.buffer_mut());
            return;
        }
        let composer_height = if self.read_only {
            3
        } else {
            self.composer.wanted_height(area.width)
        };
        let queued_height = self.queued.height();
        let [main, queued, input, status] = Layout::vertical([
            Constraint::Min(3),
            Constraint::Length(queued_height),
            Constraint::Length(composer_height),
            Constraint::Length(1),
        ])
        .areas(area);
        let buf = frame.buffer_mut();
        if self.diffs.is_full_width() {
            self.render_full_width_diff(main, buf);
        } else if area.width >= WIDE {
            self.render_wide(main, buf);
        } else {
            self.render_narrow(main, buf);
        }
        self.queued.render(queued, buf);
        let title = if self.busy && !self.read_only {
            " message · Enter: at the next step · Ctrl+Q: after the turn "
        } else {
            " message "
        };
        let cursor = self.composer.render(
            input,
            buf,
            self.focus == Focus::Input,
            title,
            self.read_only.then_some(if self.status.child {
                "subagent: read only · Tab / j k / [ ] browse · Esc or q: back"
            } else {
                "replay: read only · Tab / j k / [ ] browse · Ctrl+C twice quits"
            }),
        );
        if self.focus == Focus::Input && !self.read_only {
            self.mention_finder.render(input, buf);
        }
        if self.focus == Focus::Input && !self.read_only && self.layers.is_empty() {
            let text = self.composer.text();
            let want = self.palette.height(text).min(main.height);
            if want > 0 {
                let area = Rect::new(input.x, input.y.saturating_sub(want), input.width, want);
                self.palette.render(text, area, buf);
            }
        }
        let hint = self.flash.as_ref().map(|(text, _)| text.as_str());
        self.status.render(status, buf, self.now, hint);
        self.render_layers(area, main, buf);
        if let Some(position) = cursor
            && self.layers.is_empty()
        {
            frame.set_cursor_position(position);
        }
    }

    /// The prompts and overlays open, in the order they opened.
    fn render_layers(&self, area: Rect, main: Rect, buf: &mut Buffer) {
        for layer in self.layers.iter() {
            match layer {
                Layer::Help { scroll } => help::render(area, buf, *scroll),
                Layer::Picker(picker) => picker.render(main, buf),
                // The whole screen: at the smallest size the keys, the reason and the
                // command's end need every row.
                Layer::Approval => self.approval.render(area, buf),
                Layer::Trust(prompt) => prompt.render(main, buf),
                Layer::Rewind(picker) => picker.render(main, buf),
                Layer::Confirm(confirm) => confirm.render(main, buf),
                Layer::Revert(modal) => modal.render(main, buf),
                Layer::Jobs(view) => view.render(&self.jobs, main, buf),
                Layer::Choice(picker) => picker.render(main, buf),
            }
        }
    }

    fn render_full_width_diff(&self, main: Rect, buf: &mut Buffer) {
        self.diffs.render(main, buf, self.focus == Focus::Diffs);
        self.areas.set(Areas {
            diffs: main,
            ..Areas::default()
        });
    }

    fn render_wide(&self, main: Rect, buf: &mut Buffer) {
        let side = side_width(main.width);
        let [left, right] =
            Layout::horizontal([Constraint::Min(40), Constraint::Length(side)]).areas(main);
        let todo_height = self.todos.wanted_height().min(right.height / 2).max(3);
        let [todos, diffs] =
            Layout::vertical([Constraint::Length(todo_height), Constraint::Min(3)]).areas(right);
        self.render_transcript(left, buf);
        self.todos.render(todos, buf, self.focus == Focus::Todos);
        self.diffs.render(diffs, buf, self.focus == Focus::Diffs);
        self.areas.set(Areas {
            transcript: left,
            todos,
            diffs,
        });
    }

    fn render_narrow(&self, main: Rect, buf: &mut Buffer) {
        let [tabs, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(main);
        let (done, total, current) = self.todos.progress();
        let todos = if total == 0 {
            String::new()
        } else {
            format!(" {done}/{total}")
        };
        let unseen = self.diffs.len().saturating_sub(self.diffs_seen);
        let diffs = match (self.diffs.len(), unseen) {
            (0, _) => String::new(),
            (n, new) if new > 0 && self.tab != Tab::Diffs => format!(" {n} ({new} new)"),
            (n, _) => format!(" {n}"),
        };
        let labels = [
            (Tab::Transcript, "Transcript".to_string()),
            (Tab::Todos, format!("Todos{todos}")),
            (Tab::Diffs, format!("Diffs{diffs}")),
        ];
        let mut spans = vec![Span::raw(" ")];
        for (i, (tab, label)) in labels.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" │ ", theme::border()));
            }
            let style = if tab == self.tab {
                theme::tab_active()
            } else {
                theme::dim()
            };
            spans.push(Span::styled(label, style));
        }
        // The item in progress where the user looks, when the todos are not the tab shown.
        let used: usize = spans.iter().map(|s| wrap::width(&s.content)).sum();
        let room = usize::from(tabs.width).saturating_sub(used + 4);
        match current {
            Some(current) if self.tab != Tab::Todos && room >= 12 => {
                let text = crate::visible::name(current);
                spans.push(Span::styled("  ▸ ", theme::accent()));
                spans.push(Span::styled(
                    wrap::truncate(&text, room),
                    theme::todo_in_progress(),
                ));
            }
            _ => spans.push(Span::styled("   Tab switches", theme::dim())),
        }
        buf.set_line(tabs.x, tabs.y, &Line::from(spans), tabs.width);
        let mut areas = Areas::default();
        match self.tab {
            Tab::Transcript => {
                self.render_transcript(body, buf);
                areas.transcript = body;
            }
            Tab::Todos => {
                self.todos.render(body, buf, self.focus == Focus::Todos);
                areas.todos = body;
            }
            Tab::Diffs => {
                self.diffs.render(body, buf, self.focus == Focus::Diffs);
                areas.diffs = body;
            }
        }
        self.areas.set(areas);
    }

    fn render_transcript(&self, area: Rect, buf: &mut Buffer) {
        let border = if self.focus == Focus::Transcript {
            theme::border_focused()
        } else {
            theme::border()
        };
        let title = match (self.read_only, self.status.child) {
            (true, true) => " cairn · subagent ",
            (true, false) => " cairn · replay ",
            (false, _) => " cairn ",
        };
        let block = ratatui::widgets::Block::bordered()
            .border_style(border)
            .title(Span::styled(title, theme::bold()));
        let mut inner = block.inner(area);
        ratatui::widgets::Widget::render(block, area, buf);
        if let Some(welcome) = self.welcome.as_ref().filter(|_| !self.read_only)
            && !self.transcript.has_messages()
        {
            // Notices that come before the first message (a setup warning, the endpoint
            // check) go below the welcome, which then leaves them a few rows (half the
            // pane on a short one).
            let lines = welcome.lines(inner.width.saturating_sub(2));
            let room = if self.transcript.is_empty() {
                inner.height
            } else {
                inner
                    .height
                    .saturating_sub(NOTICE_ROWS)
                    .max(inner.height / 2)
            };
            let used = (lines.len() as u16 + 1).min(room);
            for (i, line) in lines.iter().take(usize::from(used)).enumerate() {
                buf.set_line(
                    inner.x + 2,
                    inner.y + i as u16,
                    line,
                    inner.width.saturating_sub(2),
                );
            }
            inner.y += used;
            inner.height -= used;
        } else if self.transcript.is_empty() {
            let hint = if self.read_only {
                "This session has no messages."
            } else {
                "What should we work on?"
            };
            buf.set_line(
                inner.x + 2,
                inner.y,
                &Line::styled(hint, theme::dim()),
                inner.width.saturating_sub(2),
            );
            return;
        }
        self.transcript.render(inner, buf, self.now);
        // On the bottom border, right-aligned: the marker never covers the last line.
        if let Some(marker) = self.transcript.scroll_marker(inner.height, self.now) {
            let width = (wrap::width(&marker) as u16).min(area.width.saturating_sub(2));
            let marker = wrap::truncate(&marker, usize::from(width));
            let x = area.x + area.width.saturating_sub(width + 1);
            let y = area.y + area.height.saturating_sub(1);
            buf.set_line(x, y, &Line::styled(marker, theme::key()), width);
        }
    }
}

fn render_too_small(area: Rect, buf: &mut Buffer) {
    let lines = [
        format!("Terminal too small ({}x{})", area.width, area.height),
        format!("cairn needs at least {MIN_WIDTH}x{MIN_HEIGHT}"),
    ];
    let top = area.y + area.height.saturating_sub(2) / 2;
    for (i, text) in lines.iter().enumerate() {
        let text = wrap::truncate(text, usize::from(area.width));
        let x = area.x + area.width.saturating_sub(wrap::width(&text) as u16) / 2;
        let y = top + i as u16;
        if y < area.y + area.height {
            buf.set_line(x, y, &Line::styled(text, theme::warning()), area.width);
        }
    }
}

/// Rows the welcome screen leaves for notices that came before the first message.
const NOTICE_ROWS: u16 = 6;

/// The width of the todo and diff column beside the transcript: 36 columns at `WIDE`, then
/// three of every five more columns (72 at 160, so side by side fits short lines), at most
/// 100; the transcript keeps the rest (88 at 160).
pub fn side_width(width: u16) -> u16 {
    (36 + width.saturating_sub(WIDE) * 3 / 5).min(100)
}
