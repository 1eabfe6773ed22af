//! The first-run setup panel: shown instead of the UI when no API key is configured. It names
//! the key variables, the key-less ways to run and the config file; any key closes it.

use crossterm::event::{Event, EventStream, KeyEventKind};
use futures_util::StreamExt;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use tokio::signal::unix::SignalKind;

use crate::config::{CUSTOM_KEY_ENV, ConfigError, DEFAULT_PROVIDER, PRESETS};
use crate::tui::{next_signal, signal, terminal, theme, wrap};

/// What the panel says: the provider that lacks a key, the variable it reads, the config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupInfo {
    pub provider: String,
    pub env: String,
    pub config: String,
}

impl SetupInfo {
    /// The panel's content when `err` is (or was caused by) a missing API key.
    pub fn from_error(err: &color_eyre::Report) -> Option<Self> {
        err.chain().find_map(|cause| match cause.downcast_ref()? {
            ConfigError::MissingKey {
                provider,
                env,
                config,
            } => Some(Self {
                provider: provider.clone(),
                env: env.clone(),
                config: config.clone(),
            }),
            _ => None,
        })
    }
}

/// The presets' keys, from the presets themselves: (variable, provider, how to pick it).
fn preset_keys() -> impl Iterator<Item = (&'static str, &'static str, String)> {
    PRESETS.iter().filter_map(|preset| {
        let how = if preset.name == DEFAULT_PROVIDER {
            "the default".to_string()
        } else {
            format!("--provider {}", preset.name)
        };
        Some((preset.key_env?, preset.label, how))
    })
}

fn lines(info: &SetupInfo) -> Vec<Line<'static>> {
    let key = |name: &str| Span::styled(format!("  {name:<20}"), theme::key());
    let mut out = vec![
        Line::from(vec![
            Span::styled(format!("No API key for {}.", info.provider), theme::bold()),
            Span::raw(" Set one of these and start cairn again:"),
        ]),
        Line::raw(""),
    ];
    for (name, provider, how) in preset_keys() {
        out.push(Line::from(vec![
            key(name),
            Span::raw(format!("{provider:<11}")),
            Span::styled(format!("({how})"), theme::dim()),
        ]));
    }
    if !info.env.is_empty() && !preset_keys().any(|(name, ..)| name == info.env) {
        out.push(Line::from(vec![
            key(&info.env),
            Span::raw("named by "),
            Span::styled("api_key_env", theme::inline_code()),
            Span::raw(" in the config file"),
        ]));
    }
    out.extend([
        Line::raw(""),
        Line::raw("Or use a model server that needs no key:"),
        Line::from(vec![key("--provider ollama"), Span::raw("a local Ollama")]),
        Line::from(vec![
            key("--base-url URL"),
            Span::raw("any OpenAI-compatible server; its key, if any, in "),
            Span::styled(CUSTOM_KEY_ENV, theme::key()),
        ]),
        Line::raw(""),
        Line::raw("Config file (provider, model, api_key_env):"),
        Line::styled(format!("  {}", info.config), theme::accent()),
    ]);
    out
}

/// Draws the panel centred in `area`. Pure: the same info and size give the same cells.
pub fn render(info: &SetupInfo, area: Rect, buf: &mut Buffer) {
    let width = area.width.min(76);
    // Borders and one column of padding on each side.
    let text_width = usize::from(width.saturating_sub(4)).max(1);
    let body: Vec<Line<'static>> = lines(info)
        .into_iter()
        .flat_map(|line| {
            // Rows of the lists continue under their description, or just indented when the
            // screen is too narrow for that.
            let listed = line
                .spans
                .first()
                .is_some_and(|s| s.content.starts_with("  "));
            let indent = match (listed, text_width >= 60) {
                (false, _) => 0,
                (true, true) => 22,
                (true, false) => 4,
            };
            wrap::wrap(
                &line.spans,
                text_width,
                &[],
                &[Span::raw(" ".repeat(indent))],
            )
        })
        .collect();
    let height = u16::try_from(body.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height);
    let inner = crate::tui::modals::modal::modal_frame(
        area,
        width,
        height,
        Span::styled(" cairn · setup ", theme::bold()),
        Line::styled(" press any key to quit ", theme::dim()),
        theme::border_focused(),
        buf,
    );
    let text_width = inner.width.saturating_sub(2);
    for (row, line) in (inner.y..inner.bottom()).zip(&body) {
        buf.set_line(inner.x + 1, row, line, text_width);
    }
}

/// Shows the panel full-screen until a key is pressed (or the terminal goes away, or cairn is
/// told to stop). The terminal is restored on return, on error and on panic.
pub async fn show_setup(message: &SetupInfo) -> color_eyre::Result<()> {
    let mut term = terminal::setup()?;
    let guard = terminal::RestoreGuard;
    let result = wait_for_key(&mut term, message).await;
    drop(guard);
    result
}

async fn wait_for_key(term: &mut terminal::Term, info: &SetupInfo) -> color_eyre::Result<()> {
    let mut input = EventStream::new();
    let mut terminate = signal(SignalKind::terminate());
    let mut hangup = signal(SignalKind::hangup());
    loop {
        term.draw(|frame| render(info, frame.area(), frame.buffer_mut()))?;
        tokio::select! {
            maybe = input.next() => match maybe {
                Some(Ok(Event::Key(key))) if key.kind == KeyEventKind::Press => return Ok(()),
                Some(Ok(_)) => {}
                Some(Err(err)) => return Err(err.into()),
                None => return Ok(()),
            },
            () = next_signal(&mut terminate) => return Ok(()),
            () = next_signal(&mut hangup) => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use color_eyre::eyre::{WrapErr, eyre};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;

    fn info() -> SetupInfo {
        SetupInfo {
            provider: "deepseek".into(),
            env: "DEEPSEEK_API_KEY".into(),
            config: "/home/ada/.config/cairn/config.toml".into(),
        }
    }

    fn draw(info: &SetupInfo, w: u16, h: u16) -> TestBackend {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal
            .draw(|f| render(info, f.area(), f.buffer_mut()))
            .unwrap();
        terminal.backend().clone()
    }

    #[test]
    fn setup_panel_names_the_keys_and_the_config_file() {
        insta::assert_snapshot!(draw(&info(), 80, 24));
    }

    #[test]
    fn a_key_named_by_the_config_is_listed_and_a_narrow_screen_wraps() {
        let custom = SetupInfo {
            provider: "custom".into(),
            env: "MY_LAB_KEY".into(),
            ..info()
        };
        let screen = draw(&custom, 80, 24).to_string();
        assert!(screen.contains("MY_LAB_KEY"), "{screen}");
        let narrow = draw(&info(), 40, 30).to_string();
        assert!(narrow.contains("/home/ada/"), "{narrow}");
        assert!(narrow.contains("    (--provider openrouter)"), "{narrow}");
        assert!(narrow.contains("press any key"), "{narrow}");
    }

    #[test]
    fn only_a_missing_key_opens_the_panel() {
        let missing = ConfigError::MissingKey {
            provider: "deepseek".into(),
            env: "DEEPSEEK_API_KEY".into(),
            config: "c.toml".into(),
        };
        let err = Err::<(), _>(eyre!(missing))
            .wrap_err("starting")
            .unwrap_err();
        assert_eq!(
            SetupInfo::from_error(&err),
            Some(SetupInfo {
                config: "c.toml".into(),
                ..info()
            })
        );
        let other = eyre!(ConfigError::UnknownProvider("x".into()));
        assert_eq!(SetupInfo::from_error(&other), None);
    }
}
