#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::testing::mock_site::{MockSite, Page};
use crate::web::resolve::MapResolver;

const LOOPBACK_2: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

fn client(allow: &[String], resolver: Arc<MapResolver>) -> EgressClient {
    EgressClient::new(
        EgressPolicy::new(allow).unwrap(),
        resolver,
        Arc::new(DirectStack),
    )
}

fn follow_all(_: &Target) -> bool {
    true
}

async fn get(client: &EgressClient, url: &str) -> Result<Reply, EgressError> {
    let request = EgressRequest::get(Target::parse(url).unwrap());
    client.send(&request, &follow_all).await
}

async fn body_of(reply: Reply) -> String {
    match reply {
        Reply::Response(opened) => {
            String::from_utf8(opened.read_body(1 << 20).await.unwrap().bytes).unwrap()
        }
        Reply::Unfollowed { to, .. } => panic!("unfollowed to {}", to.url),
    }
}

#[tokio::test]
async fn an_allowed_local_server_is_fetched_and_redirects_within_it_are_followed() {
    let site = MockSite::start().await;
    site.route("/a", Page::redirect(302, "/b"))
        .route("/b", Page::html("<p>b</p>"));
    let client = client(&[site.host_port()], Arc::new(MapResolver::new()));
    let reply = get(&client, &site.url("/a")).await.unwrap();
    let Reply::Response(opened) = reply else {
        panic!("not followed")
    };
    assert_eq!(opened.status, 200);
    assert_eq!(opened.final_target.url.path(), "/b");
    assert_eq!(opened.hops.len(), 1);
    assert_eq!(opened.hops[0].status, 302);
    assert_eq!(body_of(Reply::Response(opened)).await, "<p>b</p>");
}

#[tokio::test]
async fn a_redirect_to_a_port_not_allowed_is_refused_and_that_server_receives_nothing() {
    let site = MockSite::start().await;
    let other = MockSite::start().await;
    other.route("/secret", Page::html("secret"));
    site.route("/go", Page::redirect(302, &other.url("/secret")));
    let client = client(&[site.host_port()], Arc::new(MapResolver::new()));
    let err = get(&client, &site.url("/go")).await.unwrap_err();
    assert!(matches!(err, EgressError::Refused { .. }), "{err}");
    assert_eq!(other.connections(), 0);
    assert_eq!(site.hits("/go"), 1);
}

