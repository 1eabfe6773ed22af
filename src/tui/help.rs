//! The `?` overlay: every key binding and slash command, in one list.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use crate::tui::theme;

/// (keys, what they do). The single source for the overlay.
pub const BINDINGS: &[(&str, &str)] = &[
    ("Enter", "send the message (queued while the agent works)"),
    ("Alt+Enter  Shift+Enter  Ctrl+J", "new line in the message"),
    ("Up / Down", "message history (input focused)"),
    ("Esc", "interrupt the answer and running commands"),
    (
        "Tab / Shift+Tab",
        "cycle focus: input, transcript, todos, diffs",
    ),
    (
        "j k  Up Down",
        "scroll / select (transcript, todos, diffs focused)",
    ),
    (
        "PgUp PgDn  mouse wheel",
        "scroll the transcript (or the focused pane)",
    ),
    ("Home / End", "top of the transcript / follow the end"),
    (
        "Enter",
        "transcript: open the selected edit in the diff pane",
    ),
    ("[  ]", "previous / next edit in the diff pane"),
    ("v", "diff pane: unified / side by side"),
    ("r", "transcript: show / hide reasoning"),
    ("Ctrl+Y", "copy the selected message, card or diff (OSC 52)"),
    (
        "F2  Ctrl+T",
        "release / capture the mouse (terminal selection)",
    ),
    ("Ctrl+G", "edit the message in $EDITOR"),
    ("Ctrl+C", "interrupt and clear the input; twice quits"),
    ("y a p", "approve once / for the session / for the project"),
    ("n m", "deny / deny with a message to the model"),
    ("?", "this help (any key closes it)"),
    ("/new", "start a new session"),
    ("/resume", "pick a saved session to resume"),
    (
        "/mode ask|auto-edit|auto|never",
        "change the permission mode",
    ),
    ("/model NAME", "change the model"),
    (
        "/compact [focus]  /cost",
        "free the context window; cost per request",
    ),
    ("/diff", "focus the diff pane"),
    ("/help", "this help"),
    ("/quit", "quit"),
];

pub fn render(area: Rect, buf: &mut Buffer) {
    let key_width = BINDINGS.iter().map(|(k, _)| k.len()).max().unwrap_or(10) as u16 + 2;
    let width = area.width.saturating_sub(4).min(key_width + 52);
    let height = (BINDINGS.len() as u16 + 2).min(area.height);
    let rect = crate::tui::layout::centered(area, width, height);
    Clear.render(rect, buf);
    let block = Block::bordered()
        .border_style(theme::border_focused())
        .title(Span::styled(" Keys ", theme::bold()))
        .title_bottom(Line::styled(" any key closes ", theme::dim()).right_aligned());
    let inner = block.inner(rect);
    block.render(rect, buf);
    for (i, (keys, what)) in BINDINGS.iter().take(usize::from(inner.height)).enumerate() {
        let line = Line::from(vec![
            Span::styled(
                format!("{keys:<width$}", width = usize::from(key_width)),
                theme::accent(),
            ),
            Span::raw(*what),
        ]);
        buf.set_line(inner.x, inner.y + i as u16, &line, inner.width);
    }
}
