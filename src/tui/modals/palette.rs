//! The `/` palette: while the input holds a `/word` (and nothing after it), a list of the
//! matching commands shows above the input, fuzzy-ranked, each with its argument hint and
//! description; Tab completes the first. It is built over a list of entries (name,
//! description, argument hint, origin), so commands from elsewhere (the user's own, once
//! skills land) join the built-in ones by adding entries.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use crate::tui::keymap::SLASH_COMMANDS;
use crate::tui::{theme, wrap};

/// Rows of matches shown at most.
pub const MAX_ROWS: usize = 8;

/// Where a command comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    /// A command the user (or the project) defined.
    User,
    /// A command or skill from a file, with where it was found (`project .cairn/commands`,
    /// `user skill ~/.claude/skills`, and whether it shadows the user's own).
    Found(String),
}

/// One command the palette offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaletteEntry {
    /// With its leading `/`.
    pub name: String,
    pub description: String,
    pub args: String,
    pub origin: Origin,
}

/// The entries of the built-in slash commands (every alias is its own entry).
pub fn builtin_entries() -> Vec<PaletteEntry> {
    SLASH_COMMANDS
        .iter()
        .flat_map(|slash| {
            slash.names.iter().map(|name| PaletteEntry {
                name: (*name).to_string(),
                description: slash.help.to_string(),
                args: slash.args.to_string(),
                origin: Origin::BuiltIn,
            })
        })
        .collect()
}

/// The built-in entries and the user's commands and skills as they are on disk now (a
/// command's warnings are the agent's to show, when it runs).
pub fn entries_with(sources: &crate::skills::Sources) -> Vec<PaletteEntry> {
    let mut entries = builtin_entries();
    let found = crate::skills::commands::discover_commands(sources);
    entries.extend(found.items.iter().map(|command| PaletteEntry {
        name: format!("/{}", command.name),
        description: command.description.clone(),
        args: command.argument_hint.clone(),
        origin: Origin::Found(format!("{} {}", command.origin_label(), command.origin)),
    }));
    entries
}

/// The word being typed, when the input is a palette query: `/` and no space yet.
pub fn query(input: &str) -> Option<&str> {
    (input.starts_with('/') && !input.contains(char::is_whitespace)).then_some(input)
}

/// How well `query` matches `name` (both with their `/`): `None` when its characters do not
/// all appear in order. Lower is better: a prefix beats a scattered match (then the list's
/// own order, which puts the commands used most first).
fn score(query: &str, name: &str) -> Option<(u8, usize)> {
    let q = query.to_lowercase();
    let n = name.to_lowercase();
    if n.starts_with(&q) {
        return Some((0, 0));
    }
    let mut gaps = 0;
    let mut rest = n.chars().peekable();
    for c in q.chars() {
        loop {
            match rest.next() {
                Some(x) if x == c => break,
                Some(_) => gaps += 1,
                None => return None,
            }
        }
    }
    Some((1, gaps))
}

/// The entries matching `query`, best first.
pub fn matches<'a>(entries: &'a [PaletteEntry], query: &str) -> Vec<&'a PaletteEntry> {
    let mut found: Vec<((u8, usize), usize, &PaletteEntry)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| score(query, &e.name).map(|s| (s, i, e)))
        .collect();
    found.sort_by_key(|(s, i, _)| (*s, *i));
    found.into_iter().map(|(_, _, e)| e).collect()
}

/// What Tab makes of the input: the best match, with a space when it takes arguments.
pub fn complete(entries: &[PaletteEntry], input: &str) -> Option<String> {
    complete_at(entries, input, &Selection::default())
}

/// What Tab makes of the input: the selected match, with a space when it takes arguments.
fn complete_at(entries: &[PaletteEntry], input: &str, selection: &Selection) -> Option<String> {
    let chosen = selection.chosen(entries, input)?;
    let space = if chosen.args.is_empty() { "" } else { " " };
    Some(format!("{}{space}", chosen.name))
}

