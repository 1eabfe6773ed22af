//! The approval prompt: a modal over the transcript for each call the gate holds
//! (`ToolEvent::AwaitingApproval`). It shows the command highlighted, why it was held, whether
//! it would run sandboxed, the diff of a held write, and takes single keys: y, a, p, n, m, Esc.
//! Every other key does nothing while it is open, so nothing is approved or typed by accident.
//!
//! A prompt that opens while the user is typing is *held back*: it takes no key until the
//! typing has paused for `TYPING_PAUSE` (each key typed meanwhile pushes that further, so a
//! burst begun before it opened never answers it, however long it goes on), and says so; the
//! keys typed meanwhile go on into the input. Esc denies the calls it holds (it does not defer
//! them): the model is told, the turn goes on. A dangerous command offers no "always" keys.
//! At any height the keys, the `why:` line and every dangerous part of the command stay on
//! screen; a long command is elided in the middle (its end always shown) and ↑/↓ scroll it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::EXIT_PLAN_MODE;
use crate::bus::Mode;
use crate::bus::{CallId, Decision};
use crate::tool_output::FileChange;
use crate::tui::{diffs, highlight, marked, theme, wrap};
use crate::visible;

/// Diff lines shown inside the prompt at most.
const DIFF_ROWS: usize = 12;

/// A key this recent when a prompt opens means the user is typing: the prompt holds its keys
/// back until no key has come for this long.
pub const TYPING_PAUSE: Duration = Duration::from_millis(500);
/// Once the typing stopped, the prompt stays held back at least this long after it opened, so
/// the user sees it before a key counts.
pub const OPEN_GUARD: Duration = Duration::from_millis(250);

/// The modes an approved plan can be carried out in, in the order ←/→ offer them.
const PLAN_MODES: [Mode; 3] = [Mode::AutoEdit, Mode::Auto, Mode::Ask];

/// The message a denial by Esc sends, so the model knows nobody approved and why.
const ESC_DENIAL: &str = "the user closed the approval prompt (Esc) without approving";

/// One held call, from the `AwaitingApproval` event.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub call: CallId,
    pub name: String,
    pub subject: String,
    pub why: String,
    pub sandboxed: bool,
    pub prefix: String,
    /// Every dangerous part of a held command, as the gate found them.
    pub dangers: Vec<String>,
    pub diff: Option<FileChange>,
}

/// A held call and what it shows besides.
#[derive(Debug)]
struct Entry {
    held: Held,
    /// What was made visible in the command, its reason or its rule, in one line.
    notice: Option<String>,
}

impl Held {
    /// The call proposes a plan (`exit_plan_mode`): approving it switches the mode.
    pub fn is_plan(&self) -> bool {
        self.name == EXIT_PLAN_MODE
    }
}

impl Entry {
    /// "Always" rules are not offered for a dangerous command, nor when there is no prefix
    /// to make one of.
    fn offers_rules(&self) -> bool {
        self.held.dangers.is_empty() && !self.held.prefix.trim().is_empty() && !self.held.is_plan()
    }
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
    /// The last key the user pressed anywhere (see `note_key`).
    last_key: Option<Instant>,
    /// While set, the current call takes no key before this instant: the user was typing.
    held_back_until: Option<Instant>,
    /// For a plan: which of `PLAN_MODES` approving it switches to.
    plan_choice: usize,
}

impl ApprovalPrompt {
    pub fn is_open(&self) -> bool {
        !self.held.is_empty()
    }

    pub fn current(&self) -> Option<&Held> {
        self.held.front().map(|e| &e.held)
    }

    pub fn hold(&mut self, held: Held, now: Instant) {
        if !self.held.iter().any(|e| e.held.call == held.call) {
            let notice = hidden_notice(&held);
            self.held.push_back(Entry { held, notice });
            if self.held.len() == 1 {
                self.arm(now);
            }
        }
    }

