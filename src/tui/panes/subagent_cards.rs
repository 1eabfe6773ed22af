//! A subagent's card: while it runs, where the child is (agent, description, step, the tool
//! it runs, tokens, an approval it waits for); once done, how it ended and its figures.

use ratatui::text::{Line, Span};

use crate::bus::SubagentStatus;
use crate::tool_output::SubagentRun;
use crate::tui::{theme, wrap};
use crate::visible;

/// The running child's line under the card's header.
pub(super) fn live_line(status: &SubagentStatus, width: usize) -> Line<'static> {
    let tool = status
        .tool
        .as_deref()
        .map(|t| format!(" · {}", visible::name(t)))
        .unwrap_or_default();
    let text = format!(
        "agent {} · step {}{tool} · {} tokens",
        visible::name(&status.agent),
        status.step,
        status.tokens
    );
    let mut spans = vec![Span::styled("  │ ", theme::dim())];
    spans.push(Span::styled(
        wrap::truncate(&text, width.saturating_sub(4).max(1)),
        theme::dim(),
    ));
    if status.waiting {
        spans.push(Span::styled(
            "  waiting for your approval",
            theme::warning(),
        ));
    }
    Line::from(spans)
}

/// The finished child in one line: the figures the model read (the last line of its result,
/// `[subagent NAME: how it ended · steps · tokens · files · time]`), and its session.
pub(super) fn summary(run: &SubagentRun) -> String {
    let figures = run
        .text
        .lines()
        .last()
        .and_then(|line| line.strip_prefix("[sub"))
        .and_then(|line| line.strip_suffix(']'))
        .filter(|line| line.starts_with("agent "));
    let figures = match figures {
        Some(line) => visible::shown(line).text,
        None => format!(
            "agent {}: {} · {} steps · {} tokens · {} files changed",
            visible::name(&run.agent),
            visible::shown(&run.ended).text,
            run.steps,
            run.prompt_tokens + run.completion_tokens,
            run.files_changed
        ),
    };
    format!("{figures} · session {}", visible::name(&run.session))
}