/// The `/` palette as the input uses it: what it offers, the row picked, and where the
/// user's commands are read from (none in a replay).
#[derive(Debug)]
pub struct Palette {
    entries: Vec<PaletteEntry>,
    selection: Selection,
    sources: Option<crate::skills::Sources>,
    /// The MCP servers' prompts (`/mcp:server:name`), once the servers said.
    mcp: Vec<PaletteEntry>,
}

/// What a key did to the palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaletteKey {
    /// Not the palette's key (or the palette is not shown).
    Ignored,
    /// The selection moved.
    Moved,
    /// Put this in the input.
    Complete(String),
    /// Run this command line now.
    Run(String),
}

impl Palette {
    /// The built-in commands; the user's are read from `sources` each time it opens.
    pub fn new(sources: Option<crate::skills::Sources>) -> Self {
        Self {
            entries: builtin_entries(),
            selection: Selection::default(),
            sources,
            mcp: Vec::new(),
        }
    }

    /// Reads the user's commands and skills again (the palette opened: a file added or
    /// edited since is offered without a restart).
    pub fn refresh(&mut self) {
        if let Some(sources) = &self.sources {
            self.entries = entries_with(sources);
            self.entries.extend(self.mcp.iter().cloned());
        }
    }

    /// The MCP servers' prompts join the commands (`/mcp:server:name` with their arguments).
    pub fn set_mcp(&mut self, prompts: &[crate::bus::McpPromptLine]) {
        self.mcp = prompts
            .iter()
            .map(|p| PaletteEntry {
                name: p.command.clone(),
                description: p.description.clone(),
                args: p.args.clone(),
                origin: Origin::Found(format!("MCP server {}", p.server)),
            })
            .collect();
        self.entries.retain(|e| !e.name.starts_with("/mcp:"));
        self.entries.extend(self.mcp.iter().cloned());
    }

    pub fn entries(&self) -> &[PaletteEntry] {
        &self.entries
    }

    /// Whether `/name` is one of the user's or the project's commands or skills, as on disk
    /// now.
    pub fn knows_user_command(&self, name: &str) -> bool {
        if self.mcp.iter().any(|e| e.name == name) {
            return true;
        }
        let bare = name.trim_start_matches('/');
        self.sources.as_ref().is_some_and(|sources| {
            crate::skills::commands::discover_commands(sources)
                .items
                .iter()
                .any(|c| c.name == bare)
        })
    }

    /// ↑/↓ pick a row, Tab completes it, Enter runs it (or completes it when it needs
    /// arguments), while `input` shows the palette.
    pub fn key(&mut self, code: crossterm::event::KeyCode, input: &str) -> PaletteKey {
        use crossterm::event::KeyCode;
        let moved = |moved: bool| {
            if moved {
                PaletteKey::Moved
            } else {
                PaletteKey::Ignored
            }
        };
        match code {
            KeyCode::Up => moved(self.selection.step(&self.entries, input, -1)),
            KeyCode::Down => moved(self.selection.step(&self.entries, input, 1)),
            KeyCode::Tab => complete_at(&self.entries, input, &self.selection)
                .map_or(PaletteKey::Ignored, PaletteKey::Complete),
            KeyCode::Enter => match self.selection.enter(&self.entries, input) {
                Enter::AsTyped => PaletteKey::Ignored,
                Enter::Complete(done) => PaletteKey::Complete(done),
                Enter::Run(line) => PaletteKey::Run(line),
            },
            _ => PaletteKey::Ignored,
        }
    }

    /// Its height for `input`: 0 when it is not shown.
    pub fn height(&self, input: &str) -> u16 {
        height(&self.entries, input)
    }

    /// Draws the matches of `input` in `area`, the selected one marked.
    pub fn render(&self, input: &str, area: Rect, buf: &mut Buffer) {
        render(&self.entries, input, self.selection.index(input), area, buf);
    }
}

