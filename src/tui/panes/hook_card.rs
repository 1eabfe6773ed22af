//! A hook's one-line card in the transcript: what it did (denied, changed the input, failed),
//! which hook (its name, and its event when the name does not say it), why, and its command,
//! cut to the width: the verb and the name stay, the reason and then the command give way.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::bus::{HookAct, HookNote};
use crate::tui::{theme, wrap};

fn style(act: HookAct) -> Style {
    match act {
        HookAct::Denied | HookAct::FailedDenies => theme::danger(),
        HookAct::ChangedInput | HookAct::FailedAllowed | HookAct::Failed => theme::warning(),
    }
}

/// The gutter mark.
pub fn mark(note: &HookNote) -> Span<'static> {
    Span::styled("⚑ ", style(note.act))
}

/// The card: `hook NAME VERB: WHY  $ COMMAND`, one line of at most `width` columns.
pub fn line(note: &HookNote, width: usize) -> Line<'static> {
    let name = if note.hook.starts_with(&note.event) {
        note.hook.clone()
    } else {
        format!("{} ({})", note.hook, note.event)
    };
    let head = format!("hook {name} {}", note.act.label());
    let why = if note.why.is_empty() {
        String::new()
    } else {
        format!(": {}", first_line(&note.why))
    };
    let command = format!("  $ {}", first_line(&note.command));
    let mut spans = Vec::new();
    let mut room = width;
    for (text, style) in [
        (head, style(note.act)),
        (why, theme::base()),
        (command, theme::dim()),
    ] {
        if room == 0 || text.is_empty() {
            continue;
        }
        let shown = wrap::truncate(&text, room);
        room = room.saturating_sub(wrap::width(&shown));
        let cut = shown != text;
        spans.push(Span::styled(shown, style));
        if cut {
            break;
        }
    }
    Line::from(spans)
}

fn first_line(text: &str) -> String {
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or_default().to_string();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}
