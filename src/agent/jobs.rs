//! The agent's side of background jobs: their starts and ends published on the bus, the
//! user's `/jobs` commands (served by the router at once, also while a request runs, so the
//! agent keeps owning every process), the news the model is told before its next step, and
//! on resume which jobs of the log a restart ended.

use crate::bus::{JobListEvent, ReportEvent};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::{Agent, RouterShared};
use crate::bus::{AgentEvent, JobEvent, JobLine, UserCommand};
use crate::session_log::Record;
use crate::tool_output::ToolOutput;
use crate::tools::ToolError;
use crate::tools::jobs::user::JOB_NOTE;

impl Agent {
    /// Publishes the starts and ends of the current session's jobs and lets the router reach
    /// its job table. Called for every new `ToolEnv` (start, `/new`, a resume).
    pub(super) fn publish_jobs(&self) {
        let events = self.events.clone();
        self.engine
            .tool_env
            .jobs
            .publish_to(Arc::new(move |event: JobEvent| {
                let _ = events.send(AgentEvent::Job(event));
            }));
        self.shared.set_tools(Arc::clone(&self.engine.tool_env));
    }

    /// Tells the model what happened to its jobs outside its calls (the user killed one, a
    /// restart ended them): one note before the step, logged like every note.
    pub(super) fn tell_job_news(&mut self) {
        if let Some(text) = self.engine.tool_env.jobs.take_news() {
            self.tell_model(text);
        }
        // Diagnostics that were pending when an edit's result went out: appended as a note,
        // never by rewriting the result already sent.
        if let Some(text) = self
            .engine
            .tool_env
            .lsp
            .as_ref()
            .and_then(|l| l.take_late_notes())
        {
            self.tell_model(text);
        }
        self.publish_lsp();
    }

    /// The language servers' states for the status line, when they changed.
    pub(super) fn publish_lsp(&self) {
        let changed = self
            .engine
            .tool_env
            .lsp
            .as_ref()
            .and_then(|l| l.indicator_changed());
        if let Some(indicator) = changed {
            self.emit(AgentEvent::Report(ReportEvent::LanguageServers {
                indicator,
                listing: None,
            }));
        }
    }

    /// `/lsp`: every server, its state, why one does not run, and the log path.
    pub(super) fn show_lsp(&self) {
        let log = self.settings.dirs.log_file();
        let (indicator, listing) = match &self.engine.tool_env.lsp {
            Some(lsp) => (lsp.indicator(), lsp.listing(&log)),
            None => (
                None,
                "language servers are off ([lsp] enabled = false)\n".to_string(),
            ),
        };
        self.emit(AgentEvent::Report(ReportEvent::LanguageServers {
            indicator,
            listing: Some(listing),
        }));
    }

    /// After a resume's history: the cards of the jobs a restart ended say so, and the user
    /// reads which they were.
    pub(super) fn announce_left_jobs(&self) {
        let left = self.engine.tool_env.jobs.left_behind();
        if left.is_empty() {
            return;
        }
        let names: Vec<String> = left
            .iter()
            .map(|job| format!("{} `{}`", job.id, job.command))
            .collect();
        for job in left {
            self.emit(AgentEvent::Job(JobEvent::Ended { job }));
        }
        self.warn(&format!(
            "background jobs stop when cairn exits: {} no longer {}; the model is told with your next message",
            names.join(", "),
            if names.len() == 1 { "runs" } else { "run" }
        ));
    }
}

/// Serves a `/jobs` command for the router: the list and the output at once, a kill in a task
/// of its own (it waits out the grace period), its end published by the job table.
pub(super) fn serve(
    shared: &RouterShared,
    events: &UnboundedSender<AgentEvent>,
    command: UserCommand,
) {
    let Some(tools) = shared.tools() else {
        let _ = events.send(AgentEvent::JobList(JobListEvent::Jobs { jobs: Vec::new() }));
        return;
    };
    let warn = |events: &UnboundedSender<AgentEvent>, err: ToolError| {
        let _ = events.send(AgentEvent::Report(ReportEvent::Warning {
            message: format!("/jobs: {}", user_words(err)),
        }));
    };
    match command {
        UserCommand::ListJobs => {
            let _ = events.send(AgentEvent::JobList(JobListEvent::Jobs {
                jobs: tools.jobs.lines(),
            }));
        }
        UserCommand::ShowJobOutput { job } => match tools.jobs.output_tail(&job) {
            Ok((job, stdout, stderr)) => {
                let _ = events.send(AgentEvent::JobList(JobListEvent::JobOutput {
                    job,
                    stdout,
                    stderr,
                }));
            }
            Err(err) => warn(events, err),
        },
        UserCommand::KillJob { job } => {
            let events = events.clone();
            tokio::spawn(async move {
                if let Err(err) = tools.jobs.kill_by_user(&job).await {
                    warn(&events, err);
                }
            });
        }
        _ => {}
    }
}

