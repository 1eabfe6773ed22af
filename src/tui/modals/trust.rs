//! The trust prompt: a modal at start-up when the project's `.cairn/config.toml` has rules
//! the user has not trusted in this content yet (a cloned repository may ship
//! `allow = ["rm -rf"]`), or its files define hooks not trusted in their current content
//! (what would run: the command and the scripts it names). It lists them and takes y, then y again on the confirmation line
//! (trusting widens what runs unasked, so it takes a second step; `UserCommand::TrustProjectRules`
//! asks the agent to apply them now and remember the content; `ProjectRulesTrusted` says it
//! did), or n / Esc (ignore them this time). Until then they do not apply.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::UntrustedRules;
use crate::tui::modals::modal::modal_frame;
use crate::tui::{theme, wrap};

/// Rule lines (and process lines) shown at most; the rest are counted.
const MAX_RULES: usize = 12;

#[derive(Debug, Clone)]
pub struct TrustPrompt {
    rules: UntrustedRules,
    /// y was pressed once: the confirmation line is shown.
    confirming: bool,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    Trust,
    Ignore,
}

impl TrustPrompt {
    pub fn new(rules: UntrustedRules) -> Self {
        Self {
            rules,
            confirming: false,
        }
    }

    /// y asks for the confirmation and y there trusts; n or Esc ignores the rules (on the
    /// confirmation line: goes back). Every other key does nothing.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<TrustAnswer> {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return None;
        }
        match key.code {
            KeyCode::Char('y') if self.confirming => Some(TrustAnswer::Trust),
            KeyCode::Char('y') => {
                self.confirming = true;
                None
            }
            KeyCode::Char('n') | KeyCode::Esc if self.confirming => {
                self.confirming = false;
                None
            }
            KeyCode::Char('n') | KeyCode::Esc => Some(TrustAnswer::Ignore),
            _ => None,
        }
    }

    /// Whether `c` is one of the prompt's keys (other characters are text for the input).
    pub fn takes_char(&self, c: char) -> bool {
        matches!(c, 'y' | 'n')
    }

    /// The confirmation line is shown (a new step for the stand-alone rule).
    pub fn confirming(&self) -> bool {
        self.confirming
    }

    /// What ignoring the rules (and hooks) means, for the transcript.
    pub fn ignored(&self) -> String {
        let mut what = Vec::new();
        if !self.rules.listing.is_empty() {
            what.push(format!(
                "the rules of {} are ignored",
                self.rules.path.display()
            ));
        }
        if !self.rules.processes.is_empty() {
            what.push(format!(
                "the project's {} untrusted hook(s) do not run (`cairn hooks trust` trusts them)",
                self.rules.processes.len()
            ));
        }
        format!(
            "{} in this session; cairn asks again next time",
            what.join(" and ")
        )
    }

    fn title(&self) -> &'static str {
        match (
            self.rules.listing.is_empty(),
            self.rules.processes.is_empty(),
        ) {
            (false, false) => " Trust this project's rules and hooks? ",
            (true, false) => " Trust this project's hooks? ",
            _ => " Trust this project's rules? ",
        }
    }

    /// The lines of `items` (at most `MAX_RULES`, the rest counted), in `style` where
    /// `warn` says so.
    fn listed(items: &[String], width: usize, warn: impl Fn(&str) -> bool) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        for item in items.iter().take(MAX_RULES) {
            let style = if warn(item) {
                theme::warning()
            } else {
                theme::base()
            };
            let shown = wrap::truncate(item, width.saturating_sub(2));
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(shown, style),
            ]));
        }
        if items.len() > MAX_RULES {
            lines.push(Line::styled(
                format!("  … {} more", items.len() - MAX_RULES),
                theme::dim(),
            ));
        }
        lines
    }

    fn body(&self, width: usize) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let listing = &self.rules.listing;
        let processes = &self.rules.processes;
        if !listing.is_empty() {
            lines.extend(wrap::wrap(
                &[Span::raw(format!(
                    "{} sets rules that decide what runs without asking. They apply only if you trust them (remembered until the file changes):",
                    self.rules.path.display()
                ))],
                width,
                &[],
                &[],
            ));
            lines.push(Line::default());
            lines.extend(Self::listed(listing, width, |r| r.starts_with("allow")));
            lines.push(Line::default());
        }
        if !processes.is_empty() {
            lines.extend(wrap::wrap(
                &[Span::raw(
                    "The project's hooks run these programs at points of the session. They run only if you trust them (remembered until their config or a script they name changes):",
                )],
                width,
                &[],
                &[],
            ));
            lines.push(Line::default());
            lines.extend(Self::listed(processes, width, |_| true));
            lines.push(Line::default());
        }
        let key = |k: &'static str| Span::styled(format!(" {k} "), theme::key());
        if self.confirming {
            let allows = listing.iter().filter(|r| r.starts_with("allow")).count();
            let mut what = Vec::new();
            if !listing.is_empty() {
                what.push(format!("{allows} allow rules run commands without asking"));
            }
            if !processes.is_empty() {
                what.push(format!("{} hooks run programs", processes.len()));
            }
            lines.push(Line::styled(
                wrap::truncate(&format!("trust them: {}?", what.join(", ")), width),
                theme::warning(),
            ));
            lines.push(Line::from(vec![
                key("y"),
                Span::raw(" yes, trust   "),
                key("n"),
                Span::raw(" back"),
            ]));
            return lines;
        }
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
            Span::styled(self.title(), theme::danger()),
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

