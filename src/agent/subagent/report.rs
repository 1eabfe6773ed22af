//! What the parent reads of a child: its final text and one line of figures (steps, tokens,
//! files changed, time). A child that did not finish says so first, with what it had: never
//! an empty success.

use std::time::Duration;

use super::drive::{ChildEnd, ChildProgress, Follow};
use crate::bus::EndReason;
use crate::tool_output::{FileChange, SubagentRun};

pub(super) fn run(
    watched: &Follow<'_>,
    ending: &ChildEnd,
    progress: &ChildProgress,
    took: Duration,
) -> SubagentRun {
    let (ended, finished) = ended(ending);
    let had = progress.text();
    let mut run = SubagentRun {
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
        uncounted: progress.uncounted,
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        text: String::new(),
        changes: Vec::new(),
    };
    let body = if finished {
        if had.is_empty() {
            "(the subagent finished without a final message)".to_string()
        } else {
            had
        }
    } else {
        let marker = match ending {
            ChildEnd::Cancelled => crate::tool_output::CANCELLED.to_string(),
            _ => format!("[subagent did not finish: {}]", run.ended),
        };
        let had = if had.is_empty() {
            "(it had written nothing yet)".to_string()
        } else {
            format!("What it had so far:\n{had}")
        };
        format!("{marker}\n{had}")
    };
    // Its file tools' writes are all it changed unless it ran commands or subagents that
    // changed files; what those changed the parent's checkpoints tell when it ran alone
    // (`with_changes`).
    let exact = run.uncounted == 0;
    run.text = format!("{body}\n{}", figures(&run, exact));
    run
}

/// What the child changed, as the parent's checkpoints around it saw it (its commands' changes
/// too): counted in the figures, named for the model above them, kept for the diff pane.
pub(super) fn with_changes(run: &mut SubagentRun, changes: Vec<FileChange>, more: bool) {
    let body = run
        .text
        .rsplit_once('\n')
        .map_or(String::new(), |(body, _figures)| body.to_string());
    run.files_changed = changes.len() as u64;
    run.text = if changes.is_empty() {
        format!("{body}\n{}", figures(run, true))
    } else {
        let mut names: Vec<String> = changes.iter().take(20).map(FileChange::label).collect();
        if more || changes.len() > 20 {
            names.push("…".into());
        }
        format!(
            "{body}\n[files the subagent changed: {}]\n{}",
            names.join(", "),
            figures(run, true)
        )
    };
    run.changes = changes;
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
/// When the count is not `exact` (its commands ran beside other subagents, whose changes one
/// checkpoint cannot tell apart), it says what it counts.
fn figures(run: &SubagentRun, exact: bool) -> String {
    let tokens = run.prompt_tokens + run.completion_tokens;
    let files = if run.files_changed == 1 { "" } else { "s" };
    let changed = if exact {
        format!("{} file{files} changed", run.files_changed)
    } else {
        format!(
            "{} file{files} written by its file tools (changes by its commands or subagents not counted)",
            run.files_changed
        )
    };
    let short = if run.ended.len() > 40 {
        run.ended.split(':').next().unwrap_or(&run.ended)
    } else {
        &run.ended
    };
    format!(
        "[subagent {}: {short} · {} step{} · {tokens} tokens · {changed} · {:.1} s]",
        run.agent,
        run.steps,
        if run.steps == 1 { "" } else { "s" },
        run.duration_ms as f64 / 1000.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(uncounted: u64) -> SubagentRun {
        SubagentRun {
            agent: "general".into(),
            ended: "completed".into(),
            finished: true,
            steps: 3,
            prompt_tokens: 1_000,
            completion_tokens: 204,
            files_changed: 1,
            uncounted,
            duration_ms: 4_100,
            text: "the answer\n[old figures]".into(),
            ..SubagentRun::default()
        }
    }

    #[test]
    fn the_figures_say_what_they_count() {
        assert_eq!(
            figures(&run(0), true),
            "[subagent general: completed · 3 steps · 1204 tokens · 1 file changed · 4.1 s]"
        );
        assert!(
            figures(&run(2), false).contains(
                "· 1 file written by its file tools (changes by its commands or subagents not counted) ·"
            )
        );
    }

    #[test]
    fn the_parents_checkpoints_replace_the_count_and_name_the_files() {
        let mut counted = run(2);
        let change = |path: &str, created| FileChange {
            path: path.into(),
            created,
            ..FileChange::default()
        };
        with_changes(
            &mut counted,
            vec![change("a.rs", false), change("b.rs", true)],
            false,
        );
        assert_eq!(
            counted.text,
            "the answer\n[files the subagent changed: a.rs, b.rs (created)]\n[subagent general: completed · 3 steps · 1204 tokens · 2 files changed · 4.1 s]"
        );
        // Nothing changed: the count is exact too, and no list.
        let mut none = run(1);
        with_changes(&mut none, Vec::new(), false);
        assert!(
            none.text.ends_with("· 0 files changed · 4.1 s]"),
            "{}",
            none.text
        );
        assert!(!none.text.contains("files the subagent changed"));
    }
}
