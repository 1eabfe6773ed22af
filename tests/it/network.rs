//! The HTTP stack behind corporate networks, against servers started here on 127.0.0.1: a
//! private CA (refused with the fix named, then trusted through each of the three ways), a
//! CONNECT proxy with a password from `HTTPS_PROXY`, proxy failures named as the proxy's, a
//! `socks5h://` proxy, failures that are not worth retrying (asserted by attempts, not by
//! time), a server that never answers, discovery that never takes a loopback request to the
//! proxy, and streams cut before anything ran.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use cairn::llm::{HttpModel, LlmError, StreamDelta};
use cairn::models::discover::WindowProbe;
use cairn::net::{Network, NetworkFile, NetworkSettings, OneOrMany};
use cairn::testing::{MockLlm, Script};

use crate::llm_client::{chat, settings};
use crate::support::net_servers::{
    TestCa, closed_port, connect_proxy, models_server, silent_server, socks5_server, tls_front,
};

fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }
}

/// The stack from `[network]` and an environment of `pairs` only (never the process's).
fn network(file: NetworkFile, pairs: Vec<(&'static str, String)>) -> Network {
    Network::new(NetworkSettings::from_config(&file, &env_of(pairs)).unwrap()).unwrap()
}

fn retries(deltas: &[StreamDelta]) -> usize {
    deltas
        .iter()
        .filter(|d| matches!(d, StreamDelta::Retrying { .. }))
        .count()
}

fn model_at(base_url: String, network: &Network) -> HttpModel {
    HttpModel::with_network(settings(base_url), network).unwrap()
}

fn mock_addr(llm: &MockLlm) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], llm.port()))
}

/// The mock behind TLS with a certificate for `localhost` signed by a fresh test CA.
async fn tls_mock(ca: &TestCa, scripts: Vec<Script>) -> (MockLlm, String) {
    let llm = MockLlm::start(scripts).await;
    let front = tls_front(ca.server_config(&["localhost"]), mock_addr(&llm)).await;
    let url = format!("https://localhost:{}/v1", front.port());
    (llm, url)
}

fn write_ca(dir: &std::path::Path, ca: &TestCa, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, &ca.pem).unwrap();
    path
}

#[tokio::test]
async fn a_private_ca_is_refused_by_default_naming_host_issuer_and_the_fix_without_retrying() {
    let ca = TestCa::new("Corp Inspection CA");
    let (llm, url) = tls_mock(&ca, vec![Script::text("never")]).await;
    let model = model_at(url, &network(NetworkFile::default(), vec![]));
    let (result, deltas) = chat(&model).await;
    let message = match result {
        Err(LlmError::Connection(message)) => message,
        other => panic!("{other:?}"),
    };
    let summary = message.lines().next().unwrap();
    for needle in [
        "localhost",
        "CN=Corp Inspection CA",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "ca_file",
    ] {
        assert!(summary.contains(needle), "{needle}: {message}");
    }
    assert_eq!(retries(&deltas), 0, "a certificate does not get better");
    assert_eq!(llm.requests().len(), 0);
}

#[tokio::test]
async fn a_private_ca_is_trusted_through_ssl_cert_file_ca_file_and_a_cert_dir() {
    let ca = TestCa::new("Corp Gateway CA");
    let dir = tempfile::tempdir().unwrap();
    let file = write_ca(dir.path(), &ca, "corp-ca.pem");
    let plain_dir = dir.path().join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    write_ca(&plain_dir, &ca, "corp.crt");
    // OpenSSL's layout: hashed names linking to the certificate files.
    let hashed_dir = dir.path().join("hashed");
    std::fs::create_dir(&hashed_dir).unwrap();
    std::os::unix::fs::symlink(&file, hashed_dir.join("3f2a9c1d.0")).unwrap();
    let ways = [
        (
            "SSL_CERT_FILE",
            network(
                NetworkFile::default(),
                vec![("SSL_CERT_FILE", file.display().to_string())],
            ),
        ),
        (
            "[network] ca_file",
            network(
                NetworkFile {
                    ca_file: Some(OneOrMany::Many(vec![file.clone()])),
                    ..NetworkFile::default()
                },
                vec![],
            ),
        ),
        (
            "SSL_CERT_DIR plain",
            network(
                NetworkFile::default(),
                vec![("SSL_CERT_DIR", plain_dir.display().to_string())],
            ),
        ),
        (
            "SSL_CERT_DIR hashed, in a list",
            network(
                NetworkFile::default(),
                vec![(
                    "SSL_CERT_DIR",
                    format!(
                        "{}:{}",
                        dir.path().join("missing").display(),
                        hashed_dir.display()
                    ),
                )],
            ),
        ),
    ];
    for (way, network) in ways {
        let (_llm, url) = tls_mock(&ca, vec![Script::text("trusted")]).await;
        let (result, _) = chat(&model_at(url, &network)).await;
        assert_eq!(result.unwrap().text, "trusted", "{way}");
    }
}

