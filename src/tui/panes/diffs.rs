//! The diff browser: every `FileChanged` of the session in order (and each file a command or
//! a revert changed), the selected one as a highlighted unified or side-by-side diff, `[`/`]`
//! to step, `{`/`}` to select a hunk of it (the target of a revert), and a summary of the
//! session's changes per file. `diff_model.rs` reads the unified diff text the edit tools produce.

use std::cell::{Cell, RefCell};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::bus::{CallId, ChangeSource, RevertTarget};
use crate::tool_output::FileChange;
use crate::tui::panes::diff_body::DiffBody;
use crate::tui::{highlight, theme, wrap};

pub use crate::tui::panes::diff_lines::{side_by_side, side_by_side_fits, unified};
pub use crate::tui::panes::diff_model::{DiffLine, DiffView, TRUNCATED_MARKER, parse};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DiffLayoutKey {
    selected: usize,
    hunk: Option<usize>,
    width: u16,
    view: DiffView,
}

/// The body of the selected change as drawn, and the layout it was drawn for.
#[derive(Debug)]
struct Drawn {
    key: DiffLayoutKey,
    body: DiffBody,
    /// Side by side was chosen but would cut code at this width: drawn unified instead.
    too_narrow: bool,
}

/// What made a change the pane shows: only edits count as edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// A tool call (or a change of unknown origin).
    Edit,
    /// A revert from this pane.
    Revert,
    /// `/undo`, `/redo` or `/rewind` putting files back.
    Restore,
}

#[derive(Debug)]
pub struct DiffPane {
    changes: Vec<FileChange>,
    /// Where each change comes from: the call (or revert) and the file's index in it.
    origins: Vec<(ChangeSource, usize)>,
    made: Vec<Made>,
    selected: usize,
    /// The selected hunk of the selected change, if any.
    hunk: Option<usize>,
    view: DiffView,
    /// The pane takes the whole width and the transcript is hidden.
    full_width: bool,
    scroll: Cell<usize>,
    /// Set when a hunk was selected: the next render scrolls it into view.
    jump: Cell<bool>,
    cache: RefCell<Option<Drawn>>,
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
            origins: Vec::new(),
            made: Vec::new(),
            selected: 0,
            hunk: None,
            view: DiffView::Unified,
            full_width: false,
            scroll: Cell::new(0),
            jump: Cell::new(false),
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

    /// Adds a change of unknown origin (it cannot be reverted from here).
    pub fn push(&mut self, change: FileChange) -> usize {
        self.push_from(change, ChangeSource::Call(CallId::new("")), 0)
    }

    /// Adds file `file` of the change `source` made and returns its index. The view follows
    /// new edits unless the user is looking at an older one.
    pub fn push_from(&mut self, change: FileChange, source: ChangeSource, file: usize) -> usize {
        let made = match source {
            ChangeSource::Call(_) => Made::Edit,
            ChangeSource::Revert(_) => Made::Revert,
        };
        self.push_made(change, source, file, made)
    }

    /// Adds what `/undo`, `/redo` or `/rewind` did to a file: the counts follow the files,
    /// and it is no edit (nor revertable here: `/redo` and `/undo` are the way back).
    pub fn push_restore(&mut self, change: FileChange) -> usize {
        let source = ChangeSource::Revert(String::new());
        self.push_made(change, source, 0, Made::Restore)
    }