#[tokio::test]
async fn a_redirect_to_a_name_resolving_to_loopback_is_refused_before_connecting() {
    let site = MockSite::start().await;
    let evil = MockSite::start_on(LOOPBACK_2, 0)
        .await
        .expect("127.0.0.0/8 is all loopback on Linux");
    evil.route("/", Page::html("internal"));
    let resolver = Arc::new(MapResolver::new().with("evil.test", &[LOOPBACK_2]));
    site.route(
        "/go",
        Page::redirect(301, &format!("http://evil.test:{}/", evil.port())),
    );
    let client = client(&[site.host_port()], resolver);
    let err = get(&client, &site.url("/go")).await.unwrap_err();
    let EgressError::Refused { addr, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(addr, LOOPBACK_2);
    assert_eq!(evil.connections(), 0);
}

#[tokio::test]
async fn a_dns_answer_that_changes_after_the_check_is_never_connected_to() {
    let (first, second) = same_port_on_two_addresses().await;
    first.route("/", Page::html("checked"));
    second.route("/", Page::html("rebound"));
    let resolver = Arc::new(MapResolver::new().with_answers(
        "rebind.test",
        vec![vec![IpAddr::V4(Ipv4Addr::LOCALHOST)], vec![LOOPBACK_2]],
    ));
    let allow = [format!("rebind.test:{}", first.port())];
    let client = client(&allow, Arc::clone(&resolver));
    let reply = get(&client, &format!("http://rebind.test:{}/", first.port()))
        .await
        .unwrap();
    assert_eq!(body_of(reply).await, "checked");
    assert_eq!(resolver.lookups(), 1, "resolved once, for the check");
    assert_eq!(second.connections(), 0);
}

/// A site on 127.0.0.1 and one on 127.0.0.2 with the same port (a few tries: the port may be
/// taken on the second address).
async fn same_port_on_two_addresses() -> (MockSite, MockSite) {
    for _ in 0..20 {
        let first = MockSite::start().await;
        if let Ok(second) = MockSite::start_on(LOOPBACK_2, first.port()).await {
            return (first, second);
        }
    }
    panic!("no port free on both 127.0.0.1 and 127.0.0.2");
}

#[tokio::test]
async fn the_pinned_resolver_answers_only_the_checked_host_with_the_checked_addresses() {
    use reqwest::dns::Resolve as _;
    let pinned = Pinned {
        host: "example.org".into(),
        addrs: vec![IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34))],
        proxy_host: Some("localhost".into()),
    };
    let answer: Vec<SocketAddr> = pinned
        .resolve("Example.org.".parse().unwrap())
        .await
        .unwrap()
        .collect();
    assert_eq!(answer, vec!["93.184.216.34:0".parse().unwrap()]);
    assert!(pinned.resolve("other.org".parse().unwrap()).await.is_err());
    // The proxy's own name resolves normally; a name that only looks like it does not.
    let proxy: Vec<SocketAddr> = pinned
        .resolve("localhost".parse().unwrap())
        .await
        .unwrap()
        .collect();
    assert!(proxy.iter().all(|a| a.ip().is_loopback()), "{proxy:?}");
    assert!(
        pinned
            .resolve("localhost.evil".parse().unwrap())
            .await
            .is_err()
    );
    let empty = Pinned {
        host: "example.org".into(),
        addrs: Vec::new(),
        proxy_host: None,
    };
    assert!(empty.resolve("example.org".parse().unwrap()).await.is_err());
}

#[tokio::test]
async fn a_redirect_the_caller_does_not_follow_comes_back_with_its_target() {
    let site = MockSite::start().await;
    let other = MockSite::start().await;
    site.route("/go", Page::redirect(307, &other.url("/next?q=1")));
    let allow = [site.host_port(), other.host_port()];
    let client = client(&allow, Arc::new(MapResolver::new()));
    let request = EgressRequest::get(Target::parse(&site.url("/go")).unwrap());
    let reply = client.send(&request, &|_| false).await.unwrap();
    let Reply::Unfollowed { hops, to } = reply else {
        panic!("followed")
    };
    assert_eq!(to.url.as_str(), other.url("/next?q=1"));
    assert_eq!(hops.len(), 1);
    assert_eq!(other.connections(), 0);
}

#[tokio::test]
async fn more_than_five_redirects_stop() {
    let site = MockSite::start().await;
    for n in 0..7 {
        site.route(
            &format!("/r{n}"),
            Page::redirect(302, &format!("/r{}", n + 1)),
        );
    }
    let client = client(&[site.host_port()], Arc::new(MapResolver::new()));
    let err = get(&client, &site.url("/r0")).await.unwrap_err();
    assert!(
        matches!(err, EgressError::TooManyRedirects { max: 5, .. }),
        "{err}"
    );
    assert_eq!(site.requests().len(), MAX_REDIRECTS + 1);
}

#[tokio::test]
async fn the_body_stops_at_the_cap_and_the_server_sees_the_client_hang_up() {
    let site = MockSite::start().await;
    site.route("/big", Page::large(12 << 20, "text/plain"));
    let client = client(&[site.host_port()], Arc::new(MapResolver::new()));
    let Reply::Response(opened) = get(&client, &site.url("/big")).await.unwrap() else {
        panic!("redirected")
    };
    let body = opened.read_body(256 << 10).await.unwrap();
    assert!(body.capped);
    assert_eq!(body.bytes.len(), 256 << 10);
    let end = site.large_end("/big").await.unwrap();
    assert!(end.cut_by_client, "{end:?}");
    assert!(end.sent < 12 << 20, "{end:?}");
}