    /// The call was decided or ended elsewhere: forget it.
    pub fn settle(&mut self, call: &CallId, now: Instant) {
        let was_current = self.held.front().is_some_and(|e| &e.held.call == call);
        self.held.retain(|e| &e.held.call != call);
        if was_current {
            self.message = None;
            self.scroll = 0;
            self.arm(now);
        }
    }

    pub fn clear(&mut self) {
        let last_key = self.last_key;
        *self = Self::default();
        self.last_key = last_key;
    }

    /// A deny message is being typed (Esc goes back to the keys, it does not deny).
    pub fn typing_message(&self) -> bool {
        self.message.is_some()
    }

    /// A call became the one shown at `now`: held back when the user is typing.
    fn arm(&mut self, now: Instant) {
        self.plan_choice = 0;
        self.held_back_until = self
            .last_key
            .filter(|at| self.is_open() && now.saturating_duration_since(*at) < TYPING_PAUSE)
            .map(|at| (at + TYPING_PAUSE).max(now + OPEN_GUARD));
    }

    /// Every key press reaches here first (whether or not a prompt is open): a key pressed
    /// while the prompt is held back keeps it held back until the next pause.
    pub fn note_key(&mut self, now: Instant) {
        self.last_key = Some(now);
        if let Some(until) = &mut self.held_back_until {
            *until = (*until).max(now + TYPING_PAUSE);
        }
    }

    /// Whether the prompt is open but takes no key yet, because the user is typing.
    pub fn held_back(&self, now: Instant) -> bool {
        self.is_open() && self.held_back_until.is_some_and(|until| now < until)
    }

    /// When the held-back prompt starts taking keys (a frame is due then).
    pub fn takes_keys_at(&self) -> Option<Instant> {
        self.held_back_until.filter(|_| self.is_open())
    }

