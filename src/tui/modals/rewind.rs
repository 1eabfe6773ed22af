//! The `/rewind` picker and the confirmation of `/undo`, `/redo` and `/rewind`. The picker
//! lists the conversation's user messages, newest first; Enter asks what to restore (files,
//! conversation or both). The confirmation shows every file the restore changes with its diff
//! (current → restored) and the files it leaves alone with the reason; y applies, n closes.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::bus::{Restore, RestorePlan, RewindPoint, UserCommand};
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::modal::{self, LayerOutcome};
use crate::tui::{theme, wrap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Pick,
    /// Files, conversation or both?
    Choose,
    /// The plan was asked for; the confirmation replaces this layer when it arrives.
    Waiting,
}

/// `/rewind`: the earlier user messages, newest first.
#[derive(Debug)]
pub struct RewindPicker {
    points: Vec<RewindPoint>,
    selected: usize,
    stage: Stage,
}

impl RewindPicker {
    pub fn new(points: Vec<RewindPoint>) -> Self {
        Self {
            points,
            selected: 0,
            stage: Stage::Pick,
        }
    }

    /// The chosen message, while its plan is awaited.
    pub fn waiting_for(&self) -> Option<&RewindPoint> {
        (self.stage == Stage::Waiting)
            .then(|| self.points.get(self.selected))
            .flatten()
    }

    /// Which step the picker is at: a new step takes no key for the stand-alone rule's dead
    /// time.
    pub fn step(&self) -> u8 {
        self.stage as u8
    }

    /// Whether `c` is one of the picker's keys now (other characters are text for the input).
    pub fn takes_char(&self, c: char) -> bool {
        match self.stage {
            Stage::Pick => matches!(c, 'j' | 'k' | 'q'),
            Stage::Choose => matches!(c, 'b' | 'c' | 'f' | 'q'),
            Stage::Waiting => false,
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> LayerOutcome {
        match self.stage {
            Stage::Pick => self.pick_key(key),
            Stage::Choose => self.choose_key(key),
            Stage::Waiting => match key.code {
                KeyCode::Esc => LayerOutcome::Closed,
                _ => LayerOutcome::Open,
            },
        }
    }

    fn pick_key(&mut self, key: KeyEvent) -> LayerOutcome {
        match keymap::action(Scope::Rewind, &key) {
            Some(Action::Close) => LayerOutcome::Closed,
            Some(action @ (Action::SelectPrev | Action::SelectNext)) => {
                modal::move_selection(&mut self.selected, self.points.len(), action);
                LayerOutcome::Open
            }
            Some(Action::Choose) if !self.points.is_empty() => {
                self.stage = Stage::Choose;
                LayerOutcome::Open
            }
            Some(Action::Choose) => LayerOutcome::Closed,
            _ => LayerOutcome::Open,
        }
    }

    fn choose_key(&mut self, key: KeyEvent) -> LayerOutcome {
        let Some(point) = self.points.get(self.selected) else {
            return LayerOutcome::Closed;
        };
        let (files, conversation) = match key.code {
            KeyCode::Char('b') | KeyCode::Enter => (true, true),
            KeyCode::Char('c') => (false, true),
            KeyCode::Char('f') => (true, false),
            KeyCode::Esc | KeyCode::Char('q') => {
                self.stage = Stage::Pick;
                return LayerOutcome::Open;
            }
            _ => return LayerOutcome::Open,
        };
        let what = Restore::Rewind {
            at: point.at,
            files,
            conversation,
        };
        // Files are shown to confirm first; the conversation alone changes no file.
        if files {
            self.stage = Stage::Waiting;
            LayerOutcome::Send {
                command: UserCommand::Restore { what, apply: false },
                close: false,
            }
        } else {
            LayerOutcome::Send {
                command: UserCommand::Restore { what, apply: true },
                close: true,
            }
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).min(100);
        let (title, hint) = match self.stage {
            Stage::Pick => (
                " Rewind to before a message ",
                " ↑↓ choose · Enter select · Esc close ",
            ),
            Stage::Choose => (
                " Rewind: what to restore? ",
                " b both · c conversation · f files · Esc back ",
            ),
            Stage::Waiting => (" Rewind ", " Esc close "),
        };
        let wanted = match self.stage {
            Stage::Pick => self.points.len() as u16 + 2,
            Stage::Choose | Stage::Waiting => 9,
        };
        let height = wanted
            .clamp(3, area.height.saturating_sub(2).max(3))
            .min(area.height);
        let inner = modal::modal_frame(
            area,
            width,
            height,
            Span::styled(title, theme::bold()),
            Line::styled(hint, theme::dim()),
            theme::border_focused(),
            buf,
        );
        let line_at = |buf: &mut Buffer, row: u16, line: Line| {
            if row < inner.height {
                buf.set_line(inner.x, inner.y + row, &line, inner.width);
            }
        };
        let cols = usize::from(inner.width);
        if self.points.is_empty() {
            line_at(
                buf,
                0,
                Line::styled("No earlier message in this conversation.", theme::dim()),
            );
            return;
        }
        match self.stage {
            Stage::Pick => {
                let rows = usize::from(inner.height);
                let first = (self.selected + 1).saturating_sub(rows);
                // The times in one column: "09:41" and "2026-11-29 17:05" side by side.
                let when_width = self
                    .points
                    .iter()
                    .filter_map(|p| p.when.as_ref())
                    .map(|w| w.chars().count())
                    .max();
                for (i, point) in self.points.iter().enumerate().skip(first).take(rows) {
                    let style = if i == self.selected {
                        theme::selected()
                    } else {
                        theme::base()
                    };
                    let when = match when_width {
                        Some(width) => {
                            let when = point.when.as_deref().unwrap_or("");
                            format!("  {when:>width$}")
                        }
                        None => String::new(),
                    };
                    let text = format!("{}{when}  {}", point_label(point), preview(&point.text));
                    line_at(
                        buf,
                        (i - first) as u16,
                        Line::styled(wrap::truncate(&text, cols), style),
                    );
                }
            }
            Stage::Choose | Stage::Waiting => {
                let Some(point) = self.points.get(self.selected) else {
                    return;
                };
                let files = match point.changes {
                    0 => "no file changed since".to_string(),
                    1 => "1 turn changed files since".to_string(),
                    n => format!("{n} turns changed files since"),
                };
                let rows = [
                    Line::styled(
                        wrap::truncate(&format!("Before: {}", preview(&point.text)), cols),
                        theme::user(),
                    ),
                    Line::styled(
                        match &point.when {
                            Some(when) => format!("{} · {when} · {files}", point_label(point)),
                            None => format!("{} · {files}", point_label(point)),
                        },
                        theme::dim(),
                    ),
                    Line::default(),
                    choice_line('b', "both: files and conversation"),
                    choice_line('c', "conversation only (files stay as they are)"),
                    choice_line('f', "files only (the conversation goes on)"),
                ];
                for (row, line) in rows.into_iter().enumerate() {
                    line_at(buf, row as u16, line);
                }
                if self.stage == Stage::Waiting {
                    line_at(
                        buf,
                        6,
                        Line::styled("working out what changes…", theme::dim()),
                    );
                }
            }
        }
    }
}

fn choice_line(key: char, text: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("  {key}  "), theme::key()),
        Span::styled(text.to_string(), theme::base()),
    ])
}

