//! What every modal layer shares, and nothing else: the frame they draw in and the word they
//! answer a key with. A leaf: the layers (`picker.rs`, `rewind.rs`, …) use it, and `layers.rs`
//! stacks them, so no layer needs the stack.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use crate::bus::UserCommand;
use crate::tui::keymap::Action;

/// What a layer did with an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    Consumed,
    /// Not for this layer: offer it to the one below.
    FallThrough,
}

/// What a layer did with a key: the one answer every layer gives, which the stack acts on
/// (closing the layer, sending the command). `T` is what a layer closes with for the app to
/// act on (the mode or model picked); a layer that has nothing such says `LayerOutcome`.
#[derive(Debug, Clone, PartialEq)]
pub enum LayerOutcome<T = ()> {
    /// The layer stays open (the key moved it, or it was not one of its keys).
    Open,
    /// The layer closes with nothing to do.
    Closed,
    /// Send `command` to the agent; the layer closes with it when `close`, else it stays open
    /// until the agent answers.
    Send { command: UserCommand, close: bool },
    /// The layer closes with this for the app.
    Chosen(T),
}

/// Moves the selection of a list of `len` rows one row for `SelectPrev` or `SelectNext`,
/// staying on the list: the navigation every list layer (sessions, choices, rewind points,
/// jobs) shares. Other actions leave it.
pub fn move_selection(selected: &mut usize, len: usize, action: Action) {
    match action {
        Action::SelectPrev => *selected = selected.saturating_sub(1),
        Action::SelectNext => *selected = (*selected + 1).min(len.saturating_sub(1)),
        _ => {}
    }
}

/// The look every modal shares: a cleared, bordered box centred in `area` with a title at the
/// top and a key hint at the bottom right. Returns the area inside the border.
pub fn modal_frame(
    area: Rect,
    width: u16,
    height: u16,
    title: Span<'static>,
    hint: Line<'static>,
    border: Style,
    buf: &mut Buffer,
) -> Rect {
    let rect = centered(area, width.min(area.width), height.min(area.height));
    Clear.render(rect, buf);
    let block = Block::bordered()
        .border_style(border)
        .title(title)
        .title_bottom(hint.right_aligned());
    let inner = block.inner(rect);
    block.render(rect, buf);
    inner
}

/// A `width` x `height` rectangle centred in `area` (modals, overlays, the setup panel).
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    Rect::new(
        area.x + area.width.saturating_sub(width) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    )
}
