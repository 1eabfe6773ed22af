//! Syntax highlighting with bat's syntax definitions and themes (the `two-face` crate, compiled
//! into the binary), loaded once on first use — never at start-up, so `cairn exec` does not pay
//! for them. Code blocks, diffs and the approval prompt's command all come through here.

use std::sync::LazyLock;

use ratatui::style::Style;
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::Theme;
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use super::{colours, theme};

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(two_face::syntax::extra_newlines);
static THEME: LazyLock<Theme> =
    LazyLock::new(|| two_face::theme::extra().get(theme::SYNTAX_THEME).clone());

/// Finds a syntax by a fence tag (`rust`, `py`, `sh`) or a file extension.
fn syntax_for(token: &str) -> Option<&'static SyntaxReference> {
    let token = token.trim();
    if token.is_empty() {
        return None;
    }
    SYNTAXES
        .find_syntax_by_token(token)
        .or_else(|| SYNTAXES.find_syntax_by_extension(token))
}

/// The syntax token for a path: its extension (`src/main.rs` → `rs`), or the file name when it
/// has none (`Dockerfile`, `Makefile`), or "".
pub fn token_for_path(path: &str) -> &str {
    let path = std::path::Path::new(path);
    path.extension()
        .or_else(|| path.file_name())
        .and_then(|e| e.to_str())
        .unwrap_or("")
}

/// Lines longer than this are shown plain (minified code, a model's runaway line): syntect's
/// cost grows with a line's length and the grammar, several seconds for one 1 MiB line, and a
/// colour on such a line helps no reader. delta draws the same line at 512 columns.
const MAX_HIGHLIGHTED_LINE: usize = 4096;
/// Past this much code in one call the rest is shown plain, so the worst a reply or a file can
/// cost the frame that renders it is bounded (a few hundred milliseconds in release).
const MAX_HIGHLIGHTED_BYTES: usize = 256 * 1024;

/// Highlights `code` line by line. Unknown languages come back unstyled; a line syntect
/// cannot highlight falls back to plain text instead of failing the render.
pub fn highlight(code: &str, lang: &str) -> Vec<Vec<Span<'static>>> {
    let Some(syntax) = syntax_for(lang) else {
        return code
            .lines()
            .map(|l| vec![Span::raw(l.to_string())])
            .collect();
    };
    let mut lines = HighlightLines::new(syntax, &THEME);
    let mut out = Vec::new();
    let mut highlighted = 0;
    for line in LinesWithEndings::from(code) {
        let plain = || vec![Span::raw(line.trim_end_matches(['\n', '\r']).to_string())];
        if line.len() > MAX_HIGHLIGHTED_LINE || highlighted > MAX_HIGHLIGHTED_BYTES {
            out.push(plain());
            continue;
        }
        highlighted += line.len();
        let spans = match lines.highlight_line(line, &SYNTAXES) {
            Ok(regions) => regions
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = text.trim_end_matches(['\n', '\r']);
                    (!text.is_empty()).then(|| Span::styled(text.to_string(), convert(style)))
                })
                .collect(),
            Err(_) => plain(),
        };
        out.push(spans);
    }
    out
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    Style::default().fg(colours::rgb(colours::depth(), fg.r, fg.g, fg.b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_colours_and_unknown_stay_plain() {
        let rust = highlight("fn main() {}\n", "rust");
        assert_eq!(rust.len(), 1);
        assert!(rust[0].iter().any(|s| s.style.fg.is_some()));
        let text: String = rust[0].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "fn main() {}");
        let plain = highlight("x\ny", "no-such-language");
        assert_eq!(plain.len(), 2);
        assert_eq!(plain[0][0].style, Style::default());
    }

    #[test]
    fn a_very_long_line_and_code_past_the_budget_stay_plain() {
        let long = format!("let x = {};\nfn main() {{}}\n", "1 + ".repeat(2000));
        let lines = highlight(&long, "rust");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 1, "the long line is one plain span");
        assert_eq!(lines[0][0].style, Style::default());
        assert!(
            lines[1].iter().any(|s| s.style.fg.is_some()),
            "the next line has colours"
        );

        let many = "fn main() {}\n".repeat(MAX_HIGHLIGHTED_BYTES / 13 + 100);
        let lines = highlight(&many, "rust");
        assert!(lines[0].iter().any(|s| s.style.fg.is_some()));
        let last = lines.last().map(Vec::as_slice).unwrap_or_default();
        assert_eq!(last.len(), 1, "past the budget a line is one plain span");
        assert_eq!(last[0].content, "fn main() {}");
    }
}
