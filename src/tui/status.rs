//! The status line: provider and model, mode, tokens in/out/cached summed over the session,
//! the session's cost and cache-hit ratio, context fill (the agent's estimate of the next
//! request — last reported usage plus what was added since — over the model's window), and
//! what the agent is doing.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::bus::Usage;
use crate::permissions::Mode;
use crate::tui::{theme, wrap};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activity {
    Idle,
    Thinking,
    Reasoning,
    Streaming,
    RunningTool(String),
    WaitingForApproval,
    Retrying {
        until: Instant,
        attempt: u32,
        reason: String,
    },
}

#[derive(Debug)]
pub struct Status {
    pub provider: String,
    pub model: String,
    pub mode: Mode,
    pub context_window: u64,
    pub totals: Usage,
    pub last_prompt: u64,
    /// The agent's estimate of the next request's tokens, when it sent one.
    pub used: Option<u64>,
    /// Dollars spent in this session, when the model's prices are known.
    pub cost_usd: Option<f64>,
    pub activity: Activity,
    pub read_only: bool,
    /// Why commands run unsandboxed ("no sandbox", "sandbox off"), shown after the mode.
    pub sandbox_off: Option<String>,
    /// Background jobs running now (`⚙ 2 jobs` before the activity).
    pub jobs_running: usize,
}

impl Status {
    pub fn new(provider: String, model: String, mode: Mode, read_only: bool) -> Self {
        Self {
            provider,
            model,
            mode,
            context_window: 0,
            totals: Usage::default(),
            last_prompt: 0,
            used: None,
            cost_usd: None,
            activity: Activity::Idle,
            read_only,
            sandbox_off: None,
            jobs_running: 0,
        }
    }

    pub fn with_sandbox_off(mut self, note: Option<String>) -> Self {
        self.sandbox_off = note;
        self
    }

    pub fn add_usage(&mut self, usage: &Usage) {
        self.totals.prompt_tokens += usage.prompt_tokens;
        self.totals.completion_tokens += usage.completion_tokens;
        self.totals.cached_tokens += usage.cached_tokens;
        self.last_prompt = usage.prompt_tokens;
    }

    pub fn reset_usage(&mut self) {
        self.totals = Usage::default();
        self.last_prompt = 0;
        self.used = None;
        self.cost_usd = None;
    }

    pub fn fill_percent(&self) -> Option<u64> {
        let used = self.used.unwrap_or(self.last_prompt);
        (self.context_window > 0).then(|| (used * 100 / self.context_window).min(100))
    }

