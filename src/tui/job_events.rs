//! The job events and the answers to `/jobs`, folded into the `App`: the list (`jobs.rs`),
//! the status line's count, the cards of commands that went on as jobs, the open view.

use crate::bus::{
    CallId, JobEnd, JobEvent, JobKiller, JobLine, JobListEvent, ToolResult, UserCommand,
};
use crate::tool_output::ToolOutput;
use crate::tui::app::App;
use crate::tui::jobs::quit_warning;
use crate::tui::modals::jobs_view::JobsView;
use crate::tui::panes::transcript::entry::NoticeLevel;

impl App {
    /// A background job started or ended: its card and the status line follow.
    pub(crate) fn apply_job(&mut self, event: &JobEvent) {
        self.jobs.apply(event);
        let job = event.job();
        if let Some(call) = self.jobs.card_of(&job.id).cloned() {
            let line = job.clone();
            self.transcript
                .update_card(&call, |card| card.job = Some(line));
        }
        if matches!(event, JobEvent::Ended { .. })
            && job.end
                == Some(JobEnd::Killed {
                    by: JobKiller::User,
                })
        {
            self.notice(
                &format!(
                    "killed {} `{}`; the model is told with its next request",
                    job.id,
                    crate::visible::shown(&job.command).text
                ),
                NoticeLevel::Info,
            );
        }
        self.status.jobs_running = self.jobs.running();
    }

    /// The jobs list or one job's output, answering the user.
    pub(crate) fn apply_job_list(&mut self, event: &JobListEvent) {
        match event {
            JobListEvent::Jobs { jobs } => self.jobs.merge(jobs),
            JobListEvent::JobOutput {
                job,
                stdout,
                stderr,
            } => {
                self.jobs.merge(std::slice::from_ref(job));
                if let Some(view) = self.layers.jobs_mut() {
                    view.show_output(job, stdout, stderr);
                }
            }
        }
        self.status.jobs_running = self.jobs.running();
    }

    /// A finished call that left a job behind: its card follows the job from now on. A
    /// `job_output` or `job_kill` report of an ended job says how it ended too (in a replay,
    /// the only word there is); a replayed job never reported ended no longer runs.
    pub(crate) fn link_job_card(&mut self, call: &CallId, result: &ToolResult) {
        match &result.output {
            Some(ToolOutput::Command(run)) => {
                let Some(job) = &run.job_id else {
                    return;
                };
                self.jobs.link_card(job, call);
                let line = self.jobs.get(job).cloned().or_else(|| {
                    self.read_only.then(|| JobLine {
                        id: job.clone(),
                        command: run.command.clone(),
                        elapsed_ms: 0,
                        end: Some(JobEnd::Gone),
                    })
                });
                self.transcript.update_card(call, |card| card.job = line);
            }
            Some(ToolOutput::Job(report)) if !report.running => {
                let end = if report.stopped_by_user {
                    JobEnd::Killed {
                        by: JobKiller::User,
                    }
                } else if report.killed {
                    JobEnd::Killed {
                        by: JobKiller::Model,
                    }
                } else {
                    JobEnd::Exited {
                        exit_code: report.exit_code,
                        signal: report.signal.clone(),
                    }
                };
                let line = JobLine {
                    id: report.job_id.clone(),
                    command: report.command.clone(),
                    elapsed_ms: report.elapsed_ms,
                    end: Some(end),
                };
                // Known already (live, the job table said it first): nothing changes.
                if self
                    .jobs
                    .get(&line.id)
                    .is_some_and(|known| known.end.is_some())
                {
                    return;
                }
                self.apply_job(&JobEvent::Ended { job: line });
            }
            _ => {}
        }
    }

    /// `/jobs`: opens the view and asks for the list.
    pub(crate) fn open_jobs(&mut self) {
        if self.layers.open_jobs(JobsView::new(self.now)) {
            self.commands.push(UserCommand::ListJobs);
        }
    }

    /// The jobs view asks again while open; true when it did.
    pub(crate) fn refresh_jobs(&mut self) -> bool {
        let now = self.now;
        let Some(view) = self.layers.jobs_mut() else {
            return false;
        };
        let asked = view.refresh(now);
        let any = !asked.is_empty();
        self.commands.extend(asked);
        any
    }

    /// `/quit`: with jobs running the first one warns (they would be stopped), the next quits.
    pub(crate) fn quit_command(&mut self) {
        let running = self.jobs.running();
        if !self.quit.quit_command(running) {
            let text = quit_warning(running, "/quit");
            self.notice(&text, NoticeLevel::Warning);
            self.flash(text);
            return;
        }
        self.commands.push(UserCommand::Shutdown);
    }

    /// The words of a first Ctrl+C (the second quits).
    pub(crate) fn ctrl_c_hint(&self) -> String {
        match self.jobs.running() {
            0 => "press Ctrl+C again to quit".into(),
            running => quit_warning(running, "Ctrl+C"),
        }
    }

    /// A new conversation: its jobs are new too.
    pub(crate) fn forget_jobs(&mut self) {
        self.jobs.clear();
        self.status.jobs_running = 0;
    }
}