    fn push_made(
        &mut self,
        change: FileChange,
        source: ChangeSource,
        file: usize,
        made: Made,
    ) -> usize {
        let follow = self.changes.is_empty() || self.selected + 1 == self.changes.len();
        self.changes.push(change);
        self.origins.push((source, file));
        self.made.push(made);
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
            if index != self.selected {
                self.hunk = None;
            }
            self.selected = index;
            self.scroll.set(0);
        }
    }

    /// The selected hunk of the shown change.
    pub fn hunk(&self) -> Option<usize> {
        self.hunk
    }

    fn hunk_count(&self) -> usize {
        self.changes.get(self.selected).map_or(0, |c| {
            parse(&c.diff)
                .iter()
                .filter(|l| matches!(l, DiffLine::Hunk(_)))
                .count()
        })
    }

    /// Selects the next (`step` 1) or previous (-1) hunk of the shown change; from none, the
    /// first or the last. The selection scrolls into view.
    pub fn step_hunk(&mut self, step: isize) {
        let count = self.hunk_count();
        if count == 0 {
            return;
        }
        self.hunk = Some(match self.hunk {
            None if step < 0 => count - 1,
            None => 0,
            Some(at) => at.saturating_add_signed(step).min(count - 1),
        });
        self.jump.set(true);
    }

    /// Unselects the hunk; false when none was selected.
    pub fn clear_hunk(&mut self) -> bool {
        self.hunk.take().is_some()
    }

    /// What `r` reverts: the selected hunk, or with none the shown file.
    pub fn hunk_target(&self) -> Option<RevertTarget> {
        let (source, file) = self.origin()?;
        Some(RevertTarget {
            source,
            file: Some(file),
            hunk: self.hunk,
            shown: self.shown(file),
        })
    }

    /// What `R` reverts: every file of the shown change.
    pub fn change_target(&self) -> Option<RevertTarget> {
        let (source, file) = self.origin()?;
        Some(RevertTarget {
            source,
            file: None,
            hunk: None,
            shown: self.shown(file),
        })
    }

    fn shown(&self, file: usize) -> Option<(usize, String)> {
        let change = self.changes.get(self.selected)?;
        Some((file, crate::bus::diff_fingerprint(&change.diff)))
    }

    /// The shown change's origin; None when it has none the agent knows.
    fn origin(&self) -> Option<(ChangeSource, usize)> {
        let (source, file) = self.origins.get(self.selected)?.clone();
        match &source {
            ChangeSource::Call(call) if call.as_str().is_empty() => None,
            ChangeSource::Revert(id) if id.is_empty() => None,
            _ => Some((source, file)),
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

    pub fn is_full_width(&self) -> bool {
        self.full_width
    }

    pub fn set_full_width(&mut self, full_width: bool) {
        self.full_width = full_width;
    }

    pub fn scroll_by(&mut self, delta: isize) {
        self.scroll
            .set(self.scroll.get().saturating_add_signed(delta));
    }

    /// The selected diff as text, for the clipboard.
    pub fn copy_text(&self) -> Option<String> {
        let change = self.changes.get(self.selected)?;
        Some(format!("--- {0}\n+++ {0}\n{1}", change.path, change.diff))
    }

    /// Net changes per file over the session: (path, added, removed, edits), first-touched
    /// order. Reverts and restores change the counts of lines, not of edits.
    pub fn summary(&self) -> Vec<(String, usize, usize, usize)> {
        let mut out: Vec<(String, usize, usize, usize)> = Vec::new();
        for (change, made) in self.changes.iter().zip(&self.made) {
            let edit = usize::from(*made == Made::Edit);
            match out.iter_mut().find(|(p, ..)| *p == change.path) {
                Some(row) => {
                    row.1 += change.added;
                    row.2 += change.removed;
                    row.3 += edit;
                }
                None => out.push((change.path.clone(), change.added, change.removed, edit)),
            }
        }
        out
    }

    /// How many changes `made` made.
    fn count(&self, made: Made) -> usize {
        self.made.iter().filter(|m| **m == made).count()
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, focused: bool) {
        let border = if focused {
            theme::border_focused()
        } else {
            theme::border()
        };
        let inner = Block::bordered().inner(area);
        let body = self.layout(inner.width);
        let too_narrow = body.as_ref().is_some_and(|b| b.too_narrow);
        let title = self.title(area.width.saturating_sub(2), too_narrow);
        let block = Block::bordered()
            .border_style(border)
            .title(Span::styled(title, theme::bold()));
        block.render(area, buf);
        if inner.width < 4 || inner.height == 0 {
            return;
        }
        let Some(cache) = body else {
            buf.set_line(
                inner.x,
                inner.y,
                &Line::styled("No edits yet.", theme::dim()),
                inner.width,
            );
            return;
        };
        let (row_count, hunk_count) = (cache.body.rows.len(), cache.body.hunk_rows.len());
        let jump_row = self.hunk.and_then(|h| cache.body.hunk_rows.get(h).copied());
        drop(cache);
        let mut lines = self.summary_lines(inner.width, inner.height);
        lines.push(self.header_line(inner.width, hunk_count));
        let head = lines.len();
        let room = usize::from(inner.height).saturating_sub(head);
        if self.jump.take()
            && let Some(row) = jump_row
        {
            self.scroll.set(row);
        }
        let scroll = self.scroll.get().min(row_count.saturating_sub(room));
        self.scroll.set(scroll);
        if let Some(drawn) = self.cache.borrow_mut().as_mut() {
            drawn.body.highlight(scroll..scroll + room);
            lines.extend(drawn.body.rows.iter().skip(scroll).take(room).cloned());
        }
        for (i, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }

    /// The selected change drawn for `width` (cached while nothing changes); None with no
    /// changes.
    fn layout(&self, width: u16) -> Option<std::cell::Ref<'_, Drawn>> {
        if self.changes.is_empty() {
            return None;
        }
        let key = DiffLayoutKey {
            selected: self.selected,
            hunk: self.hunk,
            width,
            view: self.view,
        };
        {
            let mut cache = self.cache.borrow_mut();
            if cache.as_ref().is_none_or(|b| b.key != key) {
                *cache = Some(self.body(key));
            }
        }
        std::cell::Ref::filter_map(self.cache.borrow(), Option::as_ref).ok()
    }

    /// The title: the view actually drawn (and why it is not the one chosen) and the key of
    /// the full-width view, shortened to what fits in `width`.
    fn title(&self, width: u16, too_narrow: bool) -> String {
        let view = match self.view {
            DiffView::Unified => "",
            DiffView::SideBySide if too_narrow => " · unified: too narrow for side by side",
            DiffView::SideBySide => " · side by side",
        };
        let key = if self.full_width {
            " · full width: f or Esc goes back"
        } else {
            " · f full width"
        };
        let short_view = if too_narrow {
            " · unified (too narrow)"
        } else {
            view
        };
        [
            format!(" Diffs{view}{key} "),
            format!(" Diffs{view} "),
            format!(" Diffs{short_view} "),
            " Diffs ".to_string(),
        ]
        .into_iter()
        .find(|t| wrap::width(t) <= usize::from(width))
        .unwrap_or_else(|| " Diffs ".to_string())
    }

    fn summary_lines(&self, width: u16, height: u16) -> Vec<Line<'static>> {
        let summary = self.summary();
        let (added, removed) = summary.iter().fold((0, 0), |(a, r), s| (a + s.1, r + s.2));
        let mut lines = vec![Line::from(vec![
            Span::styled(
                {
                    let mut counts = vec![plural(self.count(Made::Edit), "edit")];
                    for (made, what) in [(Made::Revert, "revert"), (Made::Restore, "restore")] {
                        let n = self.count(made);
                        if n > 0 {
                            counts.push(plural(n, what));
                        }
                    }
                    counts.push(plural(summary.len(), "file"));
                    format!("{} · ", counts.join(" · "))
                },
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

    /// The shown change's title; `hunks` is its number of hunks.
    fn header_line(&self, width: u16, hunks: usize) -> Line<'static> {
        let change = &self.changes[self.selected];
        let verb = if change.created { "new " } else { "" };
        let left = format!(
            "◆ {}/{} {verb}{} ",
            self.selected + 1,
            self.changes.len(),
            crate::visible::name(&change.path)
        );
        let hunk = match self.hunk {
            Some(h) => format!("· hunk {}/{hunks} ", h + 1),
            None => String::new(),
        };
        let left = format!("{left}{hunk}");
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

    /// The selected change drawn hunk by hunk, the selected hunk marked by a bar at the left.
    fn body(&self, key: DiffLayoutKey) -> Drawn {
        let change = &self.changes[self.selected];
        let lang = highlight::token_for_path(&change.path);
        let parsed = parse(&change.diff);
        let width = usize::from(key.width);
        // One view for the whole change: a file does not switch views between its hunks.
        let too_narrow = key.view == DiffView::SideBySide && !side_by_side_fits(&parsed, width);
        let view = if too_narrow {
            DiffView::Unified
        } else {
            key.view
        };
        Drawn {
            key,
            body: DiffBody::new(parsed, lang, view, width, key.hunk),
            too_narrow,
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

#[cfg(test)]
#[path = "diffs_tests.rs"]
mod tests;
