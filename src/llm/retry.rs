//! When to try a request again and how long to wait first: the wait a server names in its
//! headers (under the names proxies give them) and whether an error object sent inside a
//! stream describes a passing condition (rate limit, overload, server error) or a final one.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// Prefix LiteLLM puts on the headers it passes through from the upstream provider.
const PROXIED: &str = "llm_provider-";

/// The wait the server asked for, from the first header that names one:
/// `retry-after-ms` (OpenAI), `Retry-After` (seconds or an HTTP date), the same two as a
/// proxy renamed them (`llm_provider-retry-after`), and last the rate-limit reset times
/// (`x-ratelimit-reset-requests` / `-tokens`, seconds or Go durations such as `6m0s`).
/// The caller caps the result.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    for prefix in ["", PROXIED] {
        if let Some(ms) = header(&format!("{prefix}retry-after-ms")).and_then(seconds) {
            return Some(ms.div_f64(1000.0));
        }
        if let Some(value) = header(&format!("{prefix}retry-after")) {
            if let Some(wait) = seconds(value) {
                return Some(wait);
            }
            if let Ok(at) = httpdate::parse_http_date(value) {
                return Some(at.duration_since(now).unwrap_or(Duration::ZERO));
            }
        }
    }
    rate_limit_reset(&header)
}

/// How many times a proxy in front of the provider already retried this request, when it
/// says so and did: LiteLLM's `x-litellm-attempted-retries` (beside `x-litellm-max-retries`).
/// Retrying such a failure again multiplies the upstream attempts.
pub fn proxy_retried(headers: &HeaderMap) -> Option<u32> {
    headers
        .get("x-litellm-attempted-retries")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|retries| *retries > 0)
}

/// `x-ratelimit-reset-{requests,tokens}`: when the limit that is used up resets. A limit whose
/// `x-ratelimit-remaining-…` is 0 is the one that bit; without that information the later
/// reset is the safe wait.
fn rate_limit_reset<'a>(header: &impl Fn(&str) -> Option<&'a str>) -> Option<Duration> {
    let mut exhausted = None::<Duration>;
    let mut any = None::<Duration>;
    for prefix in ["", PROXIED] {
        for limit in ["requests", "tokens"] {
            let Some(reset) =
                header(&format!("{prefix}x-ratelimit-reset-{limit}")).and_then(duration)
            else {
                continue;
            };
            any = Some(any.map_or(reset, |a| a.max(reset)));
            let remaining = header(&format!("{prefix}x-ratelimit-remaining-{limit}"));
            if remaining.is_some_and(|r| r.parse::<f64>().is_ok_and(|r| r <= 0.0)) {
                exhausted = Some(exhausted.map_or(reset, |e| e.max(reset)));
            }
        }
    }
    exhausted.or(any)
}

/// A non-negative, finite number of seconds.
fn seconds(value: &str) -> Option<Duration> {
    let secs = value.parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

/// Seconds (`20`, `1.5`) or a Go duration (`6m0s`, `1.5s`, `200ms`, `1h2m3.5s`, `20us`).
pub fn duration(value: &str) -> Option<Duration> {
    if let Some(plain) = seconds(value) {
        return Some(plain);
    }
    let mut rest = value;
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += number * scale;
    }
    (total.is_finite() && total >= 0.0 && !value.is_empty())
        .then(|| Duration::from_secs_f64(total.min(1e9)))
}

