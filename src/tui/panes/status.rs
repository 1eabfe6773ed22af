//! The status line: provider and model, mode, tokens in/out/cached summed over the session,
//! the session's cost and cache-hit ratio, context fill (the agent's estimate of the next
//! request — last reported usage plus what was added since — over the model's window), and
//! what the agent is doing.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::bus::Mode;
use crate::bus::Usage;
use crate::tui::figures::tokens;
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
    /// A subagent's transcript shown in its parent's UI (read-only too).
    pub child: bool,
    /// Why commands run unsandboxed ("no sandbox", "sandbox off"), shown after the mode.
    pub sandbox_off: Option<String>,
    /// Background jobs running now (`⚙ 2 jobs` before the activity).
    pub jobs_running: usize,
    /// The language servers' states (`rust-analyzer ready`), once one started.
    pub lsp: Option<String>,
    /// Model requests of the session: no cost is shown before the first.
    pub requests: u64,
    /// What the subagents running now have used so far: counted with the session's tokens
    /// until each one's result brings its figures into the session's own.
    pub children: Usage,
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
            child: false,
            sandbox_off: None,
            jobs_running: 0,
            lsp: None,
            requests: 0,
            children: Usage::default(),
        }
    }

    pub fn with_sandbox_off(mut self, note: Option<String>) -> Self {
        self.sandbox_off = note;
        self
    }

    /// One model request's usage, as it arrives (a replay has nothing else to go by).
    pub fn add_usage(&mut self, usage: &Usage) {
        self.totals += *usage;
        self.last_prompt = usage.prompt_tokens;
        self.requests += 1;
    }

    /// The agent's count of the whole session: every request paid for, also those of branches
    /// a rewind left, so the counters never go back.
    pub fn set_session_usage(&mut self, totals: Usage, requests: u64) {
        self.totals = totals;
        self.requests = requests;
    }

    pub fn reset_usage(&mut self) {
        self.totals = Usage::default();
        self.last_prompt = 0;
        self.used = None;
        self.cost_usd = None;
        self.requests = 0;
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
        if let Some(lsp) = &self.lsp {
            right.insert(0, Span::styled(format!("{lsp} · "), theme::accent()));
        }
        if let Some(jobs) = crate::tui::jobs::indicator(self.jobs_running) {
            right.insert(0, Span::styled(format!("{jobs} · "), theme::accent()));
        }
        let right_width: usize = right.iter().map(|s| wrap::width(&s.content)).sum();
        let room = usize::from(area.width).saturating_sub(right_width + 1);
        // Most detail that fits: the provider, the sandbox's why, the cache count and then the
        // token counts go first on narrow screens; mode, badge, cost and fill always stay.
        let left = Detail::LEVELS
            .iter()
            .map(|detail| self.left_spans(*detail))
            .find(|spans| spans.iter().map(|s| wrap::width(&s.content)).sum::<usize>() <= room)
            .unwrap_or_else(|| self.left_spans(Detail::LEAST));
        buf.set_line(area.x, area.y, &Line::from(left), room as u16);
        let x = area.x + area.width.saturating_sub(right_width as u16);
        buf.set_line(x, area.y, &Line::from(right), right_width as u16);
    }

    fn left_spans(&self, detail: Detail) -> Vec<Span<'static>> {
        let sep = || Span::styled(" │ ", theme::border());
        let mut left = Vec::new();
        if self.read_only {
            let what = if self.child { "subagent " } else { "replay " };
            left.push(Span::styled(what, theme::key()));
            left.push(Span::raw(" "));
        }
        if detail.model {
            let model = if detail.provider {
                format!("{} · {}", self.provider, self.model)
            } else {
                self.model.clone()
            };
            left.push(Span::styled(model, theme::accent()));
            left.push(sep());
        }
        left.push(Span::styled(self.mode.as_str(), theme::bold()));
        // A replay runs nothing: no sandbox to speak of.
        if !self.read_only {
            let (badge, style) = sandbox_badge(self.sandbox_off.as_deref(), detail.why);
            left.push(Span::styled(" · ", theme::dim()));
            left.push(Span::styled(badge, style));
        }
        let t = &(self.totals + self.children);
        if detail.tokens {
            left.push(sep());
            let mut counts = format!(
                "↑{} ↓{}",
                tokens(t.prompt_tokens),
                tokens(t.completion_tokens)
            );
            if detail.cached {
                counts.push_str(&format!(" cached {}", tokens(t.cached_tokens)));
                if let Some(hit) = crate::tui::panes::cost::cache_hit_percent(t) {
                    counts.push_str(&format!(" ({hit}%)"));
                }
            }
            left.push(Span::styled(counts, theme::status_bar()));
        }
        if let Some((cost, style)) = self.cost_cell() {
            left.push(sep());
            left.push(Span::styled(cost, style));
        }
        if let Some(fill) = self.fill_percent() {
            left.push(sep());
            left.push(Span::styled(format!("ctx {fill}%"), theme::fill(fill)));
        }
        left
    }

    /// No cost before the first request; `$?` when the model's prices are unknown (`/cost`
    /// says why and how to set them); never a negative amount.
    fn cost_cell(&self) -> Option<(String, Style)> {
        if self.requests == 0 {
            return None;
        }
        match self.cost_usd {
            Some(cost) => Some((crate::tui::panes::cost::dollars(cost), theme::status_bar())),
            // A replay has no prices at all: nothing to say.
            None if self.read_only => None,
            None => Some(("$?".into(), theme::dim())),
        }
    }
}

