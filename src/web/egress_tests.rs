#![allow(clippy::unwrap_used)]

use super::*;
use crate::web::resolve::MapResolver;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

async fn check(
    policy: &EgressPolicy,
    raw: &str,
    resolver: &MapResolver,
) -> Result<Vec<IpAddr>, EgressError> {
    let target = Target::parse(raw).unwrap();
    policy.check(&target, resolver, Route::Direct, false).await
}

fn refused_addr(result: Result<Vec<IpAddr>, EgressError>) -> Option<IpAddr> {
    match result {
        Err(EgressError::Refused { addr, .. }) => Some(addr),
        _ => None,
    }
}

#[tokio::test]
async fn literal_addresses_are_refused_in_every_spelling() {
    let policy = EgressPolicy::default();
    let resolver = MapResolver::new();
    let rows = [
        ("http://127.0.0.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://127.1:8080/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://0.0.0.0/", "0.0.0.0"),
        ("http://0/", "0.0.0.0"),
        ("http://[::]/", "::"),
        ("http://[::1]/", "::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
        (
            "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
            "::ffff:169.254.169.254",
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
        ),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
        ("http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"),
        ("http://10.0.0.1/", "10.0.0.1"),
        ("http://0xa9fea9fe/", "169.254.169.254"),
    ];
    for (raw, addr) in rows {
        assert_eq!(
            refused_addr(check(&policy, raw, &resolver).await),
            Some(ip(addr)),
            "{raw}"
        );
    }
    assert_eq!(resolver.lookups(), 0, "literals are never looked up");
}

#[tokio::test]
async fn a_name_with_one_private_answer_among_public_ones_is_refused() {
    let policy = EgressPolicy::default();
    let resolver = MapResolver::new()
        .with("mixed.test", &[ip("93.184.216.34"), ip("127.0.0.1")])
        .with("mixed6.test", &[ip("2606:4700::1111"), ip("fe80::1")])
        .with("public.test", &[ip("93.184.216.34"), ip("2606:4700::1111")]);
    assert_eq!(
        refused_addr(check(&policy, "http://mixed.test/", &resolver).await),
        Some(ip("127.0.0.1"))
    );
    assert_eq!(
        refused_addr(check(&policy, "http://mixed6.test/", &resolver).await),
        Some(ip("fe80::1"))
    );
    assert_eq!(
        check(&policy, "https://public.test/", &resolver)
            .await
            .unwrap(),
        vec![ip("93.184.216.34"), ip("2606:4700::1111")]
    );
}

#[tokio::test]
async fn names_that_lead_to_the_machine_or_its_cloud_are_refused() {
    let policy = EgressPolicy::default();
    let resolver = MapResolver::new()
        .with("evil.test", &[ip("127.0.0.2")])
        .with("metadata.google.internal", &[ip("169.254.169.254")])
        .with("mapped.test", &[ip("::ffff:192.168.0.1")])
        .with("localhost", &[ip("127.0.0.1"), ip("::1")]);
    for raw in [
        "http://evil.test/",
        "http://EVIL.test./",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://mapped.test/",
        "http://localhost:3000/",
    ] {
        assert!(
            refused_addr(check(&policy, raw, &resolver).await).is_some(),
            "{raw}"
        );
    }
}

#[tokio::test]
async fn allow_private_lets_through_only_its_exact_host_and_port() {
    let policy = EgressPolicy::new(&["127.0.0.1:8080".into(), "localhost:3000".into()]).unwrap();
    let resolver = MapResolver::new()
        .with("localhost", &[ip("127.0.0.1")])
        .with("evil.test", &[ip("127.0.0.1")]);
    assert!(
        check(&policy, "http://127.0.0.1:8080/", &resolver)
            .await
            .is_ok()
    );
    assert!(
        check(&policy, "http://2130706433:8080/", &resolver)
            .await
            .is_ok()
    );
    assert!(
        check(&policy, "http://localhost:3000/", &resolver)
            .await
            .is_ok()
    );
    for raw in [
        "http://127.0.0.1:8081/",
        "http://127.0.0.1/",
        "http://127.0.0.2:8080/",
        "http://localhost:8080/",
        "http://evil.test:8080/",
        "http://evil.test:3000/",
    ] {
        assert!(
            refused_addr(check(&policy, raw, &resolver).await).is_some(),
            "{raw}"
        );
    }
    assert!(EgressPolicy::new(&["127.0.0.1".into()]).is_err());
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_an_error_unless_a_proxy_resolves_it() {
    let policy = EgressPolicy::default();
    let resolver = MapResolver::new().with("private.test", &[ip("10.1.1.1")]);
    let target = Target::parse("https://nowhere.test/").unwrap();
    assert!(matches!(
        policy.check(&target, &resolver, Route::Direct, false).await,
        Err(EgressError::Resolve { .. })
    ));
    assert_eq!(
        policy
            .check(&target, &resolver, Route::Proxy, false)
            .await
            .unwrap(),
        Vec::<IpAddr>::new()
    );
    // Behind a proxy, what resolves here and literals are still judged.
    let private = Target::parse("https://private.test/").unwrap();
    assert!(
        policy
            .check(&private, &resolver, Route::Proxy, false)
            .await
            .is_err()
    );
    let literal = Target::parse("http://[::1]/").unwrap();
    assert!(
        policy
            .check(&literal, &resolver, Route::Proxy, false)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn a_trusted_endpoint_skips_the_judgement_but_is_still_resolved_once() {
    let policy = EgressPolicy::default();
    let resolver = MapResolver::new().with("searx.lan", &[ip("192.168.1.5")]);
    let target = Target::parse("http://searx.lan:8888/search").unwrap();
    assert_eq!(
        policy
            .check(&target, &resolver, Route::Direct, true)
            .await
            .unwrap(),
        vec![ip("192.168.1.5")]
    );
    assert_eq!(resolver.lookups(), 1);
}

#[tokio::test]
async fn the_refusal_says_how_to_allow_a_local_server() {
    let policy = EgressPolicy::default();
    let err = check(&policy, "http://127.0.0.1:9000/", &MapResolver::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("a loopback address"), "{err}");
    assert!(
        err.contains("allow_private") && err.contains("127.0.0.1:9000"),
        "{err}"
    );
}