/// Whether an error object sent inside a 200 stream describes a condition that passes:
/// a 408/409/429/5xx code or status, or a type or code that says rate limit, overload or
/// server error. Quota and billing errors never pass by waiting.
pub fn is_transient_error(error: &serde_json::Value) -> bool {
    let text = error.to_string().to_ascii_lowercase();
    let final_words = [
        "insufficient_quota",
        "insufficient balance",
        "insufficient credits",
        "exceeded your current quota",
        "billing",
    ];
    if final_words.iter().any(|w| text.contains(w)) || messages(error).any(names_request_shape) {
        return false;
    }
    // A status code, when there is one, decides: a 400 that mentions overload is still a 400.
    let mut codes = status_codes(error)
        .filter(|code| (100..600).contains(code))
        .peekable();
    if codes.peek().is_some() {
        return codes.any(|code| matches!(code, 408 | 409 | 429 | 500..=599));
    }
    let transient_words = [
        "rate_limit",
        "rate limit",
        "ratelimit",
        "too many requests",
        "too_many_requests",
        "overloaded",
        "server_error",
        "internal server error",
        "service unavailable",
        "service_unavailable",
        "temporarily unavailable",
        "timeout",
        "timed out",
    ];
    transient_words.iter().any(|w| text.contains(w))
}

/// Whether an error message is about the request's shape rather than the server's state: a
/// field of the request named (`'content'`, `messages[3]`, `tool_calls`), a type mismatch
/// (`NoneType`, `null`, "expected a string"), a validation or template error. Such a failure,
/// even under a 5xx, comes back for the same bytes, so it is not retried unchanged.
pub fn names_request_shape(message: &str) -> bool {
    let text = message.to_ascii_lowercase();
    const SHAPE_WORDS: &[&str] = &[
        "nonetype",
        "null",
        "nullable",
        "invalid type",
        "expected string",
        "expected a string",
        "expected str",
        "must be a string",
        "must be of type",
        "is not of type",
        "input should be",
        "field required",
        "missing field",
        "unknown field",
        "unknown variant",
        "validation error",
        "failed to deserialize",
        "could not deserialize",
        "failed to parse",
        "unable to parse",
        "jinja",
        "chat template",
        "template error",
        "invalid request",
        "invalid_request",
        "tool_calls",
        "tool_call_id",
        "tool_choice",
        "stream_options",
        "messages[",
        "messages.",
        "has no attribute",
    ];
    const FIELDS: &[&str] = &["content", "role", "messages", "tools", "arguments", "input"];
    SHAPE_WORDS.iter().any(|w| text.contains(w))
        || FIELDS.iter().any(|field| {
            ["'", "\"", "`"]
                .iter()
                .any(|q| text.contains(&format!("{q}{field}{q}")))
        })
}

/// The strings under `message` or `detail`, at any depth: the words a server wrote, not the
/// JSON around them (whose `null`s say nothing).
fn messages(value: &serde_json::Value) -> impl Iterator<Item = &str> {
    fn collect<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        use serde_json::Value;
        match value {
            Value::String(text) => out.push(text),
            Value::Object(map) => {
                for (key, inner) in map {
                    match inner {
                        Value::String(text) if matches!(key.as_str(), "message" | "detail") => {
                            out.push(text)
                        }
                        Value::Object(_) | Value::Array(_) => collect(inner, out),
                        _ => {}
                    }
                }
            }
            Value::Array(items) => {
                for inner in items.iter().filter(|v| v.is_object() || v.is_array()) {
                    collect(inner, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(value, &mut out);
    out.into_iter()
}

/// Numbers under `code`, `status` or `status_code`, at any depth (`{"error":{"code":502}}`),
/// also when sent as strings (`"code": "429"`).
fn status_codes(value: &serde_json::Value) -> Box<dyn Iterator<Item = u64> + '_> {
    match value {
        serde_json::Value::Object(map) => Box::new(map.iter().flat_map(|(key, inner)| {
            let own = matches!(key.as_str(), "code" | "status" | "status_code")
                .then(|| match inner {
                    serde_json::Value::Number(n) => n.as_u64(),
                    serde_json::Value::String(s) => s.trim().parse().ok(),
                    _ => None,
                })
                .flatten();
            own.into_iter().chain(status_codes(inner))
        })),
        serde_json::Value::Array(items) => Box::new(items.iter().flat_map(status_codes)),
        _ => Box::new(std::iter::empty()),
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