/// `https://api.corp.test` through a proxy: the name exists nowhere but in the proxy, which
/// tunnels to the mock behind TLS with a certificate for that name.
async fn behind_proxy(
    auth: Option<(&str, &str)>,
) -> (MockLlm, crate::support::net_servers::Proxy, TestCa) {
    let ca = TestCa::new("Corp Proxy CA");
    let llm = MockLlm::start([Script::text("through the proxy")]).await;
    let front = tls_front(ca.server_config(&["api.corp.test"]), mock_addr(&llm)).await;
    let proxy = connect_proxy(auth, front).await;
    (llm, proxy, ca)
}

fn ca_file_of(ca: &TestCa, dir: &std::path::Path) -> NetworkFile {
    NetworkFile {
        ca_file: Some(OneOrMany::One(write_ca(dir, ca, "proxy-ca.pem"))),
        ..NetworkFile::default()
    }
}

#[tokio::test]
async fn a_connect_proxy_with_a_password_in_https_proxy_carries_the_request() {
    let (llm, proxy, ca) = behind_proxy(Some(("alice", "pr0xy-s3cret-pw"))).await;
    let dir = tempfile::tempdir().unwrap();
    let network = network(
        ca_file_of(&ca, dir.path()),
        vec![(
            "HTTPS_PROXY",
            format!("http://alice:pr0xy-s3cret-pw@{}", proxy.addr),
        )],
    );
    assert!(!format!("{network:?}").contains("s3cret"));
    let (result, _) = chat(&model_at("https://api.corp.test/v1".into(), &network)).await;
    assert_eq!(result.unwrap().text, "through the proxy");
    let log = proxy.log();
    assert_eq!(log.targets, vec!["api.corp.test:443"]);
    assert_eq!(log.credentials, vec!["alice:pr0xy-s3cret-pw"]);
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn a_proxy_asking_for_credentials_is_named_as_the_proxy_with_a_hint_and_not_retried() {
    let (llm, proxy, ca) = behind_proxy(Some(("alice", "right-password"))).await;
    let dir = tempfile::tempdir().unwrap();
    for (url, hint) in [
        (format!("http://{}", proxy.addr), "asks for credentials"),
        (
            format!("http://alice:wrong-password@{}", proxy.addr),
            "refused the credentials",
        ),
    ] {
        let network = network(ca_file_of(&ca, dir.path()), vec![("HTTPS_PROXY", url)]);
        let (result, deltas) = chat(&model_at("https://api.corp.test/v1".into(), &network)).await;
        let message = match result {
            Err(LlmError::Connection(message)) => message,
            other => panic!("{other:?}"),
        };
        let at = format!("the proxy at {} (from HTTPS_PROXY)", proxy.addr);
        assert!(message.contains(&at) && message.contains(hint), "{message}");
        assert!(message.contains("407"), "{message}");
        assert!(!message.contains("the provider"), "{message}");
        assert!(!message.contains("wrong-password"), "{message}");
        assert_eq!(retries(&deltas), 0);
    }
    assert_eq!(llm.requests().len(), 0);
}

#[tokio::test]
async fn a_refused_proxy_is_named_as_the_proxy_and_retried_once_at_most() {
    let port = closed_port();
    let network = network(
        NetworkFile::default(),
        vec![(
            "HTTPS_PROXY",
            format!("http://u:pw-never-shown@127.0.0.1:{port}"),
        )],
    );
    let (result, deltas) = chat(&model_at("https://api.corp.test/v1".into(), &network)).await;
    let message = match result {
        Err(LlmError::Connection(message)) => message,
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains(&format!("the proxy at 127.0.0.1:{port}")) && message.contains("refused"),
        "{message}"
    );
    assert!(
        !message.contains("the provider") && !message.contains("pw-never-shown"),
        "{message}"
    );
    assert!(
        !message.contains("--base-url"),
        "the URL is not what is wrong: {message}"
    );
    assert!(retries(&deltas) <= 1, "{deltas:?}");
}

#[tokio::test]
async fn a_socks5h_proxy_carries_a_request_for_a_name_only_it_knows() {
    let llm = MockLlm::start([Script::text("over socks")]).await;
    let socks = socks5_server(mock_addr(&llm)).await;
    let network = network(
        NetworkFile::default(),
        vec![("ALL_PROXY", format!("socks5h://{}", socks.addr))],
    );
    let (result, _) = chat(&model_at("http://model.internal.test/v1".into(), &network)).await;
    assert_eq!(result.unwrap().text, "over socks");
    assert_eq!(socks.log().targets, vec!["model.internal.test:80"]);
}

#[tokio::test]
async fn the_configured_proxy_wins_over_the_environment() {
    let llm = MockLlm::start([Script::text("via config")]).await;
    let socks = socks5_server(mock_addr(&llm)).await;
    let network = network(
        NetworkFile {
            proxy: Some(format!("socks5h://{}", socks.addr)),
            ..NetworkFile::default()
        },
        vec![("HTTP_PROXY", format!("http://127.0.0.1:{}", closed_port()))],
    );
    let (result, _) = chat(&model_at("http://model.internal.test/v1".into(), &network)).await;
    assert_eq!(result.unwrap().text, "via config");
}

#[test]
fn a_malformed_proxy_stops_the_start_naming_the_variable() {
    let err = NetworkSettings::from_config(
        &NetworkFile::default(),
        &env_of(vec![("HTTPS_PROXY", "htp:/proxy corp:3128".into())]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("HTTPS_PROXY") && err.contains("not a valid proxy URL"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_fails_by_the_first_byte_timeout() {
    let (addr, connections) = silent_server().await;
    let network = Network::new(NetworkSettings {
        local_first_byte_timeout: Some(Duration::from_millis(300)),
        ..NetworkSettings::default()
    })
    .unwrap();
    let model = model_at(format!("http://{addr}/v1"), &network);
    let (result, deltas) = chat(&model).await;
    let message = match result {
        Err(LlmError::Connection(message)) => message,
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains("sent nothing within 0.3s") && message.contains("first_byte_timeout_secs"),
        "{message}"
    );
    // One more try (the request may have been lost), not `max_retries` of them.
    assert_eq!(retries(&deltas), 1);
    assert_eq!(*connections.lock().unwrap(), 2);
}

#[tokio::test]
async fn a_name_that_does_not_exist_is_not_retried() {
    // `.invalid` never resolves (RFC 6761).
    let network = network(NetworkFile::default(), vec![]);
    let (result, deltas) = chat(&model_at("http://no-such-host.invalid/v1".into(), &network)).await;
    let message = match result {
        Err(LlmError::Connection(message)) => message,
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains("no-such-host.invalid") && message.contains("--base-url"),
        "{message}"
    );
    assert_eq!(retries(&deltas), 0, "{message}");
}

#[tokio::test]
async fn discovery_of_a_loopback_server_bypasses_the_proxy_variables() {
    let (models, asked) = models_server("local-model", 32_768).await;
    let proxy = connect_proxy(None, models).await;
    let proxy_url = format!("http://{}", proxy.addr);
    let network = network(
        NetworkFile::default(),
        vec![
            ("HTTP_PROXY", proxy_url.clone()),
            ("HTTPS_PROXY", proxy_url.clone()),
            ("ALL_PROXY", proxy_url),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let probe = WindowProbe {
        provider: "custom".into(),
        base_url: format!("http://{models}/v1"),
        api_key: None,
        model: "local-model".into(),
        cache: dir.path().join("models.json"),
        timeout: Duration::from_secs(5),
        http: Some(network.client()),
    };
    assert_eq!(probe.window().await, Some(32_768));
    assert_eq!(*asked.lock().unwrap(), 1);
    assert_eq!(proxy.log().connections, 0, "{:?}", proxy.log());
}

/// An SSE body: the role chunk, a tool call whose arguments stop half way, then `tail`.
fn partial_tool_call_then(tail: &str) -> Vec<u8> {
    let chunk = |delta: serde_json::Value| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
        )
    };
    let mut body = chunk(serde_json::json!({"role": "assistant"}));
    body.push_str(&chunk(serde_json::json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"rm -"}}]})));
    body.push_str(tail);
    body.into_bytes()
}

