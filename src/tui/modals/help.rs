//! The `?` overlay, generated from the key-binding table (`keymap`): every key and alias by
//! where it works, then every slash command. Up/Down/j/k/PgUp/PgDn scroll it when it is taller
//! than the screen; any other key closes it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::tui::keymap::{self, BINDINGS, SLASH_COMMANDS, Scope};
use crate::tui::modals::modal::{self, LayerOutcome};
use crate::tui::{theme, wrap};

/// A key on the overlay, scrolled by `scroll` rows: the scroll keys move it, any other closes.
pub fn handle_key(key: &KeyEvent, scroll: &mut usize) -> LayerOutcome {
    let by = match key.code {
        KeyCode::Down | KeyCode::Char('j') => 1,
        KeyCode::Up | KeyCode::Char('k') => -1,
        KeyCode::PageDown => 10,
        KeyCode::PageUp => -10,
        _ => return LayerOutcome::Closed,
    };
    *scroll = scroll.saturating_add_signed(by);
    LayerOutcome::Open
}

/// The overlay's rows: (keys, what they do), with headings as rows without keys.
pub fn rows() -> Vec<(String, String)> {
    let scopes = [
        Scope::Anywhere,
        Scope::Input,
        Scope::Transcript,
        Scope::Todos,
        Scope::Diffs,
        Scope::Approval,
        Scope::Revert,
        Scope::Picker,
        Scope::Choice,
        Scope::Rewind,
        Scope::Confirm,
        Scope::Jobs,
    ];
    let mut rows = Vec::new();
    for scope in scopes {
        rows.push((String::new(), scope.heading().to_string()));
        for b in BINDINGS.iter().filter(|b| b.scope == scope) {
            rows.push((keymap::keys_label(b.keys), b.help.to_string()));
        }
    }
    rows.push((String::new(), "Slash commands".to_string()));
    for s in SLASH_COMMANDS {
        rows.push((keymap::slash_label(s), s.help.to_string()));
    }
    rows
}

pub fn render(area: Rect, buf: &mut Buffer, scroll: usize) {
    let rows = rows();
    // Two columns of indent before the keys, two of gap after the longest.
    let key_width = rows.iter().map(|(k, _)| wrap::width(k)).max().unwrap_or(10) + 4;
    let text_width = rows.iter().map(|(_, t)| wrap::width(t)).max().unwrap_or(40);
    let width = area
        .width
        .saturating_sub(4)
        .min(u16::try_from(key_width + text_width + 2).unwrap_or(u16::MAX));
    let height = u16::try_from(rows.len() + 2).unwrap_or(u16::MAX);
    let hint = if usize::from(area.height) < rows.len() + 2 {
        " ↑↓ scroll · any other key closes "
    } else {
        " any key closes "
    };
    let inner = modal::modal_frame(
        area,
        width,
        height,
        Span::styled(" Keys ", theme::bold()),
        Line::styled(hint, theme::dim()),
        theme::border_focused(),
        buf,
    );
    let visible = usize::from(inner.height);
    let scroll = scroll.min(rows.len().saturating_sub(visible));
    let text_width = usize::from(inner.width).saturating_sub(key_width);
    for (i, (keys, what)) in rows.iter().skip(scroll).take(visible).enumerate() {
        let line = if keys.is_empty() {
            Line::styled(what.clone(), theme::heading())
        } else {
            Line::from(vec![
                Span::styled(format!("  {keys:<w$}", w = key_width - 2), theme::accent()),
                Span::raw(wrap::truncate(what, text_width)),
            ])
        };
        buf.set_line(inner.x, inner.y + i as u16, &line, inner.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binding_and_slash_command_has_a_row() {
        let rows = rows();
        for b in BINDINGS {
            let label = keymap::keys_label(b.keys);
            assert!(rows.iter().any(|(k, _)| *k == label), "{label} missing");
        }
        for s in SLASH_COMMANDS {
            for name in s.names {
                assert!(rows.iter().any(|(k, _)| k.contains(name)), "{name} missing");
            }
        }
    }
}