/// What the agent's answer to the user's trust means, for the transcript.
pub fn trusted(
    path: &std::path::Path,
    rules: usize,
    processes: usize,
    unremembered: Option<&str>,
) -> String {
    let mut what = Vec::new();
    if rules > 0 {
        what.push(format!("{rules} rules of {} apply", path.display()));
    }
    if processes > 0 {
        what.push(format!("{processes} hook(s) run"));
    }
    let what = if what.is_empty() {
        "nothing to trust".to_string()
    } else {
        what.join(", ")
    };
    match unremembered {
        None if processes > 0 && rules == 0 => {
            format!("project hooks trusted: {what} (until they change)")
        }
        None => format!("project rules trusted: {what} (until the file changes)"),
        Some(err) => {
            format!(
                "project trust: {what} for this session; remembering the decision failed: {err}"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Instant;

    use crossterm::event::Event;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::bus::{AgentEvent, Mode, ReportEvent, UserCommand};
    use crate::tui::TuiOptions;
    use crate::tui::app::App;

    /// The rules a cloned repository ships, as the start-up prompt gets them.
    fn shipped() -> UntrustedRules {
        UntrustedRules {
            path: std::path::PathBuf::from("ws/.cairn/config.toml"),
            listing: vec![
                "allow rm -rf keep".into(),
                "allow curl".into(),
                "deny  git push".into(),
            ],
            processes: Vec::new(),
        }
    }

    fn app() -> App {
        app_asking(shipped())
    }

    fn app_asking(trust: UntrustedRules) -> App {
        let options = TuiOptions {
            provider: "deepseek".into(),
            model: "deepseek-chat".into(),
            mode: Mode::AutoEdit,
            read_only: false,
            initial_prompt: None,
            sandbox_off: None,
            trust: Some(trust),
            welcome: None,
            command_sources: None,
            history: Vec::new(),
        };
        App::new(&options, Instant::now())
    }

    fn screen(app: &App, w: u16, h: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| app.render(f)).unwrap();
        terminal.backend().to_string()
    }

    fn press(app: &mut App, c: char) {
        app.press_alone(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }

    /// The agent's side (the live gate and the trust store) is tested over the bus in
    /// `tests/it/project_trust.rs`; here, what the prompt shows and sends.
    #[test]
    fn the_rules_are_listed_and_y_asks_the_agent_to_trust_them() {
        let mut app = app();
        let text = screen(&app, 80, 24);
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
        let small = screen(&app, 60, 10);
        assert!(small.contains("ignore this time"), "{small}");
        // Another key is no answer: it is text, and the prompt stays.
        press(&mut app, 'x');
        assert!(screen(&app, 80, 24).contains("Trust this project's rules?"));
        assert!(app.take_commands().is_empty());
        assert_eq!(app.composer.text(), "x");
        // y asks once more (n goes back), and y there trusts.
        press(&mut app, 'y');
        assert!(screen(&app, 80, 24).contains("yes, trust"));
        press(&mut app, 'n');
        assert!(screen(&app, 80, 24).contains("ignore this time"));
        assert!(app.take_commands().is_empty());
        press(&mut app, 'y');
        assert!(app.take_commands().is_empty(), "one y trusts nothing");
        press(&mut app, 'y');
        assert!(!screen(&app, 80, 24).contains("Trust this project's rules?"));
        let sent = app.take_commands();
        assert!(
            matches!(sent.as_slice(), [UserCommand::TrustProjectRules]),
            "{sent:?}"
        );
        // The agent's answer is what the transcript says.
        app.apply(&AgentEvent::Report(ReportEvent::ProjectRulesTrusted {
            path: shipped().path,
            rules: 3,
            processes: 0,
            unremembered: None,
        }));
        let text = screen(&app, 120, 24);
        assert!(
            text.contains("project rules trusted: 3 rules of ws/.cairn/config.toml apply"),
            "{text}"
        );
    }

    #[test]
    fn n_ignores_the_rules_and_sends_nothing() {
        let mut app = app();
        press(&mut app, 'n');
        let text = screen(&app, 120, 24);
        assert!(!text.contains("Trust this project's rules?"), "{text}");
        assert!(
            text.contains("the rules of ws/.cairn/config.toml are ignored in this session"),
            "{text}"
        );
        assert!(app.take_commands().is_empty());
    }

    #[test]
    fn a_message_typed_at_launch_goes_to_the_input_and_trusts_nothing() {
        let mut app = app();
        let t0 = app.now;
        // At every offset from the start, a burst written at once.
        for (i, offset) in [0u64, 120, 480, 700, 1500].into_iter().enumerate() {
            let mut app = self::app();
            app.set_now(t0 + std::time::Duration::from_millis(offset));
            for c in "yes edit the handler".chars() {
                app.handle_input(&Event::Key(KeyEvent::new(
                    KeyCode::Char(c),
                    KeyModifiers::NONE,
                )));
            }
            app.set_now(app.now + std::time::Duration::from_secs(1));
            app.expire();
            assert!(app.take_commands().is_empty(), "{i}: nothing trusted");
            assert_eq!(app.composer.text(), "yes edit the handler", "{i}");
            assert!(screen(&app, 80, 24).contains("Trust this project's rules?"));
        }
        press(&mut app, 'n');
        assert!(app.take_commands().is_empty());
    }

    /// A project whose hooks are not trusted yet: the prompt shows what would run (the
    /// command and the scripts it names), y y trusts them (the agent side is tested in
    /// `tests/it/hooks_trust.rs`), n leaves them out.
    #[test]
    fn untrusted_hooks_are_offered_next_to_the_rules() {
        let hook =
            "hook pre_tool #1: sh \"$CAIRN_WORKSPACE/guard.sh\" (runs guard.sh) [not trusted yet]";
        let mut both = shipped();
        both.processes = vec![hook.into()];
        let app = app_asking(both);
        let text = screen(&app, 120, 30);
        for expected in [
            "Trust this project's rules and hooks?",
            "allow curl",
            "(runs guard.sh) [not trusted yet]",
        ] {
            assert!(text.contains(expected), "{expected} missing:\n{text}");
        }
        let only_hooks = UntrustedRules {
            listing: Vec::new(),
            processes: vec![hook.into()],
            ..shipped()
        };
        let mut app = app_asking(only_hooks.clone());
        let text = screen(&app, 120, 24);
        assert!(text.contains("Trust this project's hooks?"), "{text}");
        assert!(!text.contains("sets rules"), "{text}");
        press(&mut app, 'y');
        assert!(
            screen(&app, 120, 24).contains("trust them: 1 hooks run programs?"),
            "{}",
            screen(&app, 120, 24)
        );
        press(&mut app, 'y');
        let sent = app.take_commands();
        assert!(
            matches!(sent.as_slice(), [UserCommand::TrustProjectRules]),
            "{sent:?}"
        );
        app.apply(&AgentEvent::Report(ReportEvent::ProjectRulesTrusted {
            path: only_hooks.path.clone(),
            rules: 0,
            processes: 1,
            unremembered: None,
        }));
        assert!(
            screen(&app, 120, 24).contains("project hooks trusted: 1 hook(s) run"),
            "{}",
            screen(&app, 120, 24)
        );
        let mut app = app_asking(only_hooks);
        press(&mut app, 'n');
        let text = screen(&app, 160, 24);
        assert!(
            text.contains("the project's 1 untrusted hook(s) do not run"),
            "{text}"
        );
        assert!(app.take_commands().is_empty());
    }
}
