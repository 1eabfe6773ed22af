//! The approval prompt: a modal over the transcript for each call the gate holds
//! (`ToolEvent::AwaitingApproval`). It shows the command highlighted, why it was held, whether
//! it would run sandboxed, the diff of a held write, and takes single keys: y, a, n, m. Every
//! other key does nothing while it is open, so nothing is approved or typed by accident.
//! At any height the keys, the `why:` line and every dangerous part of the command stay on
//! screen; a long command is elided in the middle (its end always shown) and ↑/↓ scroll it.

use std::cell::Cell;
use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::{CallId, Decision};
use crate::permissions::classify::Class;
use crate::tool_output::FileChange;
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

/// A held call and the dangerous parts of its command (found once, when it is held).
#[derive(Debug)]
struct Entry {
    held: Held,
    dangers: Vec<String>,
}

#[derive(Debug, Default)]
pub struct ApprovalPrompt {
    held: VecDeque<Entry>,
    /// The deny message being typed (after `m`).
    message: Option<String>,
    /// How far ↓ moved the upper window of a long command (its end always shows).
    scroll: usize,
    /// The largest useful `scroll` at the last render (keys clamp to it).
    max_scroll: Cell<usize>,
}

impl ApprovalPrompt {
    pub fn is_open(&self) -> bool {
        !self.held.is_empty()
    }

    pub fn current(&self) -> Option<&Held> {
        self.held.front().map(|e| &e.held)
    }

    pub fn hold(&mut self, held: Held) {
        if !self.held.iter().any(|e| e.held.call == held.call) {
            let dangers = dangerous_parts(&held);
            self.held.push_back(Entry { held, dangers });
        }
    }

    /// The call was decided or ended elsewhere: forget it.
    pub fn settle(&mut self, call: &CallId) {
        let was_current = self.held.front().is_some_and(|e| &e.held.call == call);
        self.held.retain(|e| &e.held.call != call);
        if was_current {
            self.message = None;
            self.scroll = 0;
        }
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Handles a key; returns the decision once the user made one.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<(CallId, Decision)> {
        let held = &self.held.front()?.held;
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
            KeyCode::Up => {
                self.scroll = self.scroll.saturating_sub(1);
                None
            }
            KeyCode::Down => {
                self.scroll = (self.scroll + 1).min(self.max_scroll.get());
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
        let entry = self.held.pop_front()?;
        self.message = None;
        self.scroll = 0;
        Some((entry.held.call, decision))
    }

    /// The command (or path), highlighted and wrapped to `width`.
    fn command_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let lang = if held.name == "bash" {
            "bash"
        } else {
            highlight::token_for_path(&held.subject)
        };
        let prompt = [Span::styled("  ", theme::base())];
        let mut lines = Vec::new();
        for code in highlight::highlight(&held.subject, lang) {
            let mut spans = code;
            spans
                .iter_mut()
                .for_each(|s| s.style = s.style.add_modifier(ratatui::style::Modifier::BOLD));
            lines.extend(wrap::hard_wrap(&spans, width, &prompt, &prompt));
        }
        lines
    }

    fn why_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let why = [Span::styled("why: ", theme::bold())];
        wrap::wrap(
            &[Span::styled(held.why.clone(), theme::warning())],
            width,
            &why,
            &[Span::raw("     ")],
        )
    }

