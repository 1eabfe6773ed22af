//! The `/model` picker's list: the agent asks the provider's `/models` in the background
//! (answered also while a request runs), puts the configured model first, and says why when
//! there is no list. A switch is in the session log, so a resume (and a replay) shows it.
#![allow(clippy::unwrap_used)]

use cairn::bus::{ConversationEvent, ReportEvent};
use std::time::Duration;

use cairn::agent::StartFrom;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, UserCommand};
use cairn::testing::{MockLlm, Script};

use crate::support::agent::TestAgent;

fn models_of(event: &AgentEvent) -> (Vec<String>, String, Option<String>) {
    match event {
        AgentEvent::Report(ReportEvent::Models {
            models,
            configured,
            unavailable,
        }) => (models.clone(), configured.clone(), unavailable.clone()),
        other => panic!("not a model list: {other:?}"),
    }
}

fn is_models(event: &AgentEvent) -> bool {
    matches!(event, AgentEvent::Report(ReportEvent::Models { .. }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_is_the_providers_with_the_configured_model_first_even_mid_request() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // A reply that never ends by itself: the listing must not wait for it.
    let llm = MockLlm::start(vec![Script::keep_alive_only(Duration::from_millis(50))]).await;
    llm.serve_models(&["gpt-x", "mock-model", "cfg-model", "gpt-x"]);
    let mut agent = TestAgent::adjusted(ws.path(), data.path(), &llm.url(), Mode::Ask, |s| {
        s.context.configured_model = "cfg-model".into();
    })
    .await;
    agent.submit("hello").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::StepStarted { .. })
            )
        })
        .await;
    llm.wait_for_requests(1, Duration::from_secs(10)).await;
    agent.send(UserCommand::ListModels).await;
    let event = agent
        .wait_for(|e| {
            is_models(e)
                || matches!(
                    e,
                    AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
                )
        })
        .await;
    let (models, configured, unavailable) = models_of(&event);
    assert_eq!(models, ["cfg-model", "mock-model", "gpt-x"]);
    assert_eq!(configured, "cfg-model");
    assert_eq!(unavailable, None);
    agent.send(UserCommand::Interrupt).await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_listing_says_the_status_and_the_url_and_offers_the_current_model() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![]).await;
    llm.refuse_models(404);
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.send(UserCommand::ListModels).await;
    let (models, _, unavailable) = models_of(&agent.wait_for(is_models).await);
    assert_eq!(models, ["mock-model"]);
    let why = unavailable.unwrap();
    assert!(why.contains("answered 404"), "{why}");
    assert!(why.contains(&format!("{}/models", llm.url())), "{why}");
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_not_there_is_said_at_once() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &url, Mode::Ask).await;
    let asked = std::time::Instant::now();
    agent.send(UserCommand::ListModels).await;
    let (models, _, unavailable) = models_of(&agent.wait_for(is_models).await);
    assert!(asked.elapsed() < cairn::llm::listing::LIST_TIMEOUT);
    assert_eq!(models, ["mock-model"]);
    let why = unavailable.unwrap();
    assert!(
        why.contains("could not reach") && why.contains(&url),
        "{why}"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_and_a_mode_switch_are_logged_and_a_resume_shows_them_in_order() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let llm = MockLlm::start(vec![Script::text("one"), Script::text("two")]).await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.submit("first").await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Conversation(ConversationEvent::Idle)))
        .await;
    agent
        .send(UserCommand::SetModel {
            model: "other-model".into(),
        })
        .await;
    agent.send(UserCommand::SetMode { mode: Mode::Plan }).await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Report(ReportEvent::ModeChanged { mode: Mode::Plan })
            )
        })
        .await;
    agent.submit("second").await;
    agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
            )
        })
        .await;
    assert_eq!(llm.request(1)["model"], "other-model", "the switch applies");
    let log = agent.log.clone();
    agent.shutdown().await;

    let mut resumed = TestAgent::spawn(
        ws.path(),
        data.path(),
        &llm.url(),
        Mode::Ask,
        StartFrom::Resume(log),
    )
    .await;
    resumed
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::Skills { .. })))
        .await;
    let history: Vec<String> = resumed
        .seen
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Conversation(ConversationEvent::UserMessage { text, .. }) => {
                Some(format!("user {text}"))
            }
            AgentEvent::Report(ReportEvent::ModelChanged { model }) => {
                Some(format!("model {model}"))
            }
            AgentEvent::Report(ReportEvent::ModeChanged { mode }) => Some(format!("mode {mode}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        history,
        [
            "mode ask",
            "user first",
            "model other-model",
            "mode plan",
            "user second"
        ],
        "the session's first mode, then each switch where it happened"
    );
    resumed.shutdown().await;
}
