//! The `<U+…>` markers of text in its visible form (`crate::visible`) styled apart, so a
//! character that would not have shown stands out wherever a highlighter put it (it would
//! otherwise read `<` and `>` as redirections).

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::Span;

/// `spans` with every marker in their joined text restyled with `style` (kept bold or not as
/// the span was).
pub fn style_markers(spans: Vec<Span<'static>>, style: Style) -> Vec<Span<'static>> {
    let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
    let ranges = marker_ranges(&text);
    if ranges.is_empty() {
        return spans;
    }
    let mut out = Vec::with_capacity(spans.len() + 2 * ranges.len());
    let mut at = 0;
    for span in spans {
        let content = span.content.as_ref();
        let end = at + content.len();
        // Cut points of this span: where a marker starts or ends inside it.
        let mut cuts = vec![at];
        for r in &ranges {
            for p in [r.start, r.end] {
                if p > at && p < end {
                    cuts.push(p);
                }
            }
        }
        cuts.push(end);
        cuts.dedup();
        for pair in cuts.windows(2) {
            let piece = &content[pair[0] - at..pair[1] - at];
            if piece.is_empty() {
                continue;
            }
            let inside = ranges
                .iter()
                .any(|r| r.start <= pair[0] && pair[1] <= r.end);
            let piece_style = if inside {
                span.style.patch(style)
            } else {
                span.style
            };
            out.push(Span::styled(piece.to_string(), piece_style));
        }
        at = end;
    }
    out
}

/// Byte ranges of `<U+XXXX>` and `<U+XXXX ×N>` in `text`.
fn marker_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("<U+") {
        let start = from + found;
        let rest = &text[start + 3..];
        let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        let mut len = 3 + hex;
        if (4..=6).contains(&hex) {
            let tail = &rest[hex..];
            if let Some(count) = tail.strip_prefix(" ×") {
                let digits = count.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 {
                    len += " ×".len() + digits;
                }
            }
            if text[start + len..].starts_with('>') {
                out.push(start..start + len + 1);
                from = start + len + 1;
                continue;
            }
        }
        from = start + 3;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    #[test]
    fn markers_split_across_spans_are_styled_whole() {
        let spans = vec![
            Span::raw("touch safe"),
            Span::raw("<"),
            Span::raw("U+200B"),
            Span::raw("> x<U+0301 ×50>.txt <U+12>"),
        ];
        let mark = Style::default().add_modifier(Modifier::REVERSED);
        let out = style_markers(spans, mark);
        let styled: String = out
            .iter()
            .filter(|s| s.style.add_modifier.contains(Modifier::REVERSED))
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(styled, "<U+200B><U+0301 ×50>");
        let all: String = out.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(all, "touch safe<U+200B> x<U+0301 ×50>.txt <U+12>");
    }
}
