//! The revert confirmation: a modal opened by `r`/`R` in the diff pane. It asks the agent what
//! the revert would do now (`PreviewRevert`) and shows the answer: the reverse diff of each
//! file against its current content (with a warning for protected places and paths outside the
//! workspace), to apply with `y`; or the conflict — which lines differ, what was expected and
//! what is there — with only "close". Applying changes files, so it takes a second step: `y`
//! (or Enter) asks once more, and `y` on that line applies. Nothing is written before it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::{RevertConflict, RevertFile, RevertPlan, RevertTarget, UserCommand};
use crate::tui::modals::modal::{LayerOutcome, modal_frame};
use crate::tui::{highlight, panes::diffs, theme, wrap};

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Asked the agent; no answer yet.
    Asking,
    Shown {
        plan: RevertPlan,
        moved: bool,
    },
    /// Confirmed; waiting for `Reverted`.
    Applying,
}

#[derive(Debug)]
pub struct RevertModal {
    target: RevertTarget,
    what: String,
    state: State,
    scroll: usize,
    /// `y` was pressed on the preview: the confirmation line is shown.
    confirming: bool,
}

impl RevertModal {
    /// A modal waiting for the preview of `target`.
    pub fn asking(target: RevertTarget) -> Self {
        Self {
            target,
            what: String::new(),
            state: State::Asking,
            scroll: 0,
            confirming: false,
        }
    }

    pub fn target(&self) -> &RevertTarget {
        &self.target
    }

    /// The agent's answer (a preview, or a new one when the files moved before `y`).
    pub fn show(&mut self, what: &str, plan: RevertPlan, moved: bool) {
        what.clone_into(&mut self.what);
        self.state = State::Shown { plan, moved };
        self.scroll = 0;
        self.confirming = false;
    }

    /// Which step the modal is at (asking, shown, confirming, applying): a new step takes no
    /// key for the stand-alone rule's dead time.
    pub fn step(&self) -> u8 {
        match &self.state {
            State::Asking => 0,
            State::Shown { .. } if self.confirming => 2,
            State::Shown { .. } => 1,
            State::Applying => 3,
        }
    }

