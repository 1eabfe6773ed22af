//! The diff browser: every `FileChanged` of the session in order, the selected one as a
//! highlighted unified or side-by-side diff, `[`/`]` to step, and a summary of the session's
//! changes per file. It parses the unified diff text the edit tools produce.

use std::cell::RefCell;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::tool_output::FileChange;
use crate::tui::{highlight, theme, wrap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffView {
    Unified,
    SideBySide,
}

/// One line of a parsed hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Hunk(String),
    Context {
        old: usize,
        new: usize,
        text: String,
    },
    Removed {
        old: usize,
        text: String,
    },
    Added {
        new: usize,
        text: String,
    },
    /// The tools cut the diff here (it was too large); a note, not part of the file.
    Truncated,
}

pub use crate::tool_output::DIFF_TRUNCATED as TRUNCATED_MARKER;

/// Parses unified diff text into numbered lines. File headers (`diff`, `---`, `+++`) are
/// skipped only outside a hunk: inside one, `--- x` is the removed line `-- x`. A hunk ends
/// when the line counts of its `@@` header are used up.
pub fn parse(diff: &str) -> Vec<DiffLine> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0, 0);
    // Lines of the current hunk still expected on each side.
    let (mut old_left, mut new_left) = (0usize, 0usize);
    for line in diff.lines() {
        if line == TRUNCATED_MARKER {
            out.push(DiffLine::Truncated);
            continue;
        }
        let in_hunk = old_left > 0 || new_left > 0;
        if !in_hunk
            && (line.starts_with("---") || line.starts_with("+++") || line.starts_with("diff "))
        {
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@") {
            let mut ranges = rest.split_whitespace();
            (old, old_left) = hunk_range(ranges.next());
            (new, new_left) = hunk_range(ranges.next());
            out.push(DiffLine::Hunk(line.to_string()));
            continue;
        }
        match line.chars().next() {
            Some('+') => {
                out.push(DiffLine::Added {
                    new,
                    text: line[1..].to_string(),
                });
                new += 1;
                new_left = new_left.saturating_sub(1);
            }
            Some('-') => {
                out.push(DiffLine::Removed {
                    old,
                    text: line[1..].to_string(),
                });
                old += 1;
                old_left = old_left.saturating_sub(1);
            }
            Some('\\') => {}
            _ => {
                out.push(DiffLine::Context {
                    old,
                    new,
                    text: line.get(1..).unwrap_or("").to_string(),
                });
                old += 1;
                new += 1;
                old_left = old_left.saturating_sub(1);
                new_left = new_left.saturating_sub(1);
            }
        }
    }
    out
}

/// `-12,3` → (12, 3); a missing count is 1. Unreadable ranges start at 1 and never end, so
/// nothing after them is mistaken for a header.
fn hunk_range(range: Option<&str>) -> (usize, usize) {
    let Some(range) = range.and_then(|r| r.get(1..)) else {
        return (1, usize::MAX);
    };
    let mut parts = range.split(',');
    let start = parts.next().and_then(|s| s.parse().ok());
    let count = match parts.next() {
        Some(count) => count.parse().ok(),
        None => Some(1),
    };
    match (start, count) {
        (Some(start), Some(count)) => (start, count),
        (start, _) => (start.unwrap_or(1), usize::MAX),
    }
}

