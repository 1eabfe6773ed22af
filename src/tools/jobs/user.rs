//! The user's side of the job table: the lines `/jobs` lists, the end of a job's output (read
//! without moving the model's `job_output` cursor), a kill from `/jobs`, and what the model has
//! yet to be told: jobs the user killed, and after a resume the jobs that a restart ended
//! (jobs do not survive one). The agent drains that news into a note before each step.

use std::sync::atomic::Ordering;

use super::{JobSink, JobTable};
use crate::bus::{JobEnd, JobKiller, JobLine};
use crate::process::Which;
use crate::sync::MutexExt;
use crate::tools::ToolError;

/// Bytes of each stream the output view shows: the end of it, what fits a screen or two.
pub const OUTPUT_TAIL: usize = 8 * 1024;

/// Marks every note about jobs, so a resumed session knows which jobs the model was told of.
pub const JOB_NOTE: &str = "[cairn jobs]";

/// What the model has yet to hear about the session's jobs.
#[derive(Debug, Default)]
pub struct JobNews {
    /// Killed by the user, not yet seen by the model in a `job_output` or `job_kill` report:
    /// (id, command).
    user_kills: Vec<(String, String)>,
    /// Jobs of the session from before cairn restarted, and whether the model was told.
    left_behind: Vec<JobLine>,
    left_told: bool,
}

impl JobTable {
    /// Where every job's start and end is told from now on.
    pub fn publish_to(&self, sink: JobSink) {
        *self.sink.locked() = Some(sink);
    }

    /// Every job of this run of the session, oldest first.
    pub fn lines(&self) -> Vec<JobLine> {
        self.snapshot().iter().map(|job| job.line()).collect()
    }

    /// The job and the end of both its streams, for the user's output view.
    pub fn output_tail(&self, id: &str) -> Result<(JobLine, String, String), ToolError> {
        let job = self.find(id)?;
        let tail = |which| {
            let total = job.capture.total(which);
            let from = total.saturating_sub(OUTPUT_TAIL as u64);
            let text = job.capture.view(which, from, total, OUTPUT_TAIL).text;
            from_line_start(text, from > 0)
        };
        Ok((job.line(), tail(Which::Stdout), tail(Which::Stderr)))
    }

    /// Stops a job because the user asked (from `/jobs`); the model is told in its next
    /// request unless a report of its own shows it first. A job that already ended is an
    /// error that says how it ended.
    pub async fn kill_by_user(&self, id: &str) -> Result<JobLine, ToolError> {
        let job = self.find(id)?;
        if !job.running() {
            let line = job.line();
            let how = line.end.as_ref().map_or_else(String::new, JobEnd::describe);
            return Err(ToolError::Failed(format!(
                "{} already ended ({how})",
                line.id
            )));
        }
        // Noted before it is stopped: its end is published as soon as it happened, and the
        // next request must not go out between the two without the note.
        self.news
            .locked()
            .user_kills
            .push((job.id.clone(), job.command.clone()));
        job.stop(JobKiller::User).await;
        let line = job.line();
        if line.end
            != Some(JobEnd::Killed {
                by: JobKiller::User,
            })
        {
            // It ended by itself just before: nothing of the user's to tell.
            self.heard_of(&line.id);
        }
        Ok(line)
    }

    /// A resumed session: `left` are its jobs from before the restart that the model may
    /// think still run. New jobs are numbered after `highest`, so no id means two jobs.
    pub fn continue_after_restart(&self, left: Vec<JobLine>, highest: u64) {
        self.next.fetch_max(highest, Ordering::Relaxed);
        let mut news = self.news.locked();
        news.left_behind = left
            .into_iter()
            .map(|job| JobLine {
                end: Some(JobEnd::Gone),
                ..job
            })
            .collect();
        news.left_told = false;
    }

    /// The jobs a restart ended (see `continue_after_restart`).
    pub fn left_behind(&self) -> Vec<JobLine> {
        self.news.locked().left_behind.clone()
    }

    /// The model saw in a report that the user stopped `id`: no note needed.
    pub(super) fn heard_of(&self, id: &str) {
        self.news
            .locked()
            .user_kills
            .retain(|(known, _)| known != id);
    }

    /// The note the model needs before its next request, once: which jobs the user killed
    /// and which no longer run after a restart. None when there is nothing new.
    pub fn take_news(&self) -> Option<String> {
        let mut news = self.news.locked();
        let mut said = Vec::new();
        if !news.left_told && !news.left_behind.is_empty() {
            news.left_told = true;
            let jobs: Vec<String> = news
                .left_behind
                .iter()
                .map(|job| format!("{} (`{}`)", job.id, job.command))
                .collect();
            said.push(format!(
                "cairn restarted since your last turn and background jobs do not survive a \
                 restart, so {} no longer {}: job_output and job_kill cannot reach {}; start \
                 it again if it is still needed.",
                jobs.join(", "),
                if jobs.len() == 1 { "runs" } else { "run" },
                if jobs.len() == 1 { "it" } else { "them" },
            ));
        }
        for (id, command) in std::mem::take(&mut news.user_kills) {
            said.push(format!(
                "The user stopped {id} (`{command}`) from the jobs view; it no longer runs."
            ));
        }
        (!said.is_empty()).then(|| format!("{JOB_NOTE} {}", said.join(" ")))
    }
}

/// A tail cut from the middle of a stream starts at its first whole line.
fn from_line_start(text: String, cut: bool) -> String {
    if !cut {
        return text;
    }
    match text.find('\n') {
        Some(at) if at + 1 < text.len() => text[at + 1..].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_cut_mid_line_starts_at_the_next_line() {
        assert_eq!(from_line_start("tial\nwhole\n".into(), true), "whole\n");
        assert_eq!(
            from_line_start("all\nof it\n".into(), false),
            "all\nof it\n"
        );
        assert_eq!(from_line_start("no newline".into(), true), "no newline");
    }

    #[test]
    fn the_news_names_jobs_once_in_one_marked_note() {
        let table = JobTable::default();
        assert_eq!(table.take_news(), None);
        let left = |id: &str, command: &str| JobLine {
            id: id.into(),
            command: command.into(),
            elapsed_ms: 0,
            end: None,
        };
        table.continue_after_restart(
            vec![left("job-1", "npm run dev"), left("job-3", "sleep 100")],
            3,
        );
        let note = table.take_news().unwrap_or_default();
        assert!(note.starts_with(JOB_NOTE), "{note}");
        assert!(
            note.contains("job-1 (`npm run dev`), job-3 (`sleep 100`) no longer run"),
            "{note}"
        );
        assert_eq!(table.take_news(), None, "told once");
        assert!(
            table
                .left_behind()
                .iter()
                .all(|job| job.end == Some(JobEnd::Gone))
        );
        assert_eq!(table.next.load(Ordering::Relaxed), 3);
    }
}