fn point_label(point: &RewindPoint) -> String {
    format!("step {:>3}", point.step)
}

/// The first line of a message, for one row.
fn preview(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    if text.lines().nth(1).is_some() {
        format!("{first} …")
    } else {
        first.to_string()
    }
}

/// The confirmation of an undo, redo or rewind: the files it changes with their diffs, the
/// files it leaves alone and why. Scrolls when taller than the screen.
#[derive(Debug)]
pub struct RestoreConfirm {
    what: Restore,
    /// What is being restored, for the title ("Undo the last turn").
    label: String,
    lines: Vec<Line<'static>>,
    scroll: usize,
}

impl RestoreConfirm {
    pub fn new(what: Restore, plan: &RestorePlan, point: Option<&RewindPoint>) -> Self {
        let label = match (&what, point) {
            (Restore::Undo, _) => "Undo the last turn".to_string(),
            (Restore::Redo, _) => "Redo what the last undo took back".to_string(),
            (Restore::Rewind { conversation, .. }, point) => {
                let before = point.map(|p| preview(&p.text)).unwrap_or_default();
                let what = if *conversation {
                    "files and conversation"
                } else {
                    "files"
                };
                format!("Rewind {what} to before “{before}”")
            }
        };
        Self {
            lines: plan_lines(&what, plan),
            what,
            label,
            scroll: 0,
        }
    }

