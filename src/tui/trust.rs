//! The trust prompt: a modal at start-up when the project's `.cairn/config.toml` has rules
//! the user has not trusted in this content yet (a cloned repository may ship
//! `allow = ["rm -rf"]`). It lists the rules and takes y (trust: they apply now and the
//! content is remembered) or n / Esc (ignore them this time). Until then they do not apply.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::permissions::trust::PendingTrust;
use crate::tui::modal::modal_frame;
use crate::tui::{theme, wrap};

/// Rule lines shown at most; the rest are counted.
const MAX_RULES: usize = 12;

#[derive(Debug, Clone)]
pub struct TrustPrompt {
    pending: PendingTrust,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    Trust,
    Ignore,
}

impl TrustPrompt {
    pub fn new(pending: PendingTrust) -> Self {
        Self { pending }
    }

    /// y trusts, n or Esc ignores; every other key does nothing.
    pub fn handle_key(&self, key: KeyEvent) -> Option<TrustAnswer> {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        match key.code {
            KeyCode::Char('y' | 'Y') => Some(TrustAnswer::Trust),
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Some(TrustAnswer::Ignore),
            _ => None,
        }
    }

    /// Carries the answer out; the message for the transcript.
    pub fn answer(&self, answer: TrustAnswer) -> String {
        match answer {
            TrustAnswer::Trust => self.pending.accept(),
            TrustAnswer::Ignore => format!(
                "the rules of {} are ignored in this session; cairn asks again next time",
                self.pending.project.path.display()
            ),
        }
    }

    fn body(&self, width: usize) -> Vec<Line<'static>> {
        let project = &self.pending.project;
        let mut lines = wrap::wrap(
            &[Span::raw(format!(
                "{} sets rules that decide what runs without asking. They apply only if you trust them (remembered until the file changes):",
                project.path.display()
            ))],
            width,
            &[],
            &[],
        );
        lines.push(Line::default());
        let listing = project.listing();
        for rule in listing.iter().take(MAX_RULES) {
            let style = if rule.starts_with("allow") {
                theme::warning()
            } else {
                theme::base()
            };
            let shown = wrap::truncate(rule, width.saturating_sub(2));
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(shown, style),
            ]));
        }
        if listing.len() > MAX_RULES {
            lines.push(Line::styled(
                format!("  … {} more", listing.len() - MAX_RULES),
                theme::dim(),
            ));
        }
        lines.push(Line::default());
        let key = |k: &'static str| Span::styled(format!(" {k} "), theme::key());
        lines.push(Line::from(vec![
            key("y"),
            Span::raw(" trust   "),
            key("n"),
            Span::raw(" ignore this time"),
        ]));
        lines
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).clamp(20, 90);
        let inner_width = usize::from(width.saturating_sub(4));
        let body = self.body(inner_width);
        let height = (body.len() as u16).saturating_add(2);
        let inner = modal_frame(
            area,
            width,
            height,
            Span::styled(" Trust this project's rules? ", theme::danger()),
            Line::default(),
            theme::modal_border(),
            buf,
        )
        .inner(ratatui::layout::Margin::new(1, 0));
        // The keys are the last line: when the box is short, rules give way, not the keys.
        let rows = usize::from(inner.height);
        let visible: Vec<&Line> = if body.len() <= rows {
            body.iter().collect()
        } else {
            let head = rows.saturating_sub(2);
            body.iter()
                .take(head)
                .chain(body.iter().skip(body.len() - 2.min(rows)))
                .collect()
        };
        for (i, line) in visible.into_iter().take(rows).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, line, inner.width);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::time::Instant;

    use crossterm::event::Event;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::bus::Mode;
    use crate::permissions::classify::Places;
    use crate::permissions::policy::{Outcome, PolicyGate, PolicySettings};
    use crate::permissions::rules::RuleSet;
    use crate::permissions::trust::{ProjectRules, TrustStore};
    use crate::tui::TuiOptions;
    use crate::tui::app::App;

    struct Fixture {
        _dirs: (tempfile::TempDir, tempfile::TempDir),
        ws: std::path::PathBuf,
        store: TrustStore,
        gate: Arc<PolicyGate>,
        app: App,
    }

    fn fixture() -> Fixture {
        let ws_dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let ws = ws_dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join(".cairn")).unwrap();
        std::fs::write(
            ws.join(".cairn/config.toml"),
            "[permissions]\nallow = [\"rm -rf keep\", \"curl\"]\ndeny = [\"git push\"]\n",
        )
        .unwrap();
        let store = TrustStore::in_data_dir(data.path());
        let gate = Arc::new(PolicyGate::new(PolicySettings {
            rules: RuleSet::default(),
            workspace: ws.clone(),
            sandbox: None,
            places: Places::default(),
        }));
        let pending = PendingTrust {
            project: ProjectRules::load(&ws).unwrap().unwrap(),
            workspace: ws.clone(),
            store: store.clone(),
            gate: Arc::clone(&gate),
        };
        let options = TuiOptions {
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode: Mode::AutoEdit,
            read_only: false,
            initial_prompt: None,
            sandbox_off: None,
            trust: Some(pending),
            welcome: None,
        };
        let app = App::new(&options, Instant::now());
        Fixture {
            _dirs: (ws_dir, data),
            ws,
            store,
            gate,
            app,
        }
    }

    fn screen(app: &App, w: u16, h: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| app.render(f)).unwrap();
        terminal.backend().to_string()
    }

    fn press(app: &mut App, c: char) {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        app.handle_input(&Event::Key(key));
    }

    #[test]
    fn the_rules_are_listed_and_apply_only_after_y() {
        let mut f = fixture();
        let text = screen(&f.app, 80, 24);
        for expected in [
            "Trust this project's rules?",
            "allow rm -rf keep",
            "allow curl",
            "deny  git push",
            "file changes):",
            "ignore this time",
        ] {
            assert!(text.contains(expected), "{expected} missing:\n{text}");
        }
        // Small terminal: the keys stay visible.
        let small = screen(&f.app, 60, 10);
        assert!(small.contains("ignore this time"), "{small}");
        let before = f.gate.explain("rm -rf keep", Mode::AutoEdit).decision;
        assert_eq!(before, Outcome::Ask);
        // Other keys do nothing, and typing does not reach the composer.
        press(&mut f.app, 'x');
        assert!(screen(&f.app, 80, 24).contains("Trust this project's rules?"));
        press(&mut f.app, 'y');
        assert!(!screen(&f.app, 80, 24).contains("Trust this project's rules?"));
        assert_eq!(
            f.gate.explain("rm -rf keep", Mode::AutoEdit).decision,
            Outcome::Run
        );
        assert!(f.store.current_trusted(&f.ws));
    }

    #[test]
    fn n_ignores_the_rules_and_remembers_nothing() {
        let mut f = fixture();
        press(&mut f.app, 'n');
        assert!(!screen(&f.app, 80, 24).contains("Trust this project's rules?"));
        assert_eq!(
            f.gate.explain("rm -rf keep", Mode::AutoEdit).decision,
            Outcome::Ask
        );
        assert!(!f.store.current_trusted(&f.ws));
    }
}