/// The note shown where a cut diff ends.
fn truncated_line(width: usize) -> Line<'static> {
    Line::styled(
        wrap::truncate(
            "⋯ diff truncated: the rest of this change is not shown",
            width,
        ),
        theme::warning(),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LayoutKey {
    selected: usize,
    width: u16,
    view: DiffView,
}

#[derive(Debug)]
pub struct DiffPane {
    changes: Vec<FileChange>,
    selected: usize,
    view: DiffView,
    scroll: usize,
    cache: RefCell<Option<(LayoutKey, Vec<Line<'static>>)>>,
}

impl Default for DiffPane {
    fn default() -> Self {
        Self::new()
    }
}

impl DiffPane {
    pub fn new() -> Self {
        Self {
            changes: Vec::new(),
            selected: 0,
            view: DiffView::Unified,
            scroll: 0,
            cache: RefCell::new(None),
        }
    }

    pub fn len(&self) -> usize {
        self.changes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn clear(&mut self) {
        *self = Self::new();
    }

    /// Adds a change and returns its index. The view follows new edits unless the user is
    /// looking at an older one.
    pub fn push(&mut self, change: FileChange) -> usize {
        let follow = self.changes.is_empty() || self.selected + 1 == self.changes.len();
        self.changes.push(change);
        if follow {
            self.select(self.changes.len() - 1);
        }
        self.changes.len() - 1
    }

    pub fn selected(&self) -> Option<usize> {
        (!self.changes.is_empty()).then_some(self.selected)
    }

    pub fn select(&mut self, index: usize) {
        if index < self.changes.len() {
            self.selected = index;
            self.scroll = 0;
        }
    }

    pub fn prev(&mut self) {
        self.select(self.selected.saturating_sub(1));
    }

    pub fn next(&mut self) {
        self.select(self.selected + 1);
    }

    pub fn view(&self) -> DiffView {
        self.view
    }

    pub fn toggle_view(&mut self) {
        self.view = match self.view {
            DiffView::Unified => DiffView::SideBySide,
            DiffView::SideBySide => DiffView::Unified,
        };
    }

    pub fn scroll_by(&mut self, delta: isize) {
        self.scroll = self.scroll.saturating_add_signed(delta);
    }

    /// The selected diff as text, for the clipboard.
    pub fn copy_text(&self) -> Option<String> {
        let change = self.changes.get(self.selected)?;
        Some(format!("--- {0}\n+++ {0}\n{1}", change.path, change.diff))
    }

    /// Net changes per file over the session: (path, added, removed, edits), first-touched order.
    pub fn summary(&self) -> Vec<(String, usize, usize, usize)> {
        let mut out: Vec<(String, usize, usize, usize)> = Vec::new();
        for change in &self.changes {
            match out.iter_mut().find(|(p, ..)| *p == change.path) {
                Some(row) => {
                    row.1 += change.added;
                    row.2 += change.removed;
                    row.3 += 1;
                }
                None => out.push((change.path.clone(), change.added, change.removed, 1)),
            }
        }
        out
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, focused: bool) {
        let border = if focused {
            theme::border_focused()
        } else {
            theme::border()
        };
        let title = match self.view {
            DiffView::Unified => " Diffs ",
            DiffView::SideBySide => " Diffs · side by side ",
        };
        let block = Block::bordered()
            .border_style(border)
            .title(Span::styled(title, theme::bold()));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 4 || inner.height == 0 {
            return;
        }
        if self.changes.is_empty() {
            buf.set_line(
                inner.x,
                inner.y,
                &Line::styled("No edits yet.", theme::dim()),
                inner.width,
            );
            return;
        }
        let mut lines = self.summary_lines(inner.width, inner.height);
        lines.push(self.header_line(inner.width));
        let head = lines.len();
        let key = LayoutKey {
            selected: self.selected,
            width: inner.width,
            view: self.view,
        };
        let mut cache = self.cache.borrow_mut();
        if cache.as_ref().is_none_or(|(k, _)| *k != key) {
            *cache = Some((key, self.body_lines(inner.width)));
        }
        let body = cache.as_ref().map_or(&[][..], |(_, l)| l.as_slice());
        let room = usize::from(inner.height).saturating_sub(head);
        let scroll = self.scroll.min(body.len().saturating_sub(room));
        lines.extend(body.iter().skip(scroll).take(room).cloned());
        for (i, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }

    fn summary_lines(&self, width: u16, height: u16) -> Vec<Line<'static>> {
        let summary = self.summary();
        let (added, removed) = summary.iter().fold((0, 0), |(a, r), s| (a + s.1, r + s.2));
        let mut lines = vec![Line::from(vec![
            Span::styled(
                format!(
                    "{} · {} · ",
                    plural(self.changes.len(), "edit"),
                    plural(summary.len(), "file")
                ),
                theme::dim(),
            ),
            Span::styled(format!("+{added}"), theme::added()),
            Span::raw(" "),
            Span::styled(format!("-{removed}"), theme::removed()),
        ])];
        // The per-file summary takes at most a third of the pane.
        let max_rows = usize::from(height / 3).max(1);
        for (i, (path, a, r, n)) in summary.iter().enumerate() {
            if i + 1 == max_rows && summary.len() > max_rows {
                lines.push(Line::styled(
                    format!("  … {} more files", summary.len() - i),
                    theme::dim(),
                ));
                break;
            }
            let counts = format!(
                " +{a} -{r}{}",
                if *n > 1 {
                    format!(" ({n}×)")
                } else {
                    String::new()
                }
            );
            let path = wrap::truncate(
                path,
                usize::from(width).saturating_sub(2 + wrap::width(&counts)),
            );
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::raw(path),
                Span::styled(counts, theme::dim()),
            ]));
        }
        lines
    }

    fn header_line(&self, width: u16) -> Line<'static> {
        let change = &self.changes[self.selected];
        let verb = if change.created { "new " } else { "" };
        let left = format!(
            "◆ {}/{} {verb}{} ",
            self.selected + 1,
            self.changes.len(),
            change.path
        );
        let counts = format!("+{} -{}", change.added, change.removed);
        let left = wrap::truncate(
            &left,
            usize::from(width).saturating_sub(wrap::width(&counts)),
        );
        Line::from(vec![
            Span::styled(left, theme::heading()),
            Span::styled(format!("+{}", change.added), theme::added()),
            Span::raw(" "),
            Span::styled(format!("-{}", change.removed), theme::removed()),
        ])
    }

    fn body_lines(&self, width: u16) -> Vec<Line<'static>> {
        let change = &self.changes[self.selected];
        let lang = highlight::token_for_path(&change.path);
        let parsed = parse(&change.diff);
        match self.view {
            DiffView::Unified => unified(&parsed, lang, usize::from(width)),
            DiffView::SideBySide => side_by_side(&parsed, lang, usize::from(width)),
        }
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn code_spans(text: &str, lang: &str, dim: bool) -> Vec<Span<'static>> {
    let spans = highlight::highlight(text, lang)
        .into_iter()
        .next()
        .unwrap_or_default();
    if dim {
        spans
            .into_iter()
            .map(|s| Span::styled(s.content, theme::dim()))
            .collect()
    } else {
        spans
    }
}

