//! One transcript entry (user message, assistant message, tool card, notice) and its wrapped
//! lines, cached per width: an entry is laid out again only when it changed or the width did.

use std::cell::RefCell;
use std::time::Instant;

use ratatui::text::{Line, Span};

use super::render;
use super::stream::StreamText;
use crate::bus::StepId;
use crate::tui::panes::cards::ToolCard;
use crate::tui::{theme, wrap};

/// Reasoning lines shown while the model is still thinking.
const LIVE_REASONING_LINES: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    Info,
    Warning,
    Error,
}

#[derive(Debug)]
pub enum EntryKind {
    User {
        text: String,
        /// Chips of the images sent with it: `shot.png (1.2 MB, 2048×1536)`.
        images: Vec<String>,
        /// Chips of the files `@` attached: `src/lib.rs (lines 10-20)`.
        files: Vec<String>,
    },
    Assistant {
        step: StepId,
        text: StreamText,
        reasoning: String,
        streaming: bool,
    },
    Tool(Box<ToolCard>),
    Notice {
        text: String,
        level: NoticeLevel,
    },
    /// A hook denied, changed a call's input or failed: one line.
    Hook(crate::bus::HookNote),
}

impl EntryKind {
    /// A line beside the exchange (a notice, a hook's card): it never splits an answer.
    pub fn is_notice(&self) -> bool {
        matches!(self, EntryKind::Notice { .. } | EntryKind::Hook(_))
    }
}

/// How an entry is laid out: the width and the toggles that change its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutKey {
    pub width: usize,
    pub expand_reasoning: bool,
}

#[derive(Debug)]
struct Cached {
    key: LayoutKey,
    rev: u64,
    lines: Vec<Line<'static>>,
}

/// More of an entry than its lines show, opened and folded with Enter on it: what a
/// `/name args` or `/init` sent to the model, a compaction's summary.
#[derive(Debug)]
pub struct Details {
    /// What it is: `sent to the model`, `the summary`.
    pub label: &'static str,
    pub text: String,
    pub open: bool,
}

#[derive(Debug)]
pub struct Entry {
    pub kind: EntryKind,
    details: Option<Details>,
    /// Bumped on every change; a cached layout of an older revision is stale.
    rev: u64,
    cache: RefCell<Option<Cached>>,
}

impl Entry {
    pub fn new(kind: EntryKind) -> Self {
        Self {
            kind,
            details: None,
            rev: 0,
            cache: RefCell::new(None),
        }
    }

    /// Gives the entry more to open (see `Details`), folded.
    pub fn set_details(&mut self, label: &'static str, text: String) {
        self.rev += 1;
        self.details = Some(Details {
            label,
            text,
            open: false,
        });
    }

    /// Opens or folds the entry's details; false when it has none.
    pub fn toggle_details(&mut self) -> bool {
        let Some(details) = &mut self.details else {
            return false;
        };
        details.open = !details.open;
        self.rev += 1;
        true
    }

