#![allow(clippy::unwrap_used)]

use super::*;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn domain_filters_match_the_domain_and_below_it_only() {
    let blocked = strings(&["pinterest.com"]);
    assert!(!passes("https://pinterest.com/pin/1", &[], &blocked));
    assert!(!passes("https://www.pinterest.com/pin/1", &[], &blocked));
    assert!(!passes("https://WWW.Pinterest.COM./x", &[], &blocked));
    assert!(passes("https://notpinterest.com/", &[], &blocked));
    let allowed = strings(&["*.rust-lang.org", "docs.rs"]);
    assert!(passes("https://doc.rust-lang.org/std/", &allowed, &[]));
    assert!(passes("https://docs.rs/serde", &allowed, &[]));
    assert!(!passes("https://crates.io/", &allowed, &[]));
    assert!(!passes("https://docs.rs.evil.example/", &allowed, &[]));
    // Blocked wins over allowed; a URL that does not parse never passes.
    assert!(!passes(
        "https://docs.rs/x",
        &allowed,
        &strings(&["docs.rs"])
    ));
    assert!(!passes("javascript:alert(1)", &[], &[]));
}

#[test]
fn each_backend_answer_becomes_hits() {
    let searx = json!({"results": [{"title": "A", "url": "https://a.org/", "content": "about a"}]});
    let brave = json!({"web": {"results": [{"title": "B", "url": "https://b.org/", "description": "<strong>b</strong> here"}]}});
    let tavily = json!({"results": [{"title": "T", "url": "https://t.org/", "content": "t"}, {"title": "no url"}]});
    assert_eq!(
        parse_hits(Backend::Searxng, &searx).unwrap()[0].snippet,
        "about a"
    );
    assert_eq!(
        parse_hits(Backend::Brave, &brave).unwrap()[0].snippet,
        "b here"
    );
    assert_eq!(parse_hits(Backend::Tavily, &tavily).unwrap().len(), 1);
    assert!(parse_hits(Backend::Brave, &searx).is_none());
}

#[test]
fn backend_failures_say_what_happened() {
    let busy = status_problem(429, Some("30")).unwrap();
    assert!(busy.contains("429") && busy.contains("30 s"), "{busy}");
    assert!(
        status_problem(503, None)
            .unwrap()
            .contains("server error (503)")
    );
    assert!(status_problem(401, None).unwrap().contains("api_key_env"));
    assert_eq!(status_problem(200, None), None);
}

#[test]
fn the_key_goes_only_into_the_header_and_never_into_debug_output() {
    let settings = SearchSettings {
        backend: Backend::Brave,
        url: "https://api.search.brave.com/res/v1/web/search".into(),
        key_env: Some("BRAVE_API_KEY".into()),
        api_key: Some("sekrit-key-123".into()),
        basic_auth: None,
    };
    assert!(!format!("{settings:?}").contains("sekrit"));
    let query = Query {
        query: "rust toml".into(),
        max_results: 5,
        ..Query::default()
    };
    let request = request_for(&settings, &query).unwrap();
    assert!(!request.target.url.as_str().contains("sekrit"));
    assert!(
        request
            .headers
            .iter()
            .any(|(name, value)| *name == "X-Subscription-Token" && value == "sekrit-key-123")
    );
    assert!(request.trusted);
}

#[test]
fn searxng_gets_its_json_api_path() {
    let settings = SearchSettings {
        backend: Backend::Searxng,
        url: "http://127.0.0.1:8888".into(),
        key_env: None,
        api_key: None,
        basic_auth: None,
    };
    let query = Query {
        query: "a b".into(),
        max_results: 5,
        ..Query::default()
    };
    let url = request_for(&settings, &query).unwrap().target.url;
    assert_eq!(
        url.as_str(),
        "http://127.0.0.1:8888/search?q=a+b&format=json"
    );
}

#[test]
fn credentials_in_the_configured_url_become_basic_auth_and_leave_the_url() {
    assert_eq!(
        split_credentials("http://127.0.0.1:8888").unwrap(),
        ("http://127.0.0.1:8888".into(), None)
    );
    let (url, auth) = split_credentials("https://bob:p%20w%25@searx.example/base?x=1").unwrap();
    assert_eq!(url, "https://searx.example/base?x=1");
    assert_eq!(auth, Some(("bob".into(), "p w%".into())));
    let (url, auth) = split_credentials("http://only-user@h:81/").unwrap();
    assert_eq!(url, "http://h:81/");
    assert_eq!(auth, Some(("only-user".into(), String::new())));
    // A user name holding ':' would change where the password starts.
    assert!(split_credentials("http://a%3Ab:c@h/").is_err());
    assert!(split_credentials("http://%ff:c@h/").is_err());
    let settings = SearchSettings {
        backend: Backend::Tavily,
        url: url.clone(),
        key_env: Some("TAVILY_API_KEY".into()),
        api_key: Some("tvly-key".into()),
        basic_auth: Some(("bob".into(), "hunter2".into())),
    };
    assert!(!format!("{settings:?}").contains("hunter2"));
    let request = request_for(&settings, &Query::default()).unwrap();
    let authorization: Vec<&String> = request
        .headers
        .iter()
        .filter(|(name, _)| *name == "Authorization")
        .map(|(_, value)| value)
        .collect();
    // bob:hunter2, once; never the key beside it.
    assert_eq!(authorization, ["Basic Ym9iOmh1bnRlcjI="]);
    assert!(!request.target.url.as_str().contains("hunter2"));
}
