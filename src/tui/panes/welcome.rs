//! The first screen, until the first message: where cairn works (the workspace, its branch),
//! how commands run (the sandbox, or why there is none), whether the repository's
//! instructions (`AGENTS.md`) were read, and what to try. The facts are gathered by the
//! caller before the UI starts (the TUI reads no files); this only shows them.

use std::path::Path;

use ratatui::text::{Line, Span};

use crate::tui::{theme, wrap};

/// What the welcome screen says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    /// As shown: `~/…` inside the home directory, else the whole path.
    pub workspace: String,
    /// None outside a git repository.
    pub branch: Option<String>,
    pub sandbox: Sandbox,
    /// Where the instructions the system prompt includes were read from (shown like the
    /// workspace), and their size; None when there are none.
    pub agents_md: Option<(String, u64)>,
}

/// How the model's commands run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sandbox {
    /// Sandboxed; what confines them.
    On(String),
    /// Not sandboxed, and why.
    Off(String),
}

/// `path` as the user knows it: `~/src/app` when it is inside `home`, else as it is. A home
/// that is missing, relative or the root (everything would be "inside") is not used.
pub fn display_path(path: &Path, home: Option<&Path>) -> String {
    let inside = home
        .filter(|home| home.is_absolute() && home.parent().is_some())
        .and_then(|home| path.strip_prefix(home).ok());
    let shown = match inside {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    };
    crate::visible::name(&shown)
}

/// The tips: what a new user looks for first.
const TIPS: [(&str, &str); 4] = [
    (
        "/",
        "the command palette (Tab completes; /init drafts AGENTS.md)",
    ),
    ("@", "attach a file: @src/main.rs"),
    (
        "!",
        "run a command yourself: !cargo test (!! keeps it from the model)",
    ),
    ("Shift+Tab", "modes: ask → auto-edit → auto → plan"),
];

impl Welcome {
    /// The screen's lines for `width` columns; a long fact wraps under its value.
    pub fn lines(&self, width: u16) -> Vec<Line<'static>> {
        let width = usize::from(width);
        let row = |label: &str, label_style, value: String, style| {
            let first = [Span::styled(format!("{label:<LABEL_WIDTH$}"), label_style)];
            let cont = [Span::raw(" ".repeat(LABEL_WIDTH))];
            wrap::wrap(&[Span::styled(value, style)], width, &first, &cont)
        };
        let fact = |label: &str, value: String, style| row(label, theme::dim(), value, style);
        let mut lines = vec![
            Line::styled("What should we work on?", theme::bold()),
            Line::raw(""),
        ];
        lines.extend(fact("workspace", self.workspace.clone(), theme::base()));
        lines.extend(match &self.branch {
            Some(branch) => fact("branch", crate::visible::name(branch), theme::base()),
            None => fact("branch", "not a git repository".into(), theme::dim()),
        });
        lines.extend(match &self.sandbox {
            Sandbox::On(how) => fact("sandbox", format!("on: {how}"), theme::ok()),
            Sandbox::Off(why) => fact("sandbox", format!("off: {why}"), theme::warning()),
        });
        lines.extend(match &self.agents_md {
            Some((path, bytes)) => fact(
                "AGENTS.md",
                format!("loaded from {path} ({})", size(*bytes)),
                theme::base(),
            ),
            None => fact(
                "AGENTS.md",
                "none here: /init has the model draft one".into(),
                theme::dim(),
            ),
        });
        lines.push(Line::raw(""));
        for (key, what) in TIPS {
            lines.extend(row(key, theme::accent(), what.to_string(), theme::dim()));
        }
        lines
    }
}

/// The column the facts' values start at.
const LABEL_WIDTH: usize = 11;

fn size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_home_is_shown_from_the_tilde_and_others_as_they_are() {
        let home = Path::new("/home/ann");
        assert_eq!(
            display_path(Path::new("/home/ann/src/app"), Some(home)),
            "~/src/app"
        );
        assert_eq!(display_path(home, Some(home)), "~");
        assert_eq!(
            display_path(Path::new("/home/annex/app"), Some(home)),
            "/home/annex/app",
            "a sibling whose name starts like home is not inside it"
        );
        assert_eq!(display_path(Path::new("/srv/app"), Some(home)), "/srv/app");
        assert_eq!(display_path(Path::new("/srv/app"), None), "/srv/app");
        for odd in ["/", "", "relative/home"] {
            assert_eq!(
                display_path(Path::new("/srv/app"), Some(Path::new(odd))),
                "/srv/app",
                "home {odd:?} is not used"
            );
        }
        // A name that would drive the terminal shows its visible form.
        assert_eq!(
            display_path(Path::new("/srv/a\u{1b}]52;c;x\u{7}b"), None),
            crate::visible::name("/srv/a\u{1b}]52;c;x\u{7}b")
        );
    }
}
