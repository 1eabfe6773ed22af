//! The transcript card of a web fetch or search: the URL, status, size and time of a page
//! with the first lines of its content, or the numbered results of a search. Enter on the
//! selected card opens it to the whole content the model got (wrapped, every line; a search
//! with every snippet) and closes it again; the same text is the card's copy text (Ctrl+Y).

use ratatui::text::{Line, Span};

use crate::content::human_bytes;
use crate::tool_output::{WebPage, WebSearch};
use crate::tui::{theme, wrap};

/// Lines of a page's content shown under its card.
const PREVIEW_LINES: usize = 4;
/// Results of a search shown under its card.
const RESULT_LINES: usize = 10;

/// The one-line summary: status, type, size, time, and where the text is cut.
pub fn page_summary(page: &WebPage) -> String {
    if let Some(hop) = &page.unfollowed {
        return format!("{} redirect to {} not followed", hop.status, hop.to);
    }
    let kind = page
        .content_type
        .as_deref()
        .and_then(|t| t.split(';').next())
        .unwrap_or("no type");
    let mut parts = vec![
        page.status.to_string(),
        kind.to_string(),
        human_bytes(page.bytes),
    ];
    if page.capped {
        parts.push("stopped at max_bytes".into());
    }
    if page.cached {
        parts.push("from this session's copy".into());
    } else {
        parts.push(format!("{:.1} s", page.duration_ms as f64 / 1000.0));
    }
    let end = page.offset + page.content.chars().count();
    if page.offset > 0 || end < page.total_chars {
        parts.push(format!(
            "chars {}-{end} of {}",
            page.offset, page.total_chars
        ));
    }
    parts.join(" · ")
}

pub fn search_summary(search: &WebSearch) -> String {
    let mut text = format!(
        "{} result{} from {}",
        search.hits.len(),
        if search.hits.len() == 1 { "" } else { "s" },
        search.backend
    );
    if search.filtered > 0 {
        text.push_str(&format!(" ({} filtered out)", search.filtered));
    }
    text
}

fn bar_line(text: &str, style: ratatui::style::Style, width: usize) -> Line<'static> {
    let shown = wrap::truncate(&wrap::clean(text), width.saturating_sub(4).max(1));
    Line::from(vec![
        Span::styled("  │ ", theme::dim()),
        Span::styled(shown, style),
    ])
}

/// The hint under a folded card with more to show, or an opened one.
fn fold_hint(hidden: usize, expanded: bool, width: usize, out: &mut Vec<Line<'static>>) {
    let text = if expanded {
        "Enter folds this card".to_string()
    } else if hidden > 0 {
        format!(
            "… {hidden} more line{} · Enter shows all",
            if hidden == 1 { "" } else { "s" }
        )
    } else {
        return;
    };
    out.push(bar_line(&text, theme::dim(), width));
}

/// `text` word-wrapped under the card's bar: an opened card is read, not skimmed.
fn wrapped(text: &str, style: ratatui::style::Style, width: usize, out: &mut Vec<Line<'static>>) {
    let bar = [Span::styled("  │ ", theme::dim())];
    out.extend(wrap::wrap(
        &[Span::styled(text.to_string(), style)],
        width.max(5),
        &bar,
        &bar,
    ));
}

/// The card body of a fetched page; `expanded`: every line of the content.
pub fn page_lines(page: &WebPage, width: usize, expanded: bool, out: &mut Vec<Line<'static>>) {
    out.push(bar_line(&page_summary(page), theme::dim(), width));
    if page.final_url != page.url && !page.final_url.is_empty() {
        out.push(bar_line(
            &format!("→ {}", page.final_url),
            theme::dim(),
            width,
        ));
    }
    if expanded {
        for line in page.content.lines() {
            wrapped(line, ratatui::style::Style::default(), width, out);
        }
        fold_hint(0, true, width, out);
        return;
    }
    let lines: Vec<&str> = page
        .content
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    for line in lines.iter().take(PREVIEW_LINES) {
        out.push(bar_line(line, ratatui::style::Style::default(), width));
    }
    fold_hint(lines.len().saturating_sub(PREVIEW_LINES), false, width, out);
}

/// The card body of a search; `expanded`: every result with its snippet.
pub fn search_lines(
    search: &WebSearch,
    width: usize,
    expanded: bool,
    out: &mut Vec<Line<'static>>,
) {
    out.push(bar_line(&search_summary(search), theme::dim(), width));
    if expanded {
        for (i, hit) in search.hits.iter().enumerate() {
            let head = format!("[{}] {} — {}", i + 1, hit.title, hit.url);
            wrapped(&head, ratatui::style::Style::default(), width, out);
            if !hit.snippet.trim().is_empty() {
                wrapped(&format!("    {}", hit.snippet), theme::dim(), width, out);
            }
        }
        fold_hint(0, true, width, out);
        return;
    }
    for (i, hit) in search.hits.iter().take(RESULT_LINES).enumerate() {
        out.push(bar_line(
            &format!("[{}] {} — {}", i + 1, hit.title, hit.url),
            ratatui::style::Style::default(),
            width,
        ));
    }
    // Snippets are shown only when opened, so there is always more to see.
    let hidden = search.hits.len().saturating_sub(RESULT_LINES)
        + search
            .hits
            .iter()
            .filter(|h| !h.snippet.trim().is_empty())
            .count();
    fold_hint(hidden, false, width, out);
}