    /// Whether `c` is one of the modal's keys (other characters are text for the input).
    pub fn takes_char(&self, c: char) -> bool {
        if self.confirming {
            return matches!(c, 'y' | 'n');
        }
        let ready = matches!(
            self.state,
            State::Shown {
                plan: RevertPlan::Ready { .. },
                ..
            }
        );
        matches!(c, 'n' | 'q' | 'j' | 'k') || (c == 'y' && ready)
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> LayerOutcome {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if self.confirming {
            return match key.code {
                KeyCode::Char('y') | KeyCode::Enter if plain => self.apply(),
                KeyCode::Esc | KeyCode::Char('n') if plain => {
                    self.confirming = false;
                    LayerOutcome::Open
                }
                _ => LayerOutcome::Open,
            };
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('n' | 'q') if plain => return LayerOutcome::Closed,
            KeyCode::Char('j') | KeyCode::Down => self.scroll += 1,
            KeyCode::Char('k') | KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll += 10,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Char('y') | KeyCode::Enter if plain => match &self.state {
                State::Shown {
                    plan: RevertPlan::Ready { .. },
                    ..
                } => self.confirming = true,
                State::Shown { .. } if key.code == KeyCode::Enter => return LayerOutcome::Closed,
                _ => {}
            },
            _ => {}
        }
        LayerOutcome::Open
    }

    /// The confirmed revert goes to the agent (with the stamp of the preview shown).
    fn apply(&mut self) -> LayerOutcome {
        let State::Shown {
            plan: RevertPlan::Ready { stamp, .. },
            ..
        } = &self.state
        else {
            return LayerOutcome::Open;
        };
        let command = UserCommand::Revert {
            target: self.target.clone(),
            stamp: stamp.clone(),
        };
        self.confirming = false;
        self.state = State::Applying;
        LayerOutcome::Send {
            command,
            close: false,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).clamp(20, 110);
        let inner_width = usize::from(width.saturating_sub(2));
        let (title, border, hint, body) = self.content(inner_width);
        let height = (body.len() as u16 + 2).clamp(5, area.height.saturating_sub(2).max(5));
        let inner = modal_frame(
            area,
            width,
            height,
            Span::styled(title, theme::bold()),
            hint,
            border,
            buf,
        );
        let rows = usize::from(inner.height);
        let scroll = self.scroll.min(body.len().saturating_sub(rows));
        for (i, line) in body.iter().skip(scroll).take(rows).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }

    #[allow(clippy::type_complexity)]
    fn content(
        &self,
        width: usize,
    ) -> (
        &'static str,
        ratatui::style::Style,
        Line<'static>,
        Vec<Line<'static>>,
    ) {
        let close = key_hint(&[("Esc", "close")]);
        match &self.state {
            State::Asking => (
                " Revert ",
                theme::modal_border(),
                close,
                vec![Line::styled(
                    "Working out what the revert would do to the files as they are now…",
                    theme::dim(),
                )],
            ),
            State::Applying => (
                " Revert ",
                theme::modal_border(),
                close,
                vec![Line::styled("Reverting…", theme::dim())],
            ),
            State::Shown { plan, moved } => match plan {
                RevertPlan::Ready { files, .. } if self.confirming => {
                    let mut lines = wrap_text(
                        &format!(
                            "Apply it: {} will change on disk now. Sure?",
                            count(files.len(), "file")
                        ),
                        width,
                        theme::warning(),
                    );
                    lines.extend(self.ready_lines(files, *moved, width));
                    (
                        " Revert: apply? ",
                        theme::modal_border(),
                        key_hint(&[("y", "yes, revert"), ("n/Esc", "back")]),
                        lines,
                    )
                }
                RevertPlan::Ready { files, .. } => (
                    " Revert? ",
                    theme::modal_border(),
                    key_hint(&[("y", "apply…"), ("n/Esc", "cancel"), ("j/k", "scroll")]),
                    self.ready_lines(files, *moved, width),
                ),
                RevertPlan::Conflict { conflicts } => (
                    " Cannot revert ",
                    theme::warning(),
                    close,
                    self.conflict_lines(conflicts, width),
                ),
                RevertPlan::Refused { reason } => (
                    " Cannot revert ",
                    theme::warning(),
                    close,
                    wrap_text(
                        &format!("Nothing was changed: {reason}"),
                        width,
                        theme::base(),
                    ),
                ),
            },
        }
    }

    fn ready_lines(&self, files: &[RevertFile], moved: bool, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        if moved {
            out.extend(wrap_text(
                "The files changed since the preview: this is what would happen now.",
                width,
                theme::warning(),
            ));
        }
        out.extend(wrap_text(
            &format!(
                "Revert {}. This will change the files as they are now:",
                self.what
            ),
            width,
            theme::base(),
        ));
        for file in files {
            let change = &file.change;
            let verb = if change.created {
                "recreate"
            } else if change.diff.contains("\n+++ /dev/null") {
                "delete"
            } else {
                "change"
            };
            out.push(Line::from(vec![
                Span::styled(
                    format!("◆ {verb} {} ", crate::visible::name(&change.path)),
                    theme::heading(),
                ),
                Span::styled(format!("+{}", change.added), theme::added()),
                Span::raw(" "),
                Span::styled(format!("-{}", change.removed), theme::removed()),
            ]));
            if let Some(warning) = &file.warning {
                out.extend(wrap_text(&format!("⚠ {warning}"), width, theme::danger()));
            }
            let parsed = diffs::parse(&change.diff);
            out.extend(diffs::unified(
                &parsed,
                highlight::token_for_path(&change.path),
                width,
            ));
            if parsed.is_empty() {
                out.extend(
                    change
                        .diff
                        .lines()
                        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
                        .map(|l| Line::styled(wrap::truncate(l, width), theme::dim())),
                );
            }
        }
        out
    }

    fn conflict_lines(&self, conflicts: &[RevertConflict], width: usize) -> Vec<Line<'static>> {
        let mut out = wrap_text(
            &format!(
                "Nothing was changed. {} cannot be reverted cleanly:",
                upper_first(&self.what)
            ),
            width,
            theme::base(),
        );
        for conflict in conflicts {
            out.extend(wrap_text(
                &format!(
                    "✗ {}: {}",
                    crate::visible::name(&conflict.path),
                    conflict.why
                ),
                width,
                theme::warning(),
            ));
            for line in &conflict.lines {
                let number = format!("  line {}: ", line.line);
                let pad = " ".repeat(wrap::width(&number));
                out.push(Line::from(vec![
                    Span::styled(number, theme::line_number()),
                    Span::styled("expected ", theme::dim()),
                    Span::styled(
                        wrap::truncate(&line.expected, width.saturating_sub(20)),
                        theme::removed(),
                    ),
                ]));
                let found = match &line.found {
                    Some(text) => Span::styled(
                        wrap::truncate(text, width.saturating_sub(20)),
                        theme::added(),
                    ),
                    None => Span::styled("(the end of the file)", theme::dim()),
                };
                out.push(Line::from(vec![
                    Span::raw(pad),
                    Span::styled("found    ", theme::dim()),
                    found,
                ]));
            }
        }
        out
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn key_hint(keys: &[(&str, &str)]) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for (i, (key, what)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme::dim()));
        }
        spans.push(Span::styled(key.to_string(), theme::key()));
        spans.push(Span::raw(format!(" {what}")));
    }
    spans.push(Span::raw(" "));
    Line::from(spans)
}

/// `text` wrapped at words to `width`, in one style.
fn wrap_text(text: &str, width: usize, style: ratatui::style::Style) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && wrap::width(&line) + 1 + wrap::width(word) > width {
            out.push(Line::styled(std::mem::take(&mut line), style));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(Line::styled(line, style));
    }
    out
}

#[cfg(test)]
#[path = "revert_tests.rs"]
mod tests;
