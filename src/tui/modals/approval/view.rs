//! How the approval prompt draws: the command highlighted and wrapped, why it was held, the
//! sandbox it would run in, a held write's diff and the keys, laid out to the modal's height
//! so the keys, the `why:` line and every dangerous part stay on screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::{Decision, DecisionKind};
use crate::tui::modals::approval::{ApprovalPrompt, DIFF_ROWS, Held, HeldCall, PLAN_MODES};
use crate::tui::{highlight, marked, panes::diffs, theme, wrap};
use crate::visible;

impl ApprovalPrompt {
    /// The command (or path), highlighted and wrapped to `width`.
    pub(super) fn command_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let subject = visible::shown(&held.subject).text;
        if held.is_plan() {
            // A plan is the model's markdown: headings, lists and code read as they would
            // in the transcript.
            return crate::tui::panes::transcript::render::markdown(
                &subject,
                width.saturating_sub(2),
            )
            .into_iter()
            .map(|line| {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(line.spans);
                Line::from(spans)
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

    pub(super) fn why_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
        let why = [Span::styled("why: ", theme::bold())];
        wrap::wrap(
            &[Span::styled(
                visible::shown(&held.why).text,
                theme::warning(),
            )],
            width,
            &why,
            &[Span::raw("     ")],
        )
    }

    pub(super) fn sandbox_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
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
        if let Some(reach) = &held.reach {
            spans.push(Span::styled(
                format!("; it may {}", visible::shown(reach).text),
                theme::warning(),
            ));
        }
        wrap::wrap(&spans, width, &[], &[Span::raw("  ")])
    }

    pub(super) fn diff_lines(held: &Held, width: usize) -> Vec<Line<'static>> {
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
    pub(super) fn layout(&self, entry: &HeldCall, width: usize, rows: usize) -> Vec<Line<'static>> {
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
        let said =
            |reason: &str| reason.starts_with(held.why.as_str()) || held.why.starts_with(reason);
        let dangers: Vec<Line<'static>> = held
            .dangers
            .iter()
            .filter_map(|d| {
                // The reason the `why:` line gives is not said again: beside its words only
                // the words, and a danger that is only that reason not at all.
                let d = match d.split_once(" — ") {
                    Some((words, reason)) if said(reason) => words,
                    None if said(d) => return None,
                    _ => d.as_str(),
                };
                let shown = wrap::truncate(d, width.saturating_sub(4));
                Some(Line::from(vec![
                    Span::styled("  ⚠ ", theme::danger()),
                    Span::styled(shown, theme::danger()),
                ]))
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
    pub(super) fn command_view(
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

    pub(super) fn key_lines(&self, entry: &HeldCall, width: usize) -> Vec<Line<'static>> {
        let held = &entry.held;
        if self.typing {
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
        if let Some(rule) = &self.confirm {
            return confirm_lines(rule, held, width);
        }
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
        if held.offers(DecisionKind::ApproveUnsandboxed) {
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
        let inner = crate::tui::modals::modal::modal_frame(
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

/// The second step of an "always" answer: what the rule will allow and where, and y or n.
fn confirm_lines(rule: &Decision, held: &Held, width: usize) -> Vec<Line<'static>> {
    let prefix = visible::shown_line(&held.prefix).text;
    let what = match prefix.strip_prefix("web_fetch ") {
        Some(host) if held.name == "web_fetch" => host.to_string(),
        _ => format!("`{prefix}`"),
    };
    let question = match rule {
        Decision::ApproveForProject { .. } => format!(
            "always allow {what} in this project, now and in later sessions (saved as a project rule)?"
        ),
        _ => format!("allow {what} for the rest of this session, without asking again?"),
    };
    let mut lines = wrap::wrap(&[Span::styled(question, theme::warning())], width, &[], &[]);
    let key = |k: &'static str| Span::styled(format!(" {k} "), theme::key());
    lines.extend(lay_out(
        vec![
            vec![key("y"), Span::raw(" yes, allow it")],
            vec![key("n"), Span::raw(" no, back")],
            vec![key("Esc"), Span::raw(" back")],
        ],
        width,
    ));
    lines
}

/// Key items on as few lines as the width allows. An item wider than the width (a long
/// rule at 80 columns) is wrapped at its spaces under its own words, never cut mid-word.
fn lay_out(items: Vec<Vec<Span<'static>>>, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut line: Vec<Span<'static>> = Vec::new();
    for item in items {
        let w: usize = item.iter().map(|s| wrap::width(&s.content)).sum();
        let used: usize = line.iter().map(|s| wrap::width(&s.content)).sum();
        if !line.is_empty() && used + 3 + w > width {
            lines.push(Line::from(std::mem::take(&mut line)));
        }
        if w > width {
            let (key, words) = item.split_at(item.len().min(1));
            let indent = key.iter().map(|s| wrap::width(&s.content)).sum::<usize>();
            lines.extend(wrap::wrap(
                words,
                width,
                key,
                &[Span::raw(" ".repeat(indent))],
            ));
            continue;
        }
        if !line.is_empty() {
            line.push(Span::raw("   "));
        }
        line.extend(item);
    }
    lines.push(Line::from(line));
    lines
}

/// One line naming the characters the command, its reason or its rule hold that would not
/// have shown (they are shown as `<U+…>` in the prompt); None when there are none.
pub(super) fn hidden_notice(held: &Held) -> Option<String> {
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
