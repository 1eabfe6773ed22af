//! The `@` finder popup: while the word at the cursor starts with `@`, the best files of the
//! workspace for what follows are listed above the input; Up/Down choose, Enter picks the
//! chosen path (in place of the word, quoted when it has spaces, a space after it), Tab
//! completes it without the space (so `#L10-20` may follow), Esc closes. The index is the
//! `finder`'s, built on a background thread the first time `@` is typed and walked again each
//! time the popup opens, so typing never waits for it and new files appear. While a walk runs
//! under an open popup the app checks on it each tick (`waiting_for_index`), and the list is
//! ranked again as soon as the walk is done (`follow_index`), without waiting for a key.

use std::ops::Range;
use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Widget};

use crate::finder::FileIndex;
use crate::tui::theme;

/// Files listed at most.
const SHOWN: usize = 8;

#[derive(Debug, Default)]
pub struct MentionFinder {
    /// `None` until the first `@`: most sessions never need the walk.
    index: Option<FileIndex>,
    open: Option<Open>,
    /// The MCP servers' resources, as mentioned (`server:uri`), once the servers said.
    resources: Vec<String>,
}

/// Resources listed at most, before the files.
const SHOWN_RESOURCES: usize = 4;

#[derive(Debug)]
struct Open {
    /// The `@word` being completed.
    word: Range<usize>,
    matches: Vec<String>,
    selected: usize,
    /// The index's generation the matches were ranked from.
    generation: u64,
}

/// What choosing a file does to the input: `range` becomes `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MentionPick {
    pub range: Range<usize>,
    pub text: String,
    /// The chosen file.
    pub file: PathBuf,
}

impl MentionFinder {
    /// A finder over an index of the caller's (instead of the working directory's).
    pub fn over(index: FileIndex) -> Self {
        Self {
            index: Some(index),
            open: None,
            resources: Vec::new(),
        }
    }

    /// The MCP servers' resources join the files (`@server:uri`).
    pub fn set_resources(&mut self, resources: &[crate::bus::McpResourceLine]) {
        self.resources = resources.iter().map(|r| r.mention.clone()).collect();
    }

    /// The resources matching `query` (its characters in order, any case), best first.
    fn resource_matches(&self, query: &str) -> Vec<String> {
        let query = query.to_lowercase();
        let mut found: Vec<(usize, &String)> = self
            .resources
            .iter()
            .filter_map(|r| subsequence_gaps(&query, &r.to_lowercase()).map(|gaps| (gaps, r)))
            .collect();
        found.sort_by_key(|(gaps, _)| *gaps);
        found
            .into_iter()
            .take(SHOWN_RESOURCES)
            .map(|(_, r)| r.clone())
            .collect()
    }

    pub fn is_open(&self) -> bool {
        self.open
            .as_ref()
            .is_some_and(|open| !open.matches.is_empty())
    }