#[tokio::test]
async fn a_stalled_server_times_out_and_a_cancelled_call_stops() {
    let site = MockSite::start().await;
    site.route("/stall", Page::stall());
    let client = client(&[site.host_port()], Arc::new(MapResolver::new()));
    let never = CancellationToken::new();
    let started = Instant::now();
    let err = bounded(
        get(&client, &site.url("/stall")),
        Duration::from_millis(300),
        &never,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, EgressError::Timeout { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));

    let cancel = CancellationToken::new();
    let url = site.url("/stall");
    let fetch = bounded(get(&client, &url), Duration::from_secs(60), &cancel);
    let trigger = async {
        // Cancel once the server holds the request, as Esc does mid-fetch.
        while site.hits("/stall") < 2 {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(fetch, trigger);
    assert!(matches!(result, Err(EgressError::Cancelled)));
}

#[test]
fn https_to_http_is_refused_and_locations_resolve_against_the_page() {
    let page = Target::parse("https://example.org/a").unwrap();
    assert!(matches!(
        next_hop(&page, "http://example.org/b", 0),
        Err(EgressError::Downgrade { .. })
    ));
    assert!(next_hop(&page, "https://example.org/b", 0).is_ok());
    assert_eq!(
        next_hop(&page, "/c", 0).unwrap().url.as_str(),
        "https://example.org/c"
    );
    let plain = Target::parse("http://example.org/a").unwrap();
    assert!(next_hop(&plain, "https://example.org/", 0).is_ok());
    assert!(matches!(
        next_hop(&plain, "file:///etc/passwd", 0),
        Err(EgressError::Scheme { .. })
    ));
    assert!(matches!(
        next_hop(&plain, "/x", MAX_REDIRECTS),
        Err(EgressError::TooManyRedirects { .. })
    ));
}

/// A server that records each request's head and answers with `answer(path)`.
async fn recording_server(
    answer: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (seen, answer) = (Arc::clone(&seen), Arc::clone(&answer));
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                seen.lock().unwrap().push(head);
                let _ = socket.write_all(answer(&path).as_bytes()).await;
            });
        }
    });
    (format!("127.0.0.1:{}", addr.port()), heads)
}

#[tokio::test]
async fn credential_headers_stop_at_a_redirect_to_another_origin() {
    let (other, other_heads) = recording_server(|_| {
        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_string()
    })
    .await;
    let to_other = format!("http://{other}/landed");
    let (home, home_heads) = recording_server(move |path| match path {
        "/same" => "HTTP/1.1 302 Found\r\nlocation: /final\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_string(),
        "/away" => format!("HTTP/1.1 302 Found\r\nlocation: {to_other}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"),
        _ => "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".to_string(),
    })
    .await;
    let client = client(&[home.clone(), other.clone()], Arc::new(MapResolver::new()));
    let credentials = [
        ("Authorization", "Basic dXNlcjpwYXNz"),
        ("X-Subscription-Token", "BRAVE-KEY"),
        ("X-Api-Key", "EXA-KEY"),
        ("Cookie", "session=1"),
    ];
    for path in ["/same", "/away"] {
        let mut request =
            EgressRequest::get(Target::parse(&format!("http://{home}{path}")).unwrap());
        request.trusted = true;
        request.headers.push(("Accept", "application/json".into()));
        for (name, value) in credentials {
            request.headers.push((name, value.into()));
        }
        let reply = client.send(&request, &follow_all).await.unwrap();
        assert_eq!(body_of(reply).await, "ok");
    }
    let home_heads = home_heads.lock().unwrap().clone();
    // On the same origin every hop carries them: /same, /final, /away.
    assert_eq!(home_heads.len(), 3);
    for head in &home_heads {
        for (_, value) in credentials {
            assert!(head.contains(value), "{value} missing: {head}");
        }
    }
    // The other host got the request without any of them, but with the rest.
    let other_heads = other_heads.lock().unwrap().clone();
    assert_eq!(other_heads.len(), 1);
    for (_, value) in credentials {
        assert!(
            !other_heads[0].contains(value),
            "{value} leaked: {}",
            other_heads[0]
        );
    }
    assert!(
        other_heads[0]
            .to_ascii_lowercase()
            .contains("accept: application/json")
    );
}
