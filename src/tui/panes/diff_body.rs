//! The diff pane's body: every row of the selected change laid out at once (cheap: plain
//! text), syntax colours added only to the pieces that come on screen. Highlighting is what
//! costs (syntect's regex engine, ~0.3 ms a line), so a 4,000-line change drawn eagerly took
//! seconds before its first frame; laid out plain it takes milliseconds, and scrolling
//! highlights a piece at a time.

use ratatui::text::{Line, Span};

use crate::tui::panes::diff_lines::{side_by_side, unified};
use crate::tui::panes::diff_model::{DiffLine, DiffView};
use crate::tui::theme;

/// Lines per piece: a piece is highlighted as a whole when any of its rows shows.
const PIECE_LINES: usize = 48;

/// A run of diff lines drawn together, and where its rows are in the body.
#[derive(Debug)]
struct DiffRun {
    lines: std::ops::Range<usize>,
    rows: std::ops::Range<usize>,
    selected: bool,
    highlighted: bool,
}

#[derive(Debug)]
pub(super) struct DiffBody {
    pub rows: Vec<Line<'static>>,
    /// The row each hunk's header is on.
    pub hunk_rows: Vec<usize>,
    parsed: Vec<DiffLine>,
    lang: String,
    view: DiffView,
    width: usize,
    pieces: Vec<DiffRun>,
}

impl DiffBody {
    /// Lays out `parsed` in `view` at `width`, with the hunk `selected_hunk` marked.
    pub fn new(
        parsed: Vec<DiffLine>,
        lang: &str,
        view: DiffView,
        width: usize,
        selected_hunk: Option<usize>,
    ) -> Self {
        let mut body = DiffBody {
            rows: Vec::new(),
            hunk_rows: Vec::new(),
            parsed,
            lang: lang.to_string(),
            view,
            width,
            pieces: Vec::new(),
        };
        let mut start = 0;
        let mut hunk = None;
        while start < body.parsed.len() {
            if matches!(body.parsed[start], DiffLine::Hunk(_)) {
                let index = body.hunk_rows.len();
                body.hunk_rows.push(body.rows.len());
                hunk = Some(index);
            }
            let end = body.piece_end(start);
            let drawn = body.draw(start..end, "", hunk.is_some() && hunk == selected_hunk);
            let rows = body.rows.len()..body.rows.len() + drawn.len();
            body.rows.extend(drawn);
            body.pieces.push(DiffRun {
                lines: start..end,
                rows,
                selected: hunk.is_some() && hunk == selected_hunk,
                highlighted: false,
            });
            start = end;
        }
        body
    }

    /// Adds syntax colours to every piece with a row in `rows`.
    pub fn highlight(&mut self, rows: std::ops::Range<usize>) {
        for i in 0..self.pieces.len() {
            let piece = &self.pieces[i];
            if piece.highlighted || piece.rows.end <= rows.start || piece.rows.start >= rows.end {
                continue;
            }
            let (lines, at, selected) = (piece.lines.clone(), piece.rows.clone(), piece.selected);
            let drawn = self.draw(lines, &self.lang.clone(), selected);
            // Colours never change where a line wraps; should they, the plain rows stay.
            if drawn.len() == at.len() {
                self.rows.splice(at, drawn);
            }
            self.pieces[i].highlighted = true;
        }
    }

    fn draw(
        &self,
        lines: std::ops::Range<usize>,
        lang: &str,
        selected: bool,
    ) -> Vec<Line<'static>> {
        let lines = &self.parsed[lines];
        let mut drawn = match self.view {
            DiffView::Unified => unified(lines, lang, self.width),
            DiffView::SideBySide => side_by_side(lines, lang, self.width),
        };
        if selected {
            drawn.iter_mut().for_each(mark_selected);
        }
        drawn
    }

    /// Where the piece starting at `start` ends: at the next hunk header, or after
    /// `PIECE_LINES` lines at a place where cutting changes nothing drawn (side by side pairs
    /// a run of removed lines with the added run after it, so it is cut only beside context).
    fn piece_end(&self, start: usize) -> usize {
        let mut end = start + 1;
        while end < self.parsed.len() && !matches!(self.parsed[end], DiffLine::Hunk(_)) {
            if end - start >= PIECE_LINES && self.cuttable(end) {
                break;
            }
            end += 1;
        }
        end
    }

    fn cuttable(&self, at: usize) -> bool {
        let context = |i: usize| matches!(self.parsed.get(i), Some(DiffLine::Context { .. }));
        match self.view {
            DiffView::Unified => true,
            DiffView::SideBySide => context(at) || context(at - 1),
        }
    }
}

/// Puts the selection bar in the first column of a row of the selected hunk.
fn mark_selected(line: &mut Line<'static>) {
    // The bar takes the place of a leading blank (line numbers are right-aligned); a row
    // without one (the `@@` header) moves right by one column instead.
    if let Some(first) = line.spans.first_mut()
        && first.content.starts_with(' ')
    {
        let rest: String = first.content.chars().skip(1).collect();
        *first = Span::styled(rest, first.style);
    }
    line.spans
        .insert(0, Span::styled("▌", theme::selection_bar()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::panes::diff_model::parse;

    /// A 600-line Rust file with every third line changed, in one hunk.
    fn long_change() -> Vec<DiffLine> {
        let mut diff = String::from("--- a/x.rs\n+++ b/x.rs\n@@ -1,600 +1,600 @@\n");
        for n in 0..600 {
            if n % 3 == 0 {
                diff.push_str(&format!("-fn old_{n}() -> u32 {{ {n} }}\n"));
                diff.push_str(&format!("+fn new_{n}() -> u32 {{ {n} + 1 }}\n"));
            } else {
                diff.push_str(&format!(" let v{n} = \"text {n}\";\n"));
            }
        }
        parse(&diff)
    }

    fn coloured(row: &Line<'_>) -> bool {
        row.spans
            .iter()
            .any(|s| s.content.contains("fn") && s.style.fg != theme::added().fg)
    }

    /// What a user sees is the same as an eager drawing, wherever they scroll; only what
    /// has not been on screen is left plain.
    #[test]
    fn rows_that_come_on_screen_are_drawn_as_an_eager_render_draws_them() {
        for view in [DiffView::Unified, DiffView::SideBySide] {
            let parsed = long_change();
            let eager = match view {
                DiffView::Unified => unified(&parsed, "rs", 120),
                DiffView::SideBySide => side_by_side(&parsed, "rs", 120),
            };
            let mut body = DiffBody::new(parsed, "rs", view, 120, None);
            assert_eq!(body.rows.len(), eager.len(), "{view:?}: the same rows");
            body.highlight(0..30);
            assert_eq!(body.rows[..30], eager[..30], "{view:?}: the first screen");
            let end = body.rows.len();
            assert_ne!(
                body.rows[end - 30..],
                eager[end - 30..],
                "{view:?}: the end, never on screen, is still plain"
            );
            body.highlight(end - 30..end);
            assert_eq!(
                body.rows[end - 30..],
                eager[end - 30..],
                "{view:?}: scrolled to the end"
            );
            assert!(
                body.rows[end - 30..].iter().any(coloured),
                "{view:?}: with colours"
            );
        }
    }

    #[test]
    fn the_selected_hunk_keeps_its_bar_once_highlighted() {
        let mut body = DiffBody::new(long_change(), "rs", DiffView::Unified, 100, Some(0));
        let end = body.rows.len();
        body.highlight(end - 5..end);
        assert!(
            body.rows[end - 5..]
                .iter()
                .all(|row| row.spans[0].content == "▌"),
            "the bar on every row of the selected hunk"
        );
    }
}
