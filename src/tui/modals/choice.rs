//! The mode and model pickers: `/mode` and `/model` with no argument. A short list to choose
//! from with ↑/↓ and Enter, the current choice marked (●). The model picker lists what the
//! agent got from the provider's `/models` (asked for in the background: "asking…" until it
//! answers; the configured model first) and filters it as the user types; what is typed is
//! also a choice of its own, so a model the list lacks — or every model, when the list is
//! unavailable, which it says with the reason — can still be picked by name.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::Mode;
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::modal::{self, LayerOutcome};
use crate::tui::{theme, wrap};

/// The modes in the order the picker lists them (Shift+Tab's cycle, then `never`).
pub const MODES: [Mode; 5] = [
    Mode::Ask,
    Mode::AutoEdit,
    Mode::Auto,
    Mode::Plan,
    Mode::Never,
];

/// What the user picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    Mode(Mode),
    Model(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PickerKind {
    Mode,
    Model,
}

/// Where the model picker's list stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ModelListing {
    /// The mode picker's fixed list, or the provider's list as it came.
    Ready,
    Asking,
    /// The provider's list could not be had: why.
    Unavailable(String),
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    value: String,
    description: String,
    /// The typed name, not one of the listed ones.
    typed: bool,
}

#[derive(Debug)]
pub struct ChoicePicker {
    kind: PickerKind,
    current: String,
    /// (value, description) as listed.
    items: Vec<(String, String)>,
    listing: ModelListing,
    /// The model picker's filter (and free-text name).
    typed: String,
    selected: usize,
}

impl ChoicePicker {
    /// The mode picker, on the current mode.
    pub fn modes(current: Mode) -> Self {
        let items = MODES
            .iter()
            .map(|m| (m.to_string(), mode_summary(*m).to_string()))
            .collect();
        let mut picker = Self {
            kind: PickerKind::Mode,
            current: current.to_string(),
            items,
            listing: ModelListing::Ready,
            typed: String::new(),
            selected: 0,
        };
        picker.select_current();
        picker
    }

    /// The model picker while the provider's list is asked for; the current model is a
    /// choice already.
    pub fn models(current: &str) -> Self {
        Self {
            kind: PickerKind::Model,
            current: current.to_string(),
            items: vec![(current.to_string(), "current".to_string())],
            listing: ModelListing::Asking,
            typed: String::new(),
            selected: 0,
        }
    }

    pub fn is_model_picker(&self) -> bool {
        self.kind == PickerKind::Model
    }

    /// The agent's answer to the listing (`ReportEvent::Models`).
    pub fn models_listed(
        &mut self,
        models: &[String],
        configured: &str,
        unavailable: Option<&str>,
    ) {
        self.items = models
            .iter()
            .map(|m| {
                let description = match (m == configured, *m == self.current) {
                    (true, true) => "configured · current",
                    (true, false) => "configured",
                    (false, true) => "current",
                    (false, false) => "",
                };
                (m.clone(), description.to_string())
            })
            .collect();
        self.listing = match unavailable {
            Some(why) => ModelListing::Unavailable(why.to_string()),
            None => ModelListing::Ready,
        };
        if self.typed.is_empty() {
            self.select_current();
        }
    }

    fn select_current(&mut self) {
        let rows = self.rows();
        self.selected = rows
            .iter()
            .position(|r| r.value == self.current)
            .unwrap_or(0);
    }

