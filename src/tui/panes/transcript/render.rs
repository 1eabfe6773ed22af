//! Markdown → styled, wrapped lines for one width: headings, emphasis, inline code, lists,
//! quotes, rules, links, tables and fenced code blocks highlighted with syntect. Pure: the
//! caller caches the result per width.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::table::{Cell, Table};
use crate::tui::{highlight, theme, wrap};

/// Renders `markdown` into lines at most `width` columns wide.
pub fn markdown(markdown: &str, width: usize) -> Vec<Line<'static>> {
    let mut w = Writer::new(width.max(8));
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(markdown, options) {
        w.event(event);
    }
    w.flush();
    while w.out.last().is_some_and(|l| l.width() == 0) {
        w.out.pop();
    }
    w.out
}

/// Plain text wrapped to `width`, each line in `style` (user messages, reasoning, notices).
pub fn plain(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    text.lines()
        .flat_map(|line| wrap::wrap(&[Span::styled(line.to_string(), style)], width, &[], &[]))
        .collect()
}

struct ListLevel {
    next: Option<u64>,
}

struct CodeBlock {
    lang: String,
    text: String,
}

struct Writer {
    width: usize,
    out: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<ListLevel>,
    /// Marker of the list item whose first line is being written.
    item_marker: Option<String>,
    quote_depth: usize,
    code: Option<CodeBlock>,
    link: Option<String>,
    /// A blank line is owed before the next block.
    blank_before_next: bool,
    /// The table being read; it is drawn whole at its end, when column widths are known.
    table: Option<Table>,
    table_row: Vec<Cell>,
    table_cell: Cell,
}

