//! The session's background jobs as the TUI knows them, from the agent's job events and its
//! answers to `/jobs`: the status line's `⚙ 2 jobs`, the `/jobs` view, the cards of commands
//! that went on as jobs and the warning when quitting would stop running jobs read this.
//! `job_events.rs` folds the events into the `App`.

use std::collections::BTreeMap;

use std::collections::HashMap;

use crate::bus::{CallId, JobEvent, JobLine};

/// Every job the TUI heard of since the conversation started, by number, and the call
/// whose card each one belongs to.
#[derive(Debug, Default)]
pub struct JobList {
    lines: BTreeMap<(u64, String), JobLine>,
    cards: HashMap<String, CallId>,
}

impl JobList {
    /// A job started or ended.
    pub fn apply(&mut self, event: &JobEvent) {
        self.upsert(event.job().clone());
    }

    /// The agent's list: what it says replaces what we knew of those jobs; jobs it no longer
    /// has (those a restart ended) stay as they were.
    pub fn merge(&mut self, lines: &[JobLine]) {
        for line in lines {
            self.upsert(line.clone());
        }
    }

    fn upsert(&mut self, line: JobLine) {
        // An end is final: a late list taken while it still ran does not bring it back.
        if let Some(known) = self.lines.get(&order(&line.id))
            && known.end.is_some()
            && line.end.is_none()
        {
            return;
        }
        self.lines.insert(order(&line.id), line);
    }

    pub fn clear(&mut self) {
        self.lines.clear();
        self.cards.clear();
    }

    /// The command of call `call` went on as job `job`: its card shows the job's state.
    pub fn link_card(&mut self, job: &str, call: &CallId) {
        self.cards.insert(job.to_string(), call.clone());
    }

    /// The call whose card shows job `job`.
    pub fn card_of(&self, job: &str) -> Option<&CallId> {
        self.cards.get(job)
    }

    pub fn get(&self, id: &str) -> Option<&JobLine> {
        self.lines.get(&order(id))
    }

    /// Oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &JobLine> {
        self.lines.values()
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn running(&self) -> usize {
        self.lines.values().filter(|job| job.running()).count()
    }
}

/// `job-10` after `job-9`.
fn order(id: &str) -> (u64, String) {
    let number = id
        .strip_prefix("job-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    (number, id.to_string())
}

/// `⚙ 1 job`, `⚙ 3 jobs`: the status line while any runs.
pub fn indicator(running: usize) -> Option<String> {
    match running {
        0 => None,
        1 => Some("⚙ 1 job".into()),
        n => Some(format!("⚙ {n} jobs")),
    }
}

/// The warning of a first quit key while jobs run; `again` names the key that quits.
pub fn quit_warning(running: usize, again: &str) -> String {
    let jobs = if running == 1 {
        "1 job still running: it will be stopped".to_string()
    } else {
        format!("{running} jobs still running: they will be stopped")
    };
    format!("{jobs}; {again} again to quit")
}

/// `3s`, `2m 05s`, `1h 04m`: a job's age.
pub fn age(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{JobEnd, JobKiller};

    fn line(id: &str, end: Option<JobEnd>) -> JobLine {
        JobLine {
            id: id.into(),
            command: "sleep 9".into(),
            elapsed_ms: 1000,
            end,
        }
    }

    #[test]
    fn the_list_follows_the_events_in_number_order_and_an_end_is_final() {
        let mut jobs = JobList::default();
        for id in ["job-10", "job-9", "job-1"] {
            jobs.apply(&JobEvent::Started {
                job: line(id, None),
            });
        }
        let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["job-1", "job-9", "job-10"]);
        assert_eq!(jobs.running(), 3);
        let killed = Some(JobEnd::Killed {
            by: JobKiller::User,
        });
        jobs.apply(&JobEvent::Ended {
            job: line("job-9", killed.clone()),
        });
        assert_eq!(jobs.running(), 2);
        // A list taken before the kill arrives late: job-9 stays ended.
        jobs.merge(&[line("job-9", None), line("job-11", None)]);
        assert_eq!(jobs.get("job-9").map(|j| j.end.clone()), Some(killed));
        assert_eq!((jobs.running(), jobs.len()), (3, 4));
        jobs.clear();
        assert!(jobs.is_empty());
    }

    #[test]
    fn the_words_for_counts_and_ages() {
        assert_eq!(indicator(0), None);
        assert_eq!(indicator(1).as_deref(), Some("⚙ 1 job"));
        assert_eq!(indicator(2).as_deref(), Some("⚙ 2 jobs"));
        assert_eq!(
            quit_warning(2, "Ctrl+C"),
            "2 jobs still running: they will be stopped; Ctrl+C again to quit"
        );
        assert_eq!(
            quit_warning(1, "/quit"),
            "1 job still running: it will be stopped; /quit again to quit"
        );
        assert_eq!(age(4_200), "4s");
        assert_eq!(age(125_000), "2m 05s");
        assert_eq!(age(3_840_000), "1h 04m");
    }
}