/// `  12  13 │+code` lines, wrapped at the width.
pub fn unified(lines: &[DiffLine], lang: &str, width: usize) -> Vec<Line<'static>> {
    let num = |n: Option<usize>| n.map_or("    ".to_string(), |n| format!("{n:>4}"));
    let mut out = Vec::new();
    for line in lines {
        let (old, new, sign, style, text) = match line {
            DiffLine::Hunk(h) => {
                out.push(Line::styled(wrap::truncate(h, width), theme::hunk_header()));
                continue;
            }
            DiffLine::Truncated => {
                out.push(truncated_line(width));
                continue;
            }
            DiffLine::Context { old, new, text } => {
                (Some(*old), Some(*new), " ", theme::dim(), text)
            }
            DiffLine::Removed { old, text } => (Some(*old), None, "-", theme::removed(), text),
            DiffLine::Added { new, text } => (None, Some(*new), "+", theme::added(), text),
        };
        let prefix = vec![
            Span::styled(format!("{} {} ", num(old), num(new)), theme::line_number()),
            Span::styled(format!("{sign} "), style),
        ];
        let cont = vec![Span::raw(" ".repeat(12))];
        out.extend(wrap::hard_wrap(
            &code_spans(text, lang, sign == " "),
            width,
            &prefix,
            &cont,
        ));
    }
    out
}

/// Old on the left, new on the right; removed and added runs paired line by line.
pub fn side_by_side(lines: &[DiffLine], lang: &str, width: usize) -> Vec<Line<'static>> {
    let half = width.saturating_sub(1) / 2;
    let cell = |n: Option<usize>, sign: &str, text: Option<&str>, style| -> Line<'static> {
        let Some(text) = text else {
            return Line::raw(" ".repeat(half));
        };
        let mut spans = vec![
            Span::styled(
                n.map_or("    ".to_string(), |n| format!("{n:>4}")),
                theme::line_number(),
            ),
            Span::styled(format!("{sign} "), style),
        ];
        spans.extend(code_spans(text, lang, sign == " "));
        let mut wrapped = wrap::hard_wrap(&spans, half, &[], &[]);
        wrapped.truncate(1);
        let mut line = wrapped.pop().unwrap_or_default();
        let pad = half.saturating_sub(line.width());
        line.spans.push(Span::raw(" ".repeat(pad)));
        line
    };
    let join = |left: Line<'static>, right: Line<'static>| -> Line<'static> {
        let mut spans = left.spans;
        spans.push(Span::styled("│", theme::border()));
        spans.extend(right.spans);
        Line::from(spans)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match &lines[i] {
            DiffLine::Hunk(h) => {
                out.push(Line::styled(wrap::truncate(h, width), theme::hunk_header()));
                i += 1;
            }
            DiffLine::Truncated => {
                out.push(truncated_line(width));
                i += 1;
            }
            DiffLine::Context { old, new, text } => {
                out.push(join(
                    cell(Some(*old), " ", Some(text), theme::dim()),
                    cell(Some(*new), " ", Some(text), theme::dim()),
                ));
                i += 1;
            }
            _ => {
                let mut removed = Vec::new();
                while let Some(DiffLine::Removed { old, text }) = lines.get(i) {
                    removed.push((*old, text.as_str()));
                    i += 1;
                }
                let mut added = Vec::new();
                while let Some(DiffLine::Added { new, text }) = lines.get(i) {
                    added.push((*new, text.as_str()));
                    i += 1;
                }
                for row in 0..removed.len().max(added.len()) {
                    let left = removed
                        .get(row)
                        .map_or(cell(None, "", None, theme::removed()), |(n, t)| {
                            cell(Some(*n), "-", Some(t), theme::removed())
                        });
                    let right = added
                        .get(row)
                        .map_or(cell(None, "", None, theme::added()), |(n, t)| {
                            cell(Some(*n), "+", Some(t), theme::added())
                        });
                    out.push(join(left, right));
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "diffs_tests.rs"]
mod tests;
