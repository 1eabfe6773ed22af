#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn error_body_messages() {
    let cases = [
        (
            r#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#,
            400,
            "Invalid model",
        ),
        (
            r#"{"error":{"message":"Insufficient Balance"}}"#,
            402,
            "Insufficient Balance",
        ),
        (r#"{"detail":"Not Found"}"#, 404, "Not Found"),
        (
            "<html>\n<h1>502 Bad Gateway</h1>\n</html>",
            502,
            "<html> <h1>502 Bad Gateway</h1> </html>",
        ),
        ("", 503, "Service Unavailable"),
    ];
    for (body, status, expected) in cases {
        assert_eq!(error_body_message(body, status), expected);
    }
    let long = "x".repeat(2000);
    assert!(error_body_message(&long, 500).chars().count() <= 501);
}

fn settings(initial_ms: u64, max_ms: u64) -> ProviderSettings {
    ProviderSettings {
        provider: "custom".into(),
        base_url: "http://127.0.0.1:9/v1/".into(),
        api_key: Some("sk-secret".into()),
        model: "m".into(),
        max_retries: 5,
        initial_backoff: Duration::from_millis(initial_ms),
        max_backoff: Duration::from_millis(max_ms),
        idle_timeout: Duration::from_secs(5),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
    }
}

#[test]
fn backoff_grows_with_jitter_and_is_capped() {
    let model = HttpModel::new(settings(100, 1000)).unwrap();
    for _ in 0..50 {
        let first = model.backoff(1, None);
        assert!(
            first >= Duration::from_millis(50) && first < Duration::from_millis(100),
            "{first:?}"
        );
        let third = model.backoff(3, None);
        assert!(
            third >= Duration::from_millis(200) && third < Duration::from_millis(400),
            "{third:?}"
        );
        assert_eq!(model.backoff(30, None), Duration::from_millis(1000));
    }
    assert_eq!(
        model.backoff(1, Some(Duration::from_millis(700))),
        Duration::from_millis(700)
    );
    assert_eq!(
        model.backoff(1, Some(Duration::from_secs(60))),
        Duration::from_millis(1000)
    );
}

#[test]
fn endpoint_and_debug_output_hide_the_key() {
    let model = HttpModel::new(settings(1, 1)).unwrap();
    assert_eq!(model.endpoint, "http://127.0.0.1:9/v1/chat/completions");
    assert!(!format!("{model:?}").contains("sk-secret"));
    assert!(!format!("{:?}", settings(1, 1)).contains("sk-secret"));
    model.set_model("other");
    assert_eq!(model.model(), "other");
    for (url, local) in [
        ("http://localhost:1/v1", true),
        ("http://[::1]:1/v1", true),
        ("https://api.deepseek.com", false),
    ] {
        assert_eq!(
            is_loopback(&reqwest::Url::parse(url).unwrap()),
            local,
            "{url}"
        );
    }
    assert!(
        HttpModel::new(ProviderSettings {
            base_url: "localhost:11434".into(),
            ..settings(1, 1)
        })
        .is_err()
    );
}
