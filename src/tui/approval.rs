//! The approval prompt: a modal over the transcript for each call the gate holds
//! (`ToolEvent::AwaitingApproval`). It shows the command highlighted, why it was held, whether
//! it would run sandboxed, the diff of a held write, and takes single keys: y, a, n, m. Every
//! other key does nothing while it is open, so nothing is approved or typed by accident.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use crate::bus::{CallId, Decision};
use crate::tools::FileChange;
use crate::tui::{diffs, highlight, theme, wrap};

/// Diff lines shown inside the prompt at most.
const DIFF_ROWS: usize = 12;

/// One held call, from the `AwaitingApproval` event.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub call: CallId,
    pub name: String,
    pub subject: String,
    pub why: String,
    pub sandboxed: bool,
    pub prefix: String,
    pub diff: Option<FileChange>,
}

#[derive(Debug, Default)]
pub struct ApprovalPrompt {
    held: VecDeque<Held>,
    /// The deny message being typed (after `m`).
    message: Option<String>,
}

impl ApprovalPrompt {
    pub fn is_open(&self) -> bool {
        !self.held.is_empty()
    }

    pub fn current(&self) -> Option<&Held> {
        self.held.front()
    }

    pub fn hold(&mut self, held: Held) {
        if !self.held.iter().any(|h| h.call == held.call) {
            self.held.push_back(held);
        }
    }

    /// The call was decided or ended elsewhere: forget it.
    pub fn settle(&mut self, call: &CallId) {
        let was_current = self.held.front().is_some_and(|h| &h.call == call);
        self.held.retain(|h| &h.call != call);
        if was_current {
            self.message = None;
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Handles a key; returns the decision once the user made one.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<(CallId, Decision)> {
        let held = self.held.front()?;
        if let Some(message) = &mut self.message {
            match key.code {
                KeyCode::Enter => {
                    let text = message.trim().to_string();
                    let decision = Decision::Deny {
                        message: (!text.is_empty()).then_some(text),
                    };
                    return self.decide(decision);
                }
                KeyCode::Esc => self.message = None,
                KeyCode::Backspace => {
                    message.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    message.push(c)
                }
                _ => {}
            }
            return None;
        }
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        match key.code {
            KeyCode::Char('y' | 'Y') => self.decide(Decision::Approve),
            KeyCode::Char('a' | 'A') => {
                let prefix = held.prefix.clone();
                self.decide(Decision::ApproveForSession { prefix })
            }
            KeyCode::Char('p' | 'P') => {
                let prefix = held.prefix.clone();
                self.decide(Decision::ApproveForProject { prefix })
            }
            KeyCode::Char('u' | 'U') if held.name == "bash" && held.sandboxed => {
                self.decide(Decision::ApproveUnsandboxed)
            }
            KeyCode::Char('n' | 'N') => self.decide(Decision::Deny { message: None }),
            KeyCode::Char('m' | 'M') => {
                self.message = Some(String::new());
                None
            }
            _ => None,
        }
    }

    /// Pasted text goes into the deny message when one is being typed, nowhere otherwise.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some(message) = &mut self.message {
            message.push_str(&text.replace(['\r', '\n'], " "));
        }
    }

    fn decide(&mut self, decision: Decision) -> Option<(CallId, Decision)> {
        let held = self.held.pop_front()?;
        self.message = None;
        Some((held.call, decision))
    }

