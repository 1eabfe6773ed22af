//! Markdown tables as aligned columns between box-drawing rules. Columns take their natural
//! width when the table fits; otherwise the widest columns give up space and their cells wrap
//! inside the column, so no line is ever wider than the pane.

use pulldown_cmark::Alignment;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::{theme, wrap};

/// A cell: its inline spans (emphasis and code keep their style).
pub type Cell = Vec<Span<'static>>;

/// A table as parsed: the header rows first, then the body.
#[derive(Debug, Default)]
pub struct Table {
    pub aligns: Vec<Alignment>,
    pub head: Vec<Vec<Cell>>,
    pub body: Vec<Vec<Cell>>,
}

impl Table {
    fn columns(&self) -> usize {
        self.head
            .iter()
            .chain(&self.body)
            .map(Vec::len)
            .max()
            .unwrap_or(0)
    }

    /// Renders into lines at most `width` columns wide, `first` before the first line and
    /// `cont` before every other (list and quote nesting).
    pub fn render(
        &self,
        width: usize,
        first: &[Span<'static>],
        cont: &[Span<'static>],
    ) -> Vec<Line<'static>> {
        let columns = self.columns();
        if columns == 0 {
            return Vec::new();
        }
        let prefix = spans_width(cont).max(spans_width(first));
        // `│ a │ b │`: a bar and a space before each cell, a space after, one closing bar.
        let rules = 3 * columns + 1;
        let Some(room) = width.checked_sub(prefix + rules).filter(|r| *r >= columns) else {
            return self.render_as_rows(width, first, cont);
        };
        let widths = fit(&self.natural_widths(columns), room);

        let mut lines: Vec<Vec<Span<'static>>> = Vec::new();
        lines.push(rule(&widths, '┌', '┬', '┐'));
        for row in &self.head {
            lines.extend(row_lines(row, &widths, &self.aligns, theme::bold()));
        }
        if !self.head.is_empty() {
            lines.push(rule(&widths, '├', '┼', '┤'));
        }
        for row in &self.body {
            lines.extend(row_lines(row, &widths, &self.aligns, Style::default()));
        }
        lines.push(rule(&widths, '└', '┴', '┘'));

        lines
            .into_iter()
            .enumerate()
            .map(|(i, spans)| {
                let mut line = if i == 0 {
                    first.to_vec()
                } else {
                    cont.to_vec()
                };
                line.extend(spans);
                Line::from(line)
            })
            .collect()
    }

    fn natural_widths(&self, columns: usize) -> Vec<usize> {
        let mut widths = vec![1; columns];
        for row in self.head.iter().chain(&self.body) {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(spans_width(cell));
            }
        }
        widths
    }

    /// Too narrow for even one column per cell: each row as `a │ b`, word-wrapped.
    fn render_as_rows(
        &self,
        width: usize,
        first: &[Span<'static>],
        cont: &[Span<'static>],
    ) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let rows = self.head.iter().map(|r| (r, theme::bold()));
        let rows = rows.chain(self.body.iter().map(|r| (r, Style::default())));
        for (row, style) in rows {
            let mut spans = Vec::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", theme::code_frame()));
                }
                spans.extend(cell.iter().map(|s| s.clone().patch_style(style)));
            }
            let lead = if out.is_empty() { first } else { cont };
            out.extend(wrap::wrap(&spans, width, lead, cont));
        }
        out
    }
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| wrap::width(&s.content)).sum()
}

/// Shares `room` among columns: columns narrower than an even share keep their natural width,
/// the rest split what is left evenly (water filling), so one long column wraps before short
/// ones do. With `room` at least one per column, every column gets at least one.
fn fit(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.to_vec();
    }
    let mut widths = vec![0; natural.len()];
    let mut open: Vec<usize> = (0..natural.len()).collect();
    let mut left = room;
    loop {
        let share = left / open.len().max(1);
        let (small, wide): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&i| natural[i] <= share);
        if small.is_empty() {
            break;
        }
        for i in small {
            widths[i] = natural[i];
            left -= natural[i];
        }
        open = wide;
        if open.is_empty() {
            return widths;
        }
    }
    let share = left / open.len();
    let mut extra = left % open.len();
    for i in open {
        widths[i] = share + usize::from(extra > 0);
        extra = extra.saturating_sub(1);
    }
    widths
}

/// `┌───┬───┐` and its middle and bottom forms.
fn rule(widths: &[usize], left: char, middle: char, right: char) -> Vec<Span<'static>> {
    let mut text = String::new();
    text.push(left);
    for (i, w) in widths.iter().enumerate() {
        if i > 0 {
            text.push(middle);
        }
        text.push_str(&"─".repeat(w + 2));
    }
    text.push(right);
    vec![Span::styled(text, theme::code_frame())]
}

/// One table row as one or more lines: each cell wrapped to its column and padded by its
/// alignment.
fn row_lines(
    row: &[Cell],
    widths: &[usize],
    aligns: &[Alignment],
    style: Style,
) -> Vec<Vec<Span<'static>>> {
    let empty = Vec::new();
    let wrapped: Vec<Vec<Line<'static>>> = widths
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let cell = row.get(i).unwrap_or(&empty);
            let styled: Vec<Span<'static>> =
                cell.iter().map(|s| s.clone().patch_style(style)).collect();
            wrap::wrap(&styled, w, &[], &[])
                .into_iter()
                .flat_map(|line| wrap::hard_wrap(&line.spans, w, &[], &[]))
                .collect()
        })
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    (0..height)
        .map(|y| {
            let mut spans = Vec::new();
            for (i, &w) in widths.iter().enumerate() {
                let bar = if i == 0 { "│ " } else { " │ " };
                spans.push(Span::styled(bar, theme::code_frame()));
                let line = wrapped[i].get(y);
                let content: Vec<Span<'static>> =
                    line.map(|l| trim_end(l.spans.clone())).unwrap_or_default();
                let gap = w.saturating_sub(spans_width(&content));
                let (before, after) = match aligns.get(i) {
                    Some(Alignment::Right) => (gap, 0),
                    Some(Alignment::Center) => (gap / 2, gap - gap / 2),
                    _ => (0, gap),
                };
                if before > 0 {
                    spans.push(Span::raw(" ".repeat(before)));
                }
                spans.extend(content);
                if after > 0 {
                    spans.push(Span::raw(" ".repeat(after)));
                }
            }
            spans.push(Span::styled(" │", theme::code_frame()));
            spans
        })
        .collect()
}

/// Drops the trailing spaces word wrapping leaves at a break.
fn trim_end(mut spans: Vec<Span<'static>>) -> Vec<Span<'static>> {
    while let Some(last) = spans.last_mut() {
        let trimmed = last.content.trim_end().to_string();
        if trimmed.is_empty() {
            spans.pop();
        } else {
            last.content = trimmed.into();
            break;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_that_fit_keep_their_width_and_wide_ones_share_the_rest() {
        assert_eq!(fit(&[3, 5], 20), [3, 5]);
        // The short column keeps 4; the two long ones split the remaining 16.
        assert_eq!(fit(&[4, 40, 30], 20), [4, 8, 8]);
        assert_eq!(fit(&[10, 10], 7), [4, 3]);
        assert_eq!(fit(&[1, 1, 1], 3), [1, 1, 1]);
    }
}
