//! Every colour and text style the TUI uses, in one place. Panes ask for a role (`user`,
//! `added`, `danger`), never for a colour, so the palette can change here alone.

use ratatui::style::{Color, Modifier, Style};

use crate::tui::colours::{self, ColourDepth};

pub fn base() -> Style {
    Style::default()
}

pub fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn accent() -> Style {
    Style::default().fg(Color::Cyan)
}

pub fn user() -> Style {
    Style::default()
        .fg(Color::LightBlue)
        .add_modifier(Modifier::BOLD)
}

pub fn user_gutter() -> Style {
    Style::default().fg(Color::LightBlue)
}

pub fn assistant_gutter() -> Style {
    Style::default().fg(Color::LightGreen)
}

pub fn reasoning() -> Style {
    Style::default()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC)
}

pub fn heading() -> Style {
    Style::default()
        .fg(Color::LightYellow)
        .add_modifier(Modifier::BOLD)
}

pub fn inline_code() -> Style {
    Style::default().fg(Color::LightMagenta)
}

pub fn code_frame() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn link() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::UNDERLINED)
}

pub fn quote() -> Style {
    Style::default()
        .fg(Color::Gray)
        .add_modifier(Modifier::ITALIC)
}

pub fn ok() -> Style {
    Style::default().fg(Color::Green)
}

pub fn warning() -> Style {
    Style::default().fg(Color::Yellow)
}

pub fn error() -> Style {
    Style::default().fg(Color::Red)
}

pub fn danger() -> Style {
    Style::default()
        .fg(Color::LightRed)
        .add_modifier(Modifier::BOLD)
}

/// A character shown as `<U+…>` because it would not have shown by itself.
pub fn hidden_marker() -> Style {
    Style::default().fg(Color::Black).bg(Color::Yellow)
}

pub fn tool_name() -> Style {
    Style::default()
        .fg(Color::LightCyan)
        .add_modifier(Modifier::BOLD)
}

pub fn added() -> Style {
    Style::default().fg(Color::Green)
}

pub fn removed() -> Style {
    Style::default().fg(Color::Red)
}

/// The background of an added line in a diff (syntax colours stay on top). On 16 colours no
/// dark tint exists: the line is black on green and its code loses its syntax colours.
pub fn added_line() -> Style {
    line_tint(colours::depth(), Change::Added)
}

/// The background of a removed line in a diff; on 16 colours white on red.
pub fn removed_line() -> Style {
    line_tint(colours::depth(), Change::Removed)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
}

/// Dark enough that the syntax theme's light colours read on it, far enough from the
/// default background to be seen.
pub fn line_tint(depth: ColourDepth, change: Change) -> Style {
    let (added, removed) = match depth {
        ColourDepth::TrueColour => (Color::Rgb(0x16, 0x3d, 0x1f), Color::Rgb(0x4d, 0x17, 0x1b)),
        ColourDepth::Ansi256 => (Color::Indexed(22), Color::Indexed(52)),
        ColourDepth::Ansi16 => {
            return match change {
                Change::Added => Style::default().fg(Color::Black).bg(Color::Green),
                Change::Removed => Style::default().fg(Color::White).bg(Color::Red),
            };
        }
    };
    let bg = match change {
        Change::Added => added,
        Change::Removed => removed,
    };
    Style::default().bg(bg)
}

pub fn hunk_header() -> Style {
    Style::default().fg(Color::Cyan)
}

pub fn line_number() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn key() -> Style {
    Style::default()
        .fg(Color::Black)
        .bg(Color::Gray)
        .add_modifier(Modifier::BOLD)
}

pub fn border() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub fn border_focused() -> Style {
    Style::default().fg(Color::Cyan)
}

pub fn modal_border() -> Style {
    Style::default().fg(Color::Yellow)
}

pub fn selected() -> Style {
    Style::default().bg(Color::DarkGray)
}

pub fn selection_bar() -> Style {
    Style::default().fg(Color::Yellow)
}

pub fn todo_in_progress() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

pub fn todo_done() -> Style {
    Style::default()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::CROSSED_OUT)
}

pub fn status_bar() -> Style {
    Style::default().fg(Color::Gray)
}

pub fn status_busy() -> Style {
    Style::default().fg(Color::Yellow)
}

pub fn queued() -> Style {
    Style::default()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC)
}

pub fn tab_active() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

/// Context fill colour: green, then yellow from 60 %, red from 85 %.
pub fn fill(percent: u64) -> Style {
    match percent {
        0..60 => Style::default().fg(Color::Green),
        60..85 => Style::default().fg(Color::Yellow),
        _ => Style::default().fg(Color::Red),
    }
}

/// The theme (from bat's set) code blocks and diffs are highlighted with.
pub const SYNTAX_THEME: two_face::theme::EmbeddedThemeName =
    two_face::theme::EmbeddedThemeName::Base16OceanDark;
