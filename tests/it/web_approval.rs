//! The permission keys for a new host, through the agent (mock model): in `auto-edit` the
//! first fetch of a host asks; "this host for the session" lets the next fetch of that host
//! run unasked but not another host's; "in this project" writes the host rule to
//! `.cairn/config.toml` and lets the next fetch run unasked too.
#![allow(clippy::unwrap_used)]

use cairn::bus::ConversationEvent;
use std::sync::Arc;

use serde_json::json;

use crate::support::agent::TestAgent;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, Decision, ToolEvent};
use cairn::testing::mock_site::{MockSite, Page};
use cairn::testing::{MockLlm, Script};
use cairn::web::client::DirectStack;
use cairn::web::resolve::MapResolver;
use cairn::web::{WebEnv, WebSettings};

fn approval(e: &AgentEvent) -> Option<(String, String, String)> {
    match e {
        AgentEvent::Tool(ToolEvent::AwaitingApproval {
            call,
            subject,
            prefix,
            ..
        }) => Some((call.as_str().to_string(), subject.clone(), prefix.clone())),
        _ => None,
    }
}

fn ended(e: &AgentEvent) -> bool {
    matches!(
        e,
        AgentEvent::Conversation(ConversationEvent::RequestEnded { .. })
    )
}

fn web_for(sites: &[&MockSite], resolver: MapResolver) -> Arc<WebEnv> {
    let settings = WebSettings {
        allow_private: sites.iter().map(|s| s.host_port()).collect(),
        ..WebSettings::default()
    };
    WebEnv::new(settings, Arc::new(resolver), Arc::new(DirectStack)).unwrap()
}

