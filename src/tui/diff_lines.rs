//! The lines of a parsed diff as the diff pane, the approval prompt and the revert
//! confirmation draw them: unified (`  12  13 │+code`) or old beside new, highlighted.

use ratatui::text::{Line, Span};

use crate::tui::diffs::DiffLine;
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
