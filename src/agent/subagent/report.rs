//! What the parent reads of a child: its final text and one line of figures (steps, tokens,
//! files changed, time). A child that did not finish says so first, with what it had: never
//! an empty success.

use std::time::Duration;

use super::drive::{ChildEnd, ChildProgress, Follow};
use crate::bus::EndReason;
use crate::tool_output::SubagentRun;

pub(super) fn run(
    watched: &Follow<'_>,
    ending: &ChildEnd,
    progress: &ChildProgress,
    took: Duration,
) -> SubagentRun {
    let (ended, finished) = ended(ending);
    let had = progress.text();
    let figures = figures(watched.agent, &ended, progress, took);
    let text = if finished {
        let answer = if had.is_empty() {
            "(the subagent finished without a final message)".to_string()
        } else {
            had
        };
        format!("{answer}\n{figures}")
    } else {
        let marker = match ending {
            ChildEnd::Cancelled => crate::tool_output::CANCELLED.to_string(),
            _ => format!("[subagent did not finish: {ended}]"),
        };
        let had = if had.is_empty() {
            "(it had written nothing yet)".to_string()
        } else {
            format!("What it had so far:\n{had}")
        };
        format!("{marker}\n{had}\n{figures}")
    };
    SubagentRun {
        agent: watched.agent.to_string(),
        description: watched.description.to_string(),
        session: watched.session.0.clone(),
        ended,
        finished,
        steps: progress.steps,
        prompt_tokens: progress.usage.prompt_tokens,
        completion_tokens: progress.usage.completion_tokens,
        cached_tokens: progress.usage.cached_tokens,
        requests: progress.requests,
        files_changed: progress.files.len() as u64,
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        text,
    }
}

/// How it ended in words, and whether it finished.
fn ended(ending: &ChildEnd) -> (String, bool) {
    match ending {
        ChildEnd::Ended(EndReason::Completed) => ("completed".into(), true),
        ChildEnd::Ended(EndReason::StepLimit) => {
            ("it reached its step limit (max_steps)".into(), false)
        }
        ChildEnd::Ended(EndReason::OutputLimit) => {
            ("its answer was cut at the output limit".into(), false)
        }
        ChildEnd::Ended(EndReason::Denied) => ("a call of it was denied".into(), false),
        ChildEnd::Ended(EndReason::Interrupted) => ("it was interrupted".into(), false),
        ChildEnd::Ended(EndReason::Failed(why)) => (
            format!("it failed: {}", crate::llm::stream::cut(why, 300)),
            false,
        ),
        ChildEnd::Stalled(after) => (
            format!(
                "stalled: no progress for {} s, so it was stopped",
                after.as_secs()
            ),
            false,
        ),
        ChildEnd::Cancelled => ("cancelled".into(), false),
        ChildEnd::Lost => ("it stopped without an answer".into(), false),
    }
}

/// `[subagent explore: completed · 3 steps · 1,204 tokens · 2 files changed · 4.1 s]`
fn figures(agent: &str, ended: &str, progress: &ChildProgress, took: Duration) -> String {
    let tokens = progress.usage.prompt_tokens + progress.usage.completion_tokens;
    let short = if ended.len() > 40 {
        ended.split(':').next().unwrap_or(ended)
    } else {
        ended
    };
    format!(
        "[subagent {agent}: {short} · {} step{} · {} tokens · {} file{} changed · {:.1} s]",
        progress.steps,
        if progress.steps == 1 { "" } else { "s" },
        tokens,
        progress.files.len(),
        if progress.files.len() == 1 { "" } else { "s" },
        took.as_secs_f64()
    )
}