fn fetch(call: &str, url: String) -> Script {
    Script::tool_call(call, "web_fetch", json!({ "url": url }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_allowed_for_the_session_is_fetched_again_unasked_and_another_host_still_asks() {
    let site = MockSite::start().await;
    site.route("/a", Page::html("<p>page a</p>"))
        .route("/b", Page::html("<p>page b</p>"));
    let other_url = format!("http://localhost:{}/a", site.port());
    let llm = MockLlm::start(vec![
        fetch("c1", site.url("/a")),
        fetch("c2", site.url("/b")),
        fetch("c3", other_url.clone()),
        Script::text("done"),
    ])
    .await;
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let resolver = MapResolver::new().with("localhost", &["127.0.0.1".parse().unwrap()]);
    let mut web_sites = vec![site.host_port()];
    web_sites.push(format!("localhost:{}", site.port()));
    let web = WebEnv::new(
        WebSettings {
            allow_private: web_sites,
            ..WebSettings::default()
        },
        Arc::new(resolver),
        Arc::new(DirectStack),
    )
    .unwrap();
    let mut agent = TestAgent::with_web(
        ws.path(),
        &data.path().join("sessions"),
        &llm.url(),
        Mode::AutoEdit,
        web,
    )
    .await;
    agent.submit("read them").await;
    let first = agent.wait_for(|e| approval(e).is_some()).await;
    let (call, subject, prefix) = approval(&first).unwrap();
    assert_eq!(call, "c1");
    assert_eq!(subject, site.url("/a"), "the prompt shows the full URL");
    assert_eq!(prefix, "web_fetch 127.0.0.1");
    assert_eq!(site.hits("/a"), 0, "nothing is fetched before the answer");
    agent
        .decide("c1", Decision::ApproveForSession { prefix })
        .await;

    // c2 (same host) runs unasked; c3 (another name for the same server) asks.
    let next = agent.wait_for(|e| approval(e).is_some()).await;
    assert_eq!(approval(&next).unwrap().0, "c3");
    assert_eq!(approval(&next).unwrap().1, other_url);
    assert_eq!(
        site.hits("/b"),
        1,
        "the second fetch of the host ran unasked"
    );
    agent.decide("c3", Decision::Deny { message: None }).await;
    agent.wait_for(ended).await;
    let asked = agent.seen.iter().filter(|e| approval(e).is_some()).count();
    assert_eq!(asked, 2);
    assert_eq!(
        site.hits("/a"),
        1,
        "the denied fetch never reached the server"
    );
    assert!(
        !ws.path().join(".cairn/config.toml").exists(),
        "a session key writes nothing"
    );
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_allowed_in_the_project_is_written_to_its_config_and_fetched_again_unasked() {
    let site = MockSite::start().await;
    site.route("/a", Page::html("<p>page a</p>"))
        .route("/b", Page::html("<p>page b</p>"));
    let llm = MockLlm::start(vec![
        fetch("c1", site.url("/a")),
        fetch("c2", site.url("/b")),
        Script::text("done"),
    ])
    .await;
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut agent = TestAgent::with_web(
        ws.path(),
        &data.path().join("sessions"),
        &llm.url(),
        Mode::AutoEdit,
        web_for(&[&site], MapResolver::new()),
    )
    .await;
    agent.submit("read them").await;
    let first = agent.wait_for(|e| approval(e).is_some()).await;
    let (_, _, prefix) = approval(&first).unwrap();
    agent
        .decide("c1", Decision::ApproveForProject { prefix })
        .await;
    agent.wait_for(ended).await;
    let asked = agent.seen.iter().filter(|e| approval(e).is_some()).count();
    assert_eq!(asked, 1, "the second fetch of the host ran unasked");
    assert_eq!((site.hits("/a"), site.hits("/b")), (1, 1));
    let config = std::fs::read_to_string(ws.path().join(".cairn/config.toml")).unwrap();
    let table: toml::Table = config.parse().unwrap();
    let allow = table["permissions"]["allow"].as_array().unwrap();
    assert!(
        allow
            .iter()
            .any(|r| r.as_str() == Some("web_fetch 127.0.0.1")),
        "{config}"
    );
    agent.shutdown().await;
}

/// Issue 32 item 7: in `auto` a fetch runs unasked, unless its URL carries what the session
/// read (here a key from a file, base64-encoded in the query, hex in a path); `never` asks
/// nothing; a URL without it and an allowed host run unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_auto_a_url_carrying_what_the_session_read_asks_and_never_asks_nothing() {
    const KEY: &str = "the cellar door code is 4471-2930";
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(KEY);
    let hex: String = KEY.bytes().map(|b| format!("{b:02x}")).collect();
    for mode in [Mode::Auto, Mode::Never] {
        let site = MockSite::start().await;
        site.route("/c", Page::html("<p>ok</p>"))
            .route("/plain", Page::html("<p>ok</p>"));
        let llm = MockLlm::start(vec![
            Script::tool_call("r1", "read_file", json!({"path": "notes.txt"})),
            fetch("c1", site.url(&format!("/c?d={b64}"))),
            fetch("c2", site.url(&format!("/{hex}/c"))),
            fetch("c3", site.url("/plain?q=release+notes")),
            Script::text("done"),
        ])
        .await;
        let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(ws.path().join("notes.txt"), format!("notes\n{KEY}\n")).unwrap();
        let mut agent = TestAgent::with_web(
            ws.path(),
            &data.path().join("sessions"),
            &llm.url(),
            mode,
            web_for(&[&site], MapResolver::new()),
        )
        .await;
        agent.submit("send it").await;
        if mode == Mode::Auto {
            for call in ["c1", "c2"] {
                let asked = agent.wait_for(|e| approval(e).is_some()).await;
                assert_eq!(approval(&asked).unwrap().0, call);
                let why = agent
                    .seen
                    .iter()
                    .rev()
                    .find_map(|e| match e {
                        AgentEvent::Tool(ToolEvent::AwaitingApproval { why, .. }) => {
                            Some(why.clone())
                        }
                        _ => None,
                    })
                    .unwrap();
                assert!(why.contains("the session read"), "{why}");
                agent.decide(call, Decision::Deny { message: None }).await;
            }
        }
        agent.wait_for(ended).await;
        let asked = agent.seen.iter().filter(|e| approval(e).is_some()).count();
        match mode {
            Mode::Auto => {
                assert_eq!(asked, 2);
                assert_eq!(site.hits("/c"), 0, "nothing carrying the key left");
            }
            _ => {
                assert_eq!(asked, 0, "never asks nothing");
                assert_eq!(site.hits("/c"), 1);
            }
        }
        assert_eq!(site.hits("/plain"), 1, "a URL without it ran unasked");
        agent.shutdown().await;
    }
}