    /// The rows shown: the listed items matching what is typed, then the typed name itself
    /// when it is none of them.
    fn rows(&self) -> Vec<Row> {
        let filter = self.typed.trim().to_lowercase();
        let mut rows: Vec<Row> = self
            .items
            .iter()
            .filter(|(value, _)| filter.is_empty() || value.to_lowercase().contains(&filter))
            .map(|(value, description)| Row {
                value: value.clone(),
                description: description.clone(),
                typed: false,
            })
            .collect();
        let name = self.typed.trim();
        if self.kind == PickerKind::Model
            && !name.is_empty()
            && !rows.iter().any(|r| r.value == name)
        {
            rows.push(Row {
                value: name.to_string(),
                description: "use this name (not in the list)".to_string(),
                typed: true,
            });
        }
        rows
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> LayerOutcome<Pick> {
        let rows = self.rows();
        match keymap::action(Scope::Choice, &key) {
            Some(Action::Close) => return LayerOutcome::Closed,
            Some(action @ (Action::SelectPrev | Action::SelectNext)) => {
                modal::move_selection(&mut self.selected, rows.len(), action);
                return LayerOutcome::Open;
            }
            Some(Action::Choose) => {
                let Some(row) = rows.get(self.selected) else {
                    return LayerOutcome::Open;
                };
                return LayerOutcome::Chosen(match self.kind {
                    PickerKind::Model => Pick::Model(row.value.clone()),
                    PickerKind::Mode => match row.value.parse::<Mode>() {
                        Ok(mode) => Pick::Mode(mode),
                        Err(_) => return LayerOutcome::Open,
                    },
                });
            }
            _ => {}
        }
        if self.kind == PickerKind::Model {
            let plain = !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
            match key.code {
                KeyCode::Char(c) if plain && !c.is_control() => self.type_text(&c.to_string()),
                KeyCode::Backspace => {
                    self.typed.pop();
                    self.selected = 0;
                }
                _ => {}
            }
        }
        LayerOutcome::Open
    }

    /// Pasted text joins the typed name (one line of it).
    pub fn paste(&mut self, text: &str) {
        if self.kind == PickerKind::Model {
            let line = text.lines().next().unwrap_or("").trim();
            self.type_text(line);
        }
    }

    fn type_text(&mut self, text: &str) {
        self.typed.extend(
            text.chars()
                .filter(|c| !c.is_control() && !c.is_whitespace()),
        );
        self.selected = 0;
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let rows = self.rows();
        let width = area.width.saturating_sub(4).min(84);
        let inner_width = usize::from(width.saturating_sub(2));
        let mut head: Vec<Line<'static>> = Vec::new();
        if self.kind == PickerKind::Model {
            let typed = if self.typed.is_empty() {
                Span::styled("type to filter, or a model name to use", theme::dim())
            } else {
                Span::styled(crate::visible::name(&self.typed), theme::base())
            };
            head.push(Line::from(vec![Span::styled("› ", theme::accent()), typed]));
            match &self.listing {
                ModelListing::Ready => {}
                ModelListing::Asking => head.push(Line::styled(
                    "asking the provider for its models…",
                    theme::dim(),
                )),
                ModelListing::Unavailable(why) => {
                    let text = format!(
                        "the provider's model list is unavailable: {why}. Type a model name and press Enter."
                    );
                    for line in wrap_words(&text, inner_width) {
                        head.push(Line::styled(line, theme::warning()));
                    }
                }
            }
        }
        let wanted = (head.len() + rows.len().max(1)) as u16 + 2;
        let height = wanted.clamp(4, area.height.saturating_sub(2).max(4));
        let (title, hint) = match self.kind {
            PickerKind::Mode => (
                " Permission mode ",
                " ↑↓ choose · Enter switch · Esc close ",
            ),
            PickerKind::Model => (" Model ", " ↑↓ choose · Enter switch · Esc close "),
        };
        let inner = modal::modal_frame(
            area,
            width,
            height,
            Span::styled(title, theme::bold()),
            Line::styled(hint, theme::dim()),
            theme::border_focused(),
            buf,
        );
        let mut y = inner.y;
        let bottom = inner.y + inner.height;
        for line in head {
            if y >= bottom {
                return;
            }
            buf.set_line(inner.x, y, &line, inner.width);
            y += 1;
        }
        let visible = usize::from(bottom.saturating_sub(y));
        if rows.is_empty() {
            if visible > 0 {
                let line = Line::styled("no model matches; keep typing a name", theme::dim());
                buf.set_line(inner.x, y, &line, inner.width);
            }
            return;
        }
        let first = (self.selected + 1).saturating_sub(visible);
        let name_width = rows
            .iter()
            .map(|r| wrap::width(&crate::visible::name(&r.value)))
            .max()
            .unwrap_or(0)
            .min(inner_width / 2);
        for (i, row) in rows.iter().enumerate().skip(first).take(visible) {
            let marker = if row.value == self.current && !row.typed {
                "● "
            } else {
                "  "
            };
            let name = wrap::truncate(&crate::visible::name(&row.value), name_width);
            let pad = name_width.saturating_sub(wrap::width(&name));
            let rest = inner_width.saturating_sub(name_width + 4);
            let (name_style, description_style) = if i == self.selected {
                (theme::selected(), theme::selected())
            } else {
                (theme::base(), theme::dim())
            };
            let line = Line::from(vec![
                Span::styled(marker, theme::accent()),
                Span::styled(format!("{name}{}", " ".repeat(pad)), name_style),
                Span::styled("  ", name_style),
                Span::styled(wrap::truncate(&row.description, rest), description_style),
            ]);
            buf.set_line(inner.x, y + (i - first) as u16, &line, inner.width);
        }
    }
}

/// `text` wrapped at spaces to `width` columns.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && wrap::width(&line) + 1 + wrap::width(word) > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&wrap::truncate(word, width));
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

/// What a mode means, in the words of its transcript line and of the mode picker.
pub(crate) fn mode_summary(mode: Mode) -> &'static str {
    match mode {
        Mode::Ask => "every change and command asks",
        Mode::AutoEdit => "edits run, commands that change things ask",
        Mode::Auto => "only dangerous commands ask",
        Mode::Never => "nothing asks (the sandbox still applies)",
        Mode::Plan => "reads only; the model proposes a plan to approve (exit_plan_mode)",
    }
}

#[cfg(test)]
#[path = "choice_tests.rs"]
mod tests;