    fn activity_text(&self, now: Instant) -> (String, ratatui::style::Style) {
        match &self.activity {
            Activity::Idle => ("idle".into(), theme::dim()),
            Activity::Thinking => ("thinking…".into(), theme::status_busy()),
            Activity::Reasoning => ("reasoning…".into(), theme::status_busy()),
            Activity::Streaming => ("streaming…".into(), theme::status_busy()),
            Activity::RunningTool(name) => (format!("running {name}…"), theme::status_busy()),
            Activity::WaitingForApproval => ("waiting for approval".into(), theme::warning()),
            Activity::Retrying {
                until,
                attempt,
                reason,
            } => {
                let secs = until.saturating_duration_since(now).as_secs_f64().ceil() as u64;
                (
                    format!("retry {attempt} in {secs}s ({reason})"),
                    theme::warning(),
                )
            }
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, now: Instant, hint: Option<&str>) {
        let (activity, activity_style) = self.activity_text(now);
        let mut right = vec![Span::styled(activity, activity_style)];
        if let Some(hint) = hint {
            right = vec![Span::styled(hint.to_string(), theme::warning())];
        }
        if let Some(jobs) = crate::tui::jobs::indicator(self.jobs_running) {
            right.insert(0, Span::styled(format!("{jobs} · "), theme::accent()));
        }
        let right_width: usize = right.iter().map(|s| wrap::width(&s.content)).sum();
        let room = usize::from(area.width).saturating_sub(right_width + 1);
        // Most detail that fits: the provider and the cache count go first on narrow screens.
        let left = [(true, true), (false, true), (false, false)]
            .into_iter()
            .map(|(provider, cached)| self.left_spans(provider, cached))
            .find(|spans| spans.iter().map(|s| wrap::width(&s.content)).sum::<usize>() <= room)
            .unwrap_or_else(|| self.left_spans(false, false));
        buf.set_line(area.x, area.y, &Line::from(left), room as u16);
        let x = area.x + area.width.saturating_sub(right_width as u16);
        buf.set_line(x, area.y, &Line::from(right), right_width as u16);
    }

    fn left_spans(&self, provider: bool, cached: bool) -> Vec<Span<'static>> {
        let sep = || Span::styled(" │ ", theme::border());
        let mut left = Vec::new();
        if self.read_only {
            left.push(Span::styled("replay ", theme::key()));
            left.push(Span::raw(" "));
        }
        let model = if provider {
            format!("{} · {}", self.provider, self.model)
        } else {
            self.model.clone()
        };
        left.push(Span::styled(model, theme::accent()));
        left.push(sep());
        left.push(Span::styled(self.mode.as_str(), theme::bold()));
        if let Some(note) = &self.sandbox_off {
            left.push(Span::raw(" "));
            left.push(Span::styled(note.clone(), theme::warning()));
        }
        left.push(sep());
        let t = &self.totals;
        let mut counts = format!(
            "↑{} ↓{}",
            tokens(t.prompt_tokens),
            tokens(t.completion_tokens)
        );
        if cached {
            counts.push_str(&format!(" cached {}", tokens(t.cached_tokens)));
            if let Some(hit) = crate::tui::cost::cache_hit_percent(t) {
                counts.push_str(&format!(" ({hit}%)"));
            }
        }
        left.push(Span::styled(counts, theme::status_bar()));
        if let Some(cost) = self.cost_usd {
            left.push(sep());
            left.push(Span::styled(
                crate::tui::cost::dollars(cost),
                theme::status_bar(),
            ));
        }
        if let Some(fill) = self.fill_percent() {
            left.push(sep());
            left.push(Span::styled(format!("ctx {fill}%"), theme::fill(fill)));
        }
        left
    }
}
/// `950`, `12.3k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_without_a_sandbox_show_after_the_mode() {
        let line = |s: &Status| -> String {
            s.left_spans(false, false)
                .iter()
                .map(|span| span.content.to_string())
                .collect()
        };
        let s = Status::new("p".into(), "m".into(), Mode::Auto, false);
        assert!(!line(&s).contains("sandbox"), "{}", line(&s));
        let s = s.with_sandbox_off(Some("no sandbox".into()));
        assert!(line(&s).contains("auto no sandbox"), "{}", line(&s));
    }

    #[test]
    fn usage_sums_and_fill_uses_the_last_prompt() {
        let mut s = Status::new("p".into(), "m".into(), Mode::Auto, false);
        s.context_window = 1000;
        s.add_usage(&Usage {
            prompt_tokens: 200,
            completion_tokens: 10,
            cached_tokens: 50,
        });
        s.add_usage(&Usage {
            prompt_tokens: 400,
            completion_tokens: 20,
            cached_tokens: 100,
        });
        assert_eq!(
            s.totals,
            Usage {
                prompt_tokens: 600,
                completion_tokens: 30,
                cached_tokens: 150
            }
        );
        assert_eq!(s.fill_percent(), Some(40));
        assert_eq!(tokens(12_345), "12.3k");
        // Once the agent reports its estimate (what was added since the last count included),
        // the gauge follows it.
        s.used = Some(700);
        s.cost_usd = Some(0.0123);
        assert_eq!(s.fill_percent(), Some(70));
        let line: String = s
            .left_spans(true, true)
            .iter()
            .map(|span| span.content.to_string())
            .collect();
        assert!(
            line.contains("cached 150 (25%)")
                && line.contains("$0.0123")
                && line.contains("ctx 70%"),
            "{line}"
        );
    }
}
