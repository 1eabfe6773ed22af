#![allow(clippy::unwrap_used)]

use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

#[test]
fn the_variable_for_the_scheme_is_used_and_all_proxy_is_the_fallback() {
    let env = env_of(&[
        ("https_proxy", "http://secure.proxy:3128"),
        ("HTTP_PROXY", "plain.proxy:8080"),
        ("ALL_PROXY", "socks5h://tunnel:1080"),
    ]);
    let rules = ProxyRules::from_sources(None, None, &env).unwrap();
    let https = rules.for_url(&url("https://api.example.com/v1")).unwrap();
    assert_eq!(https.shown(), "http://secure.proxy:3128");
    assert_eq!(https.source, "https_proxy");
    let http = rules.for_url(&url("http://api.example.com/v1")).unwrap();
    assert_eq!(
        http.shown(),
        "http://plain.proxy:8080",
        "host:port alone is HTTP"
    );
    let only_all =
        ProxyRules::from_sources(None, None, &env_of(&[("all_proxy", "socks5://t")])).unwrap();
    let socks = only_all.for_url(&url("https://x.example/")).unwrap();
    assert_eq!(socks.shown(), "socks5://t:1080");
    assert!(!socks.resolves_names());
}

#[test]
fn the_configured_proxy_wins_and_loopback_is_always_direct() {
    let env = env_of(&[("HTTPS_PROXY", "http://env.proxy:1")]);
    let rules = ProxyRules::from_sources(Some("http://config.proxy:2"), None, &env).unwrap();
    assert_eq!(
        rules.for_url(&url("https://a.example/")).unwrap().source,
        "[network] proxy"
    );
    for local in [
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080/",
        "http://[::1]:80/",
        "http://127.5.6.7/",
        "http://LOCALHOST./",
        "http://app.localhost/",
        "http://[::ffff:127.0.0.1]/",
    ] {
        assert!(rules.for_url(&url(local)).is_none(), "{local}");
    }
}

#[test]
fn no_proxy_matches_names_subdomains_addresses_and_ranges() {
    let list = NoProxy::parse(
        "corp.example, .internal,*.svc, 10.0.0.0/8, 192.168.1.5, [fd00::1], gitlab:8443",
    );
    for host in [
        "corp.example",
        "api.corp.example",
        "x.internal",
        "internal",
        "a.b.svc",
        "10.20.30.40",
        "192.168.1.5",
        "[fd00::1]",
        "gitlab",
        "CORP.EXAMPLE.",
    ] {
        assert!(list.matches(host), "{host}");
    }
    for host in [
        "notcorp.example",
        "corp.example.com",
        "11.0.0.1",
        "192.168.1.6",
        "fd00::2",
    ] {
        assert!(!list.matches(host), "{host}");
    }
    assert!(NoProxy::parse("*").matches("anything.example"));
    let rules = ProxyRules::from_sources(
        None,
        None,
        &env_of(&[("HTTPS_PROXY", "http://p:1"), ("no_proxy", "corp.example")]),
    )
    .unwrap();
    assert!(rules.for_url(&url("https://git.corp.example/")).is_none());
    assert!(rules.for_url(&url("https://api.openai.com/")).is_some());
}

#[test]
fn a_malformed_proxy_is_an_error_that_names_its_variable_but_not_its_password() {
    for bad in [
        "ftp://proxy:21",
        "http://user:hunter22@/",
        "http://proxy:99999",
        "http://proxy:3128/some/path",
    ] {
        let env = env_of(&[("HTTPS_PROXY", bad)]);
        let err = ProxyRules::from_sources(None, None, &env)
            .unwrap_err()
            .to_string();
        assert!(err.contains("HTTPS_PROXY"), "{bad}: {err}");
        assert!(!err.contains("hunter22"), "{bad}: {err}");
    }
    let err = ProxyRules::from_sources(Some("socks9://x"), None, &env_of(&[]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("[network] proxy") && err.contains("socks9"),
        "{err}"
    );
}

#[test]
fn credentials_never_show() {
    let target = parse_proxy("http://alice:s%40cret-pw@proxy.corp:3128", "HTTPS_PROXY").unwrap();
    assert!(target.has_credentials);
    assert_eq!(target.shown(), "http://proxy.corp:3128");
    assert_eq!(target.host_port(), "proxy.corp:3128");
    assert!(!format!("{target:?}").contains("cret"));
    assert_eq!(target.password().as_deref(), Some("s@cret-pw"));
}