    fn sandbox_line(held: &Held) -> Option<Line<'static>> {
        if held.name != "bash" {
            return None;
        }
        Some(Line::from(vec![if held.sandboxed {
            Span::styled(
                "sandboxed: writes only in the workspace and temp dirs",
                theme::ok(),
            )
        } else {
            Span::styled(
                "not sandboxed: runs with your full permissions",
                theme::danger(),
            )
        }]))
    }

    fn diff_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let Some(change) = &held.diff else {
            return Vec::new();
        };
        let parsed = diffs::parse(&change.diff);
        let mut all = diffs::unified(&parsed, highlight::token_for_path(&change.path), width);
        let more = all.len().saturating_sub(DIFF_ROWS);
        all.truncate(DIFF_ROWS);
        if more > 0 {
            all.push(Line::styled(
                format!("… {more} more diff lines"),
                theme::dim(),
            ));
        }
        all
    }

    /// The prompt's lines for `rows` rows at most. The keys and the `why:` line always show,
    /// then every dangerous part, then the command — elided in the middle when it is long,
    /// its end always shown, the part above scrollable with ↑/↓ —, then the diff.
    fn layout(&self, entry: &Entry, width: usize, rows: usize) -> Vec<Line<'static>> {
        let held = &entry.held;
        let keys = self.key_lines(held, width);
        let why = Self::why_lines(held, width);
        let command = Self::command_lines(held, width);
        let dangers: Vec<Line<'static>> = entry
            .dangers
            .iter()
            .map(|d| {
                let shown = wrap::truncate(d, width.saturating_sub(4));
                Line::from(vec![
                    Span::styled("  ⚠ ", theme::danger()),
                    Span::styled(shown, theme::danger()),
                ])
            })
            .collect();
        let sandbox = Self::sandbox_line(held);
        let diff = Self::diff_lines(held, width);

        let mut left = rows;
        let take = |want: usize, left: &mut usize| {
            let got = want.min(*left);
            *left -= got;
            got
        };
        let n_keys = take(keys.len(), &mut left);
        // The reason keeps at least one row for the command when it can.
        let n_why = take(why.len().min(left.saturating_sub(1).max(1)), &mut left);
        // One row of the command (its end) comes before the dangers, two more after them.
        let cmd_first = take(command.len().min(1), &mut left);
        let n_dangers = take(dangers.len(), &mut left);
        let cmd_min = cmd_first + take(command.len().min(3) - cmd_first, &mut left);
        let n_sandbox = take(usize::from(sandbox.is_some()), &mut left);
        let gap_keys = take(1, &mut left);
        let gap_why = take(1, &mut left);
        let n_command = cmd_min + take(command.len() - cmd_min, &mut left);
        let n_diff = if diff.is_empty() || left < 2 {
            0
        } else {
            left -= 1;
            take(diff.len(), &mut left)
        };

        let mut out = self.command_view(command, n_command, width);
        out.extend(std::iter::repeat_n(Line::default(), gap_why));
        out.extend(why.into_iter().take(n_why));
        if n_dangers < dangers.len() && n_dangers > 0 {
            let hidden = dangers.len() - n_dangers + 1;
            out.extend(dangers.into_iter().take(n_dangers - 1));
            out.push(Line::styled(
                format!("  ⚠ … {hidden} more dangerous parts"),
                theme::danger(),
            ));
        } else {
            out.extend(dangers.into_iter().take(n_dangers));
        }
        out.extend(sandbox.into_iter().take(n_sandbox));
        if n_diff > 0 {
            out.push(Line::default());
            out.extend(diff.into_iter().take(n_diff));
        }
        out.extend(std::iter::repeat_n(Line::default(), gap_keys));
        out.extend(keys.into_iter().take(n_keys));
        out
    }

    /// `rows` rows of the command's `lines`: all of them when they fit; else a scrollable
    /// window from the top, a marker saying how much is hidden, and the command's last lines.
    fn command_view(
        &self,
        mut lines: Vec<Line<'static>>,
        rows: usize,
        width: usize,
    ) -> Vec<Line<'static>> {
        let n = lines.len();
        if n <= rows {
            self.max_scroll.set(0);
            return lines;
        }
        if rows <= 1 {
            // No room for a marker: the end, where a dangerous tail would be.
            return lines.split_off(n - rows);
        }
        let tail = if rows >= 3 { (rows - 1) / 2 } else { rows - 1 };
        let window = rows - 1 - tail;
        let max_scroll = n - tail - window;
        self.max_scroll.set(max_scroll);
        let top = self.scroll.min(max_scroll);
        let hidden = n - tail - window - top;
        let above = if top > 0 {
            format!(" · {top} above")
        } else {
            String::new()
        };
        let marker = Line::styled(
            wrap::truncate(
                &format!("  ⋯ {hidden} lines hidden{above} · ↑/↓ scroll"),
                width,
            ),
            theme::dim(),
        );
        let ending = lines.split_off(n - tail);
        let mut out: Vec<Line<'static>> = lines.into_iter().skip(top).take(window).collect();
        out.push(marker);
        out.extend(ending);
        out
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
        let Some(entry) = self.held.front() else {
            return;
        };
        let held = &entry.held;
        let width = area.width.saturating_sub(4).clamp(20, 90);
        let inner_width = usize::from(width.saturating_sub(4));
        let rows = usize::from(area.height.saturating_sub(2));
        let body = self.layout(entry, inner_width, rows);
        let height = (body.len() as u16 + 2).min(area.height);
        let queued = if self.held.len() > 1 {
            format!(" 1 of {} ", self.held.len())
        } else {
            String::new()
        };
        let title = format!(" Allow {}? ", held.name);
        let inner = crate::tui::layers::modal_frame(
            area,
            width,
            height,
            Span::styled(title, theme::danger()),
            Line::styled(queued, theme::dim()),
            theme::modal_border(),
            buf,
        )
        .inner(ratatui::layout::Margin::new(1, 0));
        for (i, line) in body.iter().take(usize::from(inner.height)).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }
}