/// The row ↑/↓ picked in the palette; it goes back to the best match whenever the query
/// changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Selection {
    index: usize,
    /// The query the index was picked for.
    query: String,
}

/// What Enter does while the palette is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Enter {
    /// Run this command line now.
    Run(String),
    /// Put this in the input: the command needs its arguments first.
    Complete(String),
    /// Send what is typed, as typed (an exact name, nothing matching, or a bare `/`).
    AsTyped,
}

impl Selection {
    /// The selected row for `input` (0 when the query changed since it was picked).
    pub fn index(&self, input: &str) -> usize {
        match query(input) {
            Some(q) if q == self.query => self.index,
            _ => 0,
        }
    }

    /// Moves the selection by `by` rows (wrapping); false when the palette is not shown.
    pub fn step(&mut self, entries: &[PaletteEntry], input: &str, by: isize) -> bool {
        let Some(q) = query(input) else {
            return false;
        };
        let n = matches(entries, q).len();
        if n == 0 {
            return false;
        }
        let at = self.index(input) as isize;
        self.index = (at + by).rem_euclid(n as isize) as usize;
        q.clone_into(&mut self.query);
        true
    }

    /// The entry the selection is on.
    pub fn chosen<'a>(&self, entries: &'a [PaletteEntry], input: &str) -> Option<&'a PaletteEntry> {
        let q = query(input)?;
        let found = matches(entries, q);
        found
            .get(self.index(input))
            .or_else(|| found.first())
            .copied()
    }

    /// Enter on `input`: the selected command runs (or waits for its arguments), unless
    /// what is typed is a command already or only `/` was typed and nothing was picked.
    pub fn enter(&self, entries: &[PaletteEntry], input: &str) -> Enter {
        let Some(q) = query(input) else {
            return Enter::AsTyped;
        };
        let exact = entries.iter().any(|e| e.name == q);
        let picked = self.query == q && self.index > 0;
        if exact || (q == "/" && !picked) {
            return Enter::AsTyped;
        }
        match self.chosen(entries, input) {
            None => Enter::AsTyped,
            // `[ARGS]` are optional: the command runs without them.
            Some(e) if e.args.is_empty() || e.args.starts_with('[') => Enter::Run(e.name.clone()),
            Some(e) => Enter::Complete(format!("{} ", e.name)),
        }
    }
}

/// The palette's height for `input`: 0 when it is not shown.
fn height(entries: &[PaletteEntry], input: &str) -> u16 {
    match query(input) {
        Some(q) => {
            let n = matches(entries, q).len().clamp(1, MAX_ROWS);
            n as u16 + 2
        }
        None => 0,
    }
}

