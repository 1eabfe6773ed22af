#![allow(clippy::unwrap_used)]

use reqwest::header::HeaderValue;
use serde_json::json;

use super::*;

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_str(value).unwrap());
    }
    map
}

#[test]
fn retry_after_forms() {
    let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
    type Case = (&'static [(&'static str, &'static str)], Option<Duration>);
    let cases: &[Case] = &[
        (&[("retry-after", "3")], Some(Duration::from_secs(3))),
        (
            &[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")],
            Some(Duration::from_secs(10)),
        ),
        (
            &[("retry-after", "Sun, 06 Nov 1994 08:49:00 GMT")],
            Some(Duration::ZERO),
        ),
        (
            &[("retry-after", "3"), ("retry-after-ms", "250")],
            Some(Duration::from_millis(250)),
        ),
        (&[("retry-after", "soon")], None),
        (&[("retry-after", "-1")], None),
        (&[], None),
    ];
    for (pairs, expected) in cases {
        assert_eq!(retry_after(&headers(pairs), now), *expected, "{pairs:?}");
    }
}

#[test]
fn retry_after_under_the_names_proxies_give_it() {
    let now = SystemTime::UNIX_EPOCH;
    type Case = (&'static [(&'static str, &'static str)], Option<Duration>);
    let cases: &[Case] = &[
        // LiteLLM passes the upstream's headers on with a prefix.
        (
            &[("llm_provider-retry-after", "7")],
            Some(Duration::from_secs(7)),
        ),
        (
            &[("llm_provider-retry-after-ms", "1500")],
            Some(Duration::from_millis(1500)),
        ),
        // The unprefixed header wins over the proxied one.
        (
            &[("retry-after", "2"), ("llm_provider-retry-after", "9")],
            Some(Duration::from_secs(2)),
        ),
        // OpenAI-style reset times, as Go durations.
        (
            &[("x-ratelimit-reset-requests", "6m0s")],
            Some(Duration::from_secs(360)),
        ),
        (
            &[("x-ratelimit-reset-tokens", "1.5s")],
            Some(Duration::from_millis(1500)),
        ),
        (
            &[("x-ratelimit-reset-tokens", "200ms")],
            Some(Duration::from_millis(200)),
        ),
        (
            &[("llm_provider-x-ratelimit-reset-requests", "12")],
            Some(Duration::from_secs(12)),
        ),
        // The limit that is used up decides.
        (
            &[
                ("x-ratelimit-reset-requests", "6m0s"),
                ("x-ratelimit-remaining-requests", "99"),
                ("x-ratelimit-reset-tokens", "20ms"),
                ("x-ratelimit-remaining-tokens", "0"),
            ],
            Some(Duration::from_millis(20)),
        ),
        // Without remaining counts the later reset is the safe wait.
        (
            &[
                ("x-ratelimit-reset-requests", "2s"),
                ("x-ratelimit-reset-tokens", "1m30s"),
            ],
            Some(Duration::from_secs(90)),
        ),
        // Retry-After beats reset times.
        (
            &[("retry-after", "1"), ("x-ratelimit-reset-requests", "6m0s")],
            Some(Duration::from_secs(1)),
        ),
        (&[("x-ratelimit-reset-requests", "soon")], None),
    ];
    for (pairs, expected) in cases {
        assert_eq!(retry_after(&headers(pairs), now), *expected, "{pairs:?}");
    }
}

#[test]
fn go_durations() {
    let ms = Duration::from_millis;
    assert_eq!(duration("6m0s"), Some(Duration::from_secs(360)));
    assert_eq!(duration("1h2m3.5s"), Some(ms(3_723_500)));
    assert_eq!(duration("2m59.56s"), Some(ms(179_560)));
    assert_eq!(duration("0s"), Some(Duration::ZERO));
    assert_eq!(duration("20"), Some(Duration::from_secs(20)));
    assert_eq!(duration("750us"), Some(Duration::from_micros(750)));
    for bad in ["", "s", "5x", "-1s", "1.2.3s", "m5"] {
        assert_eq!(duration(bad), None, "{bad:?}");
    }
}

#[test]
fn stream_error_objects_that_pass_with_time() {
    let transient = [
        json!({"error": {"message": "internal", "type": "server_error", "code": 500}}),
        json!({"code": 502, "message": "Upstream overloaded"}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
        json!({"error": {"message": "slow down", "status": "429"}}),
        json!("Service Unavailable"),
    ];
    for error in &transient {
        assert!(is_transient_error(error), "{error}");
    }
    let final_errors = [
        json!({"code": 400, "message": "the request exceeds the available context size"}),
        json!({"error": {"message": "Upstream overloaded", "type": "BadRequestError", "code": 400}}),
        json!({"error": {"message": "bad", "type": "invalid_request_error", "code": null}}),
        json!({"error": {"message": "You exceeded your current quota", "code": 429}}),
        json!({"error": {"type": "insufficient_quota", "code": "rate_limit_exceeded"}}),
        json!("the model crashed"),
    ];
    for error in &final_errors {
        assert!(!is_transient_error(error), "{error}");
    }
}