    fn body(&self, held: &Held, width: usize) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let lang = if held.name == "bash" {
            "bash"
        } else {
            highlight::token_for_path(&held.subject)
        };
        let prompt = [Span::styled("  ", theme::base())];
        for code in highlight::highlight(&held.subject, lang) {
            let mut spans = code;
            spans
                .iter_mut()
                .for_each(|s| s.style = s.style.add_modifier(ratatui::style::Modifier::BOLD));
            lines.extend(wrap::hard_wrap(&spans, width, &prompt, &prompt));
        }
        lines.push(Line::default());
        let why = [Span::styled("why: ", theme::bold())];
        lines.extend(wrap::wrap(
            &[Span::styled(held.why.clone(), theme::warning())],
            width,
            &why,
            &[Span::raw("     ")],
        ));
        let sandbox = if held.sandboxed {
            Span::styled(
                "sandboxed: writes only in the workspace and temp dirs",
                theme::ok(),
            )
        } else {
            Span::styled(
                "not sandboxed: runs with your full permissions",
                theme::danger(),
            )
        };
        if held.name == "bash" {
            lines.push(Line::from(vec![sandbox]));
        }
        if let Some(change) = &held.diff {
            lines.push(Line::default());
            let parsed = diffs::parse(&change.diff);
            let all = diffs::unified(&parsed, highlight::token_for_path(&change.path), width);
            let more = all.len().saturating_sub(DIFF_ROWS);
            lines.extend(all.into_iter().take(DIFF_ROWS));
            if more > 0 {
                lines.push(Line::styled(
                    format!("… {more} more diff lines"),
                    theme::dim(),
                ));
            }
        }
        lines.push(Line::default());
        lines.extend(self.key_lines(held, width));
        lines
    }

    fn key_lines(&self, held: &Held, width: usize) -> Vec<Line<'static>> {
        if let Some(message) = &self.message {
            let label = [Span::styled("tell the model: ", theme::bold())];
            let mut lines = wrap::wrap(&[Span::raw(format!("{message}▏"))], width, &label, &[]);
            lines.push(Line::styled(
                "Enter deny with this message · Esc back",
                theme::dim(),
            ));
            return lines;
        }
        let key = |k: &'static str| Span::styled(format!(" {k} "), theme::key());
        let prefix = wrap::truncate(&held.prefix, width.saturating_sub(30).max(8));
        let mut items = vec![
            vec![key("y"), Span::raw(" approve once")],
            vec![
                key("a"),
                Span::raw(format!(" allow `{prefix}` for this session")),
            ],
            vec![
                key("p"),
                Span::raw(format!(" always allow `{prefix}` in this project")),
            ],
            vec![key("n"), Span::raw(" deny")],
            vec![key("m"), Span::raw(" deny with a message")],
        ];
        if held.name == "bash" && held.sandboxed {
            items.insert(1, vec![key("u"), Span::raw(" run without sandbox")]);
        }
        // Lay the keys out on as few lines as the width allows.
        let mut lines = Vec::new();
        let mut line: Vec<Span<'static>> = Vec::new();
        for item in items {
            let w: usize = item.iter().map(|s| wrap::width(&s.content)).sum();
            let used: usize = line.iter().map(|s| wrap::width(&s.content)).sum();
            if !line.is_empty() && used + 3 + w > width {
                lines.push(Line::from(std::mem::take(&mut line)));
            }
            if !line.is_empty() {
                line.push(Span::raw("   "));
            }
            line.extend(item);
        }
        lines.push(Line::from(line));
        lines
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let Some(held) = self.held.front() else {
            return;
        };
        let width = area.width.saturating_sub(4).clamp(20, 90);
        let inner_width = usize::from(width.saturating_sub(4));
        let body = self.body(held, inner_width);
        let height = (body.len() as u16 + 2).min(area.height);
        let x = area.x + (area.width.saturating_sub(width)) / 2;
        let y = area.y + (area.height.saturating_sub(height)) / 2;
        let rect = Rect::new(x, y, width.min(area.width), height);
        let queued = if self.held.len() > 1 {
            format!(" 1 of {} ", self.held.len())
        } else {
            String::new()
        };
        let title = format!(" Allow {}? ", held.name);
        let block = Block::bordered()
            .border_style(theme::modal_border())
            .title(Span::styled(title, theme::danger()))
            .title_bottom(Line::styled(queued, theme::dim()).right_aligned());
        Clear.render(rect, buf);
        let inner = block.inner(rect).inner(ratatui::layout::Margin::new(1, 0));
        block.render(rect, buf);
        // The keys are the last lines: when the box cannot hold everything, the diff gives way.
        let rows = usize::from(inner.height);
        let skip_from = body.len().saturating_sub(rows);
        let keys = self.key_lines(held, inner_width).len() + 1;
        let visible: Vec<&Line> = if skip_from == 0 {
            body.iter().collect()
        } else {
            let head = rows.saturating_sub(keys);
            body.iter()
                .take(head)
                .chain(body.iter().skip(body.len() - keys.min(rows)))
                .collect()
        };
        for (i, line) in visible.into_iter().take(rows).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(call: &str) -> Held {
        Held {
            call: CallId::new(call),
            name: "bash".into(),
            subject: "rm -rf ../build".into(),
            why: "deletes outside the workspace".into(),
            sandboxed: false,
            prefix: "rm".into(),
            diff: None,
        }
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn single_keys_decide_and_other_keys_do_nothing() {
        let mut prompt = ApprovalPrompt::default();
        prompt.hold(held("c1"));
        prompt.hold(held("c2"));
        prompt.hold(held("c3"));
        for c in ['x', 'q', ' ', 'j'] {
            assert_eq!(prompt.handle_key(key(c)), None);
        }
        assert_eq!(
            prompt.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            prompt.handle_key(key('y')),
            Some((CallId::new("c1"), Decision::Approve))
        );
        assert_eq!(
            prompt.handle_key(key('a')),
            Some((
                CallId::new("c2"),
                Decision::ApproveForSession {
                    prefix: "rm".into()
                }
            ))
        );
        assert_eq!(
            prompt.handle_key(key('n')),
            Some((CallId::new("c3"), Decision::Deny { message: None }))
        );
        assert!(!prompt.is_open());
    }

    #[test]
    fn u_runs_a_sandboxed_command_without_the_sandbox_and_nothing_else() {
        let mut prompt = ApprovalPrompt::default();
        prompt.hold(held("c1"));
        assert_eq!(prompt.handle_key(key('u')), None, "not sandboxed: no u");
        prompt.settle(&CallId::new("c1"));
        prompt.hold(Held {
            sandboxed: true,
            ..held("c2")
        });
        let legend: String = prompt
            .key_lines(prompt.current().expect("held"), 200)
            .iter()
            .flat_map(|line| line.spans.iter().map(|s| s.content.to_string()))
            .collect();
        assert!(legend.contains("run without sandbox"), "{legend}");
        assert_eq!(
            prompt.handle_key(key('u')),
            Some((CallId::new("c2"), Decision::ApproveUnsandboxed))
        );
    }

    #[test]
    fn m_types_a_message_sent_with_the_denial() {
        let mut prompt = ApprovalPrompt::default();
        prompt.hold(held("c1"));
        assert_eq!(prompt.handle_key(key('m')), None);
        for c in "use trash".chars() {
            assert_eq!(prompt.handle_key(key(c)), None, "y and n are text now");
        }
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(
            prompt.handle_key(enter),
            Some((
                CallId::new("c1"),
                Decision::Deny {
                    message: Some("use trash".into())
                }
            ))
        );
    }
}