    /// The details' lines: one line saying what there is, folded; all of it, open.
    fn details_lines(&self, width: usize) -> Vec<Line<'static>> {
        let Some(details) = &self.details else {
            return Vec::new();
        };
        let n = details.text.lines().count();
        let lines = if n == 1 { "line" } else { "lines" };
        if !details.open {
            return render::plain(
                &format!(
                    "▸ {}: {n} {lines} (in the transcript, ↑/↓ to it and Enter opens)",
                    details.label
                ),
                width,
                theme::dim(),
            );
        }
        let mut out = render::plain(
            &format!("▾ {} ({n} {lines}; Enter folds):", details.label),
            width,
            theme::dim(),
        );
        out.extend(render::plain(&details.text, width, theme::dim()));
        out
    }

    /// Mutable access to the content; invalidates the cached layout.
    pub fn kind_mut(&mut self) -> &mut EntryKind {
        self.rev += 1;
        &mut self.kind
    }

    /// True when a layout is cached (tests check that only visible entries get one).
    #[cfg(test)]
    pub fn is_laid_out(&self) -> bool {
        self.cache.borrow().is_some()
    }

    /// Cards that are running animate (spinner, elapsed, live tail): never cached.
    fn is_live(&self) -> bool {
        matches!(&self.kind, EntryKind::Tool(card) if card.is_running())
    }

    /// The gutter mark on the entry's first line.
    pub fn mark(&self) -> Span<'static> {
        match &self.kind {
            EntryKind::User { .. } => Span::styled("› ", theme::user_gutter()),
            EntryKind::Assistant { .. } => Span::styled("● ", theme::assistant_gutter()),
            EntryKind::Tool(_) => Span::raw("  "),
            EntryKind::Notice {
                level: NoticeLevel::Error,
                ..
            } => Span::styled("✗ ", theme::error()),
            EntryKind::Notice {
                level: NoticeLevel::Warning,
                ..
            } => Span::styled("! ", theme::warning()),
            EntryKind::Notice {
                level: NoticeLevel::Info,
                ..
            } => Span::styled("· ", theme::dim()),
            EntryKind::Hook(note) => crate::tui::panes::hook_card::mark(note),
        }
    }

    /// Lines of the entry other than a streamed answer's body (which `StreamText` caches by
    /// block): the whole entry for most kinds, the reasoning part for assistant messages.
    fn head_lines(&self, key: LayoutKey, now: Instant) -> Vec<Line<'static>> {
        let mut lines = self.kind_lines(key, now);
        lines.extend(self.details_lines(key.width));
        lines
    }

    fn kind_lines(&self, key: LayoutKey, now: Instant) -> Vec<Line<'static>> {
        let width = key.width;
        match &self.kind {
            EntryKind::User {
                text,
                images,
                files,
            } => {
                let mut lines = render::plain(text, width, theme::user());
                let chip = |kind: &'static str, label: &String| {
                    Line::from(vec![
                        Span::styled(kind, theme::bold()),
                        Span::styled(format!(" {label}"), theme::user()),
                    ])
                };
                lines.extend(images.iter().map(|label| chip("[image]", label)));
                lines.extend(files.iter().map(|label| chip("[file]", label)));
                lines
            }
            EntryKind::Assistant {
                reasoning,
                text,
                streaming,
                ..
            } => reasoning_lines(reasoning, text.is_empty() && *streaming, key),
            EntryKind::Tool(card) => card.lines(width, now),
            EntryKind::Notice { text, level } => {
                let style = match level {
                    NoticeLevel::Info => theme::dim(),
                    NoticeLevel::Warning => theme::warning(),
                    NoticeLevel::Error => theme::error(),
                };
                render::plain(text, width, style)
            }
            EntryKind::Hook(note) => vec![crate::tui::panes::hook_card::line(note, width)],
        }
    }

    fn with_head<R>(
        &self,
        key: LayoutKey,
        now: Instant,
        f: impl FnOnce(&[Line<'static>]) -> R,
    ) -> R {
        if self.is_live() {
            return f(&self.head_lines(key, now));
        }
        let mut cache = self.cache.borrow_mut();
        if cache
            .as_ref()
            .is_none_or(|c| c.key != key || c.rev != self.rev)
        {
            *cache = Some(Cached {
                key,
                rev: self.rev,
                lines: self.head_lines(key, now),
            });
        }
        f(cache.as_ref().map_or(&[][..], |c| c.lines.as_slice()))
    }

    /// Lines the entry takes at this layout, including the blank line that follows it.
    pub fn height(&self, key: LayoutKey, now: Instant) -> usize {
        let head = self.with_head(key, now, <[Line]>::len);
        let body = match &self.kind {
            EntryKind::Assistant { text, .. } => text.height(key.width),
            _ => 0,
        };
        head + body + 1
    }

    /// Appends lines `skip..skip + take` of the entry to `out`.
    pub fn collect(
        &self,
        key: LayoutKey,
        now: Instant,
        skip: usize,
        take: usize,
        out: &mut Vec<Line<'static>>,
    ) {
        let start = out.len();
        let head_len = self.with_head(key, now, |head| {
            out.extend(head.iter().skip(skip).take(take).cloned());
            head.len()
        });
        let taken = out.len() - start;
        let skip_body = skip.saturating_sub(head_len);
        let mut body_len = 0;
        if let EntryKind::Assistant { text, .. } = &self.kind {
            body_len = text.height(key.width);
            text.collect(key.width, skip_body, take - taken, out);
        }
        let blank = head_len + body_len;
        if out.len() - start < take && skip <= blank {
            out.push(Line::default());
        }
    }

    /// The last `n` lines of the entry (blank line included), and whether that is all of it.
    /// Only the part of a long answer that is shown gets laid out.
    pub fn last_lines(&self, key: LayoutKey, now: Instant, n: usize) -> (Vec<Line<'static>>, bool) {
        if n == 0 {
            return (Vec::new(), false);
        }
        let (mut body, body_complete) = match &self.kind {
            EntryKind::Assistant { text, .. } => text.last_lines(key.width, n - 1),
            _ => (Vec::new(), true),
        };
        body.push(Line::default());
        if !body_complete {
            return (body, false);
        }
        let room = n - body.len();
        self.with_head(key, now, |head| {
            let take = head.len().min(room);
            let mut out = head[head.len() - take..].to_vec();
            out.extend(body);
            (out, take == head.len())
        })
    }

    /// The entry as plain text, for the clipboard.
    pub fn copy_text(&self) -> String {
        match &self.kind {
            EntryKind::User { text, .. } | EntryKind::Notice { text, .. } => text.clone(),
            EntryKind::Assistant { text, .. } => text.text(),
            EntryKind::Tool(card) => card.copy_text(),
            EntryKind::Hook(note) => note.text(),
        }
    }
}

fn reasoning_lines(reasoning: &str, thinking_now: bool, key: LayoutKey) -> Vec<Line<'static>> {
    if reasoning.trim().is_empty() {
        return Vec::new();
    }
    let words = reasoning.split_whitespace().count();
    if key.expand_reasoning {
        let mut lines = vec![Line::styled(
            format!("▾ reasoning ({words} words) · r hides"),
            theme::reasoning(),
        )];
        lines.extend(render::plain(
            reasoning.trim(),
            key.width,
            theme::reasoning(),
        ));
        lines.push(Line::default());
        return lines;
    }
    if thinking_now {
        // Only the end is wrapped: the live view is bounded however long the reasoning gets.
        let start = reasoning
            .len()
            .saturating_sub(LIVE_REASONING_LINES * key.width * 2);
        let start = (start..reasoning.len())
            .find(|&i| reasoning.is_char_boundary(i))
            .unwrap_or(0);
        let all = render::plain(reasoning[start..].trim(), key.width, theme::reasoning());
        let mut lines = vec![Line::styled("▸ thinking…", theme::reasoning())];
        lines.extend(
            all[all.len().saturating_sub(LIVE_REASONING_LINES)..]
                .iter()
                .cloned(),
        );
        return lines;
    }
    let summary = format!("▸ reasoning ({words} words) · r shows");
    vec![Line::styled(
        wrap::truncate(&summary, key.width),
        theme::reasoning(),
    )]
}