/// Every dangerous part of a held command, as `words — reason`, so none hides in a long
/// command's elided middle.
fn dangerous_parts(held: &Held) -> Vec<String> {
    if held.name != "bash" {
        return Vec::new();
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let analysis = crate::permissions::classify::analyze(&held.subject, &cwd);
    let mut found: Vec<String> = Vec::new();
    for part in analysis
        .parts
        .iter()
        .filter(|p| p.class == Class::Dangerous)
    {
        let text = if part.words.is_empty() {
            part.reason.clone()
        } else {
            format!("{} — {}", part.words.join(" "), part.reason)
        };
        if !found.contains(&text) {
            found.push(text);
        }
    }
    found
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

    fn long_command() -> Held {
        let mut command: Vec<String> = (1..200).map(|i| format!("echo step {i}")).collect();
        command.push("rm -rf /etc/cairn-demo".into());
        Held {
            call: CallId::new("long"),
            name: "bash".into(),
            subject: command.join("\n"),
            why: "deletes outside the workspace (/etc/cairn-demo)".into(),
            sandboxed: true,
            prefix: "rm -rf /etc/cairn-demo".into(),
            diff: None,
        }
    }

    fn draw(prompt: &ApprovalPrompt, w: u16, h: u16) -> String {
        let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h))
            .unwrap_or_else(|e| {
                panic!("{e}");
            });
        terminal
            .draw(|f| prompt.render(f.area(), f.buffer_mut()))
            .unwrap_or_else(|e| panic!("{e}"));
        terminal.backend().to_string()
    }

    #[test]
    fn a_long_command_keeps_its_end_its_reason_its_danger_and_the_keys_at_any_height() {
        let mut prompt = ApprovalPrompt::default();
        prompt.hold(long_command());
        for height in [24, 16, 12, 10] {
            let screen = draw(&prompt, 80, height);
            for expected in [
                "rm -rf /etc/cairn-demo",
                "why:",
                "⚠ rm -rf /etc/cairn-demo",
                " y ",
                " n ",
                "lines hidden",
            ] {
                assert!(
                    screen.contains(expected),
                    "{expected:?} missing at 80x{height}:\n{screen}"
                );
            }
        }
        let full = draw(&prompt, 80, 24);
        assert!(full.contains("echo step 199") && full.contains("echo step 1 "));
        insta::assert_snapshot!("long_command_80x24", full);
        insta::assert_snapshot!("long_command_80x12", draw(&prompt, 80, 12));
    }

    #[test]
    fn arrows_scroll_the_elided_middle_and_decide_nothing() {
        let mut prompt = ApprovalPrompt::default();
        prompt.hold(long_command());
        let before = draw(&prompt, 80, 24);
        assert!(before.contains("echo step 1 ") || before.contains("echo step 1\u{20}"));
        let down = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
        for _ in 0..5 {
            assert_eq!(prompt.handle_key(down), None);
        }
        let after = draw(&prompt, 80, 24);
        assert!(after.contains("5 above"), "{after}");
        assert!(after.contains("echo step 6"), "{after}");
        assert!(after.contains("rm -rf /etc/cairn-demo"), "{after}");
        // Far past the end it stops where the window meets the tail.
        for _ in 0..500 {
            prompt.handle_key(down);
        }
        let bottom = draw(&prompt, 80, 24);
        assert!(!bottom.contains("lines hidden · 0") || bottom.contains("above"));
        let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
        for _ in 0..1000 {
            prompt.handle_key(up);
        }
        assert_eq!(draw(&prompt, 80, 24), before);
        assert!(prompt.is_open());
    }
}