impl Writer {
    fn new(width: usize) -> Self {
        Self {
            width,
            out: Vec::new(),
            spans: Vec::new(),
            styles: vec![Style::default()],
            lists: Vec::new(),
            item_marker: None,
            quote_depth: 0,
            code: None,
            link: None,
            blank_before_next: false,
            table: None,
            table_row: Vec::new(),
            table_cell: Vec::new(),
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let next = f(self.style());
        self.styles.push(next);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn indent(&self) -> usize {
        self.lists.len().saturating_sub(1) * 2
    }

    /// The first-line and continuation prefixes for the current nesting. Nesting deeper than
    /// half the width is drawn flat at that depth: a reply of 500,000 `>` would otherwise give
    /// every wrapped character a line with a prefix wider than the screen (gigabytes of lines).
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let budget = self.width / 2;
        let quotes = self.quote_depth.min(budget / 4);
        let indent = self.indent().min(budget - quotes * 2);
        let mut lead = " ".repeat(indent);
        let quote: String = "│ ".repeat(quotes);
        lead.insert_str(0, &quote);
        let marker = self.item_marker.take();
        let cont = if self.lists.is_empty() {
            lead.clone()
        } else {
            format!("{lead}  ")
        };
        let cont = match &marker {
            Some(m) => format!("{lead}{}", " ".repeat(wrap::width(m))),
            None => cont,
        };
        let first = match marker {
            Some(m) => vec![
                Span::styled(lead, theme::quote()),
                Span::styled(m, theme::accent()),
            ],
            None => vec![Span::styled(cont.clone(), theme::quote())],
        };
        (first, vec![Span::styled(cont, theme::quote())])
    }

    fn start_block(&mut self) {
        if self.blank_before_next && !self.out.is_empty() {
            self.out.push(Line::default());
        }
        self.blank_before_next = false;
    }

    /// Writes the pending inline spans as one wrapped paragraph.
    fn flush(&mut self) {
        if self.spans.is_empty() && self.item_marker.is_none() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let (first, cont) = self.prefixes();
        self.start_block();
        self.out
            .extend(wrap::wrap(&spans, self.width, &first, &cont));
    }

    fn text(&mut self, text: &str) {
        if let Some(code) = &mut self.code {
            code.text.push_str(text);
        } else if self.table.is_some() {
            let style = self.style();
            self.table_cell.push(Span::styled(text.to_string(), style));
        } else {
            let style = self.style();
            self.spans.push(Span::styled(text.to_string(), style));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                if self.table.is_some() {
                    self.table_cell
                        .push(Span::styled(code.to_string(), theme::inline_code()));
                } else {
                    self.spans
                        .push(Span::styled(code.to_string(), theme::inline_code()));
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.text("\n"),
            Event::Rule => {
                self.flush();
                self.start_block();
                self.out
                    .push(Line::styled("─".repeat(self.width.min(40)), theme::dim()));
                self.blank_before_next = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.spans.push(Span::styled(mark, theme::accent()));
            }
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::FootnoteReference(r) => self.text(&format!("[{r}]")),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush(),
            Tag::Heading { level, .. } => {
                self.flush();
                let hashes = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                self.push_style(|_| theme::heading());
                self.spans.push(Span::styled(hashes, theme::heading()));
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote_depth += 1;
                self.push_style(|s| s.patch(theme::quote()));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => {
                        lang.split([',', ' ']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(CodeBlock {
                    lang,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.start_block();
                }
                self.lists.push(ListLevel { next: start });
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(ListLevel { next: Some(n) }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.item_marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(|s| s.patch(theme::link()));
            }
            Tag::Image { dest_url, .. } => self.text(&format!("[image: {dest_url}] ")),
            Tag::Table(aligns) => {
                self.flush();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => self.table_row.clear(),
            Tag::TableCell => self.table_cell.clear(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.blank_before_next = true;
            }
            TagEnd::Heading(_) => {
                self.pop_style();
                self.flush();
                self.blank_before_next = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.pop_style();
                self.blank_before_next = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(&code);
                }
                self.blank_before_next = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank_before_next = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                // Loose list items end with a paragraph; keep items tight all the same.
                self.blank_before_next = false;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link.take()
                    && !url.is_empty()
                    && !url.starts_with('#')
                {
                    self.spans
                        .push(Span::styled(format!(" ({url})"), theme::dim()));
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.table_cell);
                self.table_row.push(cell);
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                let row = std::mem::take(&mut self.table_row);
                if let Some(table) = &mut self.table {
                    if matches!(tag, TagEnd::TableHead) {
                        table.head.push(row);
                    } else {
                        table.body.push(row);
                    }
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.start_block();
                    let (first, cont) = self.prefixes();
                    self.out.extend(table.render(self.width, &first, &cont));
                }
                self.blank_before_next = true;
            }
            _ => {}
        }
    }

    fn code_block(&mut self, code: &CodeBlock) {
        self.start_block();
        let (_, cont) = self.prefixes();
        let label = if code.lang.is_empty() {
            String::new()
        } else {
            format!(" {} ", code.lang)
        };
        let mut top = cont.clone();
        top.push(Span::styled(format!("╭─{label}"), theme::code_frame()));
        self.out.push(Line::from(top));
        let mut bar = cont.clone();
        bar.push(Span::styled("│ ", theme::code_frame()));
        for spans in highlight::highlight(&code.text, &code.lang) {
            self.out
                .extend(wrap::hard_wrap(&spans, self.width, &bar, &bar));
        }
        let mut bottom = cont;
        bottom.push(Span::styled("╰─", theme::code_frame()));
        self.out.push(Line::from(bottom));
    }
}

#[cfg(test)]
#[path = "render_worst_tests.rs"]
mod worst_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::wrap::texts;

    #[test]
    fn paragraphs_lists_and_code_blocks_render_as_a_reader_expects() {
        let md = "Hello **world**.\n\n- one\n- two\n\n1. first\n2. second\n\n```rust\nfn main() {}\n```\n";
        let lines = markdown(md, 40);
        assert_eq!(
            texts(&lines),
            [
                "Hello world.",
                "",
                "• one",
                "• two",
                "",
                "1. first",
                "2. second",
                "",
                "╭─ rust ",
                "│ fn main() {}",
                "╰─",
            ]
        );
        let bold = lines[0].spans.iter().find(|s| s.content == "world");
        assert!(bold.is_some_and(|s| s.style.add_modifier.contains(Modifier::BOLD)));
    }

    #[test]
    fn an_unclosed_code_block_while_streaming_still_renders_as_code() {
        let lines = markdown("text\n\n```py\nprint(1)\n", 30);
        assert_eq!(texts(&lines), ["text", "", "╭─ py ", "│ print(1)", "╰─"]);
    }

    #[test]
    fn nothing_is_wider_than_the_width() {
        let md = "# A heading that is long\n\n> quoted text that goes on and on\n\n- item with a long line of words\n  - nested item with more words\n";
        for width in [10, 20, 33] {
            for line in markdown(md, width) {
                assert!(line.width() <= width, "{width}: {line:?}");
            }
        }
    }

    const TABLE: &str = "Results:\n\n| Crate | Version | Why it is here |\n|:------|--------:|:--------------:|\n| `ratatui` | 0.30.2 | draws the whole terminal user interface, frame by frame, from a pure state |\n| tokio | 1.54 | runs the agent loop, the tools and the provider stream concurrently |\n| **toml** | 1.2 | config |\n\nAfter the table.\n";

    #[test]
    fn a_table_draws_aligned_columns_between_rules_at_80_and_120_columns() {
        for width in [80, 120] {
            let lines = markdown(TABLE, width);
            for line in &lines {
                assert!(line.width() <= width, "{width}: {line:?}");
            }
            let text = texts(&lines);
            // Every row's bars line up with the rules' joints.
            let joints = |l: &str| -> Vec<usize> {
                l.chars()
                    .enumerate()
                    .filter(|(_, c)| "│┌┬┐├┼┤└┴┘".contains(*c))
                    .map(|(i, _)| i)
                    .collect()
            };
            let table: Vec<&String> = text.iter().filter(|l| !joints(l).is_empty()).collect();
            assert!(table.len() > 5, "{text:?}");
            for line in &table {
                assert_eq!(joints(line), joints(table[0]), "{width}: {line}");
            }
            insta::assert_snapshot!(format!("markdown_table_{width}"), text.join("\n"));
        }
    }

    #[test]
    fn table_cells_keep_their_inline_styles_and_the_header_is_bold() {
        let lines = markdown(TABLE, 120);
        let code = lines
            .iter()
            .flat_map(|l| &l.spans)
            .find(|s| s.content == "ratatui");
        assert!(
            code.is_some_and(|s| s.style == theme::inline_code()),
            "{lines:?}"
        );
        let head = lines
            .iter()
            .flat_map(|l| &l.spans)
            .find(|s| s.content == "Crate");
        assert!(head.is_some_and(|s| s.style.add_modifier.contains(Modifier::BOLD)));
    }

    #[test]
    fn a_table_too_narrow_for_its_columns_still_fits_the_width() {
        for width in [8, 12, 20, 30] {
            for line in markdown(TABLE, width) {
                assert!(line.width() <= width, "{width}: {line:?}");
            }
        }
        let quoted = format!("> {}", TABLE.replace('\n', "\n> "));
        for line in markdown(&quoted, 40) {
            assert!(line.width() <= 40, "{line:?}");
        }
    }
}
