//! How a bash card shows a command that went on as a background job (started with
//! `background: true`, or still running at its timeout): "running as job-1", not a red ✗,
//! and once the job ended, how it ended, from the job events the card is kept up to date with.

use ratatui::style::Style;

use crate::bus::{JobEnd, JobLine};
use crate::tool_output::CommandRun;
use crate::tui::theme;

/// The card's icon, its style and the status words, for a command that became `job`.
pub fn header(run: &CommandRun, job: Option<&JobLine>) -> Option<(&'static str, Style, String)> {
    let id = run.job_id.as_deref()?;
    let end = job.and_then(|job| job.end.as_ref());
    Some(match end {
        None => ("⚙", theme::accent(), format!("running as {id}")),
        Some(end) if end.failed() => ("✗", theme::error(), format!("{id} · {}", end.describe())),
        Some(end @ JobEnd::Exited { .. }) => {
            ("✓", theme::ok(), format!("{id} · {}", end.describe()))
        }
        Some(end) => ("⊘", theme::warning(), format!("{id} · {}", end.describe())),
    })
}

/// The facts line's words about the job: how it became one, and where it stands.
pub fn facts(run: &CommandRun, job: Option<&JobLine>) -> Vec<(String, Style)> {
    let Some(id) = run.job_id.as_deref() else {
        return Vec::new();
    };
    let mut facts = Vec::new();
    if let Some(ms) = run.timed_out_after_ms {
        let after = crate::tui::figures::format_elapsed(std::time::Duration::from_millis(ms));
        facts.push((
            format!("still running after {after}: moved to the background"),
            theme::dim(),
        ));
    }
    match job.and_then(|job| job.end.as_ref()) {
        None => facts.push((format!("running as {id} · /jobs shows it"), theme::accent())),
        Some(end) => {
            let style = if end.failed() {
                theme::error()
            } else {
                theme::dim()
            };
            facts.push((format!("{id} {}", end.describe()), style));
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::JobKiller;

    #[test]
    fn a_promoted_command_runs_as_a_job_then_says_how_it_ended() {
        let run = CommandRun {
            command: "make watch".into(),
            timed_out_after_ms: Some(5000),
            job_id: Some("job-1".into()),
            ..CommandRun::default()
        };
        let job = |end| JobLine {
            id: "job-1".into(),
            command: "make watch".into(),
            elapsed_ms: 9000,
            end,
        };
        let words = |job: Option<&JobLine>| {
            header(&run, job).map(|(icon, _, text)| format!("{icon} {text}"))
        };
        assert_eq!(words(None).as_deref(), Some("⚙ running as job-1"));
        assert_eq!(
            words(Some(&job(None))).as_deref(),
            Some("⚙ running as job-1")
        );
        let exited = |code| {
            Some(JobEnd::Exited {
                exit_code: Some(code),
                signal: None,
            })
        };
        assert_eq!(
            words(Some(&job(exited(0)))).as_deref(),
            Some("✓ job-1 · exit 0")
        );
        assert_eq!(
            words(Some(&job(exited(3)))).as_deref(),
            Some("✗ job-1 · exit code 3")
        );
        let killed = Some(JobEnd::Killed {
            by: JobKiller::User,
        });
        assert_eq!(
            words(Some(&job(killed))).as_deref(),
            Some("⊘ job-1 · killed by you")
        );
        let facts: Vec<String> = facts(&run, None)
            .into_iter()
            .map(|(text, _)| text)
            .collect();
        assert_eq!(
            facts,
            [
                "still running after 5.0s: moved to the background",
                "running as job-1 · /jobs shows it"
            ]
        );
        let plain = CommandRun {
            job_id: None,
            ..run
        };
        assert!(header(&plain, None).is_none() && super::facts(&plain, None).is_empty());
    }
}