    /// Whether `c` is one of the confirmation's keys (other characters are text).
    pub fn takes_char(&self, c: char) -> bool {
        matches!(c, 'y' | 'n' | 'q' | 'j' | 'k')
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> LayerOutcome {
        match key.code {
            KeyCode::Char('y') | KeyCode::Enter => LayerOutcome::Send {
                command: UserCommand::Restore {
                    what: self.what.clone(),
                    apply: true,
                },
                close: true,
            },
            KeyCode::Char('n') | KeyCode::Esc | KeyCode::Char('q') => LayerOutcome::Closed,
            KeyCode::Down | KeyCode::Char('j') => self.scroll_by(1),
            KeyCode::Up | KeyCode::Char('k') => self.scroll_by(-1),
            KeyCode::PageDown => self.scroll_by(10),
            KeyCode::PageUp => self.scroll_by(-10),
            _ => LayerOutcome::Open,
        }
    }

    fn scroll_by(&mut self, by: isize) -> LayerOutcome {
        self.scroll = self
            .scroll
            .saturating_add_signed(by)
            .min(self.lines.len().saturating_sub(1));
        LayerOutcome::Open
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).min(110);
        let height = (self.lines.len() as u16 + 2).clamp(5, area.height.saturating_sub(2).max(5));
        let inner = modal::modal_frame(
            area,
            width,
            height,
            // A long label is cut with an ellipsis, never mid-word without a sign.
            Span::styled(
                format!(
                    " {} ",
                    wrap::truncate(&self.label, usize::from(width).saturating_sub(6))
                ),
                theme::bold(),
            ),
            Line::styled(" y apply · n cancel · ↑↓ PgUp PgDn scroll ", theme::dim()),
            theme::modal_border(),
            buf,
        );
        let rows = usize::from(inner.height);
        let first = self.scroll.min(self.lines.len().saturating_sub(rows));
        for (row, line) in self.lines.iter().skip(first).take(rows).enumerate() {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let style = line.spans.first().map_or(Style::default(), |s| s.style);
            buf.set_line(
                inner.x,
                inner.y + row as u16,
                &Line::styled(wrap::truncate(&text, usize::from(inner.width)), style),
                inner.width,
            );
        }
    }
}

/// The confirmation's rows: a summary, each file with its diff, then the conflicts.
fn plan_lines(what: &Restore, plan: &RestorePlan) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let conversation = matches!(
        what,
        Restore::Rewind {
            conversation: true,
            ..
        }
    );
    if conversation {
        out.push(Line::styled(
            "The conversation goes back to before this message (the rest stays in the log).",
            theme::base(),
        ));
    }
    let files = plan.files.len();
    out.push(Line::styled(
        match files {
            0 => "No file changes.".to_string(),
            1 => "This changes 1 file:".to_string(),
            n => format!("This changes {n} files:"),
        },
        theme::bold(),
    ));
    for file in &plan.files {
        out.push(Line::styled(
            format!(
                "{} {}",
                crate::tui::modals::rewind::action_label(file),
                crate::visible::name(&file.path)
            ),
            theme::accent(),
        ));
        for line in file.diff.lines() {
            let style = if line.starts_with("+++") || line.starts_with("---") {
                continue;
            } else if line.starts_with('+') {
                theme::added()
            } else if line.starts_with('-') {
                theme::removed()
            } else if line.starts_with("@@") {
                theme::hunk_header()
            } else {
                theme::dim()
            };
            out.push(Line::styled(format!("  {line}"), style));
        }
    }
    if let Some(note) = &plan.note {
        out.push(Line::styled(note.clone(), theme::dim()));
    }
    if !plan.conflicts.is_empty() {
        out.push(Line::default());
        out.push(Line::styled(
            format!("{} left alone (changed since):", plan.conflicts.len()),
            theme::warning(),
        ));
        for conflict in &plan.conflicts {
            out.push(Line::styled(
                format!(
                    "! {}: {}",
                    crate::visible::name(&conflict.path),
                    conflict.why
                ),
                theme::warning(),
            ));
        }
    }
    out
}

/// How a file is restored, from its diff (current → restored).
pub fn action_label(file: &crate::tool_output::FileChange) -> &'static str {
    if file.created {
        "recreate"
    } else if file.diff.contains("+++ /dev/null") {
        "remove  "
    } else {
        "restore "
    }
}

/// What a restore did to a file, for the line after it: "restored", "removed", "recreated".
fn done_label(file: &crate::tool_output::FileChange) -> &'static str {
    match action_label(file).trim_end() {
        "recreate" => "recreated",
        "remove" => "removed",
        _ => "restored",
    }
}

/// The transcript's note after a restore was done.
pub fn restored_text(what: &Restore, done: &RestorePlan) -> String {
    let head = match what {
        Restore::Undo => "undid the last turn",
        Restore::Redo => "redid the undone turn",
        Restore::Rewind {
            files: true,
            conversation: true,
            ..
        } => "rewound the files and the conversation",
        Restore::Rewind { files: true, .. } => "rewound the files",
        Restore::Rewind { .. } => "rewound the conversation (the files stay as they are)",
    };
    let mut out = head.to_string();
    let files_asked = !matches!(what, Restore::Rewind { files: false, .. });
    if files_asked {
        let names: Vec<String> = done
            .files
            .iter()
            .take(8)
            .map(|f| format!("{} {}", done_label(f), crate::visible::name(&f.path)))
            .collect();
        if names.is_empty() {
            out.push_str(": no file changed");
        } else {
            out.push_str(": ");
            out.push_str(&names.join(", "));
            if done.files.len() > 8 {
                out.push_str(&format!(" and {} more", done.files.len() - 8));
            }
        }
    }
    for conflict in &done.conflicts {
        out.push_str(&format!(
            "\n  left alone {}: {}",
            crate::visible::name(&conflict.path),
            conflict.why
        ));
    }
    out
}

#[cfg(test)]
#[path = "rewind_tests.rs"]
mod tests;
