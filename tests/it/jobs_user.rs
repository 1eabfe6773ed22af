//! The user's side of background jobs over the bus, as the TUI drives it: the agent publishes
//! every start and end, lists jobs and their output at once (also mid-request), kills a job the
//! user names (its processes are gone, the model is told in its next request), and after a
//! resume tells the model which jobs a restart ended. Processes are proven dead by pid.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, JobListEvent, ReportEvent};
use std::path::Path;

use serde_json::{Value, json};

use crate::support::agent::TestAgent;
use crate::support::cairn_cmd::{alive, eventually, read_pid};
use cairn::agent::StartFrom;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, JobEnd, JobEvent, JobKiller, UserCommand};
use cairn::testing::{MockLlm, Script};

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

/// A job that writes its shell's pid to `pid`, prints `ready`, then sleeps.
fn sleeper(pid: &Path) -> String {
    format!("echo $$ > {}; echo ready; exec sleep 1000", pid.display())
}

/// The user-role texts of request `i`.
fn user_texts(llm: &MockLlm, i: usize) -> Vec<String> {
    llm.request(i)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The job notes of request `i`, in order (a note is sent in the user message it follows).
fn job_notes(llm: &MockLlm, i: usize) -> Vec<String> {
    user_texts(llm, i)
        .iter()
        .flat_map(|text| {
            text.match_indices("[cairn jobs]")
                .map(|(at, _)| text[at..].to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_the_user_kills_is_gone_and_the_model_hears_it_in_its_next_request() {
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let pid_file = data.path().join("job.pid");
    let llm = MockLlm::start(vec![
        // What models trained on other agents send for a background command.
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": sleeper(&pid_file), "run_in_background": true}),
        ),
        Script::text("the server runs"),
        Script::text("noted"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Never).await;
    agent.submit("start the server").await;
    let started = agent
        .wait_for(|e| matches!(e, AgentEvent::Job(JobEvent::Started { .. })))
        .await;
    let AgentEvent::Job(JobEvent::Started { job }) = started else {
        unreachable!()
    };
    assert_eq!((job.id.as_str(), job.running()), ("job-1", true));
    agent.wait_for(ended).await;
    eventually("the job to start", || read_pid(&pid_file).is_some()).await;
    let pid = read_pid(&pid_file).unwrap();

    agent.send(UserCommand::ListJobs).await;
    let listed = agent
        .wait_for(|e| matches!(e, AgentEvent::JobList(JobListEvent::Jobs { .. })))
        .await;
    assert!(
        matches!(&listed, AgentEvent::JobList(JobListEvent::Jobs { jobs }) if jobs.len() == 1 && jobs[0].running()),
        "{listed:?}"
    );
    // The output view reads the end of the output; the model's cursor does not move.
    let mut output = String::new();
    while !output.contains("ready") {
        agent
            .send(UserCommand::ShowJobOutput {
                job: "job-1".into(),
            })
            .await;
        if let AgentEvent::JobList(JobListEvent::JobOutput { stdout, .. }) = agent
            .wait_for(|e| matches!(e, AgentEvent::JobList(JobListEvent::JobOutput { .. })))
            .await
        {
            output = stdout;
        }
    }

    agent
        .send(UserCommand::KillJob {
            job: "job-1".into(),
        })
        .await;
    let gone = agent
        .wait_for(|e| matches!(e, AgentEvent::Job(JobEvent::Ended { .. })))
        .await;
    assert!(
        matches!(&gone, AgentEvent::Job(JobEvent::Ended { job }) if job.end == Some(JobEnd::Killed { by: JobKiller::User })),
        "{gone:?}"
    );
    eventually("the killed job's process to be gone", || !alive(pid)).await;
    // Killing it again says it ended, and how.
    agent.send(UserCommand::KillJob { job: "1".into() }).await;
    let again = agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Warning { .. })))
        .await;
    assert!(
        matches!(&again, AgentEvent::Report(ReportEvent::Warning { message }) if message.contains("job-1 already ended (killed by you)")),
        "{again:?}"
    );

    agent.submit("is it still up?").await;
    agent.wait_for(ended).await;
    let told = user_texts(&llm, 2);
    let last = told.last().unwrap();
    assert!(
        last.starts_with("is it still up?")
            && last.contains("[cairn jobs] The user stopped job-1 (`echo"),
        "the note comes after the message: {told:?}"
    );
    assert!(
        job_notes(&llm, 1).is_empty(),
        "nothing was said before the kill"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_resume_the_model_is_told_which_jobs_no_longer_run() {
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let pid_file = data.path().join("job.pid");
    let first = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": sleeper(&pid_file), "background": true}),
        ),
        Script::text("the server runs as job-1"),
    ])
    .await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &first.url(), Mode::Never).await;
    agent.submit("start the server").await;
    agent.wait_for(ended).await;
    eventually("the job to start", || read_pid(&pid_file).is_some()).await;
    let pid = read_pid(&pid_file).unwrap();
    let log = agent.log.clone();
    agent.shutdown().await;
    assert!(!alive(pid), "no job outlives its session");

    let second = MockLlm::start(vec![
        Script::tool_call("c2", "bash", json!({"command": "true", "background": true})),
        Script::text("restarted it"),
    ])
    .await;
    let mut resumed = TestAgent::spawn(
        ws.path(),
        data.path(),
        &second.url(),
        Mode::Never,
        StartFrom::Resume(log.clone()),
    )
    .await;
    // The user sees which jobs are gone; their cards are told.
    let warning = resumed
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Warning { .. })))
        .await;
    assert!(
        matches!(&warning, AgentEvent::Report(ReportEvent::Warning { message }) if message.contains("job-1 `echo") && message.contains("no longer runs")),
        "{warning:?}"
    );
    assert!(resumed.seen.iter().any(|e| matches!(
        e,
        AgentEvent::Job(JobEvent::Ended { job }) if job.id == "job-1" && job.end == Some(JobEnd::Gone)
    )));
    resumed.submit("is the server still up?").await;
    let started = resumed
        .wait_for(|e| matches!(e, AgentEvent::Job(JobEvent::Started { .. })))
        .await;
    assert!(
        matches!(&started, AgentEvent::Job(JobEvent::Started { job }) if job.id == "job-2"),
        "a new job does not take an old job's id: {started:?}"
    );
    resumed.wait_for(ended).await;
    let notes = job_notes(&second, 0);
    assert_eq!(notes.len(), 1, "one note in the first request: {notes:?}");
    assert!(
        notes[0].contains("job-1 (`echo") && notes[0].contains("no longer runs"),
        "{notes:?}"
    );
    // Told once: the next request adds no second note.
    assert_eq!(job_notes(&second, 1).len(), 1);
    resumed.shutdown().await;

    // A second resume knows the model was told, and job-2 (which ended, unread) is news.
    let third = MockLlm::start(vec![Script::text("ok")]).await;
    let mut again = TestAgent::spawn(
        ws.path(),
        data.path(),
        &third.url(),
        Mode::Never,
        StartFrom::Resume(log),
    )
    .await;
    again.submit("and now?").await;
    again.wait_for(ended).await;
    let notes = job_notes(&third, 0);
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[1].contains("job-2 (`true`)") && !notes[1].contains("job-1"),
        "{notes:?}"
    );
    again.shutdown().await;
}
