//! Background jobs as the user sees them: the lifecycle events the agent publishes (a job
//! started, a job ended and how), the lines `/jobs` lists and the words both ends use for an
//! ending. The job table (`tools::jobs`) produces them; the TUI's indicator, `/jobs` view and
//! the bash cards of promoted commands consume them.

use serde::{Deserialize, Serialize};

/// Who stopped a job that did not end by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKiller {
    /// The model, with `job_kill`.
    Model,
    /// The user, from `/jobs`.
    User,
    /// The session ended (quit, `/new`, a switch to another session).
    SessionEnd,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum JobEnd {
    /// Its command ended by itself: an exit status, or a signal nobody in cairn sent.
    Exited {
        exit_code: Option<i32>,
        signal: Option<String>,
    },
    /// Stopped on purpose.
    Killed { by: JobKiller },
    /// A job of this session from before cairn restarted: jobs do not survive a restart.
    Gone,
}

impl JobEnd {
    /// Short words for a card or a list: `exit 0`, `exit code 2`, `killed by you`.
    pub fn describe(&self) -> String {
        match self {
            JobEnd::Exited {
                signal: Some(signal),
                ..
            } => format!("killed by {signal}"),
            JobEnd::Exited {
                exit_code: Some(0), ..
            } => "exit 0".into(),
            JobEnd::Exited {
                exit_code: Some(code),
                ..
            } => format!("exit code {code}"),
            JobEnd::Exited { .. } => "ended".into(),
            JobEnd::Killed {
                by: JobKiller::Model,
            } => "stopped by the model".into(),
            JobEnd::Killed {
                by: JobKiller::User,
            } => "killed by you".into(),
            JobEnd::Killed {
                by: JobKiller::SessionEnd,
            } => "stopped with the session".into(),
            JobEnd::Gone => "no longer runs (cairn restarted)".into(),
        }
    }

    /// It ended badly by itself (not stopped on purpose): a non-zero exit or a signal.
    pub fn failed(&self) -> bool {
        match self {
            JobEnd::Exited {
                signal: Some(_), ..
            } => true,
            JobEnd::Exited { exit_code, .. } => exit_code.is_some_and(|code| code != 0),
            JobEnd::Killed { .. } | JobEnd::Gone => false,
        }
    }
}

/// One job of the session: what `/jobs` lists and what the lifecycle events carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLine {
    /// `job-1`, `job-2`, …: the id the model names it by.
    pub id: String,
    pub command: String,
    /// Milliseconds since it started (until it ended, for an ended job).
    pub elapsed_ms: u64,
    /// None while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<JobEnd>,
}

impl JobLine {
    pub fn running(&self) -> bool {
        self.end.is_none()
    }
}

/// A job's lifecycle. Tagged `event`, like `ToolEvent`, because it travels inside
/// `AgentEvent::Job`, whose own `type` tag shares the object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum JobEvent {
    /// A job started: `bash` with `background: true`, or a command that outlived its timeout.
    Started { job: JobLine },
    /// It ended; `job.end` says how.
    Ended { job: JobLine },
}

impl JobEvent {
    pub fn job(&self) -> &JobLine {
        match self {
            JobEvent::Started { job } | JobEvent::Ended { job } => job,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_read_naturally_and_only_real_failures_fail() {
        let exited = |code, signal: Option<&str>| JobEnd::Exited {
            exit_code: code,
            signal: signal.map(str::to_string),
        };
        let cases = [
            (exited(Some(0), None), "exit 0", false),
            (exited(Some(2), None), "exit code 2", true),
            (exited(Some(-1), None), "exit code -1", true),
            (exited(None, Some("SIGSEGV")), "killed by SIGSEGV", true),
            (exited(None, None), "ended", false),
            (
                JobEnd::Killed {
                    by: JobKiller::User,
                },
                "killed by you",
                false,
            ),
            (
                JobEnd::Killed {
                    by: JobKiller::Model,
                },
                "stopped by the model",
                false,
            ),
            (
                JobEnd::Killed {
                    by: JobKiller::SessionEnd,
                },
                "stopped with the session",
                false,
            ),
            (JobEnd::Gone, "no longer runs (cairn restarted)", false),
        ];
        for (end, words, failed) in cases {
            assert_eq!((end.describe().as_str(), end.failed()), (words, failed));
        }
    }

    #[test]
    fn a_job_event_is_one_json_object_with_its_own_tag() {
        let event = JobEvent::Ended {
            job: JobLine {
                id: "job-1".into(),
                command: "sleep 9".into(),
                elapsed_ms: 5,
                end: Some(JobEnd::Killed {
                    by: JobKiller::User,
                }),
            },
        };
        let text = serde_json::to_string(&event).unwrap_or_default();
        assert!(text.starts_with(r#"{"event":"ended""#), "{text}");
        let back: JobEvent = serde_json::from_str(&text).expect("round trip");
        assert_eq!(back, event);
    }
}

/// Answers to the user's questions about the background jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JobListEvent {
    /// Answer to `UserCommand::ListJobs`: the jobs of this run of the session, oldest first.
    Jobs { jobs: Vec<JobLine> },
    /// Answer to `UserCommand::ShowJobOutput`: the last of each stream, cleaned for a
    /// terminal like the model's view.
    JobOutput {
        job: JobLine,
        stdout: String,
        stderr: String,
    },
}