/// The message of a job-table error without the model's "invalid arguments:" prefix.
fn user_words(err: ToolError) -> String {
    match err {
        ToolError::InvalidArgs(message) | ToolError::Failed(message) => message,
        other => other.to_string(),
    }
}

/// The jobs the log's calls started whose end the model never saw (no report of it ended, no
/// note naming it), oldest first, and the highest job number the log used.
pub(super) fn left_behind(records: &[Record]) -> (Vec<JobLine>, u64) {
    let mut started: BTreeMap<u64, JobLine> = BTreeMap::new();
    let mut seen_ended: BTreeSet<String> = BTreeSet::new();
    for record in records {
        match record {
            Record::ToolResult { result, .. } => match &result.output {
                Some(ToolOutput::Command(run)) => {
                    if let Some((id, number)) = run.job_id.as_deref().and_then(job_number) {
                        started.insert(
                            number,
                            JobLine {
                                id: id.to_string(),
                                command: run.command.clone(),
                                elapsed_ms: 0,
                                end: None,
                            },
                        );
                    }
                }
                Some(ToolOutput::Job(report)) if !report.running => {
                    seen_ended.insert(report.job_id.clone());
                }
                _ => {}
            },
            Record::Note { text, .. } if text.starts_with(JOB_NOTE) => {
                seen_ended.extend(job_ids(text));
            }
            _ => {}
        }
    }
    let highest = started.keys().next_back().copied().unwrap_or(0);
    let left = started
        .into_values()
        .filter(|job| !seen_ended.contains(&job.id))
        .collect();
    (left, highest)
}

/// `job-12` → 12.
fn job_number(id: &str) -> Option<(&str, u64)> {
    let number = id.strip_prefix("job-")?.parse().ok()?;
    Some((id, number))
}

/// Every `job-N` named in a text.
fn job_ids(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| job_number(word).is_some())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{CallId, ToolResult};
    use crate::session_log::ToldState;
    use crate::tool_output::{CommandRun, JobReport};

    fn started(call: &str, job: &str, command: &str) -> Record {
        Record::ToolResult {
            call: CallId::new(call),
            name: "bash".into(),
            result: ToolResult::ok(ToolOutput::Command(CommandRun {
                command: command.into(),
                job_id: Some(job.into()),
                background: true,
                ..CommandRun::default()
            })),
        }
    }

    fn report(job: &str, running: bool) -> Record {
        Record::ToolResult {
            call: CallId::new("r"),
            name: "job_output".into(),
            result: ToolResult::ok(ToolOutput::Job(JobReport {
                job_id: job.into(),
                running,
                exit_code: (!running).then_some(0),
                ..JobReport::default()
            })),
        }
    }

    fn note(text: &str) -> Record {
        Record::Note {
            text: text.into(),
            told: ToldState::default(),
            parts: Vec::new(),
        }
    }

    #[test]
    fn left_behind_are_the_jobs_whose_end_the_model_never_saw() {
        let records = vec![
            started("c1", "job-1", "npm run dev"),
            started("c2", "job-2", "sleep 100"),
            started("c3", "job-3", "make watch"),
            started("c4", "job-4", "cargo build"),
            // Seen running, then seen ended; seen running only; never read.
            report("job-2", true),
            report("job-2", false),
            report("job-3", true),
            note(&format!(
                "{JOB_NOTE} The user stopped job-4 (`cargo build`) from the jobs view."
            )),
            // Another note naming a job does not count: only job notes do.
            note("[cairn note: job-1 is mentioned here]"),
        ];
        let (left, highest) = left_behind(&records);
        let ids: Vec<&str> = left.iter().map(|job| job.id.as_str()).collect();
        assert_eq!(ids, ["job-1", "job-3"]);
        assert_eq!(left[0].command, "npm run dev");
        assert_eq!(highest, 4);
        // Once the note after a resume named them, a second resume says nothing again.
        let mut told = records;
        told.push(note(&format!(
            "{JOB_NOTE} cairn restarted …, so job-1 (`npm run dev`), job-3 (`make watch`) no longer run"
        )));
        assert_eq!(left_behind(&told), (Vec::new(), 4));
        assert_eq!(left_behind(&[]), (Vec::new(), 0));
    }
}