/// Draws the matches of `input` in `area` (a box above the input), the selected one marked.
fn render(entries: &[PaletteEntry], input: &str, selected: usize, area: Rect, buf: &mut Buffer) {
    let Some(q) = query(input) else {
        return;
    };
    Clear.render(area, buf);
    let found = matches(entries, q);
    let block = Block::bordered()
        .border_style(theme::modal_border())
        .title(Span::styled(" commands ", theme::bold()))
        .title_bottom(
            Line::styled(
                " ↑↓ choose · Tab completes · Enter runs · !cmd runs a shell command ",
                theme::dim(),
            )
            .right_aligned(),
        );
    let inner = block.inner(area);
    block.render(area, buf);
    let width = usize::from(inner.width);
    if found.is_empty() {
        let line = Line::styled(format!("no command matches {q}"), theme::dim());
        buf.set_line(inner.x, inner.y, &line, inner.width);
        return;
    }
    let name_width = found
        .iter()
        .map(|e| wrap::width(&e.name) + 1 + wrap::width(&e.args))
        .max()
        .unwrap_or(0)
        .min(width / 2);
    let rows = usize::from(inner.height);
    let first = (selected + 1).saturating_sub(rows);
    for (i, entry) in found.iter().enumerate().skip(first).take(rows) {
        let head = format!("{} {}", entry.name, entry.args);
        let head = wrap::truncate(&head, name_width);
        let pad = name_width.saturating_sub(wrap::width(&head));
        let origin = match &entry.origin {
            Origin::BuiltIn => String::new(),
            Origin::User => " (yours)".to_string(),
            Origin::Found(label) => format!(" ({label})"),
        };
        let description = format!("{}{origin}", entry.description);
        let rest = width.saturating_sub(name_width + 2);
        let (style, rest_style) = if i == selected {
            (theme::selected(), theme::selected())
        } else {
            (theme::base(), theme::dim())
        };
        let line = Line::from(vec![
            Span::styled(head, style),
            Span::styled(" ".repeat(pad + 2), style),
            Span::styled(wrap::truncate(&description, rest), rest_style),
        ]);
        buf.set_line(inner.x, inner.y + (i - first) as u16, &line, inner.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_completes_co_to_compact_and_takes_a_prefix_over_a_scattered_match() {
        let entries = builtin_entries();
        assert_eq!(complete(&entries, "/co").as_deref(), Some("/compact "));
        assert_eq!(complete(&entries, "/und").as_deref(), Some("/undo"));
        let names: Vec<&str> = matches(&entries, "/rw")
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert!(names.contains(&"/rewind"), "{names:?}");
        assert_eq!(complete(&entries, "/zzz"), None);
        assert_eq!(
            complete(&entries, "/compact now"),
            None,
            "arguments: no palette"
        );
        assert_eq!(query("hello /co"), None);
    }

    #[test]
    fn arrows_pick_a_row_that_tab_and_enter_take_until_the_query_changes() {
        let entries = builtin_entries();
        let mut selection = Selection::default();
        let found: Vec<String> = matches(&entries, "/re")
            .iter()
            .map(|e| e.name.clone())
            .collect();
        assert!(found.len() >= 3, "{found:?}");
        assert!(selection.step(&entries, "/re", 1));
        assert_eq!(
            complete_at(&entries, "/re", &selection),
            Some(found[1].clone())
        );
        assert!(selection.step(&entries, "/re", -2), "wraps to the last");
        assert_eq!(selection.index("/re"), found.len() - 1);
        assert_eq!(
            selection.index("/red"),
            0,
            "a new query starts at its best match"
        );
        assert!(!selection.step(&entries, "/compact now", 1), "no palette");
        assert!(!selection.step(&entries, "/zzz", 1), "nothing matches");

        let none = Selection::default();
        assert_eq!(none.enter(&entries, "/undo"), Enter::AsTyped, "exact");
        assert_eq!(
            none.enter(&entries, "/"),
            Enter::AsTyped,
            "bare / runs nothing"
        );
        assert_eq!(none.enter(&entries, "/zzz"), Enter::AsTyped);
        assert_eq!(none.enter(&entries, "/co"), Enter::Run("/compact".into()));
        assert_eq!(none.enter(&entries, "/und"), Enter::Run("/undo".into()));
        let mut entries = entries;
        entries.push(PaletteEntry {
            name: "/review".into(),
            description: "review a file".into(),
            args: "FILE".into(),
            origin: Origin::User,
        });
        assert_eq!(
            none.enter(&entries, "/revi"),
            Enter::Complete("/review ".into()),
            "required arguments: completed, not run"
        );
    }

    #[test]
    fn user_entries_join_the_builtin_ones() {
        let mut entries = builtin_entries();
        entries.push(PaletteEntry {
            name: "/deploy-docs".into(),
            description: "publish the docs".into(),
            args: String::new(),
            origin: Origin::User,
        });
        assert_eq!(complete(&entries, "/dep").as_deref(), Some("/deploy-docs"));
    }
}