    /// Forgets a hold-back that has run out; true when the prompt changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        if self.held_back_until.is_some_and(|until| until <= now) {
            self.held_back_until = None;
            return true;
        }
        false
    }

    /// Esc: every call the prompt holds is denied (none is left waiting behind a closed box).
    pub fn dismiss(&mut self) -> Vec<(CallId, Decision)> {
        let decisions = self
            .held
            .drain(..)
            .map(|e| {
                let decision = Decision::Deny {
                    message: Some(ESC_DENIAL.to_string()),
                };
                (e.held.call, decision)
            })
            .collect();
        self.message = None;
        self.scroll = 0;
        self.held_back_until = None;
        decisions
    }

    /// Handles a key; returns the decision once the user made one. Keys are ignored while the
    /// prompt is held back (the caller routes them to the input).
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<(CallId, Decision)> {
        let entry = self.held.front()?;
        let offers_rules = entry.offers_rules();
        let held = &entry.held;
        let is_plan = held.is_plan();
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
        if is_plan {
            return self.plan_key(key);
        }
        match key.code {
            KeyCode::Char('y' | 'Y') => self.decide(Decision::Approve),
            KeyCode::Char('a' | 'A') if offers_rules => {
                let prefix = held.prefix.clone();
                self.decide(Decision::ApproveForSession { prefix })
            }
            KeyCode::Char('p' | 'P') if offers_rules => {
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

    /// The keys of a plan: approve into the chosen mode, choose it, answer with feedback.
    fn plan_key(&mut self, key: KeyEvent) -> Option<(CallId, Decision)> {
        let n = PLAN_MODES.len();
        match key.code {
            KeyCode::Char('y' | 'Y') | KeyCode::Enter => {
                let mode = PLAN_MODES[self.plan_choice % n];
                self.decide(Decision::ApprovePlan { mode })
            }
            KeyCode::Left => {
                self.plan_choice = (self.plan_choice + n - 1) % n;
                None
            }
            KeyCode::Right => {
                self.plan_choice = (self.plan_choice + 1) % n;
                None
            }
            KeyCode::Char('n' | 'N') => self.decide(Decision::Deny { message: None }),
            KeyCode::Char('m' | 'M' | 'f' | 'F') => {
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
        // The key that decided is the last key: a second press does not answer the next call.
        if let Some(now) = self.last_key {
            self.arm(now);
        }
        Some((entry.held.call, decision))
    }

    /// The command (or path), highlighted and wrapped to `width`.
    fn command_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let subject = visible::shown(&held.subject).text;
        if held.is_plan() {
            let indent = [Span::raw("  ")];
            return subject
                .lines()
                .flat_map(|line| {
                    wrap::wrap(&[Span::raw(line.to_string())], width, &indent, &indent)
                })
                .collect();
        }
        let lang = if held.name == "bash" {
            "bash"
        } else {
            highlight::token_for_path(&held.subject)
        };
        let prompt = [Span::styled("  ", theme::base())];
        let mut lines = Vec::new();
        for code in highlight::highlight(&subject, lang) {
            let mut spans = marked::style_markers(code, theme::hidden_marker());
            spans
                .iter_mut()
                .for_each(|s| s.style = s.style.add_modifier(ratatui::style::Modifier::BOLD));
            lines.extend(wrap::hard_wrap(&spans, width, &prompt, &prompt));
        }
        lines
    }

    fn why_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let why = [Span::styled("why: ", theme::bold())];
        let (reason, _) = split_reach(held);
        wrap::wrap(
            &[Span::styled(visible::shown(reason).text, theme::warning())],
            width,
            &why,
            &[Span::raw("     ")],
        )
    }

    fn sandbox_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        if held.name != "bash" {
            return Vec::new();
        }
        if !held.sandboxed {
            return vec![Line::styled(
                "not sandboxed: runs with your full permissions",
                theme::danger(),
            )];
        }
        let mut spans = vec![Span::styled(
            "sandboxed: writes only in the workspace and temp dirs",
            theme::ok(),
        )];
        // What the sandbox lets it reach beyond that (listed Unix sockets, the network).
        if let (_, Some(reach)) = split_reach(held) {
            spans.push(Span::styled(
                format!("; it may {}", visible::shown(reach).text),
                theme::warning(),
            ));
        }
        wrap::wrap(&spans, width, &[], &[Span::raw("  ")])
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
        let keys = self.key_lines(entry, width);
        let why = Self::why_lines(held, width);
        let command = Self::command_lines(held, width);
        let notice: Vec<Line<'static>> = entry
            .notice
            .iter()
            .map(|n| {
                Line::from(vec![
                    Span::styled("  ⚠ ", theme::danger()),
                    Span::styled(wrap::truncate(n, width.saturating_sub(4)), theme::warning()),
                ])
            })
            .collect();
        let dangers: Vec<Line<'static>> = held
            .dangers
            .iter()
            .map(|d| {
                // The reason the `why:` line gives is not said again beside its words.
                let d = match d.split_once(" — ") {
                    Some((words, reason))
                        if reason.starts_with(held.why.as_str())
                            || held.why.starts_with(reason) =>
                    {
                        words
                    }
                    _ => d.as_str(),
                };
                let shown = wrap::truncate(d, width.saturating_sub(4));
                Line::from(vec![
                    Span::styled("  ⚠ ", theme::danger()),
                    Span::styled(shown, theme::danger()),
                ])
            })
            .collect();
        let sandbox = Self::sandbox_lines(held, width);
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
        let n_notice = take(notice.len(), &mut left);
        let n_dangers = take(dangers.len(), &mut left);
        let cmd_min = cmd_first + take(command.len().min(3) - cmd_first, &mut left);
        let n_sandbox = take(sandbox.len(), &mut left);
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
        out.extend(notice.into_iter().take(n_notice));
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

    fn key_lines(&self, entry: &Entry, width: usize) -> Vec<Line<'static>> {
        let held = &entry.held;
        if self.held_back_until.is_some() {
            return wrap::wrap(
                &[Span::styled(
                    "you are typing: your keys go to the input; this prompt takes keys once you pause",
                    theme::warning(),
                )],
                width,
                &[Span::styled("⌨ ", theme::warning())],
                &[Span::raw("  ")],
            );
        }
        if let Some(message) = &self.message {
            let label = if held.is_plan() {
                "feedback (planning goes on): "
            } else {
                "tell the model: "
            };
            let label = [Span::styled(label, theme::bold())];
            let mut lines = wrap::wrap(&[Span::raw(format!("{message}▏"))], width, &label, &[]);
            lines.push(Line::styled(
                "Enter deny with this message · Esc back",
                theme::dim(),
            ));
            return lines;
        }
        let key = |k: &'static str| Span::styled(format!(" {k} "), theme::key());
        if held.is_plan() {
            let mode = PLAN_MODES[self.plan_choice % PLAN_MODES.len()];
            let items = vec![
                vec![
                    key("y"),
                    Span::raw(" approve, then work in "),
                    Span::styled(mode.as_str(), theme::bold()),
                ],
                vec![key("←/→"), Span::raw(" mode")],
                vec![key("m"), Span::raw(" feedback, keep planning")],
                vec![key("n"), Span::raw(" reject")],
                vec![key("Esc"), Span::raw(" close (reject)")],
            ];
            return lay_out(items, width);
        }
        let rule = visible::shown_line(&held.prefix).text;
        let prefix = wrap::truncate(&rule, width.saturating_sub(30).max(8));
        // A fetch's rule is its host: the keys say so instead of showing the rule's words.
        let (session, project) = match rule.strip_prefix("web_fetch ") {
            Some(host) if held.name == "web_fetch" => {
                let host = wrap::truncate(host, width.saturating_sub(30).max(8));
                (
                    format!(" allow {host} for this session"),
                    format!(" always allow {host} in this project"),
                )
            }
            _ => (
                format!(" allow `{prefix}` for this session"),
                format!(" always allow `{prefix}` in this project"),
            ),
        };
        let mut items = vec![vec![key("y"), Span::raw(" approve once")]];
        if entry.offers_rules() {
            items.push(vec![key("a"), Span::raw(session)]);
            items.push(vec![key("p"), Span::raw(project)]);
        }
        items.push(vec![key("n"), Span::raw(" deny")]);
        items.push(vec![key("m"), Span::raw(" deny with a message")]);
        items.push(vec![key("Esc"), Span::raw(" close (deny)")]);
        if held.name == "bash" && held.sandboxed {
            items.insert(1, vec![key("u"), Span::raw(" run without sandbox")]);
        }
        lay_out(items, width)
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
        let title = if held.is_plan() {
            " Plan: approve it? ".to_string()
        } else {
            format!(" Allow {}? ", visible::name(&held.name))
        };
        let inner = crate::tui::modal::modal_frame(
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

/// Key items on as few lines as the width allows.
fn lay_out(items: Vec<Vec<Span<'static>>>, width: usize) -> Vec<Line<'static>> {
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

/// The held call's reason, and what its sandbox would let it reach beyond the workspace
/// (the part of `why` after `bus::SANDBOX_REACH`), when it says.
fn split_reach(held: &Held) -> (&str, Option<&str>) {
    let marker = format!("; {}", crate::bus::SANDBOX_REACH);
    match held.why.split_once(&marker) {
        Some((reason, reach)) if held.sandboxed => (reason, Some(reach)),
        _ => (held.why.as_str(), None),
    }
}

/// One line naming the characters the command, its reason or its rule hold that would not
/// have shown (they are shown as `<U+…>` in the prompt); None when there are none.
fn hidden_notice(held: &Held) -> Option<String> {
    let mut all = visible::shown(&held.subject);
    for part in [visible::shown(&held.why), visible::shown_line(&held.prefix)] {
        for hidden in part.hidden {
            if !all.hidden.contains(&hidden) {
                all.hidden.push(hidden);
            }
        }
    }
    all.note()
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