#[tokio::test]
async fn an_error_frame_after_a_partial_tool_call_is_retried_once() {
    let llm = MockLlm::start([
        Script::raw(partial_tool_call_then(
            "data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":503}}\n\n",
        )),
        Script::text("recovered"),
    ])
    .await;
    let model = model_at(llm.url(), &network(NetworkFile::default(), vec![]));
    let (result, deltas) = chat(&model).await;
    let completion = result.unwrap();
    assert_eq!(completion.text, "recovered");
    assert!(
        completion.tool_calls.is_empty(),
        "the half call is never returned"
    );
    assert_eq!(retries(&deltas), 1);
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_in_a_tool_call_before_anything_ran_is_retried_once() {
    let llm = MockLlm::start([
        Script::raw(partial_tool_call_then("")),
        Script::text("second answer"),
    ])
    .await;
    let model = model_at(llm.url(), &network(NetworkFile::default(), vec![]));
    let (result, deltas) = chat(&model).await;
    assert_eq!(result.unwrap().text, "second answer");
    assert_eq!(retries(&deltas), 1);
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_proxy_that_already_retried_is_not_retried_again() {
    let llm = MockLlm::start([
        Script::status(500, r#"{"error":{"message":"upstream failed"}}"#)
            .header("x-litellm-attempted-retries", "2")
            .header("x-litellm-max-retries", "2"),
        Script::text("never"),
    ])
    .await;
    let model = model_at(llm.url(), &network(NetworkFile::default(), vec![]));
    let (result, deltas) = chat(&model).await;
    match result {
        Err(LlmError::Status {
            status: 500,
            message,
        }) => {
            assert!(message.contains("already retried 2"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(retries(&deltas), 0);
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn a_401_names_the_provider_and_the_key_variable() {
    let llm = MockLlm::start([Script::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    )])
    .await;
    let model = HttpModel::with_network(
        cairn::llm::ProviderSettings {
            provider: "openai".into(),
            api_key: Some("sk-wrong-0123456789".into()),
            ..settings(llm.url())
        },
        &network(NetworkFile::default(), vec![]),
    )
    .unwrap()
    .with_key_env(Some("OPENAI_API_KEY".into()));
    let (result, deltas) = chat(&model).await;
    let text = result.unwrap_err().to_string();
    assert!(
        text.contains("openai")
            && text.contains("OPENAI_API_KEY")
            && text.contains("Incorrect API key"),
        "{text}"
    );
    assert!(!text.contains("sk-wrong"), "{text}");
    assert_eq!(retries(&deltas), 0);
}

#[tokio::test]
async fn check_endpoint_reports_a_wrong_base_url_at_once_and_accepts_a_live_one() {
    let llm = MockLlm::start([]).await;
    let network = network(NetworkFile::default(), vec![]);
    assert!(
        model_at(llm.url(), &network)
            .check_endpoint(Duration::from_secs(3))
            .await
            .is_ok()
    );
    let wrong = format!("http://127.0.0.1:{}/v1", closed_port());
    let err = model_at(wrong.clone(), &network)
        .check_endpoint(Duration::from_secs(3))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&wrong) && err.contains("--base-url"), "{err}");
}
