//! The lines of a parsed diff as the diff pane, the approval prompt and the revert
//! confirmation draw them: unified (`  12  13 │+code`) or old beside new, highlighted.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::panes::diff_model::DiffLine;
use crate::tui::{highlight, theme, wrap};

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

/// How a line's code is drawn: context dimmed, added and removed lines highlighted on their
/// tint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Added,
    Removed,
}

impl Kind {
    fn sign(self) -> &'static str {
        match self {
            Kind::Context => " ",
            Kind::Added => "+",
            Kind::Removed => "-",
        }
    }

    fn sign_style(self) -> Style {
        match self {
            Kind::Context => theme::dim(),
            Kind::Added => theme::added().patch(theme::added_line()),
            Kind::Removed => theme::removed().patch(theme::removed_line()),
        }
    }

    /// The background the row is filled with, if any.
    fn tint(self) -> Option<Style> {
        match self {
            Kind::Context => None,
            Kind::Added => Some(theme::added_line()),
            Kind::Removed => Some(theme::removed_line()),
        }
    }
}

fn code_spans(text: &str, lang: &str, kind: Kind) -> Vec<Span<'static>> {
    let spans = highlight::highlight(text, lang)
        .into_iter()
        .next()
        .unwrap_or_default();
    match kind.tint() {
        None => spans
            .into_iter()
            .map(|s| Span::styled(s.content, theme::dim()))
            .collect(),
        Some(tint) => spans.into_iter().map(|s| s.patch_style(tint)).collect(),
    }
}

/// Fills a tinted row to `width` so the tint runs to the pane's edge.
fn fill(line: &mut Line<'static>, width: usize, tint: Option<Style>) {
    let pad = width.saturating_sub(line.width());
    if pad > 0 {
        let style = tint.unwrap_or_default();
        line.spans.push(Span::styled(" ".repeat(pad), style));
    }
}

/// The widest code line of `lines`, in columns as drawn.
fn widest_code(lines: &[DiffLine]) -> usize {
    lines
        .iter()
        .map(|line| match line {
            DiffLine::Context { text, .. }
            | DiffLine::Removed { text, .. }
            | DiffLine::Added { text, .. } => wrap::width(&wrap::clean(text)),
            DiffLine::Hunk(_) | DiffLine::Truncated => 0,
        })
        .max()
        .unwrap_or(0)
}

/// Columns of a side-by-side half before the code: the line number and the sign.
const HALF_GUTTER: usize = 6;

/// True when old beside new shows every line of `lines` whole at `width`: side by side never
/// cuts code; where it would, the caller draws unified instead.
pub fn side_by_side_fits(lines: &[DiffLine], width: usize) -> bool {
    let half = width.saturating_sub(1) / 2;
    widest_code(lines) + HALF_GUTTER <= half
}

/// `  12  13 │+code` lines, wrapped at the width.
pub fn unified(lines: &[DiffLine], lang: &str, width: usize) -> Vec<Line<'static>> {
    let num = |n: Option<usize>| n.map_or("    ".to_string(), |n| format!("{n:>4}"));
    let mut out = Vec::new();
    for line in lines {
        let (old, new, kind, text) = match line {
            DiffLine::Hunk(h) => {
                out.push(Line::styled(wrap::truncate(h, width), theme::hunk_header()));
                continue;
            }
            DiffLine::Truncated => {
                out.push(truncated_line(width));
                continue;
            }
            DiffLine::Context { old, new, text } => (Some(*old), Some(*new), Kind::Context, text),
            DiffLine::Removed { old, text } => (Some(*old), None, Kind::Removed, text),
            DiffLine::Added { new, text } => (None, Some(*new), Kind::Added, text),
        };
        let prefix = vec![
            Span::styled(format!("{} {} ", num(old), num(new)), theme::line_number()),
            Span::styled(format!("{} ", kind.sign()), kind.sign_style()),
        ];
        // Continuation rows keep the gutter untinted, like the line numbers.
        let cont = vec![
            Span::raw(" ".repeat(10)),
            Span::styled("  ", kind.sign_style()),
        ];
        let mut rows = wrap::hard_wrap(&code_spans(text, lang, kind), width, &prefix, &cont);
        if kind.tint().is_some() {
            rows.iter_mut()
                .for_each(|row| fill(row, width, kind.tint()));
        }
        out.extend(rows);
    }
    out
}

/// Old on the left, new on the right; removed and added runs paired line by line.
pub fn side_by_side(lines: &[DiffLine], lang: &str, width: usize) -> Vec<Line<'static>> {
    let half = width.saturating_sub(1) / 2;
    // A half wider than its line is cut (callers check `side_by_side_fits` first).
    let cell = |n: Option<usize>, kind: Kind, text: Option<&str>| -> Line<'static> {
        let Some(text) = text else {
            return Line::raw(" ".repeat(half));
        };
        let mut spans = vec![
            Span::styled(
                n.map_or("    ".to_string(), |n| format!("{n:>4}")),
                theme::line_number(),
            ),
            Span::styled(format!("{} ", kind.sign()), kind.sign_style()),
        ];
        spans.extend(code_spans(text, lang, kind));
        let mut wrapped = wrap::hard_wrap(&spans, half, &[], &[]);
        wrapped.truncate(1);
        let mut line = wrapped.pop().unwrap_or_default();
        fill(&mut line, half, kind.tint());
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
                    cell(Some(*old), Kind::Context, Some(text)),
                    cell(Some(*new), Kind::Context, Some(text)),
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
                    let left = removed.get(row).map_or_else(
                        || cell(None, Kind::Removed, None),
                        |(n, t)| cell(Some(*n), Kind::Removed, Some(t)),
                    );
                    let right = added.get(row).map_or_else(
                        || cell(None, Kind::Added, None),
                        |(n, t)| cell(Some(*n), Kind::Added, Some(t)),
                    );
                    out.push(join(left, right));
                }
            }
        }
    }
    out
}