    /// Follows the input after an edit: opens, updates or closes the popup.
    pub fn update(&mut self, text: &str, cursor: usize) {
        let Some(word) = mention_word(text, cursor) else {
            self.open = None;
            return;
        };
        let query = text[word.start + 1..word.end].to_string();
        let opening = self.open.is_none();
        let index = self.index.get_or_insert_with(|| {
            FileIndex::start(&std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
        });
        if opening {
            index.refresh();
        }
        let generation = index.generation();
        let files = index.matches(&query, SHOWN);
        let mut matches = self.resource_matches(&query);
        let room = SHOWN - matches.len();
        matches.extend(files.into_iter().take(room));
        let selected = self
            .open
            .as_ref()
            .map_or(0, |open| open.selected.min(matches.len().saturating_sub(1)));
        self.open = Some(Open {
            word,
            matches,
            selected,
            generation,
        });
    }

    /// Whether the popup is open over an index that is still being walked (or was walked
    /// since it was ranked): the app then checks back on the next tick.
    pub fn waiting_for_index(&self) -> bool {
        match (&self.open, &self.index) {
            (Some(open), Some(index)) => {
                index.is_walking() || index.generation() != open.generation
            }
            _ => false,
        }
    }

    /// Ranks the open popup's word again when a walk finished since it was ranked; true
    /// when it did (the screen changed).
    pub fn follow_index(&mut self, text: &str, cursor: usize) -> bool {
        let walked = match (&self.open, &self.index) {
            (Some(open), Some(index)) => index.generation() != open.generation,
            _ => false,
        };
        if walked {
            self.update(text, cursor);
        }
        walked
    }

    /// A key while the popup is open; `None` when it is not the popup's.
    pub fn handle_key(&mut self, key: &KeyEvent) -> Option<Option<MentionPick>> {
        let open = self.open.as_mut().filter(|open| !open.matches.is_empty())?;
        match key.code {
            KeyCode::Up => open.selected = open.selected.saturating_sub(1),
            KeyCode::Down => open.selected = (open.selected + 1).min(open.matches.len() - 1),
            KeyCode::Esc => self.open = None,
            KeyCode::Tab | KeyCode::Enter => {
                let path = open.matches.get(open.selected)?.clone();
                let range = open.word.clone();
                let file = match &self.index {
                    Some(index) if !self.resources.contains(&path) => index.root().join(&path),
                    _ => PathBuf::from(&path),
                };
                self.open = None;
                let spelled = crate::content::mentions::spelling(&path);
                // Enter finishes the mention; Tab leaves the cursor on it for a `#L` range.
                let text = if key.code == KeyCode::Enter {
                    format!("{spelled} ")
                } else {
                    spelled
                };
                return Some(Some(MentionPick { range, text, file }));
            }
            _ => return None,
        }
        Some(None)
    }

    /// Draws the list just above `input`.
    pub fn render(&self, input: Rect, buf: &mut Buffer) {
        let Some(open) = self.open.as_ref().filter(|open| !open.matches.is_empty()) else {
            return;
        };
        let height = (open.matches.len() as u16 + 2).min(input.y);
        if height < 3 {
            return;
        }
        let area = Rect {
            x: input.x,
            y: input.y - height,
            width: input.width.min(72),
            height,
        };
        Clear.render(area, buf);
        let title = if self.resources.is_empty() {
            " @ files · Enter picks · Tab completes "
        } else {
            " @ files and MCP resources · Enter picks · Tab completes "
        };
        let block = Block::bordered().title(title);
        let inner = block.inner(area);
        block.render(area, buf);
        for (row, path) in open.matches.iter().enumerate().take(inner.height as usize) {
            let line = if row == open.selected {
                Line::styled(path.as_str(), theme::selected())
            } else {
                Line::raw(path.as_str())
            };
            line.render(
                Rect {
                    y: inner.y + row as u16,
                    height: 1,
                    ..inner
                },
                buf,
            );
        }
    }
}

/// How many characters of `name` lie between those of `query` (which appear in it in
/// order); `None` when they do not.
fn subsequence_gaps(query: &str, name: &str) -> Option<usize> {
    if name.contains(query) {
        return Some(0);
    }
    let mut gaps = 0;
    let mut rest = name.chars();
    for c in query.chars() {
        loop {
            match rest.next() {
                Some(x) if x == c => break,
                Some(_) => gaps += 1,
                None => return None,
            }
        }
    }
    Some(gaps + 1)
}

/// The `@word` that ends at `cursor`, when the word starts with `@` at a word boundary.
fn mention_word(text: &str, cursor: usize) -> Option<Range<usize>> {
    let before = text.get(..cursor)?;
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[start..];
    (word.starts_with('@') && !word.starts_with("@\"")).then_some(start..cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_word_starting_with_at_opens_the_finder() {
        assert_eq!(mention_word("see @src/li", 11), Some(4..11));
        assert_eq!(mention_word("@", 1), Some(0..1));
        assert_eq!(mention_word("mail a@b", 8), None);
        assert_eq!(mention_word("see @src now", 12), None);
        assert_eq!(mention_word("@\"quoted", 8), None);
    }
}