/// How much of the status line to show; tried from most to least until one fits. On narrow
/// screens the provider goes first, then the sandbox's detail, the model name (it is on the
/// welcome screen and in `/model`), the cache count and the token counts: the mode, the
/// sandbox badge, cost and fill always stay.
#[derive(Debug, Clone, Copy)]
struct Detail {
    provider: bool,
    /// The sandbox badge's detail: what enforces it, or why it is off.
    why: bool,
    cached: bool,
    tokens: bool,
    model: bool,
}

impl Detail {
    const ALL: Detail = Detail {
        provider: true,
        why: true,
        cached: true,
        tokens: true,
        model: true,
    };
    const LEAST: Detail = Detail {
        provider: false,
        why: false,
        cached: false,
        tokens: false,
        model: false,
    };
    const LEVELS: [Detail; 6] = [
        Detail::ALL,
        Detail {
            provider: false,
            ..Detail::ALL
        },
        Detail {
            provider: false,
            why: false,
            ..Detail::ALL
        },
        Detail {
            cached: true,
            tokens: true,
            ..Detail::LEAST
        },
        Detail {
            tokens: true,
            ..Detail::LEAST
        },
        Detail::LEAST,
    ];
}

/// The sandbox badge: on (Landlock and the seccomp filter), or off and why. `note` is what the
/// launch said: none when the sandbox is on and everything binds; `no sandbox: why` or
/// `sandbox off: why` when commands run unsandboxed; otherwise what of it does not bind.
fn sandbox_badge(note: Option<&str>, why: bool) -> (String, Style) {
    let off = note.filter(|n| n.starts_with("no sandbox") || n.starts_with("sandbox off"));
    match (off, note) {
        (Some(off), _) if why => (format!("⚠ {off}"), theme::warning()),
        (Some(off), _) => {
            let short = off.split([':', '(', '·']).next().unwrap_or(off).trim_end();
            (format!("⚠ {short}"), theme::warning())
        }
        (None, Some(gap)) if why => (
            format!("sandbox on (landlock+seccomp) · ⚠ {gap}"),
            theme::warning(),
        ),
        (None, Some(_)) => ("sandbox on ⚠".into(), theme::warning()),
        (None, None) if why => ("sandbox on (landlock+seccomp)".into(), theme::ok()),
        (None, None) => ("sandbox on".into(), theme::ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(spans: &[Span<'static>]) -> String {
        spans.iter().map(|span| span.content.to_string()).collect()
    }

    const ALL: Detail = Detail::ALL;

    #[test]
    fn the_sandbox_badge_says_on_or_off_and_why() {
        let s = Status::new("p".into(), "m".into(), Mode::Auto, false);
        assert!(text(&s.left_spans(ALL)).contains("auto · sandbox on (landlock+seccomp)"));
        assert!(text(&s.left_spans(Detail::LEAST)).ends_with("auto · sandbox on"));
        let s = s.with_sandbox_off(Some(
            "no sandbox: this kernel has no Landlock support".into(),
        ));
        assert!(
            text(&s.left_spans(ALL))
                .contains("auto · ⚠ no sandbox: this kernel has no Landlock support"),
            "{}",
            text(&s.left_spans(ALL))
        );
        assert!(text(&s.left_spans(Detail::LEAST)).ends_with("auto · ⚠ no sandbox"));
        let s = s.with_sandbox_off(Some("sandbox off: sandbox.enabled = false".into()));
        assert!(text(&s.left_spans(Detail::LEAST)).contains("⚠ sandbox off"));
        // On, but the per-command limits do not bind here.
        let s = s.with_sandbox_off(Some("no process limit (no cgroup)".into()));
        assert!(
            text(&s.left_spans(ALL)).contains("sandbox on (landlock+seccomp) · ⚠ no process limit"),
            "{}",
            text(&s.left_spans(ALL))
        );
        // A replay runs nothing.
        let replay = Status::new("p".into(), "m".into(), Mode::Auto, true);
        assert!(!text(&replay.left_spans(ALL)).contains("sandbox"));
    }

    /// The language servers' states (issue 35) stand on the right, before the activity.
    #[test]
    fn the_language_servers_states_show_on_the_right() {
        let mut s = Status::new("p".into(), "m".into(), Mode::Auto, false);
        s.lsp = Some("rust-analyzer indexing, pyright ready".into());
        let area = Rect::new(0, 0, 160, 1);
        let mut buf = Buffer::empty(area);
        s.render(area, &mut buf, Instant::now(), None);
        let line: String = (0..area.width)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect();
        assert!(
            line.contains("rust-analyzer indexing, pyright ready · "),
            "{line}"
        );
    }

    #[test]
    fn no_cost_before_a_request_then_dollars_or_unknown_and_never_negative() {
        let mut s = Status::new("p".into(), "m".into(), Mode::Auto, false);
        s.cost_usd = Some(-0.0);
        assert!(
            !text(&s.left_spans(ALL)).contains('$'),
            "no cost before a request"
        );
        s.add_usage(&Usage::default());
        assert!(
            text(&s.left_spans(ALL)).contains("│ $0.0000"),
            "{}",
            text(&s.left_spans(ALL))
        );
        assert!(!text(&s.left_spans(ALL)).contains('-'));
        s.cost_usd = None;
        assert!(text(&s.left_spans(ALL)).contains("│ $?"), "unknown prices");
        let mut replay = Status::new("p".into(), "m".into(), Mode::Auto, true);
        replay.add_usage(&Usage::default());
        assert!(!text(&replay.left_spans(ALL)).contains('$'));
    }

    #[test]
    fn the_session_count_wins_over_a_replayed_branch() {
        let mut s = Status::new("p".into(), "m".into(), Mode::Auto, false);
        let big = Usage {
            prompt_tokens: 5000,
            completion_tokens: 300,
            cached_tokens: 0,
        };
        s.add_usage(&big);
        s.add_usage(&big);
        // A rewind: the branch kept has one of the two requests; both were paid for.
        s.reset_usage();
        s.add_usage(&big);
        s.set_session_usage(
            Usage {
                prompt_tokens: 10_000,
                completion_tokens: 600,
                cached_tokens: 0,
            },
            2,
        );
        assert!(text(&s.left_spans(ALL)).contains("↑10.0k ↓600"));
        assert_eq!(s.requests, 2);
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
        let line = text(&s.left_spans(ALL));
        assert!(
            line.contains("cached 150 (25%)")
                && line.contains("$0.0123")
                && line.contains("ctx 70%"),
            "{line}"
        );
    }
}
